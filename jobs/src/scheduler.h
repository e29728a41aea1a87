// The scheduler behind JobSystem: job pools, queues, workers, parking, counters, statistics.
// Private to jobs/. One object serves every mode so that a mode switch keeps pools and threads.
//
// Who runs what:
//   participant 0 is the thread that constructed the JobSystem; participants 1..W-1 are worker
//   threads started by the scheduler (only when a threaded mode is first used). Each participant
//   owns a job pool, two work deques (one per priority) and two mailboxes. Threads outside the
//   pool take slots from a locked shared pool and submit through the injection queues.
//
// Parking (no lost wake-ups): a participant with nothing to do spins for spin_before_park_us,
// then publishes its bit in parked_ (seq_cst RMW + fence), re-checks for work and, if still
// none, sleeps on its own futex word. A submitter publishes the job first, then issues a seq_cst
// fence and reads parked_. By the fence-fence rule at least one side sees the other: either the
// parker finds the job in its re-check, or the submitter sees the bit and wakes it. Counter
// completion uses the same handshake with waiting_ for threads parked inside wait().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "platform.h"
#include "queues.h"
#include "spindle/jobs/job_system.h"

#if SPINDLE_THREADS
#include <thread>
#endif

namespace spindle::jobs::detail {

class TbbBackend;

#if SPINDLE_THREADS
using Lock = std::mutex;
#else
// Without threads there is nothing to exclude.
struct Lock {
  void lock() {}
  void unlock() {}
};
#endif

// A ring of job slots owned by one participant. Only the owner takes slots; any thread frees one
// by storing 0 into Job::state with release, so the owner's acquire load sees the slot unused.
class JobPool {
 public:
  void init(std::byte* memory, std::uint32_t count, std::uint32_t stride) {
    base_ = memory;
    mask_ = count - 1;
    stride_ = stride;
    for (std::uint32_t i = 0; i < count; ++i) ::new (static_cast<void*>(at(i))) Job();
  }
  // The slot `job` if it belongs to this pool and is free (its job just finished here).
  Job* take_if_free(Job* job) {
    const auto at = reinterpret_cast<std::uintptr_t>(job);
    const auto base = reinterpret_cast<std::uintptr_t>(base_);
    if (at < base || at >= base + std::size_t{mask_ + 1} * stride_) return nullptr;
    if (job->state.load(std::memory_order_acquire) != 0) return nullptr;
    return claim(job);
  }
  Job* try_acquire() {
    // Slots finish out of order; looking a few ahead avoids declaring the pool full because one
    // long job still holds the oldest slot.
    for (int probe = 0; probe < 32; ++probe) {
      Job* job = at(next_);
      next_ = (next_ + 1) & mask_;
      if (job->state.load(std::memory_order_acquire) == 0) return claim(job);
    }
    return nullptr;
  }
  bool all_free() const {
    for (std::uint32_t i = 0; i <= mask_; ++i) {
      if (at(i)->state.load(std::memory_order_acquire) != 0) return false;
    }
    return true;
  }

 private:
  static Job* claim(Job* job) {
    job->state.store(1, std::memory_order_relaxed);
    job->flags = kJobPooled;
    job->next = nullptr;
    job->joins.store(0, std::memory_order_relaxed);
    return job;
  }
  Job* at(std::uint32_t i) const {
    return reinterpret_cast<Job*>(base_ + std::size_t{i} * stride_);
  }
  std::byte* base_ = nullptr;
  std::uint32_t mask_ = 0;
  std::uint32_t stride_ = 0;
  std::uint32_t next_ = 0;
};

// Statistics of one participant. Written by that participant alone (relaxed load + store, no
// RMW) except the shared slot for outside threads, which uses fetch_add.
struct alignas(kCacheLine) StatsSlot {
  std::atomic<std::uint64_t> busy_ticks{0};
  std::atomic<std::uint64_t> jobs{0};
  std::atomic<std::uint64_t> steals{0};
  std::atomic<std::uint64_t> parks{0};
  std::atomic<std::uint64_t> tag_jobs[kMaxTags] = {};
  std::atomic<std::uint64_t> tag_ticks[kMaxTags] = {};
};

struct alignas(kCacheLine) Participant {
  JobPool pool;
  WorkDeque deque[kPriorityCount];
  MpmcQueue mailbox[kPriorityCount];
  // Futex word: bumped by whoever wakes this participant.
  alignas(kCacheLine) std::atomic<std::uint32_t> wake_epoch{0};
  std::uint32_t rng = 0;          // victim selection (owner only)
  std::uint32_t round_robin = 0;  // Static mode dealing (owner only)
  // Finished jobs not yet subtracted from their counter (owner only): a participant running jobs
  // of one counter back to back subtracts them in one step, so a thief does not fight the
  // submitter for the counter's cache line on every job. Flushed before the participant idles,
  // waits, returns to user code or switches counter; a counter can therefore not look done
  // early, only late by the length of the batch.
  Counter* batch_counter = nullptr;
  std::uint32_t batch_count = 0;
};

class Scheduler {
 public:
  Scheduler(const Config& config, std::uint32_t workers, std::uint32_t job_stride,
            JobSystem* owner);
  ~Scheduler();

