// Input as game code sees it: actions the game declares by name ("fire", "jump"), each pressed
// (this step), held, or released (this step), fed by an InputSource once per simulation step,
// before the step's stages: a press is pressed() in exactly one step however many steps a frame
// runs, and a recording replays step by step (input_record.h). A frame that runs no step leaves
// the state as the last step saw it (read presses in simulation stages). The
// platform layer will add keyboard, mouse and controller sources; ScriptedInput replays a fixed
// script for tests, demos and headless runs.
//
// Usage:
//
//   spindle::core::Input& input = spindle::core::use_input(engine);  // (engine, 128): room for 128
//   const spindle::core::ActionId fire = input.add_action("fire").value();  // at start-up
//   const spindle::core::ActionId left = input.add_action("left").value();
//   const spindle::core::ActionId right = input.add_action("right").value();
//
//   spindle::core::ScriptedInput script;
//   script.hold(fire, /*from step*/ 10, /*to step*/ 12);  // Engine::tick() values, inclusive
//   spindle::core::set_input_source(engine, &script);     // polled before every step
//
//   // Derived actions, worked out after every poll from the others:
//   const auto both = input.add_chord("both", {fire, left}).value();       // held while all are
//   const auto down = input.add_action("down").value(), punch = input.add_action("punch").value();
//   const auto fireball =                                                  // pressed for one step
//       input.add_sequence("fireball", {down, right, punch}, /*window_steps*/ 15).value();
//   input.set_enabled(fire, false);  // reads as up until enabled again (a cutscene, a menu)
//
//   // in a system or stage (capture the ids, or look them up once with find_action()):
//   const spindle::core::Input& in = *ctx.world().resource<spindle::core::Input>();
//   if (in.pressed(fire)) shoot();
//   float turn = in.axis(right, left);  // -1..1
//
// Declaring: names are unique and not empty, and the number of actions is fixed when the Input
// is made, so polling and reading never allocate. A chord is held while every part is held (and
// so pressed in the step the last part joins); a sequence is held for exactly one step, the step
// its last part is pressed, when each part was pressed in order within `window_steps` steps of
// the one before (pressing a part out of order starts again). Parts are declared before, and
// may be chords ("down", "forward", "forward+punch"). Sources write plain actions only; derived
// ones are worked out by resolve() after every poll, in declaration order. add_action() refuses a
// bad name with a Status that says why (and logs it on the Core channel), so `.value()` stops at
// the mistake. Ids are handed out in declaration order (0, 1, 2...): the same declarations give the
// same ids in every run, so ids may be stored in components and replays.
//
// An id this Input did not hand out (ActionId::none(), or one past its declared actions) reads as
// "not held", never crashes, and is counted in unknown_ids(); the first is logged. Ids are plain
// indices: an id of another Input means whatever this one declared under that index. Input is a
// world resource: read it from any stage (it changes only between steps, in the step hook).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <spindle/base/result.h>

namespace spindle::core {

class Engine;

// A declared action of one Input: a small index, in declaration order.
class ActionId {
 public:
  static constexpr std::uint16_t kNoneValue = 0xffff;

  constexpr ActionId() = default;
  constexpr explicit ActionId(std::uint16_t value) : value_(value) {}
  static constexpr ActionId none() { return ActionId{}; }

  constexpr bool is_none() const { return value_ == kNoneValue; }
  constexpr std::uint16_t value() const { return value_; }
  friend constexpr bool operator==(ActionId a, ActionId b) = default;

 private:
  std::uint16_t value_ = kNoneValue;
};

class Input {
 public:
  static constexpr std::uint32_t kDefaultCapacity = 64;
  static constexpr std::uint32_t kMaxCapacity = ActionId::kNoneValue;  // ids stay below none()

  // Room for `capacity` actions (at most kMaxCapacity), fixed for the Input's life.
  explicit Input(std::uint32_t capacity = kDefaultCapacity);
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  // Declares an action. Refused (error Status, and a log line) for an empty name, a name
  // declared already, or a full Input.
  Result<ActionId> add_action(std::string_view name);
  // The action declared under `name`, or ActionId::none().
  ActionId find_action(std::string_view name) const;
  // Its name; "" for an id this Input did not hand out.
  std::string_view action_name(ActionId action) const;
  // A derived action, with its own name: up to kMaxParts parts declared before it, none of them
  // none() or unknown. Refused (error Status, logged) like add_action, or for bad parts.
  static constexpr std::size_t kMaxParts = 8;
  Result<ActionId> add_chord(std::string_view name, std::initializer_list<ActionId> parts);
  Result<ActionId> add_sequence(std::string_view name, std::initializer_list<ActionId> parts,
                                std::uint32_t window_steps);
  bool derived(ActionId a) const { return knows(a) && kinds_[a.value()] != Kind::Plain; }
  // What the source wrote this poll, enabled or not (for recorders); false for unknown ids.
  bool source_state(ActionId a) const { return knows(a) && now_[a.value()] != 0; }
  void set_enabled(ActionId a, bool enabled);  // unknown ids are counted
  bool enabled(ActionId a) const { return knows(a) && enabled_[a.value()] != 0; }

