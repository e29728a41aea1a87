#include "scheduler.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

#if SPINDLE_THREADS
#include <thread>

#include "worker_pool.h"
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
// Ticks the job running on this thread spent in jobs it ran nested and in waits: its own time is
// its elapsed time minus these, so nested work counts once, to the job that ran it.
thread_local std::uint64_t t_nested_ticks = 0;
// The tag of the job running on this thread: a job submitted from it without a tag inherits it.
thread_local std::uint16_t t_current_tag = 0;
// Set by spawn_range() for the submission it makes (a parallel_for's piece, in a recording).
thread_local std::uint32_t t_spawn_range = 0;
// The recording's id of the job running on this thread (0: none, or not recorded).
thread_local std::uint32_t t_record_id = 0;
// record_after(): jobs the next submission from this thread starts after, in the recording.
thread_local std::uint32_t t_after[JobSystem::kMaxRecordAfter];
thread_local std::uint32_t t_after_count = 0;

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

// Longest run of finished jobs whose counter update a participant defers (see Participant).
constexpr std::uint32_t kMaxBatch = 64;

std::atomic<void (*)()> g_zero_hook{nullptr};

// Ranges of more pieces are halved as they come (a caller's fine grain over many items):
// banding serves the stage passes' few pieces per participant.
constexpr std::size_t kMaxBandedPieces = 1024;

// The piece a job of a banded range draws: the next of its participant's band, or, that band
// drawn, the next of another's. There are as many jobs as pieces, so one is always left.
std::uint32_t claim_piece(RangeBands& bands, std::uint32_t self) {
  const std::uint32_t lanes = bands.lanes;
  const std::uint32_t home = self < lanes ? self : self == kExternalThread ? 0 : self % lanes;
  for (std::uint32_t d = 0; d < lanes; ++d) {
    const std::uint32_t l = home + d < lanes ? home + d : home + d - lanes;
    std::atomic_ref<std::uint32_t> next(bands.next[l]);
    if (next.load(std::memory_order_relaxed) >= bands.first[l + 1]) continue;
    const std::uint32_t taken = next.fetch_add(1, std::memory_order_relaxed);
    if (taken < bands.first[l + 1]) return taken;
  }
  std::fprintf(stderr, "[jobs] parallel_for: a banded range's job found no piece left\n");
  std::abort();
}

// JobDesc::in_order: items one at a time from the shared `next`, until none are left.
void run_in_order(const RangeTask& task, Recorder& recorder, bool record) {
  const std::size_t items = task.end - task.begin;
  for (;;) {
    const std::size_t i = task.next->fetch_add(1, std::memory_order_relaxed);
    if (i >= items) return;
    const std::size_t b = task.begin + i;
    if (record) recorder.add(Recorder::EventType::PieceBegin, b, b + 1, task.range_id);
    task.call(task.fn, b, b + 1);
    if (record) recorder.add(Recorder::EventType::PieceEnd, 0, 0, task.range_id);
  }
}

void run_range_task(const RangeTask& task, Recorder& recorder) {
  const bool record = task.range_id != 0 && recorder.active();
  if (task.desc.in_order) {
    run_in_order(task, recorder, record);
    return;
  }
  if (task.bands != nullptr) {
    std::uint32_t p1 = task.p1;
    while (p1 - task.p0 > 1) {
      RangeTask right = task;
      right.p0 = static_cast<std::uint16_t>(task.p0 + (p1 - task.p0) / 2);
      right.p1 = static_cast<std::uint16_t>(p1);
      spawn_range(right);
      p1 = right.p0;
    }
    const std::uint32_t k = claim_piece(*task.bands, task.system->current_worker());
    const std::size_t n = task.end - task.begin;
    const std::size_t pieces = task.bands->pieces;
    const std::size_t b = task.begin + n * k / pieces;
    const std::size_t e = task.begin + n * (k + std::size_t{1}) / pieces;
    if (record) recorder.add(Recorder::EventType::PieceBegin, b, e, task.range_id);
    task.call(task.fn, b, e);
    if (record) recorder.add(Recorder::EventType::PieceEnd, 0, 0, task.range_id);
    return;
  }
  std::size_t b = task.begin;
  std::size_t e = task.end;
  while (e - b > task.grain) {
    const std::size_t mid = b + (e - b) / 2;
    RangeTask right = task;
    right.begin = mid;
    right.end = e;
    spawn_range(right);
    e = mid;
  }
  if (record) recorder.add(Recorder::EventType::PieceBegin, b, e, task.range_id);
  task.call(task.fn, b, e);
  if (record) recorder.add(Recorder::EventType::PieceEnd, 0, 0, task.range_id);
}

}  // namespace

