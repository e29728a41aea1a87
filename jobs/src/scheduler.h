// The shared core behind JobSystem: job slots, counters and their continuations, running and
// booking a job, statistics. Private to jobs/. What differs between modes is a ModeImpl (mode.h);
// threads, pinning and parking are the WorkerPool's (worker_pool.h). One Scheduler serves every
// mode, so a mode switch keeps the pools and the threads.
//
// Who runs what: participant 0 is the thread that constructed the JobSystem; participants
// 1..W-1 are worker threads, started when a threaded mode is first used. Each participant owns a
// job pool; threads outside take slots from a locked shared pool. A slot is freed by whoever
// finishes its job.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

#include "mode.h"
#include "platform.h"
#include "queues.h"
#include "recorder.h"
#include "spindle/jobs/job_system.h"

namespace spindle::jobs::detail {

// Config::skip_wakes_for_short_ranges: the pieces per participant a range needs to start alone
// (and Static's pieces per participant when it does). A range that turns out long then reaches the
// end of its caller's first piece, where it wakes a worker, early.
inline constexpr std::size_t kAlonePiecesPerWorker = 4;

inline CounterState& state_of(Counter& counter) {
  return counter.state_;
}

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
    // long job still holds the oldest slot. After a rewind(), where the slots past the warm ones
    // are busy, look again where the cursor was.
    for (;;) {
      for (int probe = 0; probe < 32; ++probe) {
        Job* job = at(next_);
        next_ = (next_ + 1) & mask_;
        if (job->state.load(std::memory_order_acquire) == 0) return claim(job);
      }
      if (resume_ == 0) return nullptr;
      next_ = resume_;
      resume_ = 0;
    }
  }
  // Owner only, when it has no job of its own in flight to speak of (it leaves the job system,
  // or goes idle): back to the ring's start if its first kWarmSlots are free. The next burst of
  // jobs then reuses slots touched recently instead of walking on through the ring's cold ones
  // (on a VM, pages the host may have taken back while they sat idle: 100-200 us stalls).
  void rewind() {
    if (next_ >= kWarmSlots && first_slots_free()) {
      resume_ = next_;
      next_ = 0;
    }
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
  bool first_slots_free() const {
    for (std::uint32_t i = 0; i < kWarmSlots; ++i) {
      if (at(i)->state.load(std::memory_order_acquire) != 0) return false;
    }
    return true;
  }
  Job* at(std::uint32_t i) const {
    return reinterpret_cast<Job*>(base_ + std::size_t{i} * stride_);
  }
  // The slots rewind() goes back to when they are free.
  static constexpr std::uint32_t kWarmSlots = 64;
  std::byte* base_ = nullptr;
  std::uint32_t mask_ = 0;
  std::uint32_t stride_ = 0;
  std::uint32_t next_ = 0;
  std::uint32_t resume_ = 0;  // where the cursor was before rewind() (0: nowhere to go back to)
};

// Statistics of one participant. Written by that participant alone (relaxed load + store, no
// RMW) except the shared slot for outside threads, which uses fetch_add.
struct alignas(kCacheLine) StatsSlot {
  std::atomic<std::uint64_t> busy_ticks{0};
  std::atomic<std::uint64_t> jobs{0};
  std::atomic<std::uint64_t> steals{0};
  std::atomic<std::uint64_t> parks{0};
  std::atomic<std::uint64_t> wakes{0};    // woken by another thread
  std::atomic<std::uint64_t> wake_ns{0};  // from those wakes to running again, summed
  std::atomic<std::uint64_t> tag_jobs[kMaxTags] = {};
  std::atomic<std::uint64_t> tag_ticks[kMaxTags] = {};
};

struct alignas(kCacheLine) Participant {
  JobPool pool;
  // Finished jobs not yet subtracted from their counter (owner only): a participant running jobs
  // of one counter back to back subtracts them in one step, so a thief does not fight the
  // submitter for the counter's cache line on every job. Flushed before the participant idles,
  // waits, returns to user code or switches counter; a counter can therefore not look done
  // early, only late by the length of the batch.
  Counter* batch_counter = nullptr;
  std::uint32_t batch_count = 0;
};

// A sub-range of a parallel_for, run by one job: it halves itself down to `grain`, submitting
// the right halves as jobs of their own (so thieves take the biggest pieces first). With `next`
// (JobDesc::in_order) the job instead takes items [begin + i] one at a time, i from `next`, until
// none are left; several such jobs share one `next`. With `bands` it halves the jobs
// [p0, p1) down to one, and that job draws whichever piece of `bands` its participant claims
// (Scheduler::submit_range).
struct RangeTask {
  JobSystem* system;
  Counter* counter;
  const void* fn;
  void (*call)(const void*, std::size_t, std::size_t);
  std::size_t begin;
  std::size_t end;
  std::size_t grain;
  JobDesc desc;
  std::uint32_t range_id = 0;    // in a job-graph recording (0: none)
  std::uint16_t p0 = 0, p1 = 0;  // with `bands`: the jobs this one stands for
  // JobDesc::in_order: `next`; otherwise `bands` (null: halving). One of them: the task is a
  // job's whole capture (JobSystem's kCaptureBytes).
  union {
    std::atomic<std::size_t>* next = nullptr;
    RangeBands* bands;
  };
};
// Submits one job that runs `task`.
void spawn_range(const RangeTask& task);

