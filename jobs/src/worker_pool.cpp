#include "worker_pool.h"

#include <algorithm>
#include <cstdio>

#include "scheduler.h"

namespace spindle::jobs::detail {
namespace {

// How early worker 1 wakes itself before a predicted burst (Config::predictive_wake).
constexpr std::uint64_t kBurstLeadNs = 200'000;

// How long after a predicted burst's due time worker 1 keeps spinning for it.
constexpr std::uint64_t kBurstLagNs = 40'000;

// Idle workers that spin before parking at any one time; the rest park at once.
constexpr std::uint32_t kMaxIdleSpinners = 2;

// How long an idle participant keeps spinning once no other participant runs a job or submits
// one: then only outside code (the next frame, after the game's own serial code) can make work,
// and a wake costs less than spinning through that.
constexpr std::uint64_t kQuietSpinNs = 1'000;

// A wake that took longer than this (its sleeper was descheduled, say) counts as this long in the
// average wake latency: one such wake must not make every range under a millisecond run alone.
constexpr std::uint64_t kMaxLatencySampleNs = 500'000;

// The wakes a participant owes while it holds them (WorkerPool::hold_wakes()). Only the wakes of
// one pool, and only for the range's own pieces: a job an item submits, to this job system or to
// another, wakes as it always did.
struct HeldWakes {
  const WorkerPool* pool = nullptr;  // whose wakes are held
  bool holding = false;
  bool piece = false;      // a piece of a range is being submitted (WorkerPool::PieceScope)
  bool owes_one = false;   // a wake_one() was held
  std::uint64_t owed = 0;  // participants a wake_if_parked() was held for (bit i: participant i)
  bool woke_late = false;  // the hold ran out and a wake was made then
  std::uint64_t until_ns = 0;
};
thread_local HeldWakes t_held;

// The wakes a thread owes inside a WakeBatch (WorkerPool::begin_batch()): every wake of one pool
// that its own code makes, none that a job it runs meanwhile makes (Scheduler::execute() pauses
// the batch around each job). Apart from HeldWakes: a range a job starts alone keeps its own.
struct BatchedWakes {
  const WorkerPool* pool = nullptr;
  bool active = false;
  bool owes_one = false;
  std::uint64_t owed = 0;  // participants a wake_if_parked() was owed for (bit i: participant i)
};
thread_local BatchedWakes t_batch;

}  // namespace

WorkerPool::WorkerPool(Scheduler& scheduler)
    : scheduler_(scheduler),
      config_(scheduler.config()),
      count_(scheduler.workers()),
      wake_(std::make_unique<WakeWord[]>(count_)) {}

WorkerPool::~WorkerPool() = default;

void WorkerPool::start() {
  if (started_ || count_ <= 1) return;
  started_ = true;
  // Participant 0 keeps the first process CPU when we pin it; a game that pinned its main thread
  // itself keeps the CPUs it chose. Workers take the other CPUs first, in order, then share.
  const ProcessCpus& process = process_cpus();
  const std::uint32_t cpus = std::min(process.count, kMaxWorkers);
  bool main_cpu[kMaxWorkers] = {};
  const std::uint32_t main_cpus =
      config_.pin_main_thread ? 0 : thread_cpus_among(process, main_cpu);
  if (main_cpus == 0 || main_cpus == cpus) {
    std::fill(main_cpu, main_cpu + cpus, false);
    main_cpu[0] = true;
  }
  std::uint32_t order[kMaxWorkers];
  std::uint32_t n = 0;
  for (const bool mains : {false, true}) {
    for (std::uint32_t k = 0; k < cpus; ++k) {
      if (main_cpu[k] == mains) order[n++] = process.ids[k];
    }
  }
  cpus_[0] = process.ids[0];
  for (std::uint32_t i = 1; i < count_; ++i) cpus_[i] = order[(i - 1) % cpus];
  if ((config_.pin_workers || config_.pin_main_thread) && cpus < count_) {
    char message[192];
    std::snprintf(message, sizeof(message),
                  "%u participants but the process may use %u CPU(s): pinned participants share "
                  "CPUs round-robin (set Config::workers, or pin_workers = false)",
                  count_, process.count);
    scheduler_.log(LogLevel::Warning, message);
  }
  if (config_.pin_main_thread) {
    main_affinity_ = save_affinity();
    main_pinned_ = pin_current_thread(cpus_[0]);
    if (!main_pinned_) note_pin_failure(0);
  }
  threads_.reserve(count_ - 1);
  for (std::uint32_t i = 1; i < count_; ++i) {
    threads_.emplace_back([this, i] { worker_main(i); });
  }
}

void WorkerPool::drain() {
  // Workers that were never started cannot be running anything.
  const std::uint64_t workers_mask =
      !started_ ? 0 : (count_ >= 64 ? ~0ull : ((1ull << count_) - 1)) & ~1ull;
  for (;;) {
    ModeImpl& mode = scheduler_.current();
    if (Job* job = mode.find_work(0)) {
      scheduler_.execute(job, 0);
      continue;
    }
    if (!mode.any_queued() &&
        (parked_.load(std::memory_order_seq_cst) & workers_mask) == workers_mask &&
        (waiting_.load(std::memory_order_seq_cst) & workers_mask) == 0 && !mode.any_queued()) {
      break;
    }
    std::this_thread::yield();
  }
}

void WorkerPool::stop() {
  stopping_.store(true, std::memory_order_seq_cst);
  for (std::uint32_t i = 1; i < count_; ++i) wake(i);
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  if (main_pinned_) restore_affinity(main_affinity_);
}

void WorkerPool::unpin_main() {
  if (main_pinned_) restore_affinity(main_affinity_);
}

void WorkerPool::repin_main() {
  if (main_pinned_) pin_current_thread(cpus_[0]);
}

void WorkerPool::set_pinned(bool pinned) {
  if (want_pinned_.exchange(pinned, std::memory_order_relaxed) == pinned) return;
  if (!started_ || !main_pinned_) return;
  if (pinned) {
    pin_current_thread(cpus_[0]);
  } else {
    restore_affinity(main_affinity_);
  }
}

void WorkerPool::note_pin_failure(std::uint32_t index) {
  if (pin_failure_logged_.exchange(1, std::memory_order_relaxed) == 0) {
    char message[160];
    std::snprintf(message, sizeof(message),
                  "could not pin participant %u to a CPU; carrying on unpinned (logged once)",
                  index);
    scheduler_.log(LogLevel::Warning, message);
  }
}

void WorkerPool::worker_main(std::uint32_t index) {
  scheduler_.bind_thread(index);
  // Whether this thread keeps to its CPU now: set_pinned() changes what is wanted, the thread
  // follows before it next looks for work. A thread that could not be pinned stays unpinned.
  bool pinned = config_.pin_workers && pin_current_thread(cpus_[index]);
  const bool may_pin = pinned;
  if (!pinned) {
    // Threads start with their creator's mask, which may be the one CPU participant 0 is on.
    unpin_current_thread();
    if (config_.pin_workers) note_pin_failure(index);
  }
  const bool sentinel = index == 1 && config_.predictive_wake;
  if (sentinel) set_precise_timers();
  bool after_idle = false;
  // Set when the sentinel woke itself for a predicted burst: the burst's due time. Cleared once
  // the burst is seen or its window has passed.
  std::uint64_t burst_due = 0;
  for (;;) {
    if (may_pin && want_pinned_.load(std::memory_order_relaxed) != pinned) {
      pinned = !pinned;
      if (pinned) {
        pin_current_thread(cpus_[index]);
      } else {
        unpin_current_thread();
      }
    }
    ModeImpl& mode = scheduler_.current();
    if (Job* job = mode.find_work(index)) {
      if (after_idle) {
        mode.found_work_after_idle(index);
        if (burst_due != 0) note_burst(now_ns());
        after_idle = false;
        burst_due = 0;
      }
      scheduler_.execute(job, index, true);
      continue;
    }
    scheduler_.flush_batch(index);
    // Woken early for a burst that is due: keep looking until kBurstLagNs after its due time.
    std::uint64_t spin_ns = 0;
    if (burst_due != 0) {
      const std::uint64_t now = now_ns();
      if (burst_due + kBurstLagNs > now) {
        spin_ns = burst_due + kBurstLagNs - now;
      } else {
        burst_due = 0;
      }
    }
    scheduler_.pool(index).rewind();  // out of work: its next jobs start on warm slots
    ParkInfo park;
    if (!idle(index, nullptr, &park, spin_ns)) break;
    after_idle = true;
    // Only sleeps of a millisecond or more end a "burst gap"; short naps inside a frame do not.
    if (sentinel && park.parked && park.slept_ns >= 1'000'000) {
      if (park.woken) {
        note_burst(now_ns());
        burst_due = 0;
      } else {
        burst_due = burst_last_ns_ + burst_period_ns_;
      }
    }
  }
  scheduler_.bind_thread(kExternalThread);
}

void WorkerPool::help_until(Counter& counter, std::uint32_t self, ModeImpl& mode) {
  // The job running around this wait may hold a batch; its counter's waiters must not wait on us.
  scheduler_.flush_batch(self);
  bool after_idle = false;
  for (;;) {
    // A range started alone that is still running after a wake would have landed: wake now.
    if (t_held.holding && t_held.pool == this && now_ns() >= t_held.until_ns)
      t_held.woke_late |= lift_hold(self);
    // Our own batch is all that is left of `counter`: settle it so the counter can finish.
    if (scheduler_.batch_holds_rest_of(self, counter)) scheduler_.flush_batch(self);
    if (counter.done()) break;
    if (Job* job = mode.find_work_waiting(self)) {
      if (after_idle) mode.found_work_after_idle(self);
      after_idle = false;
      scheduler_.execute(job, self, true);
      continue;
    }
    scheduler_.flush_batch(self);
    // Nothing left here while the counter runs elsewhere: owed wakes are made before we idle.
    if (t_held.holding && t_held.pool == this) t_held.woke_late |= lift_hold(self);
    if (t_batch.active && t_batch.pool == this) {
      t_batch.active = false;  // made, not owed again
      make_owed_wakes(self, t_batch.owed, t_batch.owes_one);
      t_batch.active = true;
    }
    idle(self, &counter);
    after_idle = true;
  }
  scheduler_.flush_batch(self);  // back to user code: nothing may stay deferred
}

bool WorkerPool::idle(std::uint32_t self, const Counter* counter, ParkInfo* park,
                      std::uint64_t spin_ns) {
  if (spin_ns == 0) spin_ns = std::uint64_t{config_.spin_before_park_us} * 1000;
  if (!active(self)) spin_ns = 1;  // nothing will be handed to it: sleep at once
  const std::uint64_t start = now_ns();
  // Only idle workers count as spinning: a waiter may leave as soon as its counter is done, so
  // a submitter must not rely on it to take new work.
  const std::uint32_t spinner = counter == nullptr ? 1 : 0;
  // A couple of spinners find new work as fast as all of them would, and pass a wake on to the
  // next sleeper (found_work_after_idle): the others sleep at once, so an idle pool costs the
  // same CPU on 16 cores as on 2.
  if (spinning_.fetch_add(spinner, std::memory_order_relaxed) >= kMaxIdleSpinners && spinner != 0)
    spin_ns = 1;
  std::uint64_t quiet_since = 0;
  std::uint64_t submits_seen = ~0ull;
  for (std::uint32_t i = 1;; ++i) {
    if (counter != nullptr ? counter->done() : stopping_.load(std::memory_order_relaxed)) {
      spinning_.fetch_sub(spinner, std::memory_order_relaxed);
      return counter != nullptr;
    }
    if (counter != nullptr ? scheduler_.current().has_work_waiting(self)
                           : scheduler_.current().has_work(self)) {
      spinning_.fetch_sub(spinner, std::memory_order_relaxed);
      return true;
    }
    cpu_relax();
    if ((i & 31) == 0) {
      const std::uint64_t now = now_ns();
      if (now - start >= spin_ns) break;
      std::uint64_t submits = 0;
      if (scheduler_.others_active(self, submits) || submits != submits_seen) {
        quiet_since = 0;
        submits_seen = submits;
      } else if (quiet_since == 0) {
        quiet_since = now;
      } else if (now - quiet_since >= kQuietSpinNs) {
        break;
      }
    }
  }

  std::atomic<std::uint32_t>& word = wake_[self].epoch;
  const std::uint64_t bit = 1ull << self;
  const std::uint32_t epoch = word.load(std::memory_order_acquire);
  // No longer spinning, and parked, both before the fence: a submitter that still saw us
  // spinning (and so did not wake anyone) published its job before its own fence, and one of
  // the two fences comes first, so either we see the job below or it sees our parked bit.
  spinning_.fetch_sub(spinner, std::memory_order_relaxed);
  if (counter != nullptr) waiting_.fetch_or(bit, std::memory_order_seq_cst);
  parked_.fetch_or(bit, std::memory_order_seq_cst);
  full_fence();
  const bool stop = counter == nullptr && stopping_.load(std::memory_order_relaxed);
  const bool work = counter != nullptr ? scheduler_.current().has_work_waiting(self)
                                       : scheduler_.current().has_work(self);
  if (!stop && !work && !(counter != nullptr && counter->done())) {
    scheduler_.count_park(self);
    const bool sentinel =
        counter == nullptr && self == 1 && config_.predictive_wake && active(self);
    const std::uint64_t slept_from = now_ns();
    park_on(word, epoch, sentinel ? sentinel_timeout(slept_from) : -1);
    const bool woken = word.load(std::memory_order_relaxed) != epoch;
    const std::uint64_t awake = now_ns();
    if (woken) {
      const std::uint64_t at = wake_[self].woken_at_ns.load(std::memory_order_relaxed);
      scheduler_.count_wake(self, at != 0 && awake > at ? awake - at : 0);
      if (at != 0 && awake > at) note_wake_latency(awake - at);
    }
    if (park != nullptr) {
      park->parked = true;
      park->woken = woken;
      park->slept_ns = awake - slept_from;
    }
  }
  parked_.fetch_and(~bit, std::memory_order_relaxed);
  if (counter != nullptr) waiting_.fetch_and(~bit, std::memory_order_relaxed);
  return counter != nullptr || !stopping_.load(std::memory_order_relaxed);
}

void WorkerPool::note_burst(std::uint64_t now) {
  // A burst is the first job worker 1 finds after it slept. Bursts 0.5-250 ms apart that agree
  // within a quarter of the period build confidence; anything else starts learning again.
  const std::uint64_t interval = now - burst_last_ns_;
  burst_last_ns_ = now;
  const bool plausible = interval >= 500'000 && interval <= 250'000'000;
  if (!plausible) {
    burst_confidence_ = 0;
    return;
  }
  const std::uint64_t period = burst_period_ns_;
  // A frame without work (or one we slept through) shows up as two or three periods at once.
  const std::uint64_t periods =
      period == 0 ? 1 : std::clamp<std::uint64_t>((interval + period / 2) / period, 1, 3);
  const std::uint64_t diff =
      interval > periods * period ? interval - periods * period : periods * period - interval;
  if (period != 0 && periods > 1 && diff * 4 <= period) return;  // consistent, nothing new
  if (period != 0 && diff * 4 <= period) {
    burst_period_ns_ = (3 * period + interval) / 4;
    burst_confidence_ = std::min<std::uint32_t>(burst_confidence_ + 1, 8);
  } else {
    burst_period_ns_ = interval;
    burst_confidence_ = 1;
  }
}

std::int64_t WorkerPool::sentinel_timeout(std::uint64_t now) const {
  if (burst_confidence_ < 3) return -1;
  // Wake kBurstLeadNs early (a timed sleep on this kind of VM ends up to ~150 us late) and spin
  // until kBurstLagNs after the due time: one worker only, about 1-2% of a core at 10 ms.
  const std::uint64_t due = burst_last_ns_ + burst_period_ns_;
  if (due <= now + kBurstLeadNs) return -1;  // missed: sleep until woken and learn again
  return static_cast<std::int64_t>(due - kBurstLeadNs - now);
}

void WorkerPool::wake(std::uint32_t index) {
  std::atomic<std::uint32_t>& word = wake_[index].epoch;
  wake_[index].woken_at_ns.store(now_ns(), std::memory_order_relaxed);
  word.fetch_add(1, std::memory_order_release);
  unpark_one(word);
}

void WorkerPool::note_wake_latency(std::uint64_t ns) {
  ns = std::min(ns, kMaxLatencySampleNs);
  // Several workers may update it at once; a lost update only delays the average by one sample.
  const std::uint64_t old = wake_latency_ns_.load(std::memory_order_relaxed);
  const std::uint64_t next = old == 0 ? ns : old - old / 8 + ns / 8;
  wake_latency_ns_.store(std::max<std::uint64_t>(next, 1), std::memory_order_relaxed);
}

bool WorkerPool::holding_wakes() {
  return t_held.holding;
}

bool WorkerPool::holding_wakes_here() const {
  return t_held.holding && t_held.pool == this;
}

void WorkerPool::hold_wakes(std::uint64_t until_ns) {
  t_held = HeldWakes{};
  t_held.pool = this;
  t_held.holding = true;
  t_held.until_ns = until_ns;
}

WorkerPool::PieceScope::PieceScope() : outer_(t_held.piece) {
  t_held.piece = true;
}

WorkerPool::PieceScope::~PieceScope() {
  t_held.piece = outer_;
}

bool WorkerPool::lift_hold(std::uint32_t self) {
  t_held.holding = false;
  return make_owed_wakes(self, t_held.owed, t_held.owes_one);
}

bool WorkerPool::begin_batch() {
  if (t_batch.active) return false;
  t_batch = BatchedWakes{this, true, false, 0};
  return true;
}

void WorkerPool::end_batch(std::uint32_t self) {
  t_batch.active = false;  // the wake below is made, not owed again
  make_owed_wakes(self, t_batch.owed, t_batch.owes_one);
}

bool WorkerPool::pause_batch() {
  if (!t_batch.active) return false;
  t_batch.active = false;
  return true;
}

void WorkerPool::resume_batch() {
  t_batch.active = true;
}

bool WorkerPool::make_owed_wakes(std::uint32_t self, std::uint64_t& owed_to, bool& owes_one) {
  // The jobs were published before the wake was held; a sleeper may have been woken since, or a
  // spinner (or the holder itself) may have taken them: wake only for what is still queued and
  // unnoticed.
  bool woke = false;
  if (owed_to != 0) {
    // Static: each owed participant has its own mailbox; wake those whose share is still there.
    std::uint64_t owed = owed_to;
    owed_to = 0;
    full_fence();
    while (owed != 0) {
      const std::uint32_t target = static_cast<std::uint32_t>(__builtin_ctzll(owed));
      owed &= owed - 1;
      if (scheduler_.current().has_work(target) && wake_if_claimed(target)) woke = true;
    }
  }
  if (!owes_one) return woke;
  owes_one = false;
  full_fence();
  if (!scheduler_.current().any_queued() || !sleeper_unnoticed()) return woke;
  wake_one(self);
  return true;
}

void WorkerPool::wake_parked(std::uint32_t target) {
  if (t_held.holding && t_held.piece && t_held.pool == this && target < 64) {
    t_held.owed |= 1ull << target;
    return;
  }
  if (t_batch.active && t_batch.pool == this && target < 64) {
    t_batch.owed |= 1ull << target;
    return;
  }
  wake_if_claimed(target);
}

bool WorkerPool::wake_if_claimed(std::uint32_t target) {
  // Clearing the bit ourselves stops several wakers from waking the same sleeper.
  const std::uint64_t bit = 1ull << target;
  if ((parked_.fetch_and(~bit, std::memory_order_acq_rel) & bit) == 0) return false;
  wake(target);
  return true;
}

bool WorkerPool::end_hold(std::uint32_t self) {
  const bool late = t_held.woke_late;
  if (t_held.holding) lift_hold(self);
  const bool piece = t_held.piece;
  t_held = HeldWakes{};
  t_held.piece = piece;
  return late;
}

void WorkerPool::wake_one(std::uint32_t except) {
  if (t_held.holding && t_held.piece && t_held.pool == this) {
    t_held.owes_one = true;
    return;
  }
  if (t_batch.active && t_batch.pool == this) {
    t_batch.owes_one = true;
    return;
  }
  const std::uint64_t self_bit = except < 64 ? 1ull << except : 0;
  const std::uint64_t parked =
      parked_.load(std::memory_order_relaxed) & ~self_bit & active_.load(std::memory_order_relaxed);
  // Prefer an idle worker: a thread parked in wait() may find its counter done and go back to
  // user code without looking at the queues.
  const std::uint64_t idle_workers = parked & ~waiting_.load(std::memory_order_relaxed);
  std::uint64_t mask = idle_workers != 0 ? idle_workers : parked;
  while (mask != 0) {
    const std::uint32_t index = static_cast<std::uint32_t>(__builtin_ctzll(mask));
    if (wake_if_claimed(index)) return;
    mask &= mask - 1;
  }
}

void WorkerPool::wake_waiters() {
  std::uint64_t mask = waiting_.load(std::memory_order_relaxed);
  while (mask != 0) {
    const std::uint32_t index = static_cast<std::uint32_t>(__builtin_ctzll(mask));
    mask &= mask - 1;
    wake(index);
  }
}

}  // namespace spindle::jobs::detail