  std::uint32_t action_count() const { return static_cast<std::uint32_t>(names_.size()); }
  std::uint32_t capacity() const { return capacity_; }
  bool knows(ActionId action) const { return action.value() < names_.size(); }

  // A disabled action reads as up (never pressed or released) until enabled again.
  bool held(ActionId a) const { return knows(a) ? on(a) && now_[a.value()] != 0 : unknown(a); }
  bool pressed(ActionId a) const {
    return knows(a) ? on(a) && now_[a.value()] != 0 && before_[a.value()] == 0 : unknown(a);
  }
  bool released(ActionId a) const {
    return knows(a) ? on(a) && now_[a.value()] == 0 && before_[a.value()] != 0 : unknown(a);
  }
  // +1 while `positive` is held, -1 while `negative` is, 0 for both or neither.
  float axis(ActionId positive, ActionId negative) const {
    return (held(positive) ? 1.0f : 0.0f) - (held(negative) ? 1.0f : 0.0f);
  }

  // For InputSources (the step hook calls begin_frame() before polling).
  void begin_frame();  // this frame's state becomes the previous one
  void release_all();  // every action up, for a source that writes the whole state
  // False (and counted as unknown) for an id this Input did not hand out.
  bool set(ActionId a, bool down);
  void clear();  // every action up, now and in the previous frame; sequences start again
  // Works out chords and sequences from this poll's plain actions (the step hook calls it after
  // the source). Counts polls for the sequences' windows.
  void resolve();

  // Reads and writes with ids this Input did not hand out, since it was made.
  std::uint64_t unknown_ids() const { return unknown_ids_.load(std::memory_order_relaxed); }

 private:
  enum class Kind : std::uint8_t { Plain, Chord, Sequence };
  struct Derived {
    ActionId id;
    Kind kind;
    std::uint8_t count;
    std::uint8_t progress = 0;  // sequences: parts pressed so far
    std::uint32_t window = 0;   // sequences: steps allowed between parts
    std::uint64_t last = 0;     // sequences: the poll its last part was pressed in
    std::array<ActionId, kMaxParts> parts;
  };
  Status check_new_name(std::string_view name) const;
  Result<ActionId> add_derived(std::string_view name, std::initializer_list<ActionId> parts,
                               Kind kind, std::uint32_t window);
  bool on(ActionId a) const { return enabled_[a.value()] != 0; }
  bool unknown(ActionId a) const;  // counts and (the first time) logs; returns false

  std::uint32_t capacity_;
  std::vector<std::string> names_;  // by id; reserved to capacity_
  std::vector<std::uint8_t> now_;   // capacity_ entries, 1 = held
  std::vector<std::uint8_t> before_;
  std::vector<std::uint8_t> enabled_;  // capacity_ entries, 1 = enabled
  std::vector<Kind> kinds_;            // capacity_ entries
  std::vector<Derived> derived_;       // reserved to capacity_, in declaration order
  std::uint64_t polls_ = 0;
  mutable std::atomic<std::uint64_t> unknown_ids_{0};  // stages read concurrently
};

class InputSource {
 public:
  virtual ~InputSource() = default;
  // Writes the state of every action for simulation step `step` (Engine::tick()).
  virtual void poll(Input& input, std::uint64_t step) = 0;
};

// Holds actions during step ranges [from, to] (Engine::tick() values), inclusive; every other
// action is up.
class ScriptedInput final : public InputSource {
 public:
  void hold(ActionId action, std::uint64_t from, std::uint64_t to) {
    spans_.push_back({action, from, to});
  }
  void poll(Input& input, std::uint64_t step) override;

 private:
  struct Span {
    ActionId action;
    std::uint64_t from, to;
  };
  std::vector<Span> spans_;
};

// The engine's Input (a world resource), made on the first call: with room for `capacity`
// actions, or Input::kDefaultCapacity. Later calls return the same Input; asking then for more
// room than it has is refused in the log (the capacity is fixed).
Input& use_input(Engine& engine);
Input& use_input(Engine& engine, std::uint32_t capacity);

// Polls `source` into the engine's Input (made by use_input() if missing) at the start of every
// frame. The source must outlive the engine or be replaced by nullptr (the Input then keeps
// reporting nothing held).
void set_input_source(Engine& engine, InputSource* source);

}  // namespace spindle::core
