// The platform layer headless, on SDL's dummy video driver: a window shows exactly what was
// presented (read back from SDL's renderer), keys, mouse buttons, a quit event and a virtual
// game controller (SDL's virtual joystick, hot-plugged) reach the engine's input actions.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <SDL.h>
#include <gtest/gtest.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/input.h>
#include <spindle/platform/devices.h>
#include <spindle/platform/paths.h>
#include <spindle/platform/run.h>
#include <spindle/platform/window.h>

#include "modes.h"

namespace spindle::platform {
namespace {

using core::ActionId;

std::uint32_t pixel(int x, int y) {
  return static_cast<std::uint32_t>((x * 7) & 0xff) |
         static_cast<std::uint32_t>((y * 5) & 0xff) << 8 |
         static_cast<std::uint32_t>((x ^ y) & 0xff) << 16 | 0xff000000u;
}

std::unique_ptr<Window> open_window(int w, int h) {
  auto opened = Window::open({.title = "test",
                              .width = w,
                              .height = h,
                              .resizable = false,
                              .vsync = false,
                              .driver = "dummy"});
  EXPECT_TRUE(opened.ok()) << opened.status().message();
  return opened.ok() ? std::move(opened).value() : nullptr;
}

TEST(Window, ShowsExactlyWhatWasPresented) {
  const std::unique_ptr<Window> window = open_window(64, 48);
  ASSERT_NE(window, nullptr);
  EXPECT_STREQ(window->driver(), "dummy");
  EXPECT_TRUE(window->read_pixels().empty()) << "nothing presented yet";
  std::vector<std::uint32_t> picture(64 * 48);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x) picture[y * 64 + x] = pixel(x, y);
  ASSERT_TRUE(window->present({picture.data(), 64, 48, 0}).ok());
  EXPECT_EQ(window->frames_presented(), 1u);
  EXPECT_GT(window->last_copy_ns(), 0);
  const std::vector<std::uint32_t> shown = window->read_pixels();
  ASSERT_EQ(shown.size(), picture.size());
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x)
      ASSERT_EQ(shown[y * 64 + x], picture[y * 64 + x]) << "pixel " << x << "," << y;
}

TEST(Window, StretchesASmallerPictureWithPaddedRows) {
  const std::unique_ptr<Window> window = open_window(64, 48);
  ASSERT_NE(window, nullptr);
  // 32x24 pixels in rows of 40: the padding must never show.
  std::vector<std::uint32_t> picture(40 * 24, 0xff00ff00u);
  for (int y = 0; y < 24; ++y)
    for (int x = 0; x < 32; ++x) picture[y * 40 + x] = pixel(x, y);
  ASSERT_TRUE(window->present({picture.data(), 32, 24, 40}).ok());
  const std::vector<std::uint32_t> shown = window->read_pixels();
  ASSERT_EQ(shown.size(), 64u * 48u);
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 64; ++x)
      ASSERT_EQ(shown[y * 64 + x], pixel(x / 2, y / 2)) << "pixel " << x << "," << y;
}

TEST(Window, BadSizesAndEmptyPicturesAreErrorsNamingThem) {
  auto zero = Window::open({.title = "zero", .width = 0, .height = 10, .driver = "dummy"});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("'zero'"), std::string::npos) << zero.status().message();
  EXPECT_NE(zero.status().message().find("0x10"), std::string::npos) << zero.status().message();
  auto driver = Window::open({.title = "w", .driver = "no-such-driver"});
  ASSERT_FALSE(driver.ok());
  EXPECT_NE(driver.status().message().find("no-such-driver"), std::string::npos)
      << driver.status().message();

  const std::unique_ptr<Window> window = open_window(16, 16);
  ASSERT_NE(window, nullptr);
  std::vector<std::uint32_t> picture(16 * 16, 0xffffffffu);
  EXPECT_FALSE(window->present({nullptr, 16, 16, 0}).ok());
  EXPECT_FALSE(window->present({picture.data(), 0, 16, 0}).ok());
  const core::Status narrow = window->present({picture.data(), 16, 16, 8});
  ASSERT_FALSE(narrow.ok());
  EXPECT_NE(narrow.message().find("stride 8"), std::string::npos) << narrow.message();
  EXPECT_EQ(window->frames_presented(), 0u);
  // A good picture after the bad ones still shows.
  ASSERT_TRUE(window->present({picture.data(), 16, 16, 0}).ok());
  EXPECT_EQ(window->read_pixels().at(0), 0xffffffffu);
}

// SDL's own choice of driver failing (no display, no EGL) stands in for a machine with no
// display: SDL_VIDEODRIVER names a driver that does not exist.
TEST(Window, WhenSdlFindsNoDisplayTheWindowRunsHeadless) {
  ::setenv("SDL_VIDEODRIVER", "no-such-display", 1);
  auto strict = Window::open(
      {.title = "strict", .width = 8, .height = 8, .vsync = false, .fallback_headless = false});
  auto opened = Window::open({.title = "fallback", .width = 8, .height = 8, .vsync = false});
  ::unsetenv("SDL_VIDEODRIVER");
  ASSERT_FALSE(strict.ok()) << "no fallback asked for: the failure is the result";
  EXPECT_NE(strict.status().message().find("'strict'"), std::string::npos)
      << strict.status().message();
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_TRUE(opened.value()->headless());
  EXPECT_STREQ(opened.value()->driver(), "dummy");
}

