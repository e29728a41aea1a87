// Private machinery of the job system: what a Counter holds. Counter (job_system.h) keeps one of
// these by value, so a game sizes it, but only the scheduler (jobs/src) reads or writes it.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>

namespace spindle::jobs {

class Counter;

namespace detail {

struct Job;

struct CounterState {
  static constexpr std::uint64_t kPendingMask = 0xffffffffull;
  static constexpr std::uint64_t kFinalizing = 1ull << 32;  // one finisher still finalizing
  static constexpr std::uint64_t kFinalizingMask = 0xffffull << 32;
  static constexpr std::uint64_t kEpoch = 1ull << 48;  // one more time pending reached zero
  static constexpr int kEpochShift = 48;

  // Nothing pending, and no finisher still inside the counter: a waiter may destroy it.
  bool done() const {
    return (word.load(std::memory_order_acquire) & (kPendingMask | kFinalizingMask)) == 0;
  }
  std::uint32_t pending() const {
    return static_cast<std::uint32_t>(word.load(std::memory_order_acquire) & kPendingMask);
  }
  void add(std::uint32_t n) { word.fetch_add(n, std::memory_order_relaxed); }

  // Bits 0-31: pending jobs. Bits 32-47: finishers that brought pending to zero and are still
  // handing out continuations (kFinalizing each), so waiters must not return (and destroy the
  // counter) yet. A count, not a flag: pending can reach zero, rise again and reach zero again
  // while the first finisher is still inside finish(). Bits 48-63: the epoch, how many times
  // pending reached zero (wrapping), bumped by the same step: it tells a finisher which
  // continuations were attached before its zero and which wait for jobs added since.
  std::atomic<std::uint64_t> word{0};
  // Jobs to submit when pending reaches zero (intrusive list through Job::next, each tagged with
  // Job::epoch). Changed only under list_lock; finishers read the head without it.
  std::atomic<Job*> continuations{nullptr};
  std::atomic<std::uint32_t> list_lock{0};
  // First exception thrown by a job counted here; error_flag guards the single write.
  std::atomic<std::uint32_t> error_flag{0};
  std::exception_ptr error;
  // Mode-specific state (the oneTBB mode keeps a task_group here), released with the counter
  // through release_backend.
  void* backend = nullptr;
  void (*release_backend)(void*) = nullptr;
};

// The scheduler's way in (defined in jobs/src; Counter befriends it).
inline CounterState& state_of(Counter& counter);

// Stress tests only: called by the finisher that brought a counter's pending count to zero,
// before it hands out the counter's continuations, so a test can stretch that window (a
// preempted finisher there once let a continuation start early). Null: no call.
void set_zero_hook_for_tests(void (*hook)());

}  // namespace detail
}  // namespace spindle::jobs