void set_zero_hook_for_tests(void (*hook)()) {
  g_zero_hook.store(hook, std::memory_order_relaxed);
}

// Friend of JobSystem: lets the scheduler submit range jobs through the same path as run().
struct RangeSpawner {
  static void spawn(const RangeTask& task) {
    Recorder* recorder = &task.system->scheduler_->recorder();
    t_spawn_range = task.range_id;
#if SPINDLE_THREADS
    const WorkerPool::PieceScope piece;  // a range started alone holds only these wakes
#endif
    task.system->submit_callable(task.counter, {}, task.desc,
                                 [task, recorder] { run_range_task(task, *recorder); });
  }
};

void spawn_range(const RangeTask& task) {
  RangeSpawner::spawn(task);
}

std::uint32_t ModeImpl::range_jobs(std::uint32_t /*self*/) const {
  return scheduler_.workers();
}

// The default slot source, and a full pool's remedy in the threaded modes (see mode.h).
Job* ModeImpl::acquire(std::uint32_t self, bool may_help) {
  if (Job* job = scheduler_.take_slot(self)) return job;
  // Full: our own queued jobs hold the slots. Run them (they are ours to run anyway: Static
  // mode deals us our share, Dynamic pushes to our deque) and reuse their slots, so that a
  // large spawn stays parallel instead of running the rest inline on this thread. Only from
  // user code: inside a job, a queued job run here could wait on the job below it.
  if (self >= scheduler_.workers() || !may_help || Scheduler::inside_job()) return nullptr;
  JobPool& pool = scheduler_.pool(self);
  while (Job* queued = pop_own(self)) {
    scheduler_.execute(queued, self);
    if (Job* job = pool.take_if_free(queued)) return job;
    if (Job* job = pool.try_acquire()) return job;
  }
  return nullptr;
}

