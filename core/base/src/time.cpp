#include <spindle/base/time.h>

#include <chrono>
#include <ctime>

#include <spindle/base/assert.h>

namespace spindle::core {

std::uint64_t monotonic_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

std::uint64_t process_cpu_ns() {
#if defined(CLOCK_PROCESS_CPUTIME_ID)
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
#else
  return 0;
#endif
}

GameClock::GameClock(std::int64_t fixed_step_ns, std::int64_t max_delta_ns)
    : fixed_step_ns_(fixed_step_ns), max_delta_ns_(max_delta_ns) {
  SPINDLE_ASSERT(fixed_step_ns > 0, "GameClock fixed step is positive");
  SPINDLE_ASSERT(max_delta_ns > 0, "GameClock max delta is positive");
}

std::int64_t GameClock::advance(std::int64_t real_delta_ns) {
  ++frame_;
  std::int64_t delta = 0;
  if (paused_) {
    if (step_requested_) delta = fixed_step_ns_;
    step_requested_ = false;
  } else {
    std::int64_t real = real_delta_ns < 0 ? 0 : real_delta_ns;
    if (real > max_delta_ns_) real = max_delta_ns_;
    if (time_scale_ == 1.0) {
      delta = real;
    } else {
      double scaled = static_cast<double>(real) * time_scale_ + scale_remainder_;
      delta = static_cast<std::int64_t>(scaled);
      scale_remainder_ = scaled - static_cast<double>(delta);
    }
  }
  delta_ns_ = delta;
  time_ns_ += delta;
  return delta;
}

FixedStep::FixedStep(std::int64_t step_ns, std::uint32_t max_steps)
    : step_ns_(step_ns), max_steps_(max_steps) {
  SPINDLE_ASSERT(step_ns > 0, "FixedStep step is positive");
  SPINDLE_ASSERT(max_steps > 0, "FixedStep allows at least one step per frame");
}

std::uint32_t FixedStep::add(std::int64_t delta_ns) {
  // Saturate: a huge delta fed to a bare FixedStep must not overflow the accumulator (the
  // max_steps clamp below drops the excess anyway).
  if (delta_ns > 0) {
    accumulator_ns_ =
        delta_ns > INT64_MAX - accumulator_ns_ ? INT64_MAX : accumulator_ns_ + delta_ns;
  }
  std::int64_t steps = accumulator_ns_ / step_ns_;
  if (steps > static_cast<std::int64_t>(max_steps_)) {
    // Keep the sub-step remainder so alpha stays continuous; drop whole steps beyond the cap.
    std::int64_t excess = (steps - max_steps_) * step_ns_;
    dropped_ns_ = excess > INT64_MAX - dropped_ns_ ? INT64_MAX : dropped_ns_ + excess;
    accumulator_ns_ -= excess;
    steps = max_steps_;
    ++clamped_frames_;
  }
  accumulator_ns_ -= steps * step_ns_;
  total_steps_ += static_cast<std::uint64_t>(steps);
  return static_cast<std::uint32_t>(steps);
}

}  // namespace spindle::core
