// Fuzz target `replay`: an input recording (core::InputReplay::parse) against a game's declared
// actions. A refusal names the file; an accepted replay drives the engine for its steps (the
// first 64) without failing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/input.h>
#include <spindle/gameplay/input_record.h>

#include "fuzz_support.h"

namespace {

struct Game {
  spindle::core::Engine engine{spindle::core::EngineConfig{
      .mode = spindle::jobs::Mode::Single, .workers = 1, .pin_workers = false}};
  spindle::core::Input* input = nullptr;
  Game() {
    input = &spindle::core::use_input(engine);
    for (const char* name : {"fire", "left", "right one", "jump"}) (void)input->add_action(name);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using spindle::fuzz::starts_with;
  spindle::fuzz::quiet_logs();
  static Game* game = new Game;  // lives for the process
  auto r = spindle::core::InputReplay::parse(spindle::fuzz::text_of(data, size), "fuzz.replay",
                                             game->engine);
  spindle::fuzz::outcome(r.ok(), r.ok() ? "" : r.message());
  if (!r) {
    SPINDLE_FUZZ_CHECK(starts_with(r.message(), "fuzz.replay"), r.message());
    return 0;
  }
  spindle::core::InputReplay& replay = r.value();
  SPINDLE_FUZZ_CHECK(replay.steps() <= spindle::core::InputReplay::kMaxSteps, "too many steps");
  spindle::core::set_input_source(game->engine, &replay);
  const std::uint64_t steps = std::min<std::uint64_t>(replay.steps(), 64);
  for (std::uint64_t i = 0; i < steps; ++i) game->engine.step();
  SPINDLE_FUZZ_CHECK(steps < replay.steps() || replay.finished(),
                     "a replay run to its end is not finished");
  spindle::core::set_input_source(game->engine, nullptr);
  return 0;
}
