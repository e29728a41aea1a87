#include <spindle/base/time.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace spindle::core {
namespace {

constexpr std::int64_t kMs = 1'000'000;

TEST(RealClock, IsMonotonicAndStartsNearZero) {
  RealClock clock;
  std::uint64_t a = clock.now_ns();
  std::uint64_t b = clock.now_ns();
  EXPECT_LE(a, b);
  EXPECT_LT(a, static_cast<std::uint64_t>(kNsPerSecond));  // just constructed
  std::uint64_t before = monotonic_ns();
  clock.restart();
  std::uint64_t since_restart = clock.now_ns();
  std::uint64_t since_before = monotonic_ns() - before;
  EXPECT_LE(since_restart, since_before);  // restart() happened after `before`
}

TEST(GameClock, AdvancesByRealDelta) {
  GameClock clock(10 * kMs);
  EXPECT_EQ(clock.advance(16 * kMs), 16 * kMs);
  EXPECT_EQ(clock.advance(17 * kMs), 17 * kMs);
  EXPECT_EQ(clock.time_ns(), 33 * kMs);
  EXPECT_EQ(clock.delta_ns(), 17 * kMs);
  EXPECT_EQ(clock.frame(), 2u);
  EXPECT_DOUBLE_EQ(clock.time_seconds(), 0.033);
}

TEST(GameClock, NegativeDeltaCountsAsZeroAndHugeDeltaIsCapped) {
  GameClock clock(10 * kMs, 100 * kMs);
  EXPECT_EQ(clock.advance(-5 * kMs), 0);
  EXPECT_EQ(clock.advance(5 * kNsPerSecond), 100 * kMs);  // a debugger break
  EXPECT_EQ(clock.time_ns(), 100 * kMs);
}

TEST(GameClock, PauseStopsTimeAndStepAdvancesExactlyOneFixedStep) {
  GameClock clock(10 * kMs);
  clock.advance(16 * kMs);
  clock.pause();
  EXPECT_TRUE(clock.paused());
  EXPECT_EQ(clock.advance(16 * kMs), 0);
  EXPECT_EQ(clock.time_ns(), 16 * kMs);

  clock.set_time_scale(3.0);  // a single step ignores the scale
  clock.step();
  EXPECT_EQ(clock.advance(16 * kMs), 10 * kMs);
  EXPECT_EQ(clock.advance(16 * kMs), 0);  // one request, one step
  EXPECT_EQ(clock.time_ns(), 26 * kMs);

  clock.resume();
  clock.set_time_scale(1.0);
  clock.step();  // no effect while running
  EXPECT_EQ(clock.advance(16 * kMs), 16 * kMs);
}

TEST(GameClock, TimeScaleSlowsAndCarriesFractions) {
  GameClock clock;
  clock.set_time_scale(0.5);
  EXPECT_EQ(clock.advance(100 * kMs), 50 * kMs);
  // 3 ns at 1/3 speed, 300 times: exactly 300 ns once fractions are carried.
  clock.set_time_scale(1.0 / 3.0);
  std::int64_t before = clock.time_ns();
  for (int i = 0; i < 300; ++i) clock.advance(3);
  EXPECT_NEAR(static_cast<double>(clock.time_ns() - before), 300.0, 1.0);
  clock.set_time_scale(-2.0);
  EXPECT_EQ(clock.time_scale(), 0.0);
  EXPECT_EQ(clock.advance(100 * kMs), 0);
}

TEST(FixedStep, YieldsWholeStepsAndAlpha) {
  FixedStep fixed(10 * kMs, 8);
  EXPECT_EQ(fixed.add(25 * kMs), 2u);
  EXPECT_DOUBLE_EQ(fixed.alpha(), 0.5);
  EXPECT_EQ(fixed.add(4 * kMs), 0u);
  EXPECT_DOUBLE_EQ(fixed.alpha(), 0.9);
  EXPECT_EQ(fixed.add(1 * kMs), 1u);
  EXPECT_DOUBLE_EQ(fixed.alpha(), 0.0);
  EXPECT_EQ(fixed.total_steps(), 3u);
  EXPECT_EQ(fixed.add(-kMs), 0u);  // ignored
  EXPECT_EQ(fixed.accumulator_ns(), 0);
}

TEST(FixedStep, ClampsStepsToAvoidSpiralOfDeath) {
  FixedStep fixed(10 * kMs, 4);
  EXPECT_EQ(fixed.add(1005 * kMs), 4u);
  EXPECT_EQ(fixed.clamped_frames(), 1u);
  EXPECT_EQ(fixed.dropped_ns(), 960 * kMs);  // 100 steps due, 4 run, sub-step remainder kept
  EXPECT_DOUBLE_EQ(fixed.alpha(), 0.5);
  EXPECT_EQ(fixed.add(15 * kMs), 2u);  // back to normal the next frame
  EXPECT_EQ(fixed.clamped_frames(), 1u);
}

TEST(FixedStep, SingleStepOfPausedClockRunsExactlyOneStep) {
  GameClock clock(16'666'667);
  FixedStep fixed(clock.fixed_step_ns());
  EXPECT_EQ(fixed.add(clock.advance(25'000'000)), 1u);  // leaves half a step banked
  clock.pause();
  for (int frame = 0; frame < 10; ++frame) EXPECT_EQ(fixed.add(clock.advance(16 * kMs)), 0u);
  clock.step();
  EXPECT_EQ(fixed.add(clock.advance(16 * kMs)), 1u);
  EXPECT_EQ(fixed.add(clock.advance(16 * kMs)), 0u);
  EXPECT_EQ(fixed.total_steps(), 2u);
}

TEST(Time, SecondsConversions) {
  EXPECT_EQ(seconds_to_ns(1.5), 1'500'000'000);
  EXPECT_EQ(seconds_to_ns(-0.25), -250'000'000);
  EXPECT_DOUBLE_EQ(ns_to_seconds(250'000'000), 0.25);
}

}  // namespace
}  // namespace spindle::core

namespace spindle::core {
namespace {

TEST(GameClockReview, StepRequestDoesNotSurviveResume) {
  GameClock clock(1000, 1'000'000);
  clock.pause();
  clock.step();
  clock.resume();
  clock.pause();
  EXPECT_EQ(clock.advance(500), 0) << "the step asked for in the earlier pause is gone";
}

TEST(GameClockReview, HugeOrNanTimeScaleStaysDefined) {
  GameClock clock(1000, 1'000'000);
  clock.set_time_scale(1e300);
  EXPECT_EQ(clock.time_scale(), GameClock::kMaxTimeScale);
  EXPECT_EQ(clock.advance(1000), 1'000'000);
  clock.set_time_scale(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(clock.time_scale(), 0.0);
  EXPECT_EQ(clock.advance(1000), 0);
}

TEST(FixedStepReview, HugeDeltaSaturatesInsteadOfOverflowing) {
  FixedStep step(1000, 4);
  EXPECT_EQ(step.add(INT64_MAX), 4u);
  EXPECT_EQ(step.add(INT64_MAX), 4u);
  EXPECT_GE(step.alpha(), 0.0);
  EXPECT_LT(step.alpha(), 1.0);
}

}  // namespace
}  // namespace spindle::core