// An engine with the Devices attached and the actions a test binds.
struct Rig {
  core::Engine engine{test::engine_config(jobs::Mode::Single, 1)};
  std::unique_ptr<Devices> devices;
  core::Input* input = nullptr;

  explicit Rig(const DeviceConfig& config = {.driver = "dummy"}) {
    auto opened = Devices::open(config);
    EXPECT_TRUE(opened.ok()) << opened.status().message();
    devices = std::move(opened).value();
    input = &core::use_input(engine);
    devices->attach(engine);
    SDL_FlushEvents(SDL_FIRSTEVENT, SDL_LASTEVENT);  // nothing left over from another test
  }
  ActionId action(const char* name) { return input->add_action(name).value(); }
};

void push_key(SDL_Scancode code, bool down) {
  SDL_Event e{};
  e.type = down ? SDL_KEYDOWN : SDL_KEYUP;
  e.key.state = down ? SDL_PRESSED : SDL_RELEASED;
  e.key.keysym.scancode = code;
  ASSERT_EQ(SDL_PushEvent(&e), 1) << SDL_GetError();
}

TEST(Devices, KeysDriveTheirActionsFromTheNextFrame) {
  Rig rig;
  const ActionId jump = rig.action("jump"), left = rig.action("left");
  ASSERT_TRUE(rig.devices->bind_key(jump, "Space").ok());
  ASSERT_TRUE(rig.devices->bind_key(left, "Left").ok());
  rig.engine.step();
  EXPECT_FALSE(rig.input->held(jump));
  push_key(SDL_SCANCODE_SPACE, true);
  rig.engine.step();
  EXPECT_TRUE(rig.input->pressed(jump));
  EXPECT_FALSE(rig.input->held(left));
  EXPECT_TRUE(rig.devices->key_down("Space"));
  rig.engine.step();
  EXPECT_TRUE(rig.input->held(jump));
  EXPECT_FALSE(rig.input->pressed(jump));
  push_key(SDL_SCANCODE_SPACE, false);
  rig.engine.step();
  EXPECT_TRUE(rig.input->released(jump));
  EXPECT_FALSE(rig.devices->key_down("Space"));
}

TEST(Devices, APressReleasedWithinOneFrameIsStillSeenOnce) {
  Rig rig;
  const ActionId fire = rig.action("fire");
  ASSERT_TRUE(rig.devices->bind_key(fire, "Return").ok());
  push_key(SDL_SCANCODE_RETURN, true);
  push_key(SDL_SCANCODE_RETURN, false);
  rig.engine.step();
  EXPECT_TRUE(rig.input->pressed(fire));
  rig.engine.step();
  EXPECT_TRUE(rig.input->released(fire));
  rig.engine.step();
  EXPECT_FALSE(rig.input->held(fire));
}

TEST(Devices, RemappingMovesAnActionToAnotherKey) {
  Rig rig;
  const ActionId jump = rig.action("jump");
  ASSERT_TRUE(rig.devices->bind_key(jump, "Space").ok());
  rig.devices->unbind(jump);
  ASSERT_TRUE(rig.devices->bind_key(jump, "W").ok());
  EXPECT_EQ(rig.devices->binding_count(), 1u);
  push_key(SDL_SCANCODE_SPACE, true);
  rig.engine.step();
  EXPECT_FALSE(rig.input->held(jump));
  push_key(SDL_SCANCODE_W, true);
  rig.engine.step();
  EXPECT_TRUE(rig.input->held(jump));
}

TEST(Devices, MouseButtonsWheelAndPosition) {
  Rig rig;
  const ActionId shoot = rig.action("shoot");
  ASSERT_TRUE(rig.devices->bind_mouse_button(shoot, 1).ok());
  SDL_Event e{};
  e.type = SDL_MOUSEBUTTONDOWN;
  e.button.button = SDL_BUTTON_LEFT;
  e.button.state = SDL_PRESSED;
  e.button.x = 10;
  e.button.y = 20;
  ASSERT_EQ(SDL_PushEvent(&e), 1);
  SDL_Event w{};
  w.type = SDL_MOUSEWHEEL;
  w.wheel.y = 2;
  w.wheel.direction = SDL_MOUSEWHEEL_NORMAL;
  ASSERT_EQ(SDL_PushEvent(&w), 1);
  rig.engine.step();
  EXPECT_TRUE(rig.input->pressed(shoot));
  EXPECT_TRUE(rig.devices->mouse_down(1));
  EXPECT_EQ(rig.devices->mouse_x(), 10);
  EXPECT_EQ(rig.devices->mouse_y(), 20);
  EXPECT_EQ(rig.devices->wheel(), 2);
  rig.engine.step();
  EXPECT_EQ(rig.devices->wheel(), 0) << "the wheel counts one step's clicks";
  EXPECT_TRUE(rig.input->held(shoot));
}

