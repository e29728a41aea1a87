// Timers (gameplay/timer.h): the step each one fires on, repeats, several firings in one step,
// cancelling, and the same firings whether steps come one per frame or several per frame, in
// every job mode.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/timer.h>

#include "test_support.h"

namespace spindle::core::timer_test {
namespace {

constexpr std::int64_t kStepNs = 10'000'000;  // 10 ms: timer lengths below are whole steps

// What a simulation stage read, on which step.
struct Seen {
  std::uint64_t tick;
  std::uint32_t id;
  std::uint32_t count;
  Entity entity;
  friend bool operator==(const Seen&, const Seen&) = default;
};

// An engine with timers and a simulation stage that records every TimerFired it reads.
struct TimerRig {
  explicit TimerRig(jobs::Mode mode = jobs::Mode::Single, std::uint32_t workers = 1) {
    EngineConfig c = test::engine_config(mode, workers);
    c.fixed_step_ns = kStepNs;
    engine = std::make_unique<Engine>(c);
    engine->add_plugin<TimerPlugin>();
    engine->add_stage({.name = "record", .run = [this](StageContext& ctx) {
                         for (const TimerFired& t : ctx.world().read_events<TimerFired>())
                           seen.push_back({ctx.tick(), t.id, t.count, t.entity});
                       }});
  }
  World& world() { return engine->world(); }
  Entity add(const Timer& timer) {
    const Entity e = world().create();
    world().add<Timer>(e, timer);
    return e;
  }
  void steps(int n) {
    for (int i = 0; i < n; ++i) engine->step();
  }

