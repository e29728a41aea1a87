// Clocks: real (wall) time, game time with pause / scale / single-step, and the fixed-step
// accumulator that turns frame deltas into simulation steps.
//
// Usage:
//
//   spindle::core::RealClock real;                       // steady, starts at 0 on construction
//   spindle::core::GameClock game;                       // fixed step 1/60 s by default
//   spindle::core::FixedStep fixed(game.fixed_step_ns()); // at most 8 steps per frame
//   std::uint64_t last = real.now_ns();
//   for (;;) {
//     std::uint64_t now = real.now_ns();
//     std::int64_t dt = game.advance(static_cast<std::int64_t>(now - last));  // 0 while paused
//     last = now;
//     for (std::uint32_t n = fixed.add(dt); n > 0; --n) simulate(fixed.step_ns());
//     render(fixed.alpha());                             // blend previous and current state
//   }
//   game.pause(); game.step();                           // next advance() yields one fixed step
//
//   spindle::core::ProcessCpuTimer cpu;                  // CPU time of every thread, exactly
//   cpu.list_threads(); cpu.start(); work(); std::uint64_t ns = cpu.elapsed_ns();
//   spindle::core::CoresBusyProbe busy;                  // other programs on every core?
//   busy.sample(spindle::core::monotonic_ns()); if (busy.busy()) ...
//
// Game time is kept in integer nanoseconds so that it adds up identically in every job mode.
#pragma once

#include <cstdint>

namespace spindle::core {

inline constexpr std::int64_t kNsPerSecond = 1'000'000'000;

// Nanoseconds of the steady (monotonic) clock, from an arbitrary origin.
std::uint64_t monotonic_ns();
// CPU time the whole process has used (every thread, spinning included), in nanoseconds; 0
// where the platform cannot tell. A system call: about a microsecond, not for per-job use.
// Behind by up to a scheduler tick per thread that is running on another core (see
// ProcessCpuTimer): for intervals of a few ticks or longer, or a thread that has since slept.
std::uint64_t process_cpu_ns();

// CPU time of every thread of the process over an interval, such as one frame. The process
// clock (process_cpu_ns()) is behind: the kernel adds a thread's time to it only at that
// thread's scheduler ticks (every 4 ms at HZ=250) or when it sleeps, so a worker still running
// when the interval ends is missing up to a tick of it, and a later interval gets it. On 2 cores
// (boids 20,000, dynamic) frames measured that way summed to 1.50 cores where `perf stat` saw
// 1.93. Reading a thread's own clock brings it up to date first: this timer reads each thread's.
//
//   ProcessCpuTimer cpu;
//   cpu.list_threads();                  // now and then: the process's threads (no heap)
//   cpu.start();
//   run_frame();
//   std::uint64_t ns = cpu.elapsed_ns(); // every listed thread's CPU time since start()
//
// A thread started after list_threads() is not counted until the next listing, and one that
// ends between start() and elapsed_ns() loses that interval's share. The calling thread's clock
// is read last in start() and first in elapsed_ns(), so the reads of the others are not in it.
// Where threads cannot be listed (not Linux), the process clock stands in. The timer keeps the
// directory of the process's threads open between listings, so it is not copyable: an engine
// lists every frame, and opening the directory each time made a listing take 4.8-25 us on a
// 2-core VM, where it takes 2.8-10 kept open.
class ProcessCpuTimer {
 public:
  static constexpr std::uint32_t kMaxThreads = 256;  // beyond: the first 256 listed
  ProcessCpuTimer() = default;
  ~ProcessCpuTimer();
  ProcessCpuTimer(const ProcessCpuTimer&) = delete;
  ProcessCpuTimer& operator=(const ProcessCpuTimer&) = delete;
  void list_threads();
  std::uint32_t threads() const { return count_; }
  void start();
  std::uint64_t elapsed_ns();

 private:
  std::uint32_t count_ = 0;  // listed, list_threads()' caller last
  int task_dir_ = -1;        // /proc/self/task, open (Linux)
  int task_dir_pid_ = 0;     // the process that opened it (a forked child opens its own)
  std::uint64_t process_start_ = 0;
  int clocks_[kMaxThreads] = {};  // clockid_t of each thread
  std::uint64_t start_ns_[kMaxThreads] = {};
  bool started_[kMaxThreads] = {};
};

// Whether other programs keep every core busy: the system's runnable threads (Linux:
// /proc/loadavg's fourth field, kept open), less the caller, at most every `interval_ns`, and the
// least of the last kWindow samples against the online cores. The least, so that a sample that
// caught one of the caller's own workers not yet parked, or another program's short burst, does
// not count. Dynamic mode stops pinning its workers while it says yes (EngineConfig).
//
//   CoresBusyProbe probe;
//   probe.sample(now_ns);  // before each frame: reads the system's count when interval_ns passed
//   if (probe.busy()) ...  // kWindow samples, each with others runnable on every core
class CoresBusyProbe {
 public:
  static constexpr std::uint32_t kWindow = 16;
  explicit CoresBusyProbe(std::uint64_t interval_ns = 2'000'000);
  ~CoresBusyProbe();
  CoresBusyProbe(const CoresBusyProbe&) = delete;
  CoresBusyProbe& operator=(const CoresBusyProbe&) = delete;
  void sample(std::uint64_t now_ns);
  // Adds one reading of the system's runnable threads (the caller included) as sample() does:
  // for tests, and platforms that count them otherwise.
  void add(std::uint32_t runnable);
  bool busy() const;
  std::uint32_t cores() const { return cores_; }
  void set_cores(std::uint32_t cores) { cores_ = cores; }  // the online cores by default
  // The least of the window's samples of other programs' runnable threads (0 before kWindow).
  std::uint32_t others() const;