TEST(Devices, BadNamesAreErrorsNamingThem) {
  Rig rig;
  const ActionId a = rig.action("a");
  const core::Status key = rig.devices->bind_key(a, "NoSuchKey");
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.message().find("'NoSuchKey'"), std::string::npos) << key.message();
  const core::Status button = rig.devices->bind_button(a, "zz");
  ASSERT_FALSE(button.ok());
  EXPECT_NE(button.message().find("'zz'"), std::string::npos) << button.message();
  EXPECT_FALSE(rig.devices->bind_axis(a, "sideways", 1.0f).ok());
  EXPECT_FALSE(rig.devices->bind_axis(a, "leftx", 0.5f).ok());
  EXPECT_FALSE(rig.devices->bind_mouse_button(a, 9).ok());
  EXPECT_FALSE(rig.devices->bind_button(a, "a", Devices::kMaxPlayers).ok());
  EXPECT_EQ(rig.devices->binding_count(), 0u) << "nothing half-bound is kept";
  EXPECT_FALSE(Devices::open({.driver = "dummy", .stick_dead_zone = 1.5f}).ok());
}

TEST(Devices, ControlsInTextBindLikeTheCalls) {
  Rig rig;
  const ActionId jump = rig.action("jump"), left = rig.action("left");
  ASSERT_TRUE(rig.devices->bind(jump, "key:Space").ok());
  ASSERT_TRUE(rig.devices->bind(jump, "mouse:3").ok());
  ASSERT_TRUE(rig.devices->bind(jump, "button:a@1").ok());
  ASSERT_TRUE(rig.devices->bind(left, "axis:leftx-").ok());
  EXPECT_EQ(rig.devices->binding_count(), 4u);
  for (const char* bad : {"Space", "key:", "key:NoSuchKey", "mouse:0", "mouse:12", "button:a@9",
                          "button:zz", "axis:leftx", "axis:leftx*", "wheel:up", ":a"}) {
    const core::Status s = rig.devices->bind(jump, bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find(bad), std::string::npos) << s.message();
  }
  EXPECT_EQ(rig.devices->binding_count(), 4u) << "refused controls bind nothing";
  SDL_Event e{};
  e.type = SDL_MOUSEBUTTONDOWN;
  e.button.button = SDL_BUTTON_RIGHT;
  e.button.state = SDL_PRESSED;
  ASSERT_EQ(SDL_PushEvent(&e), 1);
  rig.engine.step();
  EXPECT_TRUE(rig.input->pressed(jump)) << "mouse:3 is the right button";
}

TEST(Devices, AQuitEventRequestsQuit) {
  Rig rig;
  rig.engine.step();
  EXPECT_FALSE(rig.engine.quit_requested());
  SDL_Event e{};
  e.type = SDL_QUIT;
  ASSERT_EQ(SDL_PushEvent(&e), 1);
  rig.engine.step();
  EXPECT_TRUE(rig.devices->quit_seen());
  EXPECT_TRUE(rig.engine.quit_requested());
}

// Paused, no step runs and actions keep their state, but events are still pumped every frame:
// the window answers, quit works, and a pause menu can read the keys themselves.
TEST(Devices, WhilePausedEventsArePumpedEveryFrame) {
  Rig rig;
  const ActionId jump = rig.action("jump");
  ASSERT_TRUE(rig.devices->bind(jump, "key:Space").ok());
  rig.engine.game_clock().pause();
  push_key(SDL_SCANCODE_P, true);
  rig.engine.frame(rig.engine.config().fixed_step_ns * 2);
  EXPECT_EQ(rig.engine.last_frame().steps, 0u);
  EXPECT_TRUE(rig.devices->key_down("P")) << "pumped by the frame, with no step";
  push_key(SDL_SCANCODE_SPACE, true);
  SDL_Event quit{};
  quit.type = SDL_QUIT;
  ASSERT_EQ(SDL_PushEvent(&quit), 1);
  rig.engine.frame(rig.engine.config().fixed_step_ns * 2);
  EXPECT_TRUE(rig.engine.quit_requested());
  EXPECT_FALSE(rig.input->held(jump)) << "no step ran: actions keep their state";
  rig.engine.game_clock().resume();
  rig.engine.step();
  EXPECT_TRUE(rig.input->pressed(jump)) << "the first step after the pause sees the press";
}

TEST(Devices, FocusLossReleasesHeldKeys) {
  Rig rig;
  const std::unique_ptr<Window> window = open_window(16, 16);
  ASSERT_NE(window, nullptr);
  rig.devices->watch(*window);
  const ActionId run = rig.action("run");
  ASSERT_TRUE(rig.devices->bind_key(run, "Left Shift").ok());
  push_key(SDL_SCANCODE_LSHIFT, true);
  rig.engine.step();
  ASSERT_TRUE(rig.input->held(run));
  SDL_Event e{};
  e.type = SDL_WINDOWEVENT;
  e.window.event = SDL_WINDOWEVENT_FOCUS_LOST;
  e.window.windowID = window->sdl_id();
  ASSERT_EQ(SDL_PushEvent(&e), 1);
  rig.engine.step();
  EXPECT_FALSE(window->focused());
  EXPECT_FALSE(rig.input->held(run)) << "a key released while away must not stay down";
}

// A virtual game controller: SDL maps its buttons and axes in GameController order.
struct VirtualPad {
  int device = -1;
  SDL_Joystick* joystick = nullptr;

