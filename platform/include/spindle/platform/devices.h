// Devices: SDL's event pump and the input devices (keyboard, mouse, game controllers through
// SDL's GameController API, hot-plugged, one player per controller), feeding core's input
// actions. It is the engine's InputSource: at the start of every frame and of every simulation
// step it pumps SDL's events (quit, window focus, keys, buttons, axes, controllers arriving and
// leaving), and at each step it writes every bound action, so an event is seen by the next
// simulation step. While the game clock is paused no step runs and actions keep their state, but
// events are still pumped (the window answers, quit works); a pause menu reads the devices
// themselves (key_down(), button_down()).
//
// Usage:
//
//   auto devices = spindle::platform::Devices::open().value();  // or {.driver = "dummy"}
//   spindle::core::Input& input = spindle::core::use_input(engine);
//   const auto jump = input.add_action("jump").value();
//   const auto left = input.add_action("left").value();
//   devices->bind_key(jump, "Space");                 // SDL key names: "A", "Left", "Return"...
//   devices->bind_button(jump, "a");                  // any player's A button
//   devices->bind_key(left, "Left");
//   devices->bind_axis(left, "leftx", -1.0f);         // the left stick pushed left
//   devices->bind(left, "axis:leftx-@1");             // the same in text, for player 1 only
//   devices->load_map(prefs + "controls.map", input); // the player's remapping over those
//   devices->attach(engine);                          // polled every frame; quit -> request_quit()
//   devices->watch(*window);                          // focus and size events reach the window
//   // in a stage: input.pressed(jump); devices->stick(0, Stick::Left) for analogue movement
//   devices->inject("key:Space");                     // tests, demos: as if pressed, through
//   devices->inject("axis:leftx-@1", 0.5f);           // the bindings and the loaded map
//
// A press and release between two steps still reads as pressed for one step (nothing is lost
// between polls). Losing focus releases every key and button. Bindings can change at any time
// (remapping): bind_*() adds, unbind() removes an action's bindings; a bad key or button name is
// an error naming it. Sticks get a radial dead zone and triggers an axial one, both rescaled so
// the output still spans 0..1; an axis bound as an action is held past `axis_press`. Polling
// allocates nothing once bindings are made.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <spindle/base/result.h>
#include <spindle/gameplay/input.h>

namespace spindle::core {
class Engine;
}

namespace spindle::platform {

class Window;

struct DeviceConfig {
  // SDL video driver if video is not running yet: "" for SDL's choice (the dummy driver when
  // there is no display), "dummy" headless.
  std::string driver{};
  float stick_dead_zone = 0.2f;    // radial, of full deflection
  float trigger_dead_zone = 0.1f;  // axial
  float axis_press = 0.5f;         // an axis bound to an action holds it past this
  // A low-pass filter on the sticks, in [0, 1): each step keeps this share of the step before's
  // reading (0: off, the raw value; 0.5 halves a jitter's amplitude step by step). Applied
  // after the dead zone, to stick() and to actions bound to stick axes alike.
  float stick_filter = 0.0f;
};

enum class Stick { Left, Right };
enum class Trigger { Left, Right };

struct StickValue {
  float x = 0;  // -1 (left) .. 1 (right)
  float y = 0;  // -1 (up) .. 1 (down), as SDL reports
};

class Devices final : public core::InputSource {
 public:
  static constexpr int kMaxPlayers = 8;
  static constexpr int kAnyPlayer = -1;
  static constexpr int kMouseButtons = 5;  // 1 left, 2 middle, 3 right, 4 and 5 extra

  static core::Result<std::unique_ptr<Devices>> open(const DeviceConfig& config = {});
  ~Devices() override;
  Devices(const Devices&) = delete;
  Devices& operator=(const Devices&) = delete;

  // Becomes the engine's input source (set_input_source) and pumps events at the start of each
  // of its frames; a quit event then requests quit. Attach to one engine, which must not run
  // frames after the Devices is gone.
  void attach(core::Engine& engine);
  // Pumps SDL's events now (attach() does it every frame and step).
  void pump();
  // Window events for `window` reach it: focus, and closing it, which requests quit as a quit
  // event does. One window at a time.
  void watch(Window& window);

  // One control in text, as a config file holds it: "key:Space", "mouse:1", "button:a",
  // "axis:leftx-" / "axis:righttrigger+", the last two optionally for one player ("button:a@1").
  core::Status bind(core::ActionId action, std::string_view control);
  core::Status bind_key(core::ActionId action, std::string_view key);
  core::Status bind_mouse_button(core::ActionId action, int button);
  core::Status bind_button(core::ActionId action, std::string_view button, int player = kAnyPlayer);
  // `direction` +1 or -1: the action is held while the axis (after its dead zone) is past
  // axis_press that way. Triggers only go positive.
  core::Status bind_axis(core::ActionId action, std::string_view axis, float direction,
                         int player = kAnyPlayer);
  void unbind(core::ActionId action);