constexpr std::uint32_t priority_index(Priority p) {
  return p == Priority::High ? 0u : 1u;
}

class Scheduler {
 public:
  Scheduler(const Config& config, std::uint32_t workers, std::uint32_t job_stride,
            JobSystem* owner);
  ~Scheduler();

  // --- JobSystem's entry points -----------------------------------------------------------------
  // A free job slot for the calling thread, or null. `may_help`: see ModeImpl::acquire.
  Job* acquire(bool may_help = true);
  void submit(Job* job, std::span<Counter* const> dependencies);
  // Runs a job that could not be queued, after its dependencies (if any) are done.
  void run_inline(Job* job, std::span<Counter* const> dependencies);
  // JobSystem::run_here(): runs `job` now on this thread, then rethrows its exception.
  void run_now(Job* job, Counter& counter);
  // One active participant: the calling thread is a participant and not too deep in jobs run at
  // once (each is a frame on its stack).
  bool may_run_at_once() const;
  void run_at_once(Job* job);
  // wait() rethrows the counter's captured exception; wait_for() only waits, rethrow() only
  // rethrows.
  void wait(Counter& counter);
  void wait_for(Counter& counter);
  void rethrow(Counter& counter);
  void set_mode(Mode mode);
  Mode mode() const { return current().mode(); }
  StagePolicy stage_policy() const { return current().stage_policy(); }
  std::uint32_t current_worker() const;
  void submit_range(Counter& counter, const JobDesc& desc, std::size_t begin, std::size_t end,
                    std::size_t grain, void (*call)(const void*, std::size_t, std::size_t),
                    const void* fn, std::atomic<std::size_t>* next = nullptr,
                    RangeBands* bands = nullptr);
  WorkerStats worker_stats(std::uint32_t worker) const;
  TagStats tag_stats(std::uint16_t tag) const;
  Stats stats() const;
  void reset_stats();
  void set_hooks(const JobHooks& hooks) { hooks_ = hooks; }
  Recorder& recorder() { return *recorder_; }
  // JobSystem::recorded_job(), record_after().
  std::uint32_t recorded_job() const;
  void record_after(std::uint32_t job);
  double ns_per_tick() const { return process_clock().ns_per_tick(); }
  void note_overflow(const char* what, const JobDesc& desc);
  void log(LogLevel level, const char* message) const;