  // Mode-independent entry points used by JobSystem.
  // A free job slot for the calling thread, or null. `may_help`: a participant in user code
  // (not inside a job) whose pool is full may run its own queued jobs to free slots.
  Job* acquire(bool may_help = true);
  void submit(Job* job, std::span<Counter* const> dependencies);
  // Runs a job on participant `worker` (hooks, timing, exceptions, counter). `start` is the tick
  // it started at, or 0 to read the clock now; returns the tick it ended at.
  // `batch` (participant loops only): the counter update may be deferred, see Participant.
  std::uint64_t execute(Job* job, std::uint32_t worker, std::uint64_t start, bool batch = false);
  // Runs a job that could not be queued, after its dependencies (if any) are done.
  void run_inline(Job* job, std::span<Counter* const> dependencies);
  // wait() rethrows the counter's captured exception; wait_for() only waits, rethrow() only
  // rethrows.
  void wait(Counter& counter);
  void wait_for(Counter& counter);
  void rethrow(Counter& counter);
  void set_mode(Mode mode);
  Mode mode() const { return mode_.load(std::memory_order_relaxed); }
  std::uint32_t current_worker() const;
  std::uint32_t workers() const { return worker_count_; }
  void submit_range(Counter& counter, const JobDesc& desc, std::size_t begin, std::size_t end,
                    std::size_t grain, void (*call)(const void*, std::size_t, std::size_t),
                    const void* fn);

  WorkerStats worker_stats(std::uint32_t worker) const;
  TagStats tag_stats(std::uint16_t tag) const;
  Stats stats() const;
  void reset_stats();
  void set_hooks(const JobHooks& hooks) { hooks_ = hooks; }
  void note_overflow(const char* what, const JobDesc& desc);
  void log(LogLevel level, const char* message) const;

  // Makes a job runnable now, according to the mode.
  void push(Job* job);

  // TBB backend glue.
  const Config& config() const { return config_; }
  std::uint32_t job_stride() const { return job_stride_; }

 private:
  friend class TbbBackend;

