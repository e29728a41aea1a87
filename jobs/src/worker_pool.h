// The threads of the threaded modes: participants 1..W-1, their CPUs, and how they sleep and wake.
// Private to jobs/; compiled only with SPINDLE_THREADS. Mode-neutral: a worker asks the current
// mode (Scheduler::current()) for its next job, so one pool serves Static, Dynamic and a later
// switch between them. Started the first time a threaded mode is activated, kept until the end.
//
// Parking (no lost wake-ups): a participant with nothing to do spins for spin_before_park_us,
// then publishes its bit in parked_ (seq_cst RMW + fence), re-checks for work and, if still
// none, sleeps on its own futex word. A submitter publishes the job first, then issues a seq_cst
// fence and reads parked_. By the fence-fence rule at least one side sees the other: either the
// parker finds the job in its re-check, or the submitter sees the bit and wakes it. Counter
// completion uses the same handshake with waiting_ for threads parked inside wait().
//
// Predictive wake (Config::predictive_wake): worker 1 learns the period of the bursts of work
// and wakes itself shortly before the next one is due, so the submitter does not pay a futex wake.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "platform.h"
#include "queues.h"
#include "spindle/jobs/job_system.h"

namespace spindle::jobs::detail {

class Scheduler;
class ModeImpl;

class WorkerPool {
 public:
  explicit WorkerPool(Scheduler& scheduler);
  ~WorkerPool();

  // Starts the workers (and pins participant 0) the first time; later calls do nothing.
  void start();
  // Runs queued jobs on the calling participant 0 until every queue is empty and every worker is
  // parked outside wait(), so none is running a job that could submit more.
  void drain();
  // Stops and joins the workers; gives participant 0 its affinity back.
  void stop();
  // oneTBB sizes its threads from the creating thread's mask: around its start, unpin main.
  void unpin_main();
  void repin_main();
  // Whether the participants keep to their CPUs (only where Config pinned them): participant 0
  // (the caller) at once, each worker before it next looks for work.
  void set_pinned(bool pinned);
  bool pinned() const { return started_ && want_pinned_.load(std::memory_order_relaxed); }

  // The help-while-waiting loop of participant `self`: runs `mode`'s work until `counter` is
  // done, parking when there is none.
  void help_until(Counter& counter, std::uint32_t self, ModeImpl& mode);

  // Waking, after publishing a job and a full_fence(). An active participant is asleep and
  // nobody spinning will find the job: the submitter pays for a wake (wake_one()).
  bool sleeper_unnoticed() const {
    return spinning_.load(std::memory_order_relaxed) == 0 &&
           (parked_.load(std::memory_order_relaxed) & active_.load(std::memory_order_relaxed)) != 0;
  }
  // Participants that may be handed work (bit i: participant i); participant 0 always is.
  // Others stay parked until they are active again (JobSystem::set_active_workers()).
  void set_active(std::uint32_t count) {
    const std::uint64_t mask =
        count >= 64 ? ~0ull : (1ull << std::max<std::uint32_t>(count, 1)) - 1;
    active_.store(mask, std::memory_order_seq_cst);
  }
  bool active(std::uint32_t index) const {
    return index < 64 && ((active_.load(std::memory_order_relaxed) >> index) & 1u) != 0;
  }
  // Static mode dealt a job to `target`: wakes it if it sleeps. While the calling thread holds
  // its wakes (hold_wakes()), it only notes that `target` is owed one.
  void wake_if_parked(std::uint32_t target) {
    if ((parked_.load(std::memory_order_relaxed) & (1ull << target)) != 0) wake_parked(target);
  }
  // An active participant other than `except` is parked (Static then wakes it when it deals to it).
  bool asleep_except(std::uint32_t except) const {
    const std::uint64_t self_bit = except < 64 ? 1ull << except : 0;
    return (parked_.load(std::memory_order_relaxed) & active_.load(std::memory_order_relaxed) &
            ~self_bit) != 0;
  }
  // An active worker parked outside wait(), none spinning: work queued now would wait for a wake.
  bool idle_worker_asleep() const {
    return spinning_.load(std::memory_order_relaxed) == 0 &&
           (parked_.load(std::memory_order_relaxed) & ~waiting_.load(std::memory_order_relaxed) &
            active_.load(std::memory_order_relaxed)) != 0;
  }
  // Wakes one parked participant other than `except`, preferring idle workers. While the calling
  // thread holds its wakes (hold_wakes()), it only notes that a wake is owed.
  void wake_one(std::uint32_t except);

