// Recording and replaying input, per simulation step. InputRecorder wraps the game's source
// (the platform's Devices, a ScriptedInput) and notes which actions each simulation step saw;
// InputReplay feeds them back, so a replay reproduces the recorded run's world hash in every job
// mode and worker count (the engine is deterministic given each step's input).
//
// Usage:
//
//   spindle::core::InputRecorder recorder(engine, devices.get());  // wraps the real source
//   spindle::core::set_input_source(engine, &recorder);
//   ... play ...
//   if (auto s = recorder.save("run.input"); !s) log(s.message());
//
//   // Later, the same game set up the same way (same actions declared):
//   auto replay = spindle::core::InputReplay::load("run.input", engine);  // errors name the
//   if (!replay) { log(replay.status().message()); return 1; }            // file and the line
//   spindle::core::set_input_source(engine, &replay.value());
//   while (!replay.value().finished()) engine.step();                     // one step per frame
//
// The file is text, one line per run of steps with the same actions held:
//
//   spindle-input 1
//   actions fire left right          the declared actions, by name (replays map them by name)
//   steps 300                        how many steps follow
//   120 -                            120 steps with nothing held
//   3 fire left                      3 steps with fire and left held
//   ...                              (the counts add up to `steps`)
//
// Input is polled once per simulation step (gameplay/input.h) and the recorder notes each step's
// state, so a replay is exact however the recording's frames grouped their steps: step() one
// step at a time, or frame() with any deltas. A bad file (wrong header, unknown action,
// counts that are not numbers, or that do not add up, a truncated or huge file) is refused with
// the file's name and the line, and nothing is kept. Recording allocates only when its reserve
// (`reserve_runs`) fills; replaying allocates nothing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <spindle/base/result.h>
#include <spindle/gameplay/input.h>

namespace spindle::core {

class Engine;

class InputRecorder final : public InputSource {
 public:
  // Records what `source` (may be null: nothing held) writes, from the engine's current tick.
  explicit InputRecorder(Engine& engine, InputSource* source, std::size_t reserve_runs = 4096);

  void poll(Input& input, std::uint64_t step) override;
  // The recording so far (steps up to the engine's current tick), as the file holds it.
  std::string text() const;
  Status save(const std::string& path) const;
  std::uint64_t steps() const;  // recorded so far

 private:
  struct Run {
    std::uint64_t first_step;  // relative to start_tick_
    std::uint32_t held_begin;  // into held_
    std::uint32_t held_count;
  };
  Engine* engine_;
  InputSource* source_;
  std::uint64_t start_tick_;
  std::vector<Run> runs_;
  std::vector<std::uint16_t> held_;  // action ids, per run
  std::vector<std::uint16_t> now_;   // scratch
};

class InputReplay final : public InputSource {
 public:
  // The largest file and step count a replay accepts.
  static constexpr std::size_t kMaxBytes = 64u << 20;
  static constexpr std::uint64_t kMaxSteps = 1'000'000'000;

  // Parses `text` (named `name` in errors) against the engine's declared actions; the replay
  // starts at the engine's current tick.
  static Result<InputReplay> parse(std::string_view text, std::string_view name, Engine& engine);
  static Result<InputReplay> load(const std::string& path, Engine& engine);

  void poll(Input& input, std::uint64_t step) override;
  std::uint64_t steps() const { return steps_; }
  // The engine has run every recorded step.
  bool finished() const;

 private:
  InputReplay() = default;
  struct Run {
    std::uint64_t first_step;
    std::uint32_t held_begin;
    std::uint32_t held_count;
  };
  Engine* engine_ = nullptr;
  std::uint64_t start_tick_ = 0;
  std::uint64_t steps_ = 0;
  std::vector<Run> runs_;
  std::vector<ActionId> held_;
};

}  // namespace spindle::core