  VirtualPad() {
    SDL_VirtualJoystickDesc desc{};
    desc.version = SDL_VIRTUAL_JOYSTICK_DESC_VERSION;
    desc.type = SDL_JOYSTICK_TYPE_GAMECONTROLLER;
    desc.naxes = SDL_CONTROLLER_AXIS_MAX;
    desc.nbuttons = SDL_CONTROLLER_BUTTON_MAX;
    desc.axis_mask = (1u << SDL_CONTROLLER_AXIS_MAX) - 1;
    desc.button_mask = (1u << SDL_CONTROLLER_BUTTON_MAX) - 1;
    desc.name = "spindle test pad";
    device = SDL_JoystickAttachVirtualEx(&desc);
    EXPECT_GE(device, 0) << SDL_GetError();
    if (device >= 0) joystick = SDL_JoystickOpen(device);
    EXPECT_NE(joystick, nullptr) << SDL_GetError();
    trigger(SDL_CONTROLLER_AXIS_TRIGGERLEFT, 0.0f);  // a trigger at rest
    trigger(SDL_CONTROLLER_AXIS_TRIGGERRIGHT, 0.0f);
  }
  ~VirtualPad() { detach(); }
  void detach() {
    if (joystick != nullptr) SDL_JoystickClose(joystick);
    joystick = nullptr;
    if (device >= 0) SDL_JoystickDetachVirtual(device);
    device = -1;
  }
  void axis(SDL_GameControllerAxis a, Sint16 v) { SDL_JoystickSetVirtualAxis(joystick, a, v); }
  // SDL maps a joystick's -32768..32767 onto a trigger's 0..32767.
  void trigger(SDL_GameControllerAxis a, float pulled) {
    SDL_JoystickSetVirtualAxis(joystick, a,
                               static_cast<Sint16>(std::lround(pulled * 65535.0f) - 32768));
  }
  void button(SDL_GameControllerButton b, bool down) {
    SDL_JoystickSetVirtualButton(joystick, b, down ? 1 : 0);
  }
};

TEST(Devices, AControllerArrivesIsReadThroughDeadZonesAndLeaves) {
  Rig rig;
  const ActionId jump = rig.action("jump"), right = rig.action("right"), gas = rig.action("gas");
  ASSERT_TRUE(rig.devices->bind_button(jump, "a").ok());
  ASSERT_TRUE(rig.devices->bind_axis(right, "leftx", 1.0f, 0).ok());
  ASSERT_TRUE(rig.devices->bind_axis(gas, "righttrigger", 1.0f).ok());
  VirtualPad pad;
  ASSERT_NE(pad.joystick, nullptr);
  rig.engine.step();
  ASSERT_EQ(rig.devices->players(), 1);
  ASSERT_TRUE(rig.devices->connected(0));
  EXPECT_FALSE(rig.input->held(gas)) << "a trigger at rest";

  // Inside the radial dead zone (0.2): nothing, on either axis.
  pad.axis(SDL_CONTROLLER_AXIS_LEFTX, 4000);   // 0.12
  pad.axis(SDL_CONTROLLER_AXIS_LEFTY, -4000);  // |v| = 0.17
  rig.engine.step();
  EXPECT_EQ(rig.devices->stick(0, Stick::Left).x, 0.0f);
  EXPECT_EQ(rig.devices->stick(0, Stick::Left).y, 0.0f);
  // Full right: 1, direction kept; the action is held past axis_press.
  pad.axis(SDL_CONTROLLER_AXIS_LEFTX, 32767);
  pad.axis(SDL_CONTROLLER_AXIS_LEFTY, 0);
  rig.engine.step();
  EXPECT_NEAR(rig.devices->stick(0, Stick::Left).x, 1.0f, 1e-5f);
  EXPECT_TRUE(rig.input->held(right));
  // Half-way along the diagonal: magnitude rescaled from [0.2, 1] to [0, 1], direction kept.
  pad.axis(SDL_CONTROLLER_AXIS_LEFTX, 11585);  // 0.3536 each: |v| = 0.5
  pad.axis(SDL_CONTROLLER_AXIS_LEFTY, 11585);
  rig.engine.step();
  const StickValue s = rig.devices->stick(0, Stick::Left);
  EXPECT_NEAR(std::hypot(s.x, s.y), (0.5f - 0.2f) / 0.8f, 1e-3f);
  EXPECT_NEAR(s.x, s.y, 1e-6f);
  EXPECT_FALSE(rig.input->held(right)) << "0.265 along x is below axis_press";
  // Triggers: axial dead zone 0.1.
  pad.trigger(SDL_CONTROLLER_AXIS_TRIGGERRIGHT, 0.09f);
  rig.engine.step();
  EXPECT_EQ(rig.devices->trigger(0, Trigger::Right), 0.0f);
  EXPECT_FALSE(rig.input->held(gas));
  pad.trigger(SDL_CONTROLLER_AXIS_TRIGGERRIGHT, 1.0f);
  rig.engine.step();
  EXPECT_NEAR(rig.devices->trigger(0, Trigger::Right), 1.0f, 1e-5f);
  EXPECT_TRUE(rig.input->held(gas));

  pad.button(SDL_CONTROLLER_BUTTON_A, true);
  rig.engine.step();
  EXPECT_TRUE(rig.input->pressed(jump));
  EXPECT_TRUE(rig.devices->button_down(0, "a"));

  pad.detach();
  rig.engine.step();
  EXPECT_EQ(rig.devices->players(), 0);
  EXPECT_FALSE(rig.input->held(jump)) << "a controller that left holds nothing";
  EXPECT_FALSE(rig.input->held(gas));
}

