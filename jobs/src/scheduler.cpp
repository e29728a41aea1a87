#include "scheduler.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#if SPINDLE_WITH_TBB
#include "tbb_backend.h"
#endif

namespace spindle::jobs::detail {
namespace {

struct ThreadState {
  const Scheduler* scheduler = nullptr;
  std::uint32_t index = kExternalThread;
};
thread_local ThreadState t_state;
// Jobs this thread is inside (nested through run_inline and waits): a full pool makes the
// submitter run its own queued jobs only at depth 0, where no job of its own is on the stack for
// them to wait on.
thread_local std::uint32_t t_job_depth = 0;

std::uint32_t round_up_pow2(std::uint32_t v) {
  std::uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

void bump(std::atomic<std::uint64_t>& value, std::uint64_t by, bool exclusive) {
  if (exclusive) {
    // Single writer: a plain load and store, no locked instruction on the per-job path.
    value.store(value.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  } else {
    value.fetch_add(by, std::memory_order_relaxed);
  }
}

#if SPINDLE_THREADS
std::uint32_t xorshift(std::uint32_t& state) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}
#endif

// How early worker 1 wakes itself before a predicted burst (Config::predictive_wake).
constexpr std::uint64_t kBurstLeadNs = 200'000;

// How long after a predicted burst's due time worker 1 keeps spinning for it.
constexpr std::uint64_t kBurstLagNs = 40'000;

// Longest run of finished jobs whose counter update a participant defers (see Participant).
constexpr std::uint32_t kMaxBatch = 64;

std::atomic<void (*)()> g_zero_hook{nullptr};

}  // namespace

void set_zero_hook_for_tests(void (*hook)()) {
  g_zero_hook.store(hook, std::memory_order_relaxed);
}

// A counter's continuation list lock: held for a few list operations, so a spin; yields when the
// holder was preempted (more threads than cores).
void Scheduler::lock_list(Counter& counter) {
  std::uint32_t spins = 0;
  while (counter.list_lock_.exchange(1, std::memory_order_acquire) != 0) {
    while (counter.list_lock_.load(std::memory_order_relaxed) != 0) {
      if (++spins < 128) {
        cpu_relax();
        continue;
      }
#if SPINDLE_THREADS
      std::this_thread::yield();
#endif
    }
  }
}

void Scheduler::unlock_list(Counter& counter) {
  counter.list_lock_.store(0, std::memory_order_release);
}

namespace {

constexpr std::uint32_t priority_index(Priority p) {
  return p == Priority::High ? 0u : 1u;
}

// A sub-range of a parallel_for. Dynamic and Tbb split it in halves until it is at most `grain`
// long, pushing the right halves so that thieves take the biggest pieces first.
struct RangeTask {
  JobSystem* system;
  Counter* counter;
  const void* fn;
  void (*call)(const void*, std::size_t, std::size_t);
  std::size_t begin;
  std::size_t end;
  std::size_t grain;
  JobDesc desc;
};

}  // namespace

// Defined here rather than as a lambda so JobSystem::spawn_range can name it.
void run_range_task(const RangeTask& task);

}  // namespace spindle::jobs::detail

namespace spindle::jobs {

// Friend of JobSystem: lets the scheduler submit range jobs through the same path as run().
struct RangeSpawner {
  static void spawn(const detail::RangeTask& task) {
    task.system->submit_callable(task.counter, {}, task.desc,
                                 [task] { detail::run_range_task(task); });
  }
};

}  // namespace spindle::jobs

namespace spindle::jobs::detail {

void run_range_task(const RangeTask& task) {
  std::size_t b = task.begin;
  std::size_t e = task.end;
  while (e - b > task.grain) {
    const std::size_t mid = b + (e - b) / 2;
    RangeTask right = task;
    right.begin = mid;
    right.end = e;
    RangeSpawner::spawn(right);
    e = mid;
  }
  task.call(task.fn, b, e);
}

Scheduler::Scheduler(const Config& config, std::uint32_t workers, std::uint32_t job_stride,
                     JobSystem* owner)
    : config_(config),
      mode_(config.mode),
      worker_count_(workers),
      job_stride_(job_stride),
      pool_size_(round_up_pow2(std::max<std::uint32_t>(config.jobs_per_worker, 64))),
      hooks_(config.hooks),
      owner_(owner) {
  const std::size_t pools = std::size_t{worker_count_} + 1;
  const std::size_t pool_bytes = std::size_t{pool_size_} * job_stride_;
  slot_memory_ = std::make_unique<std::byte[]>(pools * pool_bytes + kCacheLine);
  std::byte* base = slot_memory_.get();
  base += (kCacheLine - reinterpret_cast<std::uintptr_t>(base) % kCacheLine) % kCacheLine;

  participants_ = std::make_unique<Participant[]>(worker_count_);
  for (std::uint32_t i = 0; i < worker_count_; ++i) {
    Participant& p = participants_[i];
    p.pool.init(base + i * pool_bytes, pool_size_, job_stride_);
    for (std::uint32_t q = 0; q < kPriorityCount; ++q) {
      p.deque[q].init(pool_size_);
      p.mailbox[q].init(pool_size_);
    }
    p.rng = 0x9e3779b9u * (i + 1);
    p.round_robin = i + 1;
  }
  external_pool_.init(base + worker_count_ * pool_bytes, pool_size_, job_stride_);
  for (std::uint32_t q = 0; q < kPriorityCount; ++q) injection_[q].init(pool_size_);
  stats_ = std::make_unique<StatsSlot[]>(std::size_t{worker_count_} + 1);

  previous_state_owner_ = t_state.scheduler;
  previous_state_index_ = t_state.index;
  t_state = {this, 0};

#if SPINDLE_THREADS
  if (mode_ == Mode::Static || mode_ == Mode::Dynamic) start_threads();
#endif
#if SPINDLE_WITH_TBB
  if (mode_ == Mode::Tbb) tbb_ = std::make_unique<TbbBackend>(*this);
#endif
}

Scheduler::~Scheduler() {
#if SPINDLE_THREADS
  {
    // Finish everything that was submitted: help until every queue is empty and every worker is
    // parked outside wait() (so none is running a job that could submit more).
    // Workers that were never started cannot be running anything.
    const std::uint64_t workers_mask =
        !threads_started_ ? 0
                          : (worker_count_ >= 64 ? ~0ull : ((1ull << worker_count_) - 1)) & ~1ull;
    for (;;) {
      if (Job* job = find_work_any(0)) {
        execute(job, 0, 0);
        continue;
      }
      if (!any_queued() &&
          (parked_.load(std::memory_order_seq_cst) & workers_mask) == workers_mask &&
          (waiting_.load(std::memory_order_seq_cst) & workers_mask) == 0 && !any_queued()) {
        break;
      }
      std::this_thread::yield();
    }
  }
#endif
#if SPINDLE_WITH_TBB
  tbb_.reset();  // waits for its detached jobs
#endif
#if SPINDLE_THREADS
  stop_threads();
#endif
  if (main_pinned_) restore_affinity(main_affinity_);
  t_state = {previous_state_owner_, previous_state_index_};
}

std::uint32_t Scheduler::current_worker() const {
  return t_state.scheduler == this ? t_state.index : kExternalThread;
}

void Scheduler::log(LogLevel level, const char* message) const {
  if (config_.log != nullptr) {
    config_.log(config_.log_user, level, message);
  } else {
    std::fprintf(stderr, "[jobs] %s\n", message);
  }
}

void Scheduler::note_overflow(const char* what, const JobDesc& desc) {
  inline_overflows_.fetch_add(1, std::memory_order_relaxed);
  if (overflow_logged_.exchange(1, std::memory_order_relaxed) == 0) {
    char message[256];
    std::snprintf(message, sizeof(message),
                  "job '%s' ran inline: %s (logged once; see Stats::inline_overflows)",
                  desc.name != nullptr ? desc.name : "?", what);
    log(LogLevel::Warning, message);
  }
}

Job* Scheduler::acquire(bool may_help) {
  const std::uint32_t self = current_worker();
#if SPINDLE_WITH_TBB
  if (mode() == Mode::Tbb && self != 0) {
    if (Job* job = tbb_->acquire()) return job;
  }
#endif
  if (self < worker_count_) {
    JobPool& pool = participants_[self].pool;
    if (Job* job = pool.try_acquire()) return job;
#if SPINDLE_THREADS
    // Full: our own queued jobs hold the slots. Run them (they are ours to run anyway: Static
    // mode deals us our share, Dynamic pushes to our deque) and reuse their slots, so that a
    // large spawn stays parallel instead of running the rest inline on this thread. Only from
    // user code: inside a job, a queued job run here could wait on the job below it.
    if (may_help && t_job_depth == 0 && (mode() == Mode::Static || mode() == Mode::Dynamic)) {
      while (Job* queued = pop_own(self)) {
        execute(queued, self, 0);
        if (Job* job = pool.take_if_free(queued)) return job;
        if (Job* job = pool.try_acquire()) return job;
      }
    }
#else
    (void)may_help;  // single mode runs jobs as they come: a pool never holds a queued one
#endif
    return nullptr;
  }
  std::lock_guard<Lock> lock(external_mutex_);
  return external_pool_.try_acquire();
}

void Scheduler::submit(Job* job, std::span<Counter* const> dependencies) {
  std::uint32_t count = 0;
  for (Counter* c : dependencies) count += c != nullptr ? 1 : 0;
  if (count == 0) {
    push(job);
    return;
  }
  if (count == 1) {
    for (Counter* c : dependencies) {
      if (c != nullptr) attach(*c, job);
    }
    return;
  }
  // A join: one link per dependency, each releasing one of the job's joins. Every join is
  // counted before the first link is attached, since a link may be released at once.
  job->joins.store(count, std::memory_order_relaxed);
  for (Counter* c : dependencies) {
    if (c == nullptr) continue;
    // No helping here: a job run now could wait on `job`'s counter, which already counts `job`.
    Job* link = acquire(false);
    if (link == nullptr) {
      link = allocate_heap_job(sizeof(Job*));
      note_overflow("no free job slot for a join's link; kept on the heap", job->desc);
    }
    link->flags |= kJobLink;
    link->counter = nullptr;
    link->desc = job->desc;
    *reinterpret_cast<Job**>(link->capture()) = job;
    attach(*c, link);
  }
}

void Scheduler::run_inline(Job* job, std::span<Counter* const> dependencies) {
  // JobSystem sends continuations with a pending dependency to the heap; this one is runnable,
  // unless a dependency gained jobs since: then it still may not start early.
  for (Counter* c : dependencies) {
    if (c != nullptr && !c->done()) wait_for(*c);
  }
  execute(job, current_worker(), 0);
}

void Scheduler::push(Job* job) {
  switch (mode()) {
    case Mode::Single:
      execute(job, current_worker(), 0);
      return;
    case Mode::Tbb:
#if SPINDLE_WITH_TBB
      tbb_->push(job);
      return;
#else
      break;
#endif
    case Mode::Static:
    case Mode::Dynamic:
#if SPINDLE_THREADS
      push_threaded(job, current_worker());
      return;
#else
      break;
#endif
  }
  execute(job, current_worker(), 0);
}

std::uint64_t Scheduler::execute(Job* job, std::uint32_t worker, std::uint64_t start, bool batch) {
  const JobDesc desc = job->desc;
  Counter* counter = job->counter;
  const bool exclusive = t_state.scheduler == this && t_state.index == worker;
  const std::uint32_t slot = worker < worker_count_ ? worker : worker_count_;
  // A deferred batch is only ever held while running jobs of the same counter, which cannot be
  // done meanwhile anyway; any other job (it may run long, or block) settles the batch first.
  if (batch && participants_[worker].batch_count != 0 &&
      participants_[worker].batch_counter != counter) {
    flush_batch(worker);
  }

  if (hooks_.on_begin != nullptr) hooks_.on_begin(hooks_.user, desc, worker);
  // A participant running jobs back to back passes the previous job's end as this one's start:
  // one timestamp per job instead of two (a TSC read costs about 10 ns in a VM).
  if (config_.time_jobs && start == 0) start = ticks();
  ++t_job_depth;
#if defined(__cpp_exceptions)
  try {
    job->invoke(*job);
  } catch (...) {
    record_exception(counter, desc);
  }
#else
  job->invoke(*job);
#endif
  --t_job_depth;
  const std::uint64_t end = config_.time_jobs ? ticks() : 0;
  book(slot, exclusive && slot < worker_count_, desc, end - start);
  if (hooks_.on_end != nullptr) hooks_.on_end(hooks_.user, desc, worker);

  // Free the slot before finishing the counter: once the counter is done a waiter may destroy
  // the whole job system, so nothing of ours may be touched after finish().
  free_slot(job);
  if (counter == nullptr) return end;
  if (!batch) {
    finish(counter, 1);
    return end;
  }
  Participant& me = participants_[worker];
  me.batch_counter = counter;  // any other counter's batch was flushed before the job ran
  if (++me.batch_count >= kMaxBatch) flush_batch(worker);
  return end;
}

void Scheduler::flush_batch(std::uint32_t self) {
  Participant& me = participants_[self];
  if (me.batch_count == 0) return;
  Counter* counter = me.batch_counter;
  const std::uint32_t count = me.batch_count;
  me.batch_counter = nullptr;
  me.batch_count = 0;
  finish(counter, count);
}

void Scheduler::book(std::uint32_t slot, bool exclusive, const JobDesc& desc,
                     std::uint64_t elapsed) {
  StatsSlot& s = stats_[slot];
  const std::uint32_t tag = desc.tag < kMaxTags ? desc.tag : kMaxTags - 1;
  bump(s.jobs, 1, exclusive);
  bump(s.tag_jobs[tag], 1, exclusive);
  if (elapsed != 0) {
    bump(s.busy_ticks, elapsed, exclusive);
    bump(s.tag_ticks[tag], elapsed, exclusive);
  }
}

void Scheduler::record_exception(Counter* counter, const JobDesc& desc) {
#if defined(__cpp_exceptions)
  if (counter == nullptr) {
    char message[256];
    std::snprintf(message, sizeof(message),
                  "job '%s' threw an exception and has no counter to carry it: terminating",
                  desc.name != nullptr ? desc.name : "?");
    log(LogLevel::Error, message);
    std::terminate();
  }
  std::uint32_t expected = 0;
  if (counter->error_flag_.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    // Published to the waiter by finish()'s release on the counter state.
    counter->error_ = std::current_exception();
  } else {
    exceptions_dropped_.fetch_add(1, std::memory_order_relaxed);
  }
#else
  (void)counter;
  (void)desc;
#endif
}

void Scheduler::finish(Counter* counter, std::uint32_t count) {
  std::uint64_t state = counter->state_.load(std::memory_order_relaxed);
  std::uint64_t next = 0;
  do {
    const std::uint64_t pending = state & Counter::kPendingMask;
    // A finisher that brings pending to zero adds one kFinalizing unit in the same step, so a
    // waiter never sees "done" while continuations are still being read out of the counter, and
    // moves the epoch on, so that continuations attached after a later rise stay attached.
    next = state - count + (pending == count ? Counter::kFinalizing + Counter::kEpoch : 0);
  } while (!counter->state_.compare_exchange_weak(state, next, std::memory_order_seq_cst,
                                                  std::memory_order_relaxed));
  if ((state & Counter::kPendingMask) != count) return;
  if (auto* hook = g_zero_hook.load(std::memory_order_relaxed)) hook();

  // seq_cst, paired with attach(): its push comes before its re-read of the state, our step
  // before this read of the head, so one of the two sees the other.
  Job* released = nullptr;
  if (counter->continuations_.load(std::memory_order_seq_cst) != nullptr) {
    lock_list(*counter);
    released = take_released(*counter, counter->state_.load(std::memory_order_seq_cst));
    unlock_list(*counter);
  }
  // Last touch of the counter: after this a waiter may return and destroy it.
  counter->state_.fetch_sub(Counter::kFinalizing, std::memory_order_acq_rel);
  run_list(released);
#if SPINDLE_THREADS
  full_fence();
  if (waiting_.load(std::memory_order_relaxed) != 0) wake_waiters();
#endif
}

void Scheduler::attach(Counter& dependency, Job* job) {
  lock_list(dependency);
  const std::uint64_t state = dependency.state_.load(std::memory_order_seq_cst);
  if ((state & Counter::kPendingMask) == 0) {
    unlock_list(dependency);
    release(job);
    return;
  }
  job->epoch = static_cast<std::uint16_t>(state >> Counter::kEpochShift);
  job->next = dependency.continuations_.load(std::memory_order_relaxed);
  dependency.continuations_.store(job, std::memory_order_seq_cst);
  // The jobs we wait for may have finished between the read above and the push: their finisher
  // may have looked at the list before our push. Then the epoch has moved and we release it.
  const std::uint64_t now = dependency.state_.load(std::memory_order_seq_cst);
  Job* released = nullptr;
  if ((now >> Counter::kEpochShift) != (state >> Counter::kEpochShift)) {
    released = take_released(dependency, now);
  }
  unlock_list(dependency);
  run_list(released);
}

Job* Scheduler::take_released(Counter& counter, std::uint64_t state) {
  const auto epoch = static_cast<std::uint16_t>(state >> Counter::kEpochShift);
  // A continuation tagged with the current epoch waits for the jobs pending now; any other tag
  // is an earlier epoch that has ended (a tag is at most one epoch old by the time a finisher
  // or attacher looks, far from the 16-bit wrap).
  Job* released = nullptr;
  Job** released_tail = &released;
  Job* kept = nullptr;
  Job** kept_tail = &kept;
  for (Job* job = counter.continuations_.load(std::memory_order_relaxed); job != nullptr;) {
    Job* next = job->next;
    job->next = nullptr;
    Job**& tail = job->epoch == epoch ? kept_tail : released_tail;
    *tail = job;
    tail = &job->next;
    job = next;
  }
  counter.continuations_.store(kept, std::memory_order_relaxed);
  return released;
}

void Scheduler::free_slot(Job* job) {
  if ((job->flags & kJobPooled) != 0) {
    job->state.store(0, std::memory_order_release);  // the owner's pool may take it again
  } else if ((job->flags & kJobHeap) != 0) {
    job->~Job();
    ::operator delete (job, std::align_val_t{alignof(Job)});
  }  // else a stack slot of a job run inline: nothing to free
}

void Scheduler::release(Job* job) {
  if ((job->flags & kJobLink) == 0) {
    push(job);
    return;
  }
  Job* target = *reinterpret_cast<Job**>(job->capture());
  free_slot(job);
  if (target->joins.fetch_sub(1, std::memory_order_acq_rel) == 1) push(target);
}

void Scheduler::run_list(Job* list) {
  // The list is last-attached-first; reverse it so continuations start in attach order.
  Job* ordered = nullptr;
  while (list != nullptr) {
    Job* next = list->next;
    list->next = ordered;
    ordered = list;
    list = next;
  }
  while (ordered != nullptr) {
    Job* next = ordered->next;
    ordered->next = nullptr;
    release(ordered);
    ordered = next;
  }
}

void Scheduler::wait(Counter& counter) {
  wait_for(counter);
  rethrow(counter);
}

void Scheduler::rethrow(Counter& counter) {
#if defined(__cpp_exceptions)
  // exchange: of several threads waiting on one counter, exactly one rethrows.
  if (counter.error_flag_.load(std::memory_order_relaxed) != 0 &&
      counter.error_flag_.exchange(0, std::memory_order_acq_rel) != 0) {
    std::exception_ptr error = std::move(counter.error_);
    counter.error_ = nullptr;
    std::rethrow_exception(error);
  }
#endif
}

void Scheduler::wait_for(Counter& counter) {
  if (counter.done()) return;
  const std::uint32_t self = current_worker();
  switch (mode()) {
    case Mode::Tbb:
#if SPINDLE_WITH_TBB
      tbb_->wait(counter);
      return;
#else
      break;
#endif
    case Mode::Static:
    case Mode::Dynamic:
#if SPINDLE_THREADS
      if (self < worker_count_) {
        wait_as_participant(counter, self);
        return;
      }
#endif
      break;
    case Mode::Single:
#if !SPINDLE_THREADS
      log(LogLevel::Error,
          "wait() on a counter that can never finish: in Single mode jobs run when submitted, so "
          "it waits on a run_after() whose dependency never completes");
      std::abort();
#endif
      break;
  }
  (void)self;
  wait_spinning(counter);
}

void Scheduler::wait_spinning(const Counter& counter) {
  for (std::uint32_t spins = 0; !counter.done(); ++spins) {
#if SPINDLE_THREADS
    if (spins < 256) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
#else
    cpu_relax();
#endif
  }
}

void Scheduler::set_mode(Mode mode) {
  if (mode == this->mode()) return;
  if (!mode_available(mode)) {
    char message[128];
    std::snprintf(message, sizeof(message), "mode '%s' is not available in this build; kept '%s'",
                  to_string(mode), to_string(this->mode()));
    log(LogLevel::Error, message);
    return;
  }
  if (any_queued() || !pools_idle()) {
    log(LogLevel::Error, "set_mode() refused: jobs are in flight; switch modes between frames");
    return;
  }
#if SPINDLE_THREADS
  if (mode == Mode::Static || mode == Mode::Dynamic) start_threads();
#endif
#if SPINDLE_WITH_TBB
  if (mode == Mode::Tbb && !tbb_) {
    // oneTBB creates its threads from the current thread's affinity mask: unpin first.
    if (main_pinned_) restore_affinity(main_affinity_);
    tbb_ = std::make_unique<TbbBackend>(*this);
    if (main_pinned_) pin_current_thread(cpus_[0]);
  }
#endif
  mode_.store(mode, std::memory_order_seq_cst);
}

bool Scheduler::pools_idle() const {
  for (std::uint32_t i = 0; i < worker_count_; ++i) {
    if (!participants_[i].pool.all_free()) return false;
  }
  return external_pool_.all_free();
}

bool Scheduler::any_queued() const {
  for (std::uint32_t q = 0; q < kPriorityCount; ++q) {
    if (!injection_[q].maybe_empty()) return true;
    for (std::uint32_t i = 0; i < worker_count_; ++i) {
      if (!participants_[i].deque[q].maybe_empty() || !participants_[i].mailbox[q].maybe_empty()) {
        return true;
      }
    }
  }
  return false;
}

void Scheduler::submit_range(Counter& counter, const JobDesc& desc, std::size_t begin,
                             std::size_t end, std::size_t grain,
                             void (*call)(const void*, std::size_t, std::size_t), const void* fn) {
  const std::size_t total = end - begin;
  RangeTask task{owner_, &counter, fn, call, begin, end, total, desc};
  const Mode m = mode();
  if (m == Mode::Single) {
    RangeSpawner::spawn(task);
    return;
  }
  if (m == Mode::Static) {
    // Even split, one chunk per participant (fewer if the grain asks for bigger chunks); the
    // round-robin dealer gives each participant exactly one of consecutive chunks.
    const std::size_t targets =
        current_worker() == 0 || worker_count_ == 1 ? worker_count_ : worker_count_ - 1;
    std::size_t chunks = targets;
    if (grain > 0) chunks = std::clamp<std::size_t>(total / grain, 1, targets);
    chunks = std::min(chunks, total);
    for (std::size_t c = 0; c < chunks; ++c) {
      task.begin = begin + total * c / chunks;
      task.end = begin + total * (c + 1) / chunks;
      task.grain = task.end - task.begin;
      RangeSpawner::spawn(task);
    }
    return;
  }
  task.grain =
      grain > 0 ? grain : std::max<std::size_t>(1, total / (std::size_t{worker_count_} * 8));
  RangeSpawner::spawn(task);
}

WorkerStats Scheduler::worker_stats(std::uint32_t worker) const {
  WorkerStats out;
  if (worker > worker_count_) return out;
  const StatsSlot& s = stats_[worker];
  const double scale = clock_.ns_per_tick();
  out.busy_ns = static_cast<std::uint64_t>(
      static_cast<double>(s.busy_ticks.load(std::memory_order_relaxed)) * scale);
  out.jobs = s.jobs.load(std::memory_order_relaxed);
  out.steals = s.steals.load(std::memory_order_relaxed);
  out.parks = s.parks.load(std::memory_order_relaxed);
  return out;
}

TagStats Scheduler::tag_stats(std::uint16_t tag) const {
  TagStats out;
  if (tag >= kMaxTags) return out;
  const double scale = clock_.ns_per_tick();
  std::uint64_t ticks_total = 0;
  for (std::uint32_t i = 0; i <= worker_count_; ++i) {
    out.jobs += stats_[i].tag_jobs[tag].load(std::memory_order_relaxed);
    ticks_total += stats_[i].tag_ticks[tag].load(std::memory_order_relaxed);
  }
  out.total_ns = static_cast<std::uint64_t>(static_cast<double>(ticks_total) * scale);
  return out;
}

Stats Scheduler::stats() const {
  Stats out;
  out.inline_overflows = inline_overflows_.load(std::memory_order_relaxed);
  out.exceptions_dropped = exceptions_dropped_.load(std::memory_order_relaxed);
  return out;
}

void Scheduler::reset_stats() {
  for (std::uint32_t i = 0; i <= worker_count_; ++i) {
    StatsSlot& s = stats_[i];
    s.busy_ticks.store(0, std::memory_order_relaxed);
    s.jobs.store(0, std::memory_order_relaxed);
    s.steals.store(0, std::memory_order_relaxed);
    s.parks.store(0, std::memory_order_relaxed);
    for (std::uint32_t t = 0; t < kMaxTags; ++t) {
      s.tag_jobs[t].store(0, std::memory_order_relaxed);
      s.tag_ticks[t].store(0, std::memory_order_relaxed);
    }
  }
  inline_overflows_.store(0, std::memory_order_relaxed);
  exceptions_dropped_.store(0, std::memory_order_relaxed);
}

// --- threaded modes ------------------------------------------------------------------------------
#if SPINDLE_THREADS

void Scheduler::start_threads() {
  if (threads_started_ || worker_count_ <= 1) return;
  threads_started_ = true;
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
  for (std::uint32_t i = 1; i < worker_count_; ++i) cpus_[i] = order[(i - 1) % cpus];
  if ((config_.pin_workers || config_.pin_main_thread) && cpus < worker_count_) {
    char message[192];
    std::snprintf(message, sizeof(message),
                  "%u participants but the process may use %u CPU(s): pinned participants share "
                  "CPUs round-robin (set Config::workers, or pin_workers = false)",
                  worker_count_, process.count);
    log(LogLevel::Warning, message);
  }
  if (config_.pin_main_thread) {
    main_affinity_ = save_affinity();
    main_pinned_ = pin_current_thread(cpus_[0]);
    if (!main_pinned_) note_pin_failure(0);
  }
  threads_.reserve(worker_count_ - 1);
  for (std::uint32_t i = 1; i < worker_count_; ++i) {
    threads_.emplace_back([this, i] { worker_main(i); });
  }
}

void Scheduler::stop_threads() {
  stopping_.store(true, std::memory_order_seq_cst);
  for (std::uint32_t i = 1; i < worker_count_; ++i) wake(i);
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void Scheduler::note_pin_failure(std::uint32_t index) {
  if (pin_failure_logged_.exchange(1, std::memory_order_relaxed) == 0) {
    char message[160];
    std::snprintf(message, sizeof(message),
                  "could not pin participant %u to a CPU; carrying on unpinned (logged once)",
                  index);
    log(LogLevel::Warning, message);
  }
}

void Scheduler::worker_main(std::uint32_t index) {
  t_state = {this, index};
  if (!config_.pin_workers || !pin_current_thread(cpus_[index])) {
    // Threads start with their creator's mask, which may be the one CPU participant 0 is on.
    unpin_current_thread();
    if (config_.pin_workers) note_pin_failure(index);
  }
  const bool sentinel = index == 1 && config_.predictive_wake;
  if (sentinel) set_precise_timers();
  std::uint64_t chain = 0;  // end tick of the previous job when running back to back
  bool after_idle = false;
  // Set when the sentinel woke itself for a predicted burst: the burst's due time. Cleared once
  // the burst is seen or its window has passed.
  std::uint64_t burst_due = 0;
  for (;;) {
    if (Job* job = find_work(index)) {
      if (after_idle) {
        chain_wake(index);
        if (burst_due != 0) note_burst(now_ns());
        after_idle = false;
        burst_due = 0;
      }
      chain = execute(job, index, chain, true);
      continue;
    }
    chain = 0;
    flush_batch(index);
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
  t_state = {};
}

Job* Scheduler::find_work(std::uint32_t self) {
  Participant& me = participants_[self];
  if (mode() == Mode::Static) {
    for (std::uint32_t q = 0; q < kPriorityCount; ++q) {
      if (Job* job = me.mailbox[q].pop()) return job;
    }
    return nullptr;
  }
  return find_work_any(self);
}

Job* Scheduler::find_work_any(std::uint32_t self) {
  Participant& me = participants_[self];
  constexpr std::uint32_t high = priority_index(Priority::High);
  constexpr std::uint32_t normal = priority_index(Priority::Normal);
  if (high_queued_.load(std::memory_order_relaxed) > 0) {
    Job* job = me.deque[high].pop();
    if (job == nullptr) job = injection_[high].pop();
    if (job == nullptr) job = steal_from_others(self, high);
    if (job != nullptr) {
      high_queued_.fetch_sub(1, std::memory_order_relaxed);
      return job;
    }
  }
  if (Job* job = me.deque[normal].pop()) return job;
  if (Job* job = injection_[normal].pop()) return job;
  if (Job* job = steal_from_others(self, normal)) return job;
  // Static mode leaves jobs in mailboxes; when draining at shutdown, take those too.
  for (std::uint32_t q = 0; q < kPriorityCount; ++q) {
    if (Job* job = me.mailbox[q].pop()) return job;
  }
  return nullptr;
}

Job* Scheduler::steal_from_others(std::uint32_t self, std::uint32_t priority) {
  const std::uint32_t n = worker_count_;
  if (n <= 1) return nullptr;
  Participant& me = participants_[self];
  const std::uint32_t start = xorshift(me.rng) % n;
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t victim = (start + k) % n;
    if (victim == self) continue;
    WorkDeque& deque = participants_[victim].deque[priority];
    if (deque.maybe_empty()) continue;
    if (Job* job = deque.steal()) {
      bump(stats_[self].steals, 1, true);
      return job;
    }
  }
  return nullptr;
}

bool Scheduler::has_work(std::uint32_t self) const {
  if (mode() == Mode::Static) {
    const Participant& me = participants_[self];
    return !me.mailbox[0].maybe_empty() || !me.mailbox[1].maybe_empty();
  }
  if (mode() != Mode::Dynamic) return false;
  return any_queued();
}

bool Scheduler::idle(std::uint32_t self, const Counter* counter, ParkInfo* park,
                     std::uint64_t spin_ns) {
  if (spin_ns == 0) spin_ns = std::uint64_t{config_.spin_before_park_us} * 1000;
  const std::uint64_t start = now_ns();
  // Only idle workers count as spinning: a waiter may leave as soon as its counter is done, so
  // a submitter must not rely on it to take new work.
  const std::uint32_t spinner = counter == nullptr ? 1 : 0;
  spinning_.fetch_add(spinner, std::memory_order_relaxed);
  for (std::uint32_t i = 1;; ++i) {
    if (counter != nullptr ? counter->done() : stopping_.load(std::memory_order_relaxed)) {
      spinning_.fetch_sub(spinner, std::memory_order_relaxed);
      return counter != nullptr;
    }
    if (has_work(self)) {
      spinning_.fetch_sub(spinner, std::memory_order_relaxed);
      return true;
    }
    cpu_relax();
    if ((i & 31) == 0 && now_ns() - start >= spin_ns) break;
  }

  Participant& me = participants_[self];
  const std::uint64_t bit = 1ull << self;
  const std::uint32_t epoch = me.wake_epoch.load(std::memory_order_acquire);
  // No longer spinning, and parked, both before the fence: a submitter that still saw us
  // spinning (and so did not wake anyone) published its job before its own fence, and one of
  // the two fences comes first, so either we see the job below or it sees our parked bit.
  spinning_.fetch_sub(spinner, std::memory_order_relaxed);
  if (counter != nullptr) waiting_.fetch_or(bit, std::memory_order_seq_cst);
  parked_.fetch_or(bit, std::memory_order_seq_cst);
  full_fence();
  const bool stop = counter == nullptr && stopping_.load(std::memory_order_relaxed);
  if (!stop && !has_work(self) && !(counter != nullptr && counter->done())) {
    bump(stats_[self].parks, 1, true);
    const bool sentinel = counter == nullptr && self == 1 && config_.predictive_wake;
    const std::uint64_t slept_from = now_ns();
    park_on(me.wake_epoch, epoch, sentinel ? sentinel_timeout(slept_from) : -1);
    if (park != nullptr) {
      park->parked = true;
      park->woken = me.wake_epoch.load(std::memory_order_relaxed) != epoch;
      park->slept_ns = now_ns() - slept_from;
    }
  }
  parked_.fetch_and(~bit, std::memory_order_relaxed);
  if (counter != nullptr) waiting_.fetch_and(~bit, std::memory_order_relaxed);
  return counter != nullptr || !stopping_.load(std::memory_order_relaxed);
}

void Scheduler::note_burst(std::uint64_t now) {
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

std::int64_t Scheduler::sentinel_timeout(std::uint64_t now) const {
  if (burst_confidence_ < 3) return -1;
  // Wake kBurstLeadNs early (a timed sleep on this kind of VM ends up to ~150 us late) and spin
  // until kBurstLagNs after the due time: one worker only, about 1-2% of a core at 10 ms.
  const std::uint64_t due = burst_last_ns_ + burst_period_ns_;
  if (due <= now + kBurstLeadNs) return -1;  // missed: sleep until woken and learn again
  return static_cast<std::int64_t>(due - kBurstLeadNs - now);
}

void Scheduler::chain_wake(std::uint32_t self) {
  // First job after idling: more queued and nobody looking for it? Wake a sleeper from here, so
  // the submitter paid for at most one wake (a wake tree rather than a storm of syscalls).
  if (mode() == Mode::Dynamic && spinning_.load(std::memory_order_relaxed) == 0 &&
      parked_.load(std::memory_order_relaxed) != 0 && any_queued()) {
    wake_one(self);
  }
}

void Scheduler::wake(std::uint32_t index) {
  Participant& p = participants_[index];
  p.wake_epoch.fetch_add(1, std::memory_order_release);
  unpark_one(p.wake_epoch);
}

void Scheduler::wake_one(std::uint32_t except) {
  const std::uint64_t self_bit = except < 64 ? 1ull << except : 0;
  const std::uint64_t parked = parked_.load(std::memory_order_relaxed) & ~self_bit;
  // Prefer an idle worker: a thread parked in wait() may find its counter done and go back to
  // user code without looking at the queues.
  const std::uint64_t idle_workers = parked & ~waiting_.load(std::memory_order_relaxed);
  std::uint64_t mask = idle_workers != 0 ? idle_workers : parked;
  while (mask != 0) {
    const std::uint32_t index = static_cast<std::uint32_t>(__builtin_ctzll(mask));
    const std::uint64_t bit = 1ull << index;
    // Clearing the bit ourselves stops several submitters from waking the same sleeper.
    if ((parked_.fetch_and(~bit, std::memory_order_acq_rel) & bit) != 0) {
      wake(index);
      return;
    }
    mask &= ~bit;
  }
}

void Scheduler::wake_waiters() {
  std::uint64_t mask = waiting_.load(std::memory_order_relaxed);
  while (mask != 0) {
    const std::uint32_t index = static_cast<std::uint32_t>(__builtin_ctzll(mask));
    mask &= mask - 1;
    wake(index);
  }
}

void Scheduler::deal_static(Job* job, std::uint32_t self) {
  const std::uint32_t q = priority_index(job->desc.priority);
  // Participant 0 runs its mailbox only while it waits. Others deal to it only while it does;
  // when it stops waiting it hands what is left to the workers (redeal_main_mailbox).
  const bool to_all =
      self == 0 || worker_count_ == 1 || main_waiting_.load(std::memory_order_seq_cst);
  std::uint32_t target = 0;
  if (self < worker_count_) {
    const std::uint32_t turn = participants_[self].round_robin++;
    target = to_all ? turn % worker_count_ : 1 + turn % (worker_count_ - 1);
  } else {
    const std::uint32_t turn = external_round_robin_.fetch_add(1, std::memory_order_relaxed);
    target = to_all ? turn % worker_count_ : 1 + turn % (worker_count_ - 1);
  }
  if (!participants_[target].mailbox[q].push(job)) {
    note_overflow("the target worker's mailbox is full", job->desc);
    execute(job, self, 0);
    return;
  }
  full_fence();
  if (target == 0 && self != 0 && !main_waiting_.load(std::memory_order_seq_cst)) {
    // Participant 0 stopped waiting meanwhile and may have drained its mailbox already: take
    // back what is there (whoever pops a job re-deals it; the queue gives each job to one).
    redeal_main_mailbox();
  }
  const std::uint64_t bit = 1ull << target;
  if (target != self && (parked_.load(std::memory_order_relaxed) & bit) != 0) {
    parked_.fetch_and(~bit, std::memory_order_acq_rel);
    wake(target);
  }
}

void Scheduler::redeal_main_mailbox() {
  if (worker_count_ == 1) return;  // no one else to run them; participant 0 will, when it waits
  for (std::uint32_t q = 0; q < kPriorityCount; ++q) {
    while (Job* job = participants_[0].mailbox[q].pop()) {
      const std::uint32_t turn = external_round_robin_.fetch_add(1, std::memory_order_relaxed);
      const std::uint32_t target = 1 + turn % (worker_count_ - 1);
      if (!participants_[target].mailbox[q].push(job)) {
        execute(job, current_worker(), 0);
        continue;
      }
      full_fence();
      const std::uint64_t bit = 1ull << target;
      if ((parked_.load(std::memory_order_relaxed) & bit) != 0) {
        parked_.fetch_and(~bit, std::memory_order_acq_rel);
        wake(target);
      }
    }
  }
}

Job* Scheduler::pop_own(std::uint32_t self) {
  Participant& me = participants_[self];
  for (std::uint32_t q = 0; q < kPriorityCount; ++q) {
    if (mode() == Mode::Static) {
      if (Job* job = me.mailbox[q].pop()) return job;
      continue;
    }
    // The oldest of our own deque (its top, as a thief takes it): the slot after the last one
    // we took, where the pool looks next.
    if (me.deque[q].maybe_empty()) continue;
    if (Job* job = me.deque[q].steal()) {
      if (q == priority_index(Priority::High)) high_queued_.fetch_sub(1, std::memory_order_relaxed);
      return job;
    }
  }
  return nullptr;
}

void Scheduler::push_threaded(Job* job, std::uint32_t self) {
  const std::uint32_t q = priority_index(job->desc.priority);
  if (mode() == Mode::Static) {
    deal_static(job, self);
    return;
  }

  if (q == priority_index(Priority::High)) high_queued_.fetch_add(1, std::memory_order_relaxed);
  bool queued = self < worker_count_ && participants_[self].deque[q].push(job);
  if (!queued) queued = injection_[q].push(job);
  if (!queued) {
    if (q == priority_index(Priority::High)) high_queued_.fetch_sub(1, std::memory_order_relaxed);
    note_overflow("the deque and the injection queue are full", job->desc);
    execute(job, self, 0);
    return;
  }
  // Publish-then-check: pairs with the parker's fence in idle(). A spinning participant will
  // find the job; only when none spins does the submitter pay for a wake.
  full_fence();
  if (spinning_.load(std::memory_order_relaxed) == 0 &&
      parked_.load(std::memory_order_relaxed) != 0) {
    wake_one(self);
  }
}

void Scheduler::wait_as_participant(Counter& counter, std::uint32_t self) {
  Participant& me = participants_[self];
  if (self == 0 && main_wait_depth_++ == 0) main_waiting_.store(true, std::memory_order_seq_cst);
  // The job running around this wait may hold a batch; its counter's waiters must not wait on us.
  flush_batch(self);
  std::uint64_t chain = 0;
  bool after_idle = false;
  for (;;) {
    // Our own batch is all that is left of `counter`: settle it so the counter can finish.
    if (me.batch_counter == &counter && counter.pending() <= me.batch_count) flush_batch(self);
    if (counter.done()) break;
    if (Job* job = find_work(self)) {
      if (after_idle) chain_wake(self);
      after_idle = false;
      chain = execute(job, self, chain, true);
      continue;
    }
    chain = 0;
    flush_batch(self);
    idle(self, &counter);
    after_idle = true;
  }
  flush_batch(self);  // back to user code: nothing may stay deferred
  if (self == 0 && --main_wait_depth_ == 0) {
    main_waiting_.store(false, std::memory_order_seq_cst);
    full_fence();
    if (mode() == Mode::Static) redeal_main_mailbox();
  }
  // A wake meant for the queues may have reached us while our counter finished: pass it on.
  if (mode() == Mode::Dynamic && spinning_.load(std::memory_order_relaxed) == 0 &&
      (parked_.load(std::memory_order_relaxed) & ~waiting_.load(std::memory_order_relaxed)) != 0 &&
      any_queued()) {
    wake_one(self);
  }
}

#endif  // SPINDLE_THREADS

}  // namespace spindle::jobs::detail
