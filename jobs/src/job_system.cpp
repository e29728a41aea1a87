#include "spindle/jobs/job_system.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#if SPINDLE_THREADS
#include <thread>
#endif

#include "platform.h"
#include "scheduler.h"

namespace spindle::jobs {

const char* to_string(Mode mode) {
  switch (mode) {
    case Mode::Single:
      return "single";
    case Mode::Static:
      return "static";
    case Mode::Dynamic:
      return "dynamic";
    case Mode::Tbb:
      return "tbb";
  }
  return "?";
}

bool parse_mode(std::string_view text, Mode& out) {
  for (Mode m : {Mode::Single, Mode::Static, Mode::Dynamic, Mode::Tbb}) {
    if (text == to_string(m)) {
      out = m;
      return true;
    }
  }
  return false;
}

bool mode_available(Mode mode) {
  switch (mode) {
    case Mode::Single:
      return true;
    case Mode::Static:
    case Mode::Dynamic:
      return SPINDLE_THREADS != 0;
    case Mode::Tbb:
      return SPINDLE_WITH_TBB != 0;
  }
  return false;
}

Counter::~Counter() {
  // No job pending, but the one that brought the count to zero may still be handing out
  // continuations (a few instructions, or a preempted finisher): its last touch is near, so wait
  // for it rather than call the caller's correct code a bug.
  while (pending() == 0 && !done()) {
#if SPINDLE_THREADS
    std::this_thread::yield();
#else
    detail::cpu_relax();
#endif
  }
  if (!done()) {
    // Its jobs would decrement freed memory; stopping here names the bug instead.
    std::fprintf(stderr,
                 "[jobs] fatal: Counter destroyed with %u job(s) pending: wait() for it before it "
                 "goes out of scope\n",
                 pending());
    std::abort();
  }
  if (state_.backend != nullptr && state_.release_backend != nullptr) {
    state_.release_backend(state_.backend);
  }
}

namespace detail {

Job* allocate_heap_job(std::size_t capture_bytes) {
  const std::size_t bytes = sizeof(Job) + ((capture_bytes + 63) & ~std::size_t{63});
  void* memory = ::operator new (bytes, std::align_val_t{alignof(Job)});
  Job* job = ::new (memory) Job();
  job->flags = kJobHeap;
  return job;
}

}  // namespace detail

namespace {

Config sanitize(Config config) {
  if (!mode_available(config.mode)) {
    const Mode fallback = mode_available(Mode::Dynamic) ? Mode::Dynamic : Mode::Single;
    char message[128];
    std::snprintf(message, sizeof(message), "mode '%s' is not available in this build; using '%s'",
                  to_string(config.mode), to_string(fallback));
    if (config.log != nullptr) {
      config.log(config.log_user, LogLevel::Warning, message);
    } else {
      std::fprintf(stderr, "[jobs] %s\n", message);
    }
    config.mode = fallback;
  }
  return config;
}

std::uint32_t participants_for(const Config& config) {
#if SPINDLE_THREADS
  const std::uint32_t wanted = config.workers == 0 ? detail::process_cpus().count : config.workers;
  return std::clamp<std::uint32_t>(wanted, 1, kMaxWorkers);
#else
  (void)config;
  return 1;
#endif
}

}  // namespace

JobSystem::JobSystem(const Config& config, std::size_t caller_capture_bytes)
    : config_(sanitize(config)), mode_(config_.mode) {
  if (caller_capture_bytes != kCaptureBytes) {
    std::fprintf(stderr,
                 "[jobs] fatal: this file was compiled with SPINDLE_JOB_CAPTURE_BYTES=%zu but the "
                 "library with %zu: link spindle::jobs (its target carries the definition)\n",
                 caller_capture_bytes, kCaptureBytes);
    std::abort();
  }
  worker_count_ = participants_for(config_);
  const std::uint32_t capture = (static_cast<std::uint32_t>(kCaptureBytes) + 63u) & ~63u;
  job_stride_ = static_cast<std::uint32_t>(sizeof(detail::Job)) + capture;
  scheduler_ = std::make_unique<detail::Scheduler>(config_, worker_count_, job_stride_, this);
  update_at_once();
}

JobSystem::~JobSystem() = default;

detail::Job* JobSystem::acquire_job() {
  return scheduler_->acquire();
}

void JobSystem::submit(detail::Job* job, std::span<Counter* const> dependencies) {
  scheduler_->submit(job, dependencies);
}

void JobSystem::run_inline(detail::Job* job, std::span<Counter* const> dependencies) {
  scheduler_->note_overflow("no free job slot", job->desc);
  scheduler_->run_inline(job, dependencies);
}

void JobSystem::run_now(detail::Job* job, Counter& counter) {
  scheduler_->run_now(job, counter);
}

void JobSystem::set_active_workers(std::uint32_t count) {
  scheduler_->set_active_workers(count);
  update_at_once();
}

void JobSystem::update_at_once() {
  // Static deals to every participant, whatever the active count: it is alone only when it has
  // one participant in all.
  const bool alone = (mode_ == Mode::Dynamic && scheduler_->active_workers() == 1) ||
                     (mode_ == Mode::Static && worker_count() == 1);
  at_once_.store(config_.run_at_once_when_alone && alone, std::memory_order_relaxed);
}

std::uint32_t JobSystem::active_workers() const {
  return scheduler_->active_workers();
}

void JobSystem::set_pinned(bool pinned) {
  scheduler_->set_pinned(pinned);
}

bool JobSystem::pinned() const {
  return scheduler_->pinned();
}

void JobSystem::begin_recording() {
  scheduler_->recorder().begin();
}

void JobSystem::stop_recording() {
  scheduler_->recorder().stop();
}

bool JobSystem::end_recording(JobGraph& out) {
  return scheduler_->recorder().end(out, mode_, worker_count(), scheduler_->ns_per_tick());
}

bool JobSystem::recording() const {
  return scheduler_->recorder().active();
}

std::uint32_t JobSystem::recorded_job() const {
  return scheduler_->recorded_job();
}

void JobSystem::record_after(std::uint32_t job) {
  scheduler_->record_after(job);
}

void JobSystem::note_heap_continuation(const JobDesc& desc) {
  scheduler_->note_overflow(
      "no free job slot for a continuation whose dependency is pending; kept on the heap", desc);
}

void JobSystem::wait(Counter& counter) {
  scheduler_->wait(counter);
}

void JobSystem::wait(std::span<Counter* const> counters) {
  for (Counter* counter : counters) {
    if (counter != nullptr) scheduler_->wait_for(*counter);
  }
  for (Counter* counter : counters) {
    if (counter != nullptr) scheduler_->rethrow(*counter);
  }
}

void JobSystem::submit_range(Counter& counter, const JobDesc& desc, std::size_t begin,
                             std::size_t end, std::size_t grain,
                             void (*call)(const void*, std::size_t, std::size_t), const void* fn,
                             std::atomic<std::size_t>* next, detail::RangeBands* bands) {
  scheduler_->submit_range(counter, desc, begin, end, grain, call, fn, next, bands);
}

JobSystem::BlockingRange::BlockingRange(JobSystem& system, std::uint16_t range_tag,
                                        std::size_t pieces)
    : js(system), tag(range_tag) {
  // Alone already (jobs run when submitted): there is nobody to wake.
  if (!js.config_.skip_wakes_for_short_ranges || js.at_once_.load(std::memory_order_relaxed))
    return;
  js.scheduler_->begin_blocking_range(tag, pieces, held, start);
}

JobSystem::BlockingRange::~BlockingRange() {
  if (start != 0) js.scheduler_->end_blocking_range(tag, held, start);
}

JobSystem::WakeBatch::WakeBatch(JobSystem& system)
    : js_(system), held_(system.scheduler_->begin_wake_batch()) {}

JobSystem::WakeBatch::~WakeBatch() {
  if (held_) js_.scheduler_->end_wake_batch();
}

void detail::set_wake_latency_for_tests(JobSystem& js, std::uint64_t ns) {
  js.scheduler_->force_wake_latency(ns);
}

StagePolicy JobSystem::stage_policy() const {
  return scheduler_->stage_policy();
}

void JobSystem::set_mode(Mode mode) {
  scheduler_->set_mode(mode);
  mode_ = scheduler_->mode();
  update_at_once();
}

std::uint32_t JobSystem::current_worker() const {
  return scheduler_->current_worker();
}
WorkerStats JobSystem::worker_stats(std::uint32_t worker) const {
  return scheduler_->worker_stats(worker);
}
TagStats JobSystem::tag_stats(std::uint16_t tag) const {
  return scheduler_->tag_stats(tag);
}
Stats JobSystem::stats() const {
  return scheduler_->stats();
}
void JobSystem::reset_stats() {
  scheduler_->reset_stats();
}
void JobSystem::set_hooks(const JobHooks& hooks) {
  config_.hooks = hooks;
  scheduler_->set_hooks(hooks);
}

}  // namespace spindle::jobs