TEST(Run, RunsFramesPresentsEachAndStopsOnQuit) {
  Rig rig;
  const std::unique_ptr<Window> window = open_window(32, 32);
  ASSERT_NE(window, nullptr);
  std::vector<std::uint32_t> picture(32 * 32, 0xff0000ffu);
  std::uint64_t asked = 0;
  const auto show = [&] {
    ++asked;
    return PixelView{picture.data(), 32, 32, 0};
  };
  const RunStats stats =
      run(rig.engine, window.get(), show, {.max_frames = 5, .fixed_delta_ns = 16'666'667});
  EXPECT_EQ(stats.frames, 5u);
  EXPECT_EQ(asked, 5u);
  EXPECT_EQ(window->frames_presented(), 5u);
  EXPECT_EQ(stats.present_errors, 0u);
  EXPECT_GT(stats.median_ms, 0.0);
  EXPECT_GE(stats.p99_ms, stats.median_ms);
  // A quit event ends the loop at the frame that pumps it, however many frames were allowed.
  SDL_Event e{};
  e.type = SDL_QUIT;
  ASSERT_EQ(SDL_PushEvent(&e), 1);
  const RunStats after = run(rig.engine, window.get(), show, {.max_frames = 1000});
  EXPECT_EQ(after.frames, 1u);
  EXPECT_TRUE(rig.engine.quit_requested());
}

// Faults: the player closes the window while a frame runs (here a stage sends the window
// manager's close event in frame 3). The frame finishes, the next one sees the close and asks to
// quit, run() stops after it: every step that ran is whole, nothing runs after, nothing hangs.
TEST(Run, AWindowClosedDuringAFrameEndsTheRunCleanlyAfterTheNextFrame) {
  Rig rig;
  const std::unique_ptr<Window> window = open_window(16, 16);
  ASSERT_NE(window, nullptr);
  rig.devices->watch(*window);
  struct Counter {
    std::uint64_t steps = 0;
  };
  rig.engine.world().set_resource<Counter>();
  const std::uint32_t id = window->sdl_id();
  rig.engine.add_stage({.name = "close_in_frame_3",
                        .phase = core::Phase::Gameplay,
                        .access = core::Access{}.write<Counter>(),
                        .run = [id](core::StageContext& ctx) {
                          ++ctx.world().resource<Counter>()->steps;
                          if (ctx.tick() != 2) return;
                          SDL_Event e{};
                          e.type = SDL_WINDOWEVENT;
                          e.window.event = SDL_WINDOWEVENT_CLOSE;
                          e.window.windowID = id;
                          SDL_PushEvent(&e);
                        }});
  std::vector<std::uint32_t> picture(16 * 16, 0xff00ff00u);
  const auto show = [&] { return PixelView{picture.data(), 16, 16, 0}; };
  const RunStats stats =
      run(rig.engine, window.get(), show, {.max_frames = 600, .fixed_delta_ns = 16'666'667});
  EXPECT_EQ(stats.frames, 4u) << "closed in frame 3: frame 4 sees it and is the last";
  EXPECT_TRUE(rig.engine.quit_requested());
  EXPECT_EQ(rig.engine.world().resource<Counter>()->steps, rig.engine.tick());
  EXPECT_EQ(window->frames_presented(), 4u);
}

// run() given an image (render::Image's shape) shows it as it is after each frame: a stage that
// repaints it is what the window shows, with the image's row padding skipped.
TEST(Run, ShowsAnImageAsItIsAfterEachFrame) {
  struct Picture {  // 3 x 2 pixels, rows 4 pixels apart
    std::vector<std::uint32_t> pixels = std::vector<std::uint32_t>(8, 0);
    const std::uint32_t* data() const { return pixels.data(); }
    int width() const { return 3; }
    int height() const { return 2; }
    int stride() const { return 4; }
  } picture;
  Rig rig;
  const std::unique_ptr<Window> window = open_window(3, 2);
  ASSERT_NE(window, nullptr);
  rig.engine.add_stage(
      {.name = "paint", .phase = core::Phase::Gameplay, .run = [&](core::StageContext& ctx) {
         for (std::uint32_t& p : picture.pixels)
           p = 0xff000000u | static_cast<std::uint32_t>(ctx.tick() + 1);
       }});
  const RunStats stats =
      run(rig.engine, window.get(), picture, {.max_frames = 3, .fixed_delta_ns = 16'666'667});
  EXPECT_EQ(stats.frames, 3u);
  EXPECT_EQ(window->frames_presented(), 3u);
  const std::vector<std::uint32_t> shown = window->read_pixels();
  ASSERT_EQ(shown.size(), 6u);
  for (const std::uint32_t p : shown) EXPECT_EQ(p, picture.pixels[0]) << "the last frame's paint";
}