  // --- for the modes and the worker pool --------------------------------------------------------
  ModeImpl& current() const { return *current_.load(std::memory_order_relaxed); }
  const Config& config() const { return config_; }
  std::uint32_t workers() const { return worker_count_; }
  std::uint32_t pool_size() const { return pool_size_; }
  std::uint32_t job_stride() const { return job_stride_; }
  // Participant `self`'s pool, or (outside threads) the shared one, locked.
  Job* take_slot(std::uint32_t self);
  JobPool& pool(std::uint32_t self) { return participants_[self].pool; }
  // Runs a job on participant `worker` (hooks, timing, exceptions, counter).
  // `batch` (participant loops only): the counter update may be deferred, see Participant.
  void execute(Job* job, std::uint32_t worker, bool batch = false);
  void flush_batch(std::uint32_t self);
  // Participant `self` holds the only unfinished jobs of `counter` in its batch.
  bool batch_holds_rest_of(std::uint32_t self, const Counter& counter) const {
    const Participant& me = participants_[self];
    return me.batch_counter == &counter && counter.pending() <= me.batch_count;
  }
  // Activity of the participants other than `self`: true when one is running a job, else
  // `submits` gets the sum of their submission counts (a change means one submits from outside
  // jobs, as a main thread does). With neither for a while, an idle participant parks instead of
  // spinning: only new outside work can come.
  bool others_active(std::uint32_t self, std::uint64_t& submits) const {
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < worker_count_; ++i) {
      if (i == self) continue;
      if (running_[i].depth.load(std::memory_order_relaxed) != 0) return true;
      sum += running_[i].submits.load(std::memory_order_relaxed);
    }
    submits = sum;
    return false;
  }
  // Spins (then yields) until `counter` is done: for threads that cannot help.
  void wait_spinning(const Counter& counter);
  // The calling thread is inside a job (through run_inline and waits too).
  static bool inside_job();
  // Makes the calling thread participant `index` (worker threads) or nothing (index = kExternal).
  void bind_thread(std::uint32_t index) const;
  void count_steal(std::uint32_t self) { bump_own(stats_[self].steals); }
  void count_park(std::uint32_t self) { bump_own(stats_[self].parks); }
  void count_wake(std::uint32_t self, std::uint64_t latency_ns) {
    bump_own(stats_[self].wakes);
    StatsSlot& s = stats_[self];
    s.wake_ns.store(s.wake_ns.load(std::memory_order_relaxed) + latency_ns,
                    std::memory_order_relaxed);
  }
  void set_active_workers(std::uint32_t count);
  void set_pinned(bool pinned);
  bool pinned() const;
  std::uint32_t active_workers() const { return active_workers_.load(std::memory_order_relaxed); }
  // Parallel_for halving down to `grain` (0: chosen from the participant count): dynamic, tbb.
  void split_recursively(RangeTask& task, std::size_t grain) const;
  // Around a blocking parallel_for of `tag` cut into `pieces` jobs (Config::
  // skip_wakes_for_short_ranges). begin: sets `start` (ns) where the range is measured, and
  // `held` where its caller starts it alone because the tag's last ranges each ended before a
  // wake would have landed. end: notes how long it took and ends the hold.
  void begin_blocking_range(std::uint16_t tag, std::size_t pieces, bool& held,
                            std::uint64_t& start);
  void end_blocking_range(std::uint16_t tag, bool held, std::uint64_t start);
  void force_wake_latency(std::uint64_t ns);
  // JobSystem::WakeBatch: the calling thread's wakes are owed from begin (true where they are:
  // Dynamic and Static, not inside another batch) until end, which makes them.
  bool begin_wake_batch();
  void end_wake_batch();

 private:
  static void bump_own(std::atomic<std::uint64_t>& value) {
    value.store(value.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  ModeImpl& implementation(Mode mode) const { return *modes_[static_cast<std::size_t>(mode)]; }
  // Called when `count` jobs counted on `counter` have finished.
  void finish(Counter* counter, std::uint32_t count);
  // Puts `job` in `dependency`'s continuation list, or releases it now if nothing is pending.
  void attach(Counter& dependency, Job* job);
  // Under the counter's list lock: unlinks and returns the continuations attached before the
  // epoch `state` shows (in list order), leaving those that wait for the current jobs.
  static Job* take_released(CounterState& counter, std::uint64_t state);
  static void lock_list(CounterState& counter);
  static void unlock_list(CounterState& counter);
  // Gives back a finished job's slot (pooled, heap or stack); nothing of it is touched after.
  static void free_slot(Job* job);
  // Makes a released continuation runnable; a link instead counts down its job's joins.
  void release(Job* job);
  void run_list(Job* list);
  bool pools_idle() const;  // every pool slot free: no pooled job queued, running or waiting
  void record_exception(Counter* counter, const JobDesc& desc);
  // How a job reached note_submit(): queued (Single mode runs it at once all the same), run at
  // once because nobody else could start it (one active participant), or run here (run_here(), a
  // full pool). A recording keeps the first two as spawns, so the graph replays as if queued.
  enum class SubmitPath : std::uint8_t { Queue, AtOnce, Here };
  // Before a job is queued or run: gives it the submitter's tag if it has none, and logs it
  // (with its dependencies) when recording.
  inline void note_submit(Job* job, std::span<Counter* const> dependencies, SubmitPath path);
  // note_submit()'s part while recording (`range`: the parallel_for it is a piece of, or 0).
  void record_submit(Job* job, std::span<Counter* const> dependencies, std::uint32_t range,
                     SubmitPath path);
  void book(std::uint32_t slot, bool exclusive, const JobDesc& desc, std::uint64_t elapsed);

  Config config_;
  std::uint32_t worker_count_;
  std::uint32_t job_stride_;
  std::uint32_t pool_size_;
  JobHooks hooks_;
  JobSystem* owner_;
  const Scheduler* previous_state_owner_ = nullptr;
  std::uint32_t previous_state_index_ = kExternalThread;

  std::unique_ptr<Recorder> recorder_;
  // Per participant, a cache line each: how deep in jobs it is now (written by itself only).
  struct alignas(kCacheLine) Running {
    std::atomic<std::uint32_t> depth{0};
    std::atomic<std::uint32_t> submits{0};  // jobs it queued, wrapping
  };
  std::unique_ptr<Running[]> running_;
  std::unique_ptr<std::byte[]> slot_memory_;
  std::unique_ptr<Participant[]> participants_;
  // Slot worker_count_ is shared by outside threads (and oneTBB's threads).
  std::unique_ptr<StatsSlot[]> stats_;
  // Outside threads' slots.
  Lock external_mutex_;
  JobPool external_pool_;

  std::atomic<std::uint64_t> inline_overflows_{0};
  std::atomic<std::uint64_t> exceptions_dropped_{0};
  std::atomic<std::uint64_t> ranges_alone_{0};
  std::atomic<std::uint64_t> ranges_alone_woke_{0};
  // Per tag: the score of its blocking ranges that ended before a wake would have landed
  // (begin_blocking_range(); scheduler.cpp says how it counts).
  std::atomic<std::uint8_t> short_ranges_[kMaxTags] = {};
  std::atomic<std::uint32_t> overflow_logged_{0};

#if SPINDLE_THREADS
  std::unique_ptr<WorkerPool> workers_;
#endif
  // Indexed by Mode; null where this build lacks the mode.
  std::unique_ptr<ModeImpl> modes_[4];
  std::atomic<ModeImpl*> current_{nullptr};
  std::atomic<std::uint32_t> active_workers_{0};
};

}  // namespace spindle::jobs::detail