  // Called when `count` jobs counted on `counter` have finished.
  void finish(Counter* counter, std::uint32_t count);
  void flush_batch(std::uint32_t self);
  // Puts `job` in `dependency`'s continuation list, or releases it now if nothing is pending.
  void attach(Counter& dependency, Job* job);
  // Under the counter's list lock: unlinks and returns the continuations attached before the
  // epoch `state` shows (in list order), leaving those that wait for the current jobs.
  static Job* take_released(Counter& counter, std::uint64_t state);
  static void lock_list(Counter& counter);
  static void unlock_list(Counter& counter);
  // Gives back a finished job's slot (pooled, heap or stack); nothing of it is touched after.
  static void free_slot(Job* job);
  // Makes a released continuation runnable; a link instead counts down its job's joins.
  void release(Job* job);
  void run_list(Job* list);
  bool any_queued() const;
  bool pools_idle() const;  // every pool slot free: no pooled job queued, running or waiting
  void record_exception(Counter* counter, const JobDesc& desc);
  void book(std::uint32_t slot, bool exclusive, const JobDesc& desc, std::uint64_t elapsed);

#if SPINDLE_THREADS
  void start_threads();
  void stop_threads();
  void worker_main(std::uint32_t index);
  void note_pin_failure(std::uint32_t index);
  Job* find_work(std::uint32_t self);
  Job* find_work_any(std::uint32_t self);
  Job* steal_from_others(std::uint32_t self, std::uint32_t priority);
  bool has_work(std::uint32_t self) const;
  // Spins, then parks until work arrives (or `counter`, if given, is done). False when stopping.
  // `park` (optional) tells whether and how it slept.
  struct ParkInfo {
    bool parked = false;
    bool woken = false;  // by another thread (else by its own timeout, or not at all)
    std::uint64_t slept_ns = 0;
  };
  // `spin_ns` 0: Config::spin_before_park_us.
  bool idle(std::uint32_t self, const Counter* counter, ParkInfo* park = nullptr,
            std::uint64_t spin_ns = 0);
  // Worker 1 only: learns the cadence of bursts and says how long to sleep (-1: until woken).
  void note_burst(std::uint64_t now);
  std::int64_t sentinel_timeout(std::uint64_t now) const;
  void wake_one(std::uint32_t except);
  void chain_wake(std::uint32_t self);
  void wake(std::uint32_t index);
  void wake_waiters();
  void push_threaded(Job* job, std::uint32_t self);
  // The oldest job queued for participant `self` alone (its mailbox in Static, its own deque in
  // Dynamic), or null.
  Job* pop_own(std::uint32_t self);
  void deal_static(Job* job, std::uint32_t self);
  void redeal_main_mailbox();
  void wait_as_participant(Counter& counter, std::uint32_t self);
#endif
  void wait_spinning(const Counter& counter);

  Config config_;
  std::atomic<Mode> mode_;
  std::uint32_t worker_count_;
  std::uint32_t job_stride_;
  std::uint32_t pool_size_;
  JobHooks hooks_;
  JobSystem* owner_;
  TickClock clock_;
  const Scheduler* previous_state_owner_ = nullptr;
  std::uint32_t previous_state_index_ = kExternalThread;
  std::uint32_t cpus_[kMaxWorkers] = {};

  std::unique_ptr<std::byte[]> slot_memory_;
  std::unique_ptr<Participant[]> participants_;
  // Slot worker_count_ is shared by outside threads (and oneTBB's threads).
  std::unique_ptr<StatsSlot[]> stats_;

  // Outside threads: a locked pool and the injection queues.
  Lock external_mutex_;
  JobPool external_pool_;
  MpmcQueue injection_[kPriorityCount];

  std::atomic<std::uint64_t> inline_overflows_{0};
  std::atomic<std::uint64_t> exceptions_dropped_{0};
  std::atomic<std::uint32_t> overflow_logged_{0};
  std::atomic<std::uint32_t> pin_failure_logged_{0};
  // Jobs queued at High priority anywhere: lets finders skip scanning other deques for them.
  std::atomic<std::int64_t> high_queued_{0};
  std::atomic<std::uint32_t> external_round_robin_{0};

#if SPINDLE_THREADS
  std::vector<std::thread> threads_;
  bool threads_started_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> parked_{0};   // bit i: participant i is parked
  std::atomic<std::uint64_t> waiting_{0};  // bit i: participant i is parked inside wait()
  // Participants in their spin phase: a submitter wakes a sleeper only when nobody is spinning
  // (the spinner will find the job and wake the next one if more is queued).
  std::atomic<std::uint32_t> spinning_{0};
  // Participant 0 is inside wait() (Static mode deals to its mailbox only then).
  std::atomic<bool> main_waiting_{false};
  std::uint32_t main_wait_depth_ = 0;  // participant 0 only
  // Cadence of bursts, worker 1 only (see Config::predictive_wake).
  std::uint64_t burst_last_ns_ = 0;
  std::uint64_t burst_period_ns_ = 0;
  std::uint32_t burst_confidence_ = 0;
#endif
  SavedAffinity main_affinity_;
  bool main_pinned_ = false;
#if SPINDLE_WITH_TBB
  std::unique_ptr<TbbBackend> tbb_;
#endif
};

}  // namespace spindle::jobs::detail