TEST(Run, FixedDeltaAdvancesTheSameGameTimeWhateverTheMachine) {
  Rig rig;
  const std::uint64_t before = rig.engine.tick();
  // One fixed step per frame, however long the frames really take (headless, no pacing).
  const RunStats stats =
      run(rig.engine, nullptr, {}, {.max_frames = 10, .fixed_delta_ns = core::kNsPerSecond / 60});
  EXPECT_EQ(stats.frames, 10u);
  EXPECT_EQ(rig.engine.tick() - before, 10u);
}

// Every binding of `d` in text, in order: what a map must reproduce.
std::vector<std::string> controls(const Devices& d) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < d.binding_count(); ++k)
    out.push_back(std::to_string(d.binding_action(k).value()) + " " + d.control_text(k));
  return out;
}

TEST(InputMap, ASavedMapLoadsBackToTheSameBindings) {
  Rig rig;
  const ActionId jump = rig.action("jump"), left = rig.action("left"), menu = rig.action("menu");
  for (const auto& [action, control] :
       {std::pair{jump, "key:Space"}, std::pair{jump, "button:a@1"}, std::pair{left, "key:,"},
        std::pair{left, "axis:leftx-"}, std::pair{left, "key:Keypad #"}, std::pair{menu, "mouse:3"},
        std::pair{menu, "axis:righttrigger+@0"}}) {
    ASSERT_TRUE(rig.devices->bind(action, control).ok()) << control;
  }
  const core::Result<std::string> text = rig.devices->map_text(*rig.input);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_NE(text.value().find("left = key:,, axis:leftx-, key:Keypad #\n"), std::string::npos)
      << text.value();

  const std::string path =
      (std::filesystem::temp_directory_path() / "spindle_input_map_test.map").string();
  ASSERT_TRUE(rig.devices->save_map(path, *rig.input).ok());
  Rig other;
  for (const char* name : {"jump", "left", "menu"}) other.action(name);
  const core::Status loaded = other.devices->load_map(path, *other.input);
  std::remove(path.c_str());
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  std::vector<std::string> want = controls(*rig.devices), got = controls(*other.devices);
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);

  // The loaded map drives the actions: "," is the comma key.
  push_key(SDL_SCANCODE_COMMA, true);
  other.engine.step();
  EXPECT_TRUE(other.input->pressed(left));
}

// A player's map over the game's defaults: the actions it names are rebound (or unbound), the
// others keep what the game gave them.
TEST(InputMap, LoadingReplacesTheActionsItNamesAndKeepsTheOthers) {
  Rig rig;
  const ActionId jump = rig.action("jump"), fire = rig.action("fire"), pause = rig.action("pause");
  ASSERT_TRUE(rig.devices->bind(jump, "key:Space").ok());
  ASSERT_TRUE(rig.devices->bind(fire, "key:F").ok());
  ASSERT_TRUE(rig.devices->bind(pause, "key:P").ok());
  const core::Status s = rig.devices->parse_map("# mine\n\n  jump = key:W , button:b\r\npause =\n",
                                                "mine.map", *rig.input);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<std::string> got = controls(*rig.devices);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"0 button:b", "0 key:W", "1 key:F"}));
  push_key(SDL_SCANCODE_W, true);
  push_key(SDL_SCANCODE_F, true);
  push_key(SDL_SCANCODE_P, true);
  rig.engine.step();
  EXPECT_TRUE(rig.input->held(jump));
  EXPECT_TRUE(rig.input->held(fire));
  EXPECT_FALSE(rig.input->held(pause)) << "the map left pause unbound";
}

TEST(InputMap, BadLinesNameTheFileAndLineAndChangeNothing) {
  Rig rig;
  const ActionId jump = rig.action("jump"), left = rig.action("left"), right = rig.action("right");
  const ActionId both = rig.input->add_chord("both", {left, right}).value();
  (void)both;
  ASSERT_TRUE(rig.devices->bind(jump, "key:Space").ok());
  ASSERT_TRUE(rig.devices->bind(left, "key:Left").ok());
  const std::vector<std::string> before = controls(*rig.devices);
  struct Case {
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {"jump = key:W\nleft key:A\n", "bad.map:2: expected 'action = control"},
      {"jump = key:W\n = key:A\n", "bad.map:2: no action name"},
      {"# ok\njump = key:W\nfly = key:F\n", "bad.map:3: the game declares no action 'fly'"},
      {"both = key:B\n", "bad.map:1: 'both' is a chord or a sequence"},
      {"jump = key:W\njump = key:X\n", "bad.map:2: 'jump' is mapped already on line 1"},
      {"left = key:A, key:NoSuchKey\n", "bad.map:1: control 'key:NoSuchKey': no key named"},
      {"left = key:A, button:a@9\n", "bad.map:1: control 'button:a@9'"},
      {"left = key:A\x01\n", "bad.map:1: a control character (byte 0x01)"},
      {"right = wheel:up\n", "bad.map:1: control 'wheel:up': unknown kind"},
  };
  for (const Case& c : cases) {
    const core::Status s = rig.devices->parse_map(c.text, "bad.map", *rig.input);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
    EXPECT_EQ(controls(*rig.devices), before) << "a refused map changes nothing: " << c.text;
  }
  const std::string huge(Devices::kMaxMapBytes + 1, '#');
  const core::Status too_big = rig.devices->parse_map(huge, "huge.map", *rig.input);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.message().find("huge.map: 1048577 bytes, over the limit"), std::string::npos)
      << too_big.message();
  const core::Status missing = rig.devices->load_map("/nonexistent/player.map", *rig.input);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("/nonexistent/player.map"), std::string::npos);
  EXPECT_EQ(controls(*rig.devices), before);
}

