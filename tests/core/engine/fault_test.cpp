// Faults injected into a running engine, in every job mode: a stage or one of its jobs that throws
// (each kind of stage), a stage 100x slower than its estimate, 64 workers on this 2-core machine,
// quitting in the middle of a frame. Each must end in a report (the exception reaches the caller,
// the frame's stats say what happened), a recovery (the next steps run and the world goes on from
// what was committed) or a clean stop, and never hang: a watchdog ends the whole test binary
// with a message if a case takes longer than its limit, so CI fails instead of stalling.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <spindle/engine/engine.h>

#include "test_support.h"

namespace spindle::core::fault_test {
namespace {

using ::spindle::test::available_modes;

// Ends the process if not dismissed within `seconds`: a hung engine cannot be unwound from here.
class Watchdog {
 public:
  Watchdog(std::string what, int seconds) : what_(std::move(what)) {
    thread_ = std::thread([this, seconds] {
      std::unique_lock lock(mutex_);
      if (!cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) {
        std::fprintf(stderr, "watchdog: %s did not finish within %d s\n", what_.c_str(), seconds);
        std::fflush(stderr);
        std::_Exit(1);
      }
    });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

 private:
  std::string what_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

struct Tally {
  std::int64_t value = 0;
};
std::uint64_t spindle_hash(const Tally& t) {
  return static_cast<std::uint64_t>(t.value);
}

enum class Kind { Simulation, Presentation, ParallelChunk, NestedJob };
const char* to_string(Kind k) {
  switch (k) {
    case Kind::Simulation:
      return "a simulation stage";
    case Kind::Presentation:
      return "a presentation stage";
    case Kind::ParallelChunk:
      return "a chunk of a stage's parallel_for";
    case Kind::NestedJob:
      return "a job a stage started";
  }
  return "?";
}

// 64 entities whose Tally a "count" stage bumps every step through its command buffer (the
// committed state), and a stage of `kind` that throws in the fourth step only.
struct FaultyGame {
  Engine engine;
  std::atomic<bool> armed{true};
  std::atomic<int> runs{0};

  FaultyGame(jobs::Mode mode, std::uint32_t workers, Kind kind)
      : engine(test::engine_config(mode, workers)) {
    World& world = engine.world();
    for (int i = 0; i < 64; ++i) world.add<Tally>(world.create(), Tally{i});
    engine.add_stage(
        {.name = "count", .access = Access{}.write<Tally>(), .run = [](StageContext& ctx) {
           ctx.world().query<Tally>().each([](Entity, Tally& t) { t.value += 3; });
         }});
    // The fourth run of the stage: the fourth step (a presentation stage sees the tick after it).
    const auto fire = [this](const StageContext&) {
      return runs.fetch_add(1) == 3 && armed.exchange(false);
    };
    StageDesc faulty{.name = "faulty", .after = {"count"}};
    switch (kind) {
      case Kind::Simulation:
      case Kind::Presentation:
        faulty.simulation = kind == Kind::Simulation;
        faulty.run = [fire](StageContext& ctx) {
          if (fire(ctx)) throw std::runtime_error("fault in the stage");
        };
        break;
      case Kind::ParallelChunk:
        faulty.run = [fire](StageContext& ctx) {
          const bool now = fire(ctx);
          ctx.parallel_for(64, [now](std::uint32_t begin, std::uint32_t end) {
            if (now && begin <= 40 && 40 < end) throw std::runtime_error("fault in a chunk");
          });
        };
        break;
      case Kind::NestedJob:
        faulty.run = [fire](StageContext& ctx) {
          const bool now = fire(ctx);
          jobs::Counter done;
          for (int i = 0; i < 8; ++i) {
            ctx.jobs().run(done, {"nested", ctx.tag()}, [now, i] {
              if (now && i == 5) throw std::runtime_error("fault in a nested job");
            });
          }
          ctx.jobs().wait(done);
        };
        break;
    }
    engine.add_stage(std::move(faulty));
  }
};

TEST(Faults, AJobThatThrowsInEveryKindOfStageReachesTheCallerAndTheGameGoesOn) {
  SPINDLE_REQUIRE_ENGINE_EXCEPTIONS();
  for (const jobs::Mode mode : available_modes()) {
    for (const Kind kind :
         {Kind::Simulation, Kind::Presentation, Kind::ParallelChunk, Kind::NestedJob}) {
      const std::string what = std::string(jobs::to_string(mode)) + ", " + to_string(kind);
      SCOPED_TRACE(what);
      Watchdog watchdog(what, 30);
      FaultyGame game(mode, 2, kind);
      for (int i = 0; i < 3; ++i) game.engine.step();
      const std::uint64_t committed = game.engine.world().state_hash();
      EXPECT_THROW(game.engine.step(), std::runtime_error) << what;
      // The step that failed committed the stages that finished before the fault, at most; the
      // world of earlier steps is all there, and the game goes on from it.
      EXPECT_EQ(game.engine.world().entity_count(), 64u) << what;
      for (int i = 0; i < 4; ++i) game.engine.step();
      std::int64_t sum = 0;
      game.engine.world().query<const Tally>().each(
          [&](Entity, const Tally& t) { sum += t.value; });
      // 0..63 plus 3 per step per entity: 7 or 8 steps counted (the failed one may have).
      const std::int64_t base = 63 * 64 / 2;
      EXPECT_TRUE(sum == base + 64 * 3 * 7 || sum == base + 64 * 3 * 8) << what << ": " << sum;
      EXPECT_NE(game.engine.world().state_hash(), committed) << what;
    }
  }
}

// The same steps give the same world whatever the mode and however many workers, 64 on this
// 2-core machine included (each participant pinned round-robin, the job system warns once).
TEST(Faults, SixtyFourWorkersOnTwoCoresGiveTheSingleThreadedWorld) {
  std::uint64_t reference = 0;
  {
    FaultyGame game(jobs::Mode::Single, 1, Kind::Simulation);
    game.armed = false;
    for (int i = 0; i < 20; ++i) game.engine.step();
    reference = game.engine.world().state_hash();
  }
  for (const jobs::Mode mode : available_modes()) {
    const std::string what = std::string(jobs::to_string(mode)) + " with 64 workers";
    Watchdog watchdog(what, 60);
    test::ScopedLogCapture quiet;  // "64 participants but the process may use 2 CPU(s)"
    FaultyGame game(mode, 64, Kind::ParallelChunk);
    game.armed = false;
    for (int i = 0; i < 20; ++i) game.engine.step();
    EXPECT_EQ(game.engine.world().state_hash(), reference) << what;
  }
}

// A stage that suddenly takes 100x its usual time: the frame waits for it (nothing is dropped or
// cut short), the frame's stats show it, and the steps after it run as before.
TEST(Faults, AStageHundredTimesSlowerThanItsEstimateIsWaitedForAndShown) {
  for (const jobs::Mode mode : available_modes()) {
    const std::string what = jobs::to_string(mode);
    Watchdog watchdog(what, 30);
    Engine engine(test::engine_config(mode, 2));
    std::atomic<int> runs{0};
    engine.add_stage({.name = "usually_fast", .run = [&](StageContext& ctx) {
                        const auto spin =
                            std::chrono::microseconds(ctx.tick() == 10 ? 50'000 : 500);
                        const auto until = std::chrono::steady_clock::now() + spin;
                        while (std::chrono::steady_clock::now() < until) {
                        }
                        runs.fetch_add(1);
                      }});
    std::uint64_t slow_frame = 0;
    for (int i = 0; i < 14; ++i) {
      engine.step();
      if (engine.tick() == 11) slow_frame = engine.last_frame().frame_ns;
    }
    EXPECT_EQ(runs.load(), 14) << what << ": every step ran it, the slow one and those after";
    EXPECT_GE(slow_frame, 50'000'000u) << what << ": the frame waited for the slow stage";
  }
}

// request_quit() from inside a stage, in the middle of a frame: the frame finishes (every stage
// of it runs, nothing is left half-applied), the loop stops, and the engine shuts down with its
// workers.
TEST(Faults, QuittingInTheMiddleOfAFrameFinishesItAndStopsCleanly) {
  for (const jobs::Mode mode : available_modes()) {
    const std::string what = jobs::to_string(mode);
    Watchdog watchdog(what, 30);
    std::atomic<int> after_quit{0};
    std::uint64_t frames = 0;
    {
      Engine engine(test::engine_config(mode, 2));
      engine.add_stage({.name = "quitter", .run = [&](StageContext& ctx) {
                          if (ctx.tick() == 5) ctx.engine().request_quit();
                        }});
      engine.add_stage({.name = "after", .after = {"quitter"}, .run = [&](StageContext& ctx) {
                          if (ctx.tick() == 5) after_quit.fetch_add(1);
                        }});
      while (!engine.quit_requested()) engine.frame(16'666'667);
      frames = engine.frame_number();
    }
    EXPECT_EQ(after_quit.load(), 1) << what << ": the rest of the frame ran";
    EXPECT_GE(frames, 1u) << what;
  }
}

}  // namespace
}  // namespace spindle::core::fault_test