  std::unique_ptr<Engine> engine;
  std::vector<Seen> seen;
};

TEST(Timer, FactoriesCountWholeNanoseconds) {
  const Timer once = Timer::once(0.03, 7);
  EXPECT_EQ(once.remaining_ns, 30'000'000);
  EXPECT_EQ(once.period_ns, 0);
  EXPECT_EQ(once.id, 7u);
  EXPECT_EQ(once.fired, 0u);
  const Timer every = Timer::every(0.025, 3);
  EXPECT_EQ(every.remaining_ns, 25'000'000);
  EXPECT_EQ(every.period_ns, 25'000'000);
}

// 30 ms on 10 ms steps: 20, 10, 0 left after ticks 0, 1, 2, so it fires on tick 2 (reaching zero
// counts) and the event is read on tick 3; the one-shot timer is gone after its firing step.
TEST(Timer, OnceFiresOnTheStepItRunsOutAndIsReadTheStepAfter) {
  TimerRig rig;
  const Entity bomb = rig.add(Timer::once(0.03, 7));
  rig.steps(2);
  ASSERT_NE(rig.world().get<Timer>(bomb), nullptr);
  EXPECT_EQ(rig.world().get<Timer>(bomb)->remaining_ns, 10'000'000);
  EXPECT_EQ(rig.world().get<Timer>(bomb)->fired, 0u);
  rig.steps(1);  // tick 2: fires; the Timer is removed at the sync point
  EXPECT_FALSE(rig.world().has<Timer>(bomb));
  EXPECT_TRUE(rig.seen.empty());
  rig.steps(5);
  EXPECT_EQ(rig.seen, (std::vector<Seen>{{3, 7, 1, bomb}}));
}

// Period 25 ms on 10 ms steps: left after each tick 15, 5, -5+25=20, 10, 0+25=25, 15, 5,
// -5+25=20, 10, 0+25=25: fires on ticks 2, 4, 7, 9, read on 3, 5, 8, 10. The remainder carries
// over, so it does not drift to whole steps.
TEST(Timer, RepeatingTimerCarriesTheRemainder) {
  TimerRig rig;
  const Entity spawner = rig.add(Timer::every(0.025, 3));
  rig.steps(11);
  EXPECT_EQ(rig.seen,
            (std::vector<Seen>{
                {3, 3, 1, spawner}, {5, 3, 2, spawner}, {8, 3, 3, spawner}, {10, 3, 4, spawner}}));
  const Timer* t = rig.world().get<Timer>(spawner);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->fired, 4u);
  EXPECT_EQ(t->remaining_ns, 15'000'000);  // after tick 10
}

// A period shorter than the step fires several times in one step, each with its own count.
TEST(Timer, ShortPeriodFiresSeveralTimesInOneStep) {
  TimerRig rig;
  // 4 ms on 10 ms steps: tick 0: 4-10 = -6 (1), -2 (2), 2; tick 1: -8 (3), -4 (4), 0 (5), 4.
  const Entity e = rig.add(Timer{4'000'000, 4'000'000, 9, 0});
  rig.steps(3);
  EXPECT_EQ(rig.seen, (std::vector<Seen>{
                          {1, 9, 1, e}, {1, 9, 2, e}, {2, 9, 3, e}, {2, 9, 4, e}, {2, 9, 5, e}}));
  EXPECT_EQ(rig.world().get<Timer>(e)->remaining_ns, 2'000'000);  // tick 2: 4-10 = -6, -2, 2
}

// Removing the Timer component cancels it: no event after, and the others keep their times.
TEST(Timer, RemovingTheComponentCancels) {
  TimerRig rig;
  const Entity cancelled = rig.add(Timer::once(0.03, 1));
  const Entity repeat = rig.add(Timer::every(0.02, 2));  // fires on ticks 1, 3, 5, ...
  const Entity kept = rig.add(Timer::once(0.05, 3));     // fires on tick 4
  rig.steps(2);
  EXPECT_TRUE(rig.world().remove<Timer>(cancelled));  // before its firing step, tick 2
  rig.steps(2);                                       // ticks 2, 3
  EXPECT_TRUE(rig.world().remove<Timer>(repeat));     // after two firings (ticks 1 and 3)
  rig.steps(4);                                       // ticks 4..7
  EXPECT_EQ(rig.seen, (std::vector<Seen>{{2, 2, 1, repeat}, {4, 2, 2, repeat}, {5, 3, 1, kept}}));
  // Destroying the entity cancels too.
  const Entity doomed = rig.add(Timer::once(0.01, 4));
  ASSERT_TRUE(rig.world().destroy(doomed));
  rig.steps(3);
  EXPECT_EQ(rig.seen.size(), 3u);
}

// The firings of many timers, step by step, and the world's hash at the end.
struct TimerRun {
  std::vector<Seen> seen;
  std::vector<Seen> seen_by_game;  // read after each frame()/step(), outside the simulation
  std::uint64_t hash = 0;
};

TimerRun run_timers(jobs::Mode mode, std::uint32_t workers, std::uint32_t steps_per_frame) {
  TimerRig rig(mode, workers);
  for (std::uint32_t i = 0; i < 300; ++i) {
    // Periods of 7..59 ms and one-shots of 10..130 ms: several per step, in parallel chunks.
    const std::int64_t ns = (7 + std::int64_t{i * 37 % 53}) * 1'000'000;
    rig.add(i % 3 == 0 ? Timer{ns * 2, 0, i, 0} : Timer{ns, ns, i, 0});
  }
  TimerRun out;
  constexpr std::uint32_t kSteps = 24;
  for (std::uint32_t done = 0; done < kSteps; done += steps_per_frame) {
    if (steps_per_frame == 1) {
      rig.engine->step();
    } else {
      rig.engine->frame(steps_per_frame * kStepNs);
      EXPECT_EQ(rig.engine->last_frame().steps, steps_per_frame);
    }
    for (const TimerFired& t : rig.world().read_events<TimerFired>())
      out.seen_by_game.push_back({0, t.id, t.count, t.entity});
  }
  EXPECT_EQ(rig.engine->tick(), kSteps);
  out.seen = std::move(rig.seen);
  out.hash = rig.world().state_hash();
  return out;
}

// A frame of k steps is k steps to timers: the same events on the same ticks, and the same
// state, one step per frame or three, in every job mode and with several workers.
TEST(Timer, SameFiringsWithSeveralStepsPerFrameInEveryMode) {
  const TimerRun reference = run_timers(jobs::Mode::Single, 1, 1);
  ASSERT_GT(reference.seen.size(), 300u);
  // The first firing: timer 0 is a one-shot of 14 ms (7 x 2): fires on tick 1, read on tick 2.
  const auto first = std::find_if(reference.seen.begin(), reference.seen.end(),
                                  [](const Seen& s) { return s.id == 0; });
  ASSERT_NE(first, reference.seen.end());
  EXPECT_EQ(first->tick, 2u);
  EXPECT_EQ(first->count, 1u);
  for (jobs::Mode mode : ::spindle::test::available_modes()) {
    for (std::uint32_t per_frame : {1u, 3u}) {
      const TimerRun run = run_timers(mode, 2, per_frame);
      EXPECT_EQ(run.seen, reference.seen) << jobs::to_string(mode) << " x" << per_frame;
      // The game, reading after each frame, sees each event once, in the same order.
      EXPECT_EQ(run.seen_by_game.size(), run.seen.size()) << jobs::to_string(mode);
      for (std::size_t i = 0; i < run.seen.size() && i < run.seen_by_game.size(); ++i) {
        EXPECT_EQ(run.seen_by_game[i].id, run.seen[i].id);
        EXPECT_EQ(run.seen_by_game[i].count, run.seen[i].count);
      }
      EXPECT_EQ(run.hash, reference.hash) << jobs::to_string(mode) << " x" << per_frame;
    }
  }
}

}  // namespace
}  // namespace spindle::core::timer_test