  // Config::skip_wakes_for_short_ranges. How long a wake takes to land: from the wake call to the
  // woken participant running, averaged over recent wakes (0 until the first).
  std::uint64_t wake_latency_ns() const {
    const std::uint64_t forced = forced_latency_ns_.load(std::memory_order_relaxed);
    return forced != 0 ? forced : wake_latency_ns_.load(std::memory_order_relaxed);
  }
  void force_wake_latency(std::uint64_t ns) {
    forced_latency_ns_.store(ns, std::memory_order_relaxed);
  }
  // The calling participant's wakes of this pool (Dynamic's wake_one(), Static's
  // wake_if_parked()) for a range's pieces are owed instead of made, until `until_ns`
  // (help_until() then makes them) or end_hold(). Wakes of threads parked in wait(), of other
  // pools and for other jobs are never held.
  static bool holding_wakes();
  // Whether the calling thread holds this pool's wakes (a range it submits now starts alone).
  bool holding_wakes_here() const;
  void hold_wakes(std::uint64_t until_ns);
  // Around the submission of a range's piece (RangeSpawner): only those wakes are held.
  class PieceScope {
   public:
    PieceScope();
    ~PieceScope();
    PieceScope(const PieceScope&) = delete;
    PieceScope& operator=(const PieceScope&) = delete;

   private:
    bool outer_;
  };
  // Ends the hold: makes the owed wakes where work is still queued. True when the hold had run out
  // before (the range ran longer than a wake takes) and a wake was made then.
  bool end_hold(std::uint32_t self);
  // A batch of submissions (JobSystem::WakeBatch): the calling thread's wakes of this pool, for
  // any job, are owed until end_batch(), which makes one where work is still queued and nobody
  // spinning will find it (a woken worker that finds more wakes the next). False, and nothing
  // held, inside another batch: the outer one decides. A job the thread runs meanwhile wakes as
  // it always does (Scheduler::execute() pauses the batch around it).
  bool begin_batch();
  void end_batch(std::uint32_t self);
  static bool pause_batch();  // true when a batch was active (then resume_batch() after)
  static void resume_batch();
  // After a counter finished: wakes the participants parked inside wait().
  void wake_waiters_after_finish() {
    full_fence();
    if (waiting_.load(std::memory_order_relaxed) != 0) wake_waiters();
  }

 private:
  struct ParkInfo {
    bool parked = false;
    bool woken = false;  // by another thread (else by its own timeout, or not at all)
    std::uint64_t slept_ns = 0;
  };
  // A participant's futex word, bumped by whoever wakes it, and when it was woken (for the
  // wake latency in WorkerStats); a cache line each.
  struct alignas(kCacheLine) WakeWord {
    std::atomic<std::uint32_t> epoch{0};
    std::atomic<std::uint64_t> woken_at_ns{0};
  };

  void worker_main(std::uint32_t index);
  // wake_if_parked()'s slow path: `target` was parked.
  void wake_parked(std::uint32_t target);
  // Wakes `target` if this call is the one that clears its parked bit; false if it was not parked
  // (or another thread is waking it).
  bool wake_if_claimed(std::uint32_t target);
  void note_pin_failure(std::uint32_t index);
  // Spins, then parks until work arrives (or `counter`, if given, is done). False when stopping.
  // `park` (optional) tells whether and how it slept. `spin_ns` 0: Config::spin_before_park_us.
  bool idle(std::uint32_t self, const Counter* counter, ParkInfo* park = nullptr,
            std::uint64_t spin_ns = 0);
  // Worker 1 only: learns the cadence of bursts and says how long to sleep (-1: until woken).
  void note_burst(std::uint64_t now);
  std::int64_t sentinel_timeout(std::uint64_t now) const;
  void wake(std::uint32_t index);
  void wake_waiters();
  // Makes the wakes the calling thread owes, where work is queued; true when it woke someone.
  bool lift_hold(std::uint32_t self);
  // Makes the wakes owed so far (`owed`: Static's participants; `owes_one`: a wake_one()) where
  // work is still queued, and clears them; true when one was made.
  bool make_owed_wakes(std::uint32_t self, std::uint64_t& owed, bool& owes_one);
  void note_wake_latency(std::uint64_t ns);

  Scheduler& scheduler_;
  const Config& config_;
  const std::uint32_t count_;  // participants, participant 0 included
  std::unique_ptr<WakeWord[]> wake_;
  std::uint32_t cpus_[kMaxWorkers] = {};
  std::vector<std::thread> threads_;
  bool started_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> parked_{0};      // bit i: participant i is parked
  std::atomic<std::uint64_t> waiting_{0};     // bit i: participant i is parked inside wait()
  std::atomic<std::uint64_t> active_{~0ull};  // bit i: participant i may be handed work
  // Participants in their spin phase: a submitter wakes a sleeper only when nobody is spinning
  // (the spinner will find the job and wake the next one if more is queued).
  std::atomic<std::uint32_t> spinning_{0};
  std::atomic<std::uint32_t> pin_failure_logged_{0};
  std::atomic<std::uint64_t> wake_latency_ns_{0};    // moving average (wake_latency_ns())
  std::atomic<std::uint64_t> forced_latency_ns_{0};  // tests: used instead when not 0
  // Cadence of bursts, worker 1 only (see Config::predictive_wake).
  std::uint64_t burst_last_ns_ = 0;
  std::uint64_t burst_period_ns_ = 0;
  std::uint32_t burst_confidence_ = 0;
  SavedAffinity main_affinity_;
  bool main_pinned_ = false;  // we pinned participant 0 at start (Config::pin_main_thread)
  std::atomic<bool> want_pinned_{true};
};

}  // namespace spindle::jobs::detail