  // Scripted input, for tests, demos and attract modes: acts on `control`, in the text bind()
  // and input maps take ("key:Space", "mouse:1", "button:a@1", "axis:leftx-"), as if the device
  // had done it. It then goes where a real event goes: through the bindings and the loaded map,
  // seen by the next simulation step (a press and release before it still count once). `value`:
  // 1 presses, 0 releases; for an axis, how far it is pushed the control's way (0.3: 30%, before
  // the dead zone), -1..1. Buttons and axes are player 0's unless the control names a player; a
  // player without a controller gets a scripted one, connected from then on. Call it between
  // frames, from the thread that runs them. An error names a bad control or value.
  core::Status inject(std::string_view control, float value = 1.0f);
  std::size_t binding_count() const { return bindings_.size(); }
  // Binding `index` (0..binding_count()) in the text bind() takes, and its action.
  std::string control_text(std::size_t index) const;
  core::ActionId binding_action(std::size_t index) const { return bindings_.at(index).action; }

  // Input maps in a text file, one action a line, `#` starting a comment line:
  //
  //   # player 1's stick only for left; pause unbound
  //   jump  = key:Space, button:a
  //   left  = key:Left, axis:leftx-@1
  //   pause =
  //
  // Loading replaces the bindings of each action the map names and keeps the others' (a game
  // binds its defaults, then loads the player's map over them). A bad line (no '=', an action
  // the Input has not declared, a chord or sequence, a bad control, a name given twice) is an
  // error naming the file and line, and then nothing changes. save_map() writes every bound
  // action in id order, in a form load_map() reads back to the same bindings.
  core::Status load_map(const std::string& path, const core::Input& input);
  core::Status parse_map(std::string_view text, std::string_view source, const core::Input& input);
  // The map of every bound action; an error names an action whose name a map cannot hold (an
  // '=' in it, a line break, spaces around it, a leading '#').
  core::Result<std::string> map_text(const core::Input& input) const;
  core::Status save_map(const std::string& path, const core::Input& input) const;
  static constexpr std::size_t kMaxMapBytes = 1 << 20;

  // The state after the last poll.
  bool key_down(std::string_view key) const;
  bool mouse_down(int button) const;
  int mouse_x() const { return mouse_x_; }
  int mouse_y() const { return mouse_y_; }
  int mouse_dx() const { return mouse_dx_; }  // motion since the step before
  int mouse_dy() const { return mouse_dy_; }
  int wheel() const { return wheel_; }  // clicks since the step before, up positive
  core::Status set_relative_mouse(bool on);
  bool connected(int player) const;
  int players() const;  // controllers connected now
  StickValue stick(int player, Stick which) const;
  float trigger(int player, Trigger which) const;
  bool button_down(int player, std::string_view button) const;

  bool quit_seen() const { return quit_seen_; }
  std::uint64_t events() const { return events_; }  // SDL events handled since open()

  // InputSource: pumps SDL's events, then writes every bound action.
  void poll(core::Input& input, std::uint64_t step) override;

 private:
  Devices() = default;
  struct Pad;
  enum class Kind : std::uint8_t { Key, Mouse, Button, Axis };
  struct Binding {
    core::ActionId action;
    Kind kind;
    int code;
    int player;
    float direction;
  };
  // The parsing behind bind() and its siblings, without adding the binding.
  core::Result<Binding> parse_control(core::ActionId action, std::string_view control) const;
  core::Result<Binding> key_binding(core::ActionId action, std::string_view key) const;
  core::Result<Binding> mouse_binding(core::ActionId action, int button) const;
  core::Result<Binding> button_binding(core::ActionId action, std::string_view button,
                                       int player) const;
  core::Result<Binding> axis_binding(core::ActionId action, std::string_view axis, float direction,
                                     int player) const;
  core::Status add(core::Result<Binding> binding);
  void handle(const void* sdl_event);
  bool active(const Binding& b) const;
  float axis_value(int player, int axis) const;
  StickValue raw_stick(int player, Stick which) const;  // through the dead zone, not filtered
  void release_everything();

  DeviceConfig config_;
  core::Engine* engine_ = nullptr;
  std::shared_ptr<Devices*> self_;  // the frame hook's way here; null once destroyed
  Window* window_ = nullptr;
  std::vector<Binding> bindings_;
  std::vector<std::uint8_t> action_held_;  // scratch for poll(), sized to the Input once
  std::array<std::uint8_t, 512> keys_{};   // bit 0 down, bit 1 went down since the last poll
  std::array<std::uint8_t, kMouseButtons + 1> mouse_{};
  int mouse_x_ = 0, mouse_y_ = 0, mouse_dx_ = 0, mouse_dy_ = 0, wheel_ = 0;
  int pending_dx_ = 0, pending_dy_ = 0, pending_wheel_ = 0;  // pumped, not yet seen by a step
  std::unique_ptr<Pad[]> pads_;                              // kMaxPlayers
  bool quit_seen_ = false;
  std::uint64_t events_ = 0;
  bool video_ = false;
};

}  // namespace spindle::platform