 private:
  std::uint64_t interval_ns_;
  std::uint64_t last_ns_ = 0;
  bool sampled_ = false;
  int fd_ = -1;  // /proc/loadavg
  std::uint32_t cores_ = 1;
  std::uint32_t ring_[kWindow] = {};
  std::uint32_t count_ = 0;  // samples added, at most kWindow counted
};

inline constexpr double ns_to_seconds(std::int64_t ns) {
  return static_cast<double>(ns) * 1e-9;
}
inline constexpr std::int64_t seconds_to_ns(double s) {
  return static_cast<std::int64_t>(s * 1e9 + (s >= 0 ? 0.5 : -0.5));
}

// Steady clock reading nanoseconds since its construction (or the last restart()).
class RealClock {
 public:
  RealClock() : start_ns_(monotonic_ns()) {}
  std::uint64_t now_ns() const { return monotonic_ns() - start_ns_; }
  double now_seconds() const { return ns_to_seconds(static_cast<std::int64_t>(now_ns())); }
  void restart() { start_ns_ = monotonic_ns(); }

 private:
  std::uint64_t start_ns_;
};

// Game time: real frame deltas go in, scaled (or zero while paused) game deltas come out.
class GameClock {
 public:
  // `fixed_step_ns` is what step() advances by; `max_delta_ns` caps one frame's real delta (a
  // debugger break or a hitch must not become a huge simulation jump).
  explicit GameClock(std::int64_t fixed_step_ns = kNsPerSecond / 60,
                     std::int64_t max_delta_ns = kNsPerSecond / 4);

  // Feeds one frame's real delta; returns the game delta for this frame and adds it to time().
  // Negative deltas count as 0. While paused: 0, unless step() was requested, then exactly
  // fixed_step_ns() (unscaled, so a single step is always one simulation step).
  std::int64_t advance(std::int64_t real_delta_ns);

  // A step() requested but not yet taken does not outlive the pause it was asked in.
  void pause() {
    paused_ = true;
    step_requested_ = false;
  }
  void resume() {
    paused_ = false;
    step_requested_ = false;
  }
  bool paused() const { return paused_; }
  // Requests one fixed step for the next advance() while paused (no effect while running).
  void step() { step_requested_ = paused_; }

  // Scales real deltas (0.5 = half speed). Negative values and NaN count as 0; the scale is
  // capped at kMaxTimeScale so a scaled delta always fits in nanoseconds.
  static constexpr double kMaxTimeScale = 1000.0;
  void set_time_scale(double scale) {
    time_scale_ = scale > 0.0 ? (scale < kMaxTimeScale ? scale : kMaxTimeScale) : 0.0;
  }
  double time_scale() const { return time_scale_; }

  std::int64_t fixed_step_ns() const { return fixed_step_ns_; }
  std::int64_t time_ns() const { return time_ns_; }    // game time since start
  std::int64_t delta_ns() const { return delta_ns_; }  // game delta of the last advance()
  double time_seconds() const { return ns_to_seconds(time_ns_); }
  double delta_seconds() const { return ns_to_seconds(delta_ns_); }
  std::uint64_t frame() const { return frame_; }  // advance() calls so far

 private:
  std::int64_t fixed_step_ns_;
  std::int64_t max_delta_ns_;
  double time_scale_ = 1.0;
  // Scaled nanoseconds below 1 ns carried to the next frame, so slow motion does not drift.
  double scale_remainder_ = 0.0;
  std::int64_t time_ns_ = 0;
  std::int64_t delta_ns_ = 0;
  std::uint64_t frame_ = 0;
  bool paused_ = false;
  bool step_requested_ = false;
};

// Fixed-step accumulator. add() banks a frame's game delta and says how many fixed steps to run;
// alpha() is how far the leftover time reaches into the next step, for render interpolation.
class FixedStep {
 public:
  // `max_steps` per add() avoids the spiral of death: when simulation cannot keep up, the excess
  // time is dropped (counted in dropped_ns()) instead of piling up.
  explicit FixedStep(std::int64_t step_ns = kNsPerSecond / 60, std::uint32_t max_steps = 8);

  std::uint32_t add(std::int64_t delta_ns);
  // In [0, 1): accumulated time left over after the steps, as a fraction of a step.
  double alpha() const {
    return static_cast<double>(accumulator_ns_) / static_cast<double>(step_ns_);
  }

  std::int64_t step_ns() const { return step_ns_; }
  std::uint32_t max_steps() const { return max_steps_; }
  std::int64_t accumulator_ns() const { return accumulator_ns_; }
  std::uint64_t total_steps() const { return total_steps_; }
  std::int64_t dropped_ns() const { return dropped_ns_; }  // time thrown away by the clamp
  std::uint64_t clamped_frames() const { return clamped_frames_; }
  void reset() { accumulator_ns_ = 0; }

 private:
  std::int64_t step_ns_;
  std::uint32_t max_steps_;
  std::int64_t accumulator_ns_ = 0;
  std::uint64_t total_steps_ = 0;
  std::int64_t dropped_ns_ = 0;
  std::uint64_t clamped_frames_ = 0;
};

}  // namespace spindle::core