// Every truncation of a good map and every single-byte change either loads or is refused whole:
// never a crash, never a half-applied map.
TEST(InputMap, TruncatedAndDamagedMapsLoadWholeOrNotAtAll) {
  Rig rig;
  const ActionId jump = rig.action("jump"), left = rig.action("left");
  (void)left;
  ASSERT_TRUE(rig.devices->bind(jump, "key:Space").ok());
  const std::string good = "# map\njump = key:W, button:a@1, mouse:2\nleft = axis:leftx-, key:,\n";
  std::uint32_t seed = 12345;
  for (std::size_t cut = 0; cut <= good.size() * 4; ++cut) {
    std::string text = good;
    if (cut <= good.size()) {
      text.resize(cut);
    } else {
      seed = seed * 1664525u + 1013904223u;
      text[(seed >> 8) % text.size()] = static_cast<char>(seed >> 24);
    }
    Rig fresh;
    fresh.action("jump");
    fresh.action("left");
    ASSERT_TRUE(fresh.devices->bind(jump, "key:Space").ok());
    const std::vector<std::string> before = controls(*fresh.devices);
    const core::Status s = fresh.devices->parse_map(text, "cut.map", *fresh.input);
    if (!s.ok()) {
      EXPECT_EQ(controls(*fresh.devices), before) << text;
      EXPECT_EQ(s.message().rfind("cut.map:", 0), 0u) << s.message();
    }
  }
}

TEST(Devices, TheStickFilterSmoothsStepByStep) {
  Rig rig({.driver = "dummy", .stick_filter = 0.5f});
  const ActionId right = rig.action("right");
  ASSERT_TRUE(rig.devices->bind_axis(right, "leftx", 1.0f).ok());
  VirtualPad pad;
  ASSERT_NE(pad.joystick, nullptr);
  rig.engine.step();
  ASSERT_EQ(rig.devices->players(), 1);
  pad.axis(SDL_CONTROLLER_AXIS_LEFTX, 32767);
  const float expected[] = {0.5f, 0.75f, 0.875f};
  for (const float x : expected) {
    rig.engine.step();
    EXPECT_NEAR(rig.devices->stick(0, Stick::Left).x, x, 1e-4f);
  }
  EXPECT_TRUE(rig.input->held(right)) << "0.875 is past axis_press";
  pad.axis(SDL_CONTROLLER_AXIS_LEFTX, 0);
  rig.engine.step();
  EXPECT_NEAR(rig.devices->stick(0, Stick::Left).x, 0.4375f, 1e-4f) << "eases back, no snap";
  EXPECT_FALSE(rig.input->held(right));
  EXPECT_FALSE(Devices::open({.driver = "dummy", .stick_filter = 1.0f}).ok())
      << "a filter of 1 would never move";
}