// A counter's continuation list lock: held for a few list operations, so a spin; yields when the
// holder was preempted (more threads than cores).
void Scheduler::lock_list(CounterState& counter) {
  std::uint32_t spins = 0;
  while (counter.list_lock.exchange(1, std::memory_order_acquire) != 0) {
    while (counter.list_lock.load(std::memory_order_relaxed) != 0) {
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

void Scheduler::unlock_list(CounterState& counter) {
  counter.list_lock.store(0, std::memory_order_release);
}

Scheduler::Scheduler(const Config& config, std::uint32_t workers, std::uint32_t job_stride,
                     JobSystem* owner)
    : config_(config),
      worker_count_(workers),
      job_stride_(job_stride),
      pool_size_(round_up_pow2(std::max<std::uint32_t>(config.jobs_per_worker, 64))),
      hooks_(config.hooks),
      owner_(owner),
      recorder_(std::make_unique<Recorder>(workers)) {
  const std::size_t pools = std::size_t{worker_count_} + 1;
  const std::size_t pool_bytes = std::size_t{pool_size_} * job_stride_;
  slot_memory_ = std::make_unique<std::byte[]>(pools * pool_bytes + kCacheLine);
  std::byte* base = slot_memory_.get();
  base += (kCacheLine - reinterpret_cast<std::uintptr_t>(base) % kCacheLine) % kCacheLine;

  participants_ = std::make_unique<Participant[]>(worker_count_);
  running_ = std::make_unique<Running[]>(worker_count_);
  for (std::uint32_t i = 0; i < worker_count_; ++i) {
    participants_[i].pool.init(base + i * pool_bytes, pool_size_, job_stride_);
  }
  external_pool_.init(base + worker_count_ * pool_bytes, pool_size_, job_stride_);
  stats_ = std::make_unique<StatsSlot[]>(std::size_t{worker_count_} + 1);

  previous_state_owner_ = t_state.scheduler;
  previous_state_index_ = t_state.index;
  t_state = {this, 0};

  modes_[static_cast<std::size_t>(Mode::Single)] = make_single_mode(*this);
#if SPINDLE_THREADS
  workers_ = std::make_unique<WorkerPool>(*this);
  modes_[static_cast<std::size_t>(Mode::Static)] = make_static_mode(*this, *workers_);
  modes_[static_cast<std::size_t>(Mode::Dynamic)] = make_dynamic_mode(*this, *workers_);
#endif
#if SPINDLE_WITH_TBB
  modes_[static_cast<std::size_t>(Mode::Tbb)] = make_tbb_mode(*this, *workers_);
#endif
  active_workers_.store(worker_count_, std::memory_order_relaxed);
  // Current before it starts anything: a worker it starts asks the current mode for work.
  current_.store(&implementation(config_.mode), std::memory_order_seq_cst);
  current().activate();
}

Scheduler::~Scheduler() {
#if SPINDLE_THREADS
  // Finish everything that was submitted before anything is taken apart.
  workers_->drain();
#endif
#if SPINDLE_WITH_TBB
  modes_[static_cast<std::size_t>(Mode::Tbb)].reset();  // waits for its detached jobs
#endif
#if SPINDLE_THREADS
  workers_->stop();
#endif
  t_state = {previous_state_owner_, previous_state_index_};
}

std::uint32_t Scheduler::current_worker() const {
  return t_state.scheduler == this ? t_state.index : kExternalThread;
}

bool Scheduler::inside_job() {
  return t_job_depth != 0;
}

void Scheduler::bind_thread(std::uint32_t index) const {
  t_state = index == kExternalThread ? ThreadState{} : ThreadState{this, index};
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
  return current().acquire(current_worker(), may_help);
}

Job* Scheduler::take_slot(std::uint32_t self) {
  if (self < worker_count_) return participants_[self].pool.try_acquire();
  std::lock_guard<Lock> lock(external_mutex_);
  return external_pool_.try_acquire();
}

void Scheduler::note_submit(Job* job, std::span<Counter* const> dependencies, SubmitPath path) {
  if (job->desc.tag == 0) job->desc.tag = t_current_tag;
  const std::uint32_t range = t_spawn_range;
  t_spawn_range = 0;
  job->record_id = 0;
  if (recorder_->active()) record_submit(job, dependencies, range, path);
  t_after_count = 0;
}

std::uint32_t Scheduler::recorded_job() const {
  return recorder_->active() ? t_record_id : 0;
}

void Scheduler::record_after(std::uint32_t job) {
  if (job == 0 || !recorder_->active() || t_after_count >= JobSystem::kMaxRecordAfter) return;
  t_after[t_after_count++] = job;
}

void Scheduler::record_submit(Job* job, std::span<Counter* const> dependencies, std::uint32_t range,
                              SubmitPath path) {
  // Single mode runs a submitted job at once only for want of another thread: the recording keeps
  // it a spawn, so a graph recorded in Single mode shows the parallelism the program has.
  const bool queuable =
      path == SubmitPath::AtOnce || (path == SubmitPath::Queue && current().mode() == Mode::Single);
  job->record_id = recorder_->next_job_id();
  if (job->record_id == 0) return;
  const std::uint64_t key =
      job->counter == nullptr
          ? 0
          : Recorder::key(job->counter,
                          state_of(*job->counter).word.load(std::memory_order_relaxed), false);
  recorder_->add(Recorder::EventType::Submit, key, range, job->record_id, job->desc.tag,
                 queuable ? Recorder::kSubmitQueuable : 0);
  for (Counter* c : dependencies) {
    if (c == nullptr) continue;
    const std::uint64_t word = state_of(*c).word.load(std::memory_order_relaxed);
    // A dependency with nothing pending releases the job at once: it waits for nothing.
    if ((word & CounterState::kPendingMask) == 0) continue;
    recorder_->add(Recorder::EventType::Dep, Recorder::key(c, word, false), 0, job->record_id);
  }
  for (std::uint32_t k = 0; k < t_after_count; ++k)
    recorder_->add(Recorder::EventType::After, t_after[k], 0, job->record_id);
}

void Scheduler::submit(Job* job, std::span<Counter* const> dependencies) {
  note_submit(job, dependencies, SubmitPath::Queue);
  if (t_state.scheduler == this && t_state.index < worker_count_) {
    std::atomic<std::uint32_t>& submits = running_[t_state.index].submits;
    submits.store(submits.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  std::uint32_t count = 0;
  for (Counter* c : dependencies) count += c != nullptr ? 1 : 0;
  if (count == 0) {
    current().push(job, current_worker());
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
  note_submit(job, dependencies, SubmitPath::Here);
  // JobSystem sends continuations with a pending dependency to the heap; this one is runnable,
  // unless a dependency gained jobs since: then it still may not start early.
  for (Counter* c : dependencies) {
    if (c != nullptr && !c->done()) wait_for(*c);
  }
  execute(job, current_worker());
}

bool Scheduler::may_run_at_once() const {
  // Deeper than this, a job that submits the next one would grow the stack without bound.
  constexpr std::uint32_t kMaxDepth = 32;
  return t_state.scheduler == this && t_job_depth < kMaxDepth;
}

void Scheduler::run_at_once(Job* job) {
  note_submit(job, {}, SubmitPath::AtOnce);
  execute(job, t_state.index);
}

bool may_run_at_once(const Scheduler& scheduler) {
  return scheduler.may_run_at_once();
}

void run_at_once(Scheduler& scheduler, Job* job) {
  scheduler.run_at_once(job);
}

void Scheduler::run_now(Job* job, Counter& counter) {
  note_submit(job, {}, SubmitPath::Here);
  execute(job, current_worker());
  rethrow(counter);
}

void Scheduler::execute(Job* job, std::uint32_t worker, bool batch) {
  // Read field by field where used, not copied whole: a 16-byte copy of a header just written by
  // several smaller stores (a job run at once) cannot be forwarded from them and stalls.
  const JobDesc& desc = job->desc;
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
  const std::uint32_t record_id = job->record_id;
  const bool record = recorder_->active();
  // Read here, not taken from the previous job's end: time between jobs (looking for work, or
  // preempted) is nobody's work.
  const bool timed = config_.time_jobs || record;
  const std::uint64_t start = timed ? ticks() : 0;
  if (record)
    recorder_->add_at(start, Recorder::EventType::Begin,
                      reinterpret_cast<std::uintptr_t>(desc.name), 0, record_id);
  const std::uint64_t outer_nested = t_nested_ticks;
  const std::uint16_t outer_tag = t_current_tag;
  const std::uint32_t outer_spawn_range = t_spawn_range;
  const std::uint32_t outer_record_id = t_record_id;
  t_nested_ticks = 0;
  t_current_tag = desc.tag;
  t_spawn_range = 0;
  t_record_id = record ? record_id : 0;
  ++t_job_depth;
  const bool own_slot = exclusive && slot < worker_count_;
  if (own_slot) running_[slot].depth.store(t_job_depth, std::memory_order_relaxed);
#if SPINDLE_THREADS
  // A WakeBatch covers its thread's own submissions, not those of a job it runs meanwhile.
  const bool batch_paused = WorkerPool::pause_batch();
#endif
#if defined(__cpp_exceptions)
  try {
    job->invoke(*job);
  } catch (...) {
    record_exception(counter, desc);
  }
#else
  job->invoke(*job);
#endif
#if SPINDLE_THREADS
  if (batch_paused) WorkerPool::resume_batch();
#endif
  --t_job_depth;
  if (own_slot) running_[slot].depth.store(t_job_depth, std::memory_order_relaxed);
  const std::uint64_t end = timed ? ticks() : 0;
  const std::uint64_t elapsed = end - start;
  // Its own time: nested jobs were booked by themselves, waits are nobody's work.
  const std::uint64_t own = elapsed > t_nested_ticks ? elapsed - t_nested_ticks : 0;
  t_nested_ticks = outer_nested + elapsed;
  t_current_tag = outer_tag;
  t_spawn_range = outer_spawn_range;
  t_record_id = outer_record_id;
  if (record) recorder_->add_at(end, Recorder::EventType::End, 0, 0, record_id);
  book(slot, exclusive && slot < worker_count_, desc, own);
  if (hooks_.on_end != nullptr) hooks_.on_end(hooks_.user, desc, worker);

  // Free the slot before finishing the counter: once the counter is done a waiter may destroy
  // the whole job system, so nothing of ours may be touched after finish().
  const bool at_once = (job->flags & kJobAtOnce) != 0;
  free_slot(job);
  if (counter == nullptr || at_once) return;
  if (!batch) {
    finish(counter, 1);
    return;
  }
  Participant& me = participants_[worker];
  me.batch_counter = counter;  // any other counter's batch was flushed before the job ran
  if (++me.batch_count >= kMaxBatch) flush_batch(worker);
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
  CounterState& state = state_of(*counter);
  std::uint32_t expected = 0;
  if (state.error_flag.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    // Published to the waiter by finish()'s release on the counter state.
    state.error = std::current_exception();
  } else {
    exceptions_dropped_.fetch_add(1, std::memory_order_relaxed);
  }
#else
  (void)counter;
  (void)desc;
#endif
}

void Scheduler::finish(Counter* counter, std::uint32_t count) {
  CounterState& c = state_of(*counter);
  std::uint64_t state = c.word.load(std::memory_order_relaxed);
  std::uint64_t next = 0;
  do {
    const std::uint64_t pending = state & CounterState::kPendingMask;
    // A finisher that brings pending to zero adds one kFinalizing unit in the same step, so a
    // waiter never sees "done" while continuations are still being read out of the counter, and
    // moves the epoch on, so that continuations attached after a later rise stay attached.
    next =
        state - count + (pending == count ? CounterState::kFinalizing + CounterState::kEpoch : 0);
  } while (!c.word.compare_exchange_weak(state, next, std::memory_order_seq_cst,
                                         std::memory_order_relaxed));
  if ((state & CounterState::kPendingMask) != count) return;
  if (auto* hook = g_zero_hook.load(std::memory_order_relaxed)) hook();

  // seq_cst, paired with attach(): its push comes before its re-read of the state, our step
  // before this read of the head, so one of the two sees the other.
  Job* released = nullptr;
  if (c.continuations.load(std::memory_order_seq_cst) != nullptr) {
    lock_list(c);
    released = take_released(c, c.word.load(std::memory_order_seq_cst));
    unlock_list(c);
  }
  // Last touch of the counter: after this a waiter may return and destroy it.
  c.word.fetch_sub(CounterState::kFinalizing, std::memory_order_acq_rel);
  run_list(released);
#if SPINDLE_THREADS
  workers_->wake_waiters_after_finish();
#endif
}

void Scheduler::attach(Counter& dependency, Job* job) {
  CounterState& c = state_of(dependency);
  lock_list(c);
  const std::uint64_t state = c.word.load(std::memory_order_seq_cst);
  if ((state & CounterState::kPendingMask) == 0) {
    unlock_list(c);
    release(job);
    return;
  }
  job->epoch = static_cast<std::uint16_t>(state >> CounterState::kEpochShift);
  job->next = c.continuations.load(std::memory_order_relaxed);
  c.continuations.store(job, std::memory_order_seq_cst);
  // The jobs we wait for may have finished between the read above and the push: their finisher
  // may have looked at the list before our push. Then the epoch has moved and we release it.
  const std::uint64_t now = c.word.load(std::memory_order_seq_cst);
  Job* released = nullptr;
  if ((now >> CounterState::kEpochShift) != (state >> CounterState::kEpochShift)) {
    released = take_released(c, now);
  }
  unlock_list(c);
  run_list(released);
}

Job* Scheduler::take_released(CounterState& counter, std::uint64_t state) {
  const auto epoch = static_cast<std::uint16_t>(state >> CounterState::kEpochShift);
  // A continuation tagged with the current epoch waits for the jobs pending now; any other tag
  // is an earlier epoch that has ended (a tag is at most one epoch old by the time a finisher
  // or attacher looks, far from the 16-bit wrap).
  Job* released = nullptr;
  Job** released_tail = &released;
  Job* kept = nullptr;
  Job** kept_tail = &kept;
  for (Job* job = counter.continuations.load(std::memory_order_relaxed); job != nullptr;) {
    Job* next = job->next;
    job->next = nullptr;
    Job**& tail = job->epoch == epoch ? kept_tail : released_tail;
    *tail = job;
    tail = &job->next;
    job = next;
  }
  counter.continuations.store(kept, std::memory_order_relaxed);
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
    current().push(job, current_worker());
    return;
  }
  Job* target = *reinterpret_cast<Job**>(job->capture());
  free_slot(job);
  if (target->joins.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    current().push(target, current_worker());
  }
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
  CounterState& state = state_of(counter);
  // exchange: of several threads waiting on one counter, exactly one rethrows.
  if (state.error_flag.load(std::memory_order_relaxed) != 0 &&
      state.error_flag.exchange(0, std::memory_order_acq_rel) != 0) {
    std::exception_ptr error = std::move(state.error);
    state.error = nullptr;
    std::rethrow_exception(error);
  }
#else
  (void)counter;
#endif
}

void Scheduler::wait_for(Counter& counter) {
  const bool record = recorder_->active();
  // Inside a job the wait is not its work (the jobs it runs meanwhile book their own); the
  // recording's wait spans the very same ticks.
  const bool timed = record || (t_job_depth != 0 && config_.time_jobs);
  const std::uint64_t from = timed ? ticks() : 0;
  std::uint64_t to = from;
  const std::uint64_t key = record ? Recorder::key(&counter, 0, false) : 0;  // see Recorder
  if (record) recorder_->add_at(from, Recorder::EventType::WaitBegin, key, 0, 0);
  if (!counter.done()) {
    const std::uint64_t nested = t_nested_ticks;
    current().wait(counter, current_worker());
    if (timed) to = ticks();
    if (t_job_depth != 0) t_nested_ticks = nested + (to - from);
  }
  // Back to user code with its jobs done: the next burst starts on warm slots.
  if (t_job_depth == 0 && t_state.scheduler == this && t_state.index < worker_count_)
    participants_[t_state.index].pool.rewind();
  if (record) recorder_->add_at(to, Recorder::EventType::WaitEnd, key, 0, 0);
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

void Scheduler::set_active_workers(std::uint32_t count) {
  count = std::clamp<std::uint32_t>(count, 1, worker_count_);
  active_workers_.store(count, std::memory_order_relaxed);
#if SPINDLE_THREADS
  workers_->set_active(count);
#endif
}

void Scheduler::set_pinned(bool pinned) {
#if SPINDLE_THREADS
  workers_->set_pinned(pinned);
#else
  (void)pinned;
#endif
}

bool Scheduler::pinned() const {
#if SPINDLE_THREADS
  return workers_->pinned() && (config_.pin_workers || config_.pin_main_thread);
#else
  return false;
#endif
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
  if (current().any_queued() || !pools_idle()) {
    log(LogLevel::Error, "set_mode() refused: jobs are in flight; switch modes between frames");
    return;
  }
  ModeImpl& next = implementation(mode);
  next.activate();
  current_.store(&next, std::memory_order_seq_cst);
  set_active_workers(worker_count_);  // a mode starts with every participant
}

bool Scheduler::pools_idle() const {
  for (std::uint32_t i = 0; i < worker_count_; ++i) {
    if (!participants_[i].pool.all_free()) return false;
  }
  return external_pool_.all_free();
}

void Scheduler::submit_range(Counter& counter, const JobDesc& desc, std::size_t begin,
                             std::size_t end, std::size_t grain,
                             void (*call)(const void*, std::size_t, std::size_t), const void* fn,
                             std::atomic<std::size_t>* next, RangeBands* bands) {
  RangeTask task{owner_, &counter, fn, call, begin, end, end - begin, desc, 0, 0, 0, {next}};
  task.desc.in_order = next != nullptr;       // the non-blocking form ignores in_order
  if (next == nullptr) task.bands = nullptr;  // the union's member in use from here on
  if (recorder_->active()) {
    task.range_id = recorder_->next_range_id();
    if (task.range_id != 0)
      recorder_->add(
          Recorder::EventType::Range, begin, end, task.range_id, desc.tag,
          static_cast<std::uint8_t>(
              (desc.fixed_split ? Recorder::kRangeFixed : 0) |
              (next != nullptr ? Recorder::kRangeInOrder : 0) |
              (next != nullptr && desc.costliest_first ? Recorder::kRangeCostliestFirst : 0)));
  }
  if (next != nullptr) {
    // In order: as many jobs as the mode gives the range, each taking items until none are left.
    const std::uint32_t self = current_worker();
    // Never empty (JobSystem submits none) and range_jobs() is at least 1: at least one job.
    const std::size_t jobs = std::min<std::size_t>(end - begin, current().range_jobs(self));
    for (std::size_t k = 0; k < jobs; ++k) spawn_range(task);
    return;
  }
  if (bands != nullptr && mode() == Mode::Dynamic) {
    // Dynamic: the range's pieces in one band of neighbours per active participant, and each
    // job draws a piece of its own participant's band first. A stage's passes over the same
    // items (a system's entities, frame after frame) then give each participant the same
    // items each time, still in its cache, where halving handed each half to whichever
    // participant took it: at boids 20,000 the transform pass cost 0.19 ms of CPU on 2 workers
    // against 0.12 in one thread, and static mode (always the same halves) 0.12.
    const std::size_t n = end - begin;
    std::size_t g = grain > 0 ? grain : n / (std::size_t{worker_count_} * 8);
    if (g == 0) g = 1;
    const std::size_t pieces = (n + g - 1) / g;
    const std::size_t lanes = std::min<std::size_t>({active_workers(), pieces, kMaxWorkers});
    if (lanes >= 2 && pieces <= kMaxBandedPieces) {
      bands->pieces = static_cast<std::uint32_t>(pieces);
      bands->lanes = static_cast<std::uint32_t>(lanes);
      for (std::size_t l = 0; l <= lanes; ++l) {
        bands->first[l] = static_cast<std::uint32_t>(pieces * l / lanes);
        if (l < lanes) bands->next[l] = bands->first[l];
      }
      task.bands = bands;
      task.p0 = 0;
      task.p1 = static_cast<std::uint16_t>(pieces);
      spawn_range(task);
      return;
    }
  }
  current().submit_range(task, grain, current_worker());
}

void Scheduler::split_recursively(RangeTask& task, std::size_t grain) const {
  const std::size_t total = task.end - task.begin;
  task.grain =
      grain > 0 ? grain : std::max<std::size_t>(1, total / (std::size_t{worker_count_} * 8));
  spawn_range(task);
}

// A tag's score of short ranges (that ended before a wake would have landed): each short one
// adds 1 up to kMaxShortScore, each longer one takes kLongRangePenalty off; its ranges start
// alone from kShortScoreAlone. So one short range is not enough to start alone, and one long
// range among short ones (a VM's vCPU descheduled for 150 us, a frame's odd range) is not
// enough to wake for every range after it, while two long ones in a row are.
constexpr std::uint8_t kMaxShortScore = 4;
constexpr std::uint8_t kLongRangePenalty = 2;
constexpr std::uint8_t kShortScoreAlone = 2;

void Scheduler::begin_blocking_range(std::uint16_t tag, std::size_t pieces, bool& held,
                                     std::uint64_t& start) {
#if SPINDLE_THREADS
  // Static deals its pieces round-robin and its caller takes back unstarted ones; a range it
  // starts alone is cut kAlonePiecesPerWorker times finer (StaticMode::submit_range).
  if (mode() != Mode::Dynamic && mode() != Mode::Static) return;
  const std::uint32_t self = current_worker();
  if (self >= worker_count_ || WorkerPool::holding_wakes()) return;  // an outer range decides
  const std::uint64_t latency = workers_->wake_latency_ns();
  if (latency == 0) return;  // no wake measured yet
  start = now_ns();
  const std::uint32_t slot = tag < kMaxTags ? tag : kMaxTags - 1;
  // With nobody asleep there is no wake to save, and Static would only cut the range finer.
  const bool would_wake =
      mode() == Mode::Static ? workers_->asleep_except(self) : workers_->sleeper_unnoticed();
  if (would_wake && short_ranges_[slot].load(std::memory_order_relaxed) >= kShortScoreAlone &&
      pieces >= kAlonePiecesPerWorker * active_workers()) {
    held = true;
    workers_->hold_wakes(start + latency);
    ranges_alone_.fetch_add(1, std::memory_order_relaxed);
  }
#else
  (void)tag;
  (void)pieces;
  (void)held;
  (void)start;
#endif
}

void Scheduler::end_blocking_range(std::uint16_t tag, bool held, std::uint64_t start) {
#if SPINDLE_THREADS
  const std::uint64_t took = now_ns() - start;
  const std::uint32_t slot = tag < kMaxTags ? tag : kMaxTags - 1;
  std::atomic<std::uint8_t>& score = short_ranges_[slot];
  const std::uint8_t before = score.load(std::memory_order_relaxed);
  const bool short_range = took < workers_->wake_latency_ns();
  const std::uint8_t after = short_range
                                 ? std::min<std::uint8_t>(before + 1, kMaxShortScore)
                                 : (before > kLongRangePenalty ? before - kLongRangePenalty : 0);
  score.store(after, std::memory_order_relaxed);
  if (held && workers_->end_hold(current_worker()))
    ranges_alone_woke_.fetch_add(1, std::memory_order_relaxed);
#else
  (void)tag;
  (void)held;
  (void)start;
#endif
}

bool Scheduler::begin_wake_batch() {
#if SPINDLE_THREADS
  if (mode() != Mode::Dynamic && mode() != Mode::Static) return false;
  return workers_->begin_batch();
#else
  return false;
#endif
}

void Scheduler::end_wake_batch() {
#if SPINDLE_THREADS
  workers_->end_batch(current_worker());
#endif
}

void Scheduler::force_wake_latency(std::uint64_t ns) {
#if SPINDLE_THREADS
  workers_->force_wake_latency(ns);
#else
  (void)ns;
#endif
}

WorkerStats Scheduler::worker_stats(std::uint32_t worker) const {
  WorkerStats out;
  if (worker > worker_count_) return out;
  const StatsSlot& s = stats_[worker];
  const double scale = process_clock().ns_per_tick();
  out.busy_ns = static_cast<std::uint64_t>(
      static_cast<double>(s.busy_ticks.load(std::memory_order_relaxed)) * scale);
  out.jobs = s.jobs.load(std::memory_order_relaxed);
  out.steals = s.steals.load(std::memory_order_relaxed);
  out.parks = s.parks.load(std::memory_order_relaxed);
  out.wakes = s.wakes.load(std::memory_order_relaxed);
  out.wake_ns = s.wake_ns.load(std::memory_order_relaxed);
  return out;
}

TagStats Scheduler::tag_stats(std::uint16_t tag) const {
  TagStats out;
  if (tag >= kMaxTags) return out;
  const double scale = process_clock().ns_per_tick();
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
  out.ranges_alone = ranges_alone_.load(std::memory_order_relaxed);
  out.ranges_alone_woke = ranges_alone_woke_.load(std::memory_order_relaxed);
  return out;
}

void Scheduler::reset_stats() {
  for (std::uint32_t i = 0; i <= worker_count_; ++i) {
    StatsSlot& s = stats_[i];
    s.busy_ticks.store(0, std::memory_order_relaxed);
    s.jobs.store(0, std::memory_order_relaxed);
    s.steals.store(0, std::memory_order_relaxed);
    s.parks.store(0, std::memory_order_relaxed);
    s.wakes.store(0, std::memory_order_relaxed);
    s.wake_ns.store(0, std::memory_order_relaxed);
    for (std::uint32_t t = 0; t < kMaxTags; ++t) {
      s.tag_jobs[t].store(0, std::memory_order_relaxed);
      s.tag_ticks[t].store(0, std::memory_order_relaxed);
    }
  }
  inline_overflows_.store(0, std::memory_order_relaxed);
  exceptions_dropped_.store(0, std::memory_order_relaxed);
  ranges_alone_.store(0, std::memory_order_relaxed);
  ranges_alone_woke_.store(0, std::memory_order_relaxed);
}

}  // namespace spindle::jobs::detail
