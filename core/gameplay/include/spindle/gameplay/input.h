// Input as game code sees it: actions that are pressed (this frame), held, or released (this
// frame), fed by an InputSource once per frame. The platform layer adds keyboard, mouse and
// controller sources; ScriptedInput replays a fixed script for tests, demos and headless runs.
//
// Usage:
//
//   spindle::core::ScriptedInput script;
//   script.hold(spindle::core::Action::Fire, /*from frame*/ 10, /*to frame*/ 12);
//   spindle::core::set_input_source(engine, &script);  // polled before every frame
//   // in a system or stage:
//   const spindle::core::Input& in = *ctx.world().resource<spindle::core::Input>();
//   if (in.pressed(spindle::core::Action::Fire)) fire();
//   float turn = in.axis(spindle::core::Action::Right, spindle::core::Action::Left);  // -1..1
//
// Input is a world resource: read it from any stage (it changes only between frames).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <spindle/engine/engine.h>

namespace spindle::core {

enum class Action : std::uint8_t {
  Up,
  Down,
  Left,
  Right,
  Fire,
  Jump,
  Pause,
  Confirm,
  Cancel,
  Count
};
inline constexpr std::size_t kActionCount = static_cast<std::size_t>(Action::Count);
const char* to_string(Action action);

class Input {
 public:
  bool held(Action a) const { return now_[index(a)]; }
  bool pressed(Action a) const { return now_[index(a)] && !before_[index(a)]; }
  bool released(Action a) const { return !now_[index(a)] && before_[index(a)]; }
  // +1 while `positive` is held, -1 while `negative` is, 0 for both or neither.
  float axis(Action positive, Action negative) const {
    return (held(positive) ? 1.0f : 0.0f) - (held(negative) ? 1.0f : 0.0f);
  }
  // Called by the engine before polling: this frame's state becomes the previous one.
  void begin_frame() { before_ = now_; }
  void set(Action a, bool down) { now_[index(a)] = down; }
  void clear() {
    now_.fill(false);
    before_.fill(false);
  }

 private:
  static std::size_t index(Action a) { return static_cast<std::size_t>(a); }
  std::array<bool, kActionCount> now_{};
  std::array<bool, kActionCount> before_{};
};

class InputSource {
 public:
  virtual ~InputSource() = default;
  // Writes the state of every action for frame number `frame`.
  virtual void poll(Input& input, std::uint64_t frame) = 0;
};

// Holds actions during frame ranges [from, to], inclusive.
class ScriptedInput final : public InputSource {
 public:
  void hold(Action action, std::uint64_t from, std::uint64_t to) {
    spans_.push_back({action, from, to});
  }
  void poll(Input& input, std::uint64_t frame) override {
    std::array<bool, kActionCount> down{};
    for (const Span& s : spans_) {
      if (frame >= s.from && frame <= s.to) down[static_cast<std::size_t>(s.action)] = true;
    }
    for (std::size_t i = 0; i < kActionCount; ++i) input.set(static_cast<Action>(i), down[i]);
  }

 private:
  struct Span {
    Action action;
    std::uint64_t from, to;
  };
  std::vector<Span> spans_;
};

// Polls `source` into the world's Input resource (created here if missing) at the start of every
// frame. The source must outlive the engine or be replaced by nullptr (the Input then keeps
// reporting nothing held).
void set_input_source(Engine& engine, InputSource* source);

}  // namespace spindle::core