// Input latency: a key event pumped before a frame is seen by that frame's first simulation
// step, however many steps the frame runs (the issue's bound is one step). Frames of three steps
// each, the key pressed between them: the step that first reads it pressed is the first of the
// next frame, never a later one.
// A script drives the devices through the bindings and a loaded map, as a player would: what a
// new user could not do without pushing SDL events by hand (ScriptedInput skips the map).
TEST(Devices, InjectedControlsGoThroughTheLoadedMap) {
  Rig rig;
  const ActionId jump = rig.action("jump"), left = rig.action("left"), fire = rig.action("fire");
  ASSERT_TRUE(rig.devices->bind_key(jump, "Up").ok());  // a default the map replaces
  ASSERT_TRUE(rig.devices
                  ->parse_map("jump = key:Space, button:a@1\nleft = axis:leftx-@1\n"
                              "fire = mouse:1, axis:righttrigger+\n",
                              "controls.map", *rig.input)
                  .ok());
  rig.engine.step();
  EXPECT_EQ(rig.devices->players(), 0);

  ASSERT_TRUE(rig.devices->inject("key:Up").ok());  // unbound by the map now
  rig.engine.step();
  EXPECT_FALSE(rig.input->held(jump));
  ASSERT_TRUE(rig.devices->inject("key:Up", 0).ok());
  ASSERT_TRUE(rig.devices->inject("key:Space").ok());
  rig.engine.step();
  EXPECT_TRUE(rig.input->pressed(jump));
  EXPECT_TRUE(rig.devices->key_down("Space"));
  ASSERT_TRUE(rig.devices->inject("key:Space", 0).ok());
  rig.engine.step();
  EXPECT_TRUE(rig.input->released(jump));

  // Player 1's button: a scripted controller connects for player 1; player 0's does not count.
  ASSERT_TRUE(rig.devices->inject("button:a@0").ok());
  rig.engine.step();
  EXPECT_TRUE(rig.devices->connected(0));
  EXPECT_FALSE(rig.input->held(jump)) << "the map binds player 1's a only";
  ASSERT_TRUE(rig.devices->inject("button:a@1").ok());
  ASSERT_TRUE(rig.devices->inject("button:a@1", 0).ok());  // pressed and released before a step
  rig.engine.step();
  EXPECT_TRUE(rig.input->pressed(jump)) << "a press between two steps counts once";
  EXPECT_EQ(rig.devices->players(), 2);
  rig.engine.step();
  EXPECT_FALSE(rig.input->held(jump));

  // Axes go through the dead zone and axis_press: "axis:leftx-" at 0.3 is inside neither.
  ASSERT_TRUE(rig.devices->inject("axis:leftx-@1", 0.3f).ok());
  rig.engine.step();
  EXPECT_NEAR(rig.devices->stick(1, Stick::Left).x, -(0.3f - 0.2f) / 0.8f, 1e-3f);
  EXPECT_FALSE(rig.input->held(left));
  ASSERT_TRUE(rig.devices->inject("axis:leftx-@1").ok());
  rig.engine.step();
  EXPECT_NEAR(rig.devices->stick(1, Stick::Left).x, -1.0f, 1e-4f);
  EXPECT_TRUE(rig.input->held(left));
  ASSERT_TRUE(rig.devices->inject("axis:leftx-@1", 0).ok());
  rig.engine.step();
  EXPECT_FALSE(rig.input->held(left));

  ASSERT_TRUE(rig.devices->inject("axis:righttrigger+").ok());  // player 0's
  rig.engine.step();
  EXPECT_TRUE(rig.input->held(fire));
  ASSERT_TRUE(rig.devices->inject("axis:righttrigger+", 0).ok());
  ASSERT_TRUE(rig.devices->inject("mouse:1").ok());
  rig.engine.step();
  EXPECT_TRUE(rig.input->held(fire));
  EXPECT_TRUE(rig.devices->mouse_down(1));

  // Bad controls and values are errors naming them, and change nothing.
  EXPECT_EQ(rig.devices->inject("key:Nope").message().rfind("devices: control 'key:Nope': ", 0),
            0u);
  EXPECT_FALSE(rig.devices->inject("button:a@9").ok());
  EXPECT_FALSE(rig.devices->inject("joystick:3").ok());
  EXPECT_EQ(rig.devices->inject("key:Space", 2.0f).message(),
            "devices: inject 'key:Space': value 2.000000 is outside -1..1");
  EXPECT_FALSE(rig.devices->inject("key:Space", std::nanf("")).ok());
  rig.engine.step();
  EXPECT_FALSE(rig.devices->key_down("Space"));
}

TEST(Devices, AnEventIsSeenByTheFirstStepAfterIt) {
  Rig rig;
  const ActionId jump = rig.action("jump");
  ASSERT_TRUE(rig.devices->bind_key(jump, "Space").ok());
  std::vector<std::uint64_t> pressed_at;
  rig.engine.add_stage(
      {.name = "watch", .phase = core::Phase::Gameplay, .run = [&](core::StageContext& ctx) {
         if (ctx.world().resource<core::Input>()->pressed(jump)) pressed_at.push_back(ctx.tick());
       }});
  constexpr std::int64_t kStep = core::kNsPerSecond / 60;
  rig.engine.frame(3 * kStep);
  for (int round = 0; round < 3; ++round) {
    const std::uint64_t next_step = rig.engine.tick();
    push_key(SDL_SCANCODE_SPACE, true);
    push_key(SDL_SCANCODE_SPACE, false);  // tapped between frames: still seen
    rig.engine.frame(3 * kStep);
    ASSERT_EQ(pressed_at.size(), static_cast<std::size_t>(round + 1));
    EXPECT_EQ(pressed_at.back(), next_step) << "round " << round;
  }
}

TEST(Paths, PrefPathIsMadeWritableAndBadNamesAreRefused) {
  const std::filesystem::path home = std::filesystem::temp_directory_path() / "spindle_paths_test";
  std::filesystem::remove_all(home);
  const char* old = std::getenv("XDG_DATA_HOME");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("XDG_DATA_HOME", home.c_str(), 1);
  const core::Result<std::string> prefs = pref_path("Spindle Test", "paths");
  if (old != nullptr) {
    ::setenv("XDG_DATA_HOME", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_DATA_HOME");
  }
  ASSERT_TRUE(prefs.ok()) << prefs.status().message();
  EXPECT_EQ(prefs.value(), (home / "Spindle Test" / "paths").string() + "/");
  EXPECT_TRUE(std::filesystem::is_directory(prefs.value()));
  std::FILE* f = std::fopen((prefs.value() + "save.txt").c_str(), "wb");
  ASSERT_NE(f, nullptr) << "the preferences folder can be written";
  std::fclose(f);
  std::filesystem::remove_all(home);

  for (const auto& [org, app] : {std::pair{"", "game"}, std::pair{"org", "a/b"},
                                 std::pair{"or\ng", "game"}, std::pair{"org", "..\\up"}}) {
    const core::Result<std::string> bad = pref_path(org, app);
    EXPECT_FALSE(bad.ok()) << org << " " << app;
  }
  const core::Result<std::string> base = base_path();
  ASSERT_TRUE(base.ok()) << base.status().message();
  EXPECT_EQ(base.value(),
            std::filesystem::canonical("/proc/self/exe").parent_path().string() + "/");
}

}  // namespace
}  // namespace spindle::platform
