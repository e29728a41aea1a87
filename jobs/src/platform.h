// Thin OS layer of the job system: timestamps, CPU pause, core counts and thread affinity.
// Private to jobs/.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "spindle/jobs/job_system.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define SPINDLE_JOBS_HAS_TSC 1
#else
#define SPINDLE_JOBS_HAS_TSC 0
#endif

namespace spindle::jobs::detail {

inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// Cheapest monotonic tick available: the TSC on x86 (about 7 ns to read, against about 20 ns for
// steady_clock through the vDSO), nanoseconds elsewhere. Converted with TickClock below.
inline std::uint64_t ticks() {
#if SPINDLE_JOBS_HAS_TSC
  return __rdtsc();
#else
  return now_ns();
#endif
}

inline void cpu_relax() {
#if SPINDLE_JOBS_HAS_TSC
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// A full memory barrier for the publish-then-check handshakes (see scheduler.h, "Parking").
// ThreadSanitizer does not model fences and g++ rejects them under -fsanitize=thread
// (-Wtsan); there a seq_cst read-modify-write, also a full barrier on the hardware, stands in.
inline void full_fence() {
#if defined(__SANITIZE_THREAD__)
  static std::atomic<std::uint32_t> barrier{0};
  barrier.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// Sleeps while *word == expected, at most timeout_ns (< 0: no limit). Spurious returns happen;
// callers re-check. Linux uses the futex syscall directly (so that a timeout is possible);
// elsewhere std::atomic::wait, without the timeout.
void park_on(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns);
// Wakes one thread parked on `word` by park_on().
void unpark_one(std::atomic<std::uint32_t>& word);
// Asks the OS to fire the calling thread's timed sleeps without the default 50 us slack.
void set_precise_timers();

// Converts ticks to nanoseconds, calibrated against steady_clock. The ratio is measured from the
// clock's construction (before main()) to its first use, at least kCalibrationNs later (a first
// use sooner waits out the rest, once per process), and then fixed: totals converted at two
// moments differ by the ticks between them, never by a ratio still being measured.
class TickClock {
 public:
  static constexpr std::uint64_t kCalibrationNs = 4'000'000;
  TickClock();
  double ns_per_tick() const {
#if SPINDLE_JOBS_HAS_TSC
    const double fixed = fixed_.load(std::memory_order_acquire);
    return fixed > 0 ? fixed : calibrate();
#else
    return 1.0;
#endif
  }

 private:
  // A tick and a nanosecond read together: of a few tries, the pair read closest together.
  struct Sample {
    std::uint64_t tick, ns;
  };
  static Sample sample();
  double calibrate() const;

  Sample start_;
  mutable std::atomic<double> fixed_{0};
};

// The process's clock, started before main(): every JobSystem converts with the same fixed ratio.
const TickClock& process_clock();

// A thread's affinity mask, saved to be set again.
struct SavedAffinity {
  bool valid = false;
  unsigned char mask[128] = {};
};

// The CPUs the process may use: the affinity mask it started with (read once, during static
// initialisation, before main() or anything in it pins a thread; a taskset or cgroup limit shows
// here). Not the calling thread's mask now: that may already be pinned to one CPU, by the game
// or by another JobSystem's pin_main_thread, and workers taking CPUs from it would share that one.
struct ProcessCpus {
  std::uint32_t count = 0;              // CPUs in the mask, at least 1
  std::uint32_t ids[kMaxWorkers] = {};  // the first min(count, kMaxWorkers) of them, ascending
  SavedAffinity mask;                   // the whole mask
};
const ProcessCpus& process_cpus();
// Gives the calling thread the process's mask (a worker that is not pinned must not keep the
// single CPU of the thread that created it).
void unpin_current_thread();
// Marks in `allowed[k]` whether the calling thread may run on cpus.ids[k]; returns how many it
// may (all of them where affinity cannot be read).
std::uint32_t thread_cpus_among(const ProcessCpus& cpus, bool* allowed);
// Pins the calling thread to CPU `cpu` (an id from process_cpus()). False on failure.
bool pin_current_thread(std::uint32_t cpu);
// Saves / restores the calling thread's affinity mask (for the main thread that we pin).
SavedAffinity save_affinity();
void restore_affinity(const SavedAffinity& saved);

}  // namespace spindle::jobs::detail
