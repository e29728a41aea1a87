// Spindle job system: pinned workers, per-worker work-stealing deques, counters, parallel_for.
//
// Usage:
//
//   spindle::jobs::Config config;          // defaults: one participant per core, Mode::Dynamic
//   spindle::jobs::JobSystem jobs(config); // the calling thread becomes participant 0
//
//   spindle::jobs::Counter done;
//   jobs.run(done, {"physics", kTagPhysics}, [&] { step_physics(); });
//   jobs.run(done, {"audio", kTagAudio}, [&] { mix_audio(); });
//   jobs.wait(done);                       // helps run jobs until both finished
//
//   spindle::jobs::Counter after;           // runs once `done` reaches zero, no thread blocks
//   jobs.run_after(done, after, {"render"}, [&] { render(); });
//
//   jobs.parallel_for(0, n, 1024, [&](std::size_t i) { x[i] += v[i] * dt; });
//   jobs.parallel_for_range(0, n, 1024, [&](std::size_t b, std::size_t e) { update(b, e); });
//
// Modes (Config::mode, switchable with set_mode() between frames, i.e. with nothing in flight):
//   Single  - no worker threads; every job runs inline on the submitting thread, in submission
//             order. The only mode of a SPINDLE_THREADS=OFF build.
//   Static  - the source thesis's job system made lock-free: pinned workers, jobs dealt round-robin
//             into per-worker mailboxes, parallel_for split evenly over all workers, no stealing.
//   Dynamic - work stealing: each participant owns a Chase-Lev deque, idle ones steal, outside
//             threads submit through an injection queue; parallel_for splits recursively.
//   Tbb     - the same jobs run through oneTBB (reference measurements only).
//
// Capacities are fixed at construction (Config::jobs_per_worker, Config::capture_bytes); nothing
// is allocated from the heap per job. Over capacity (pool or queue full, or a callable larger than
// capture_bytes) the job runs inline on the submitting thread: correct, counted in
// Stats::inline_overflows and logged once. The one exception is a run_after() whose dependency is
// still pending: it cannot run now, so it goes to the heap (also counted and logged once).
//
// run_after(dependency, ...) starts once `dependency` is done, where a counter with nothing
// pending counts as done: submit the dependency's jobs before the jobs that run after them.
// A Counter destroyed with jobs pending aborts with a message (the jobs would use freed memory).
//
// Exceptions: a job that throws has its first exception captured in its Counter and rethrown by
// wait() on that counter (later ones are counted and dropped). Jobs submitted with run_detached()
// have no counter to carry it: the process terminates, after a log line naming the job.
//
// Waiting: wait() never blocks while it can help. It runs the caller's own jobs, steals (dynamic),
// spins briefly and then parks on a futex until work arrives or a counter completes. Threads that
// are not participants (see current_worker()) spin and yield instead, since they cannot help.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

namespace spindle::jobs {

enum class Mode : std::uint8_t { Single, Static, Dynamic, Tbb };

// "single", "static", "dynamic", "tbb".
const char* to_string(Mode mode);
// Parses the names above; false (and `out` unchanged) for anything else.
bool parse_mode(std::string_view text, Mode& out);
// Whether this build can run `mode` (Static/Dynamic need SPINDLE_THREADS, Tbb needs oneTBB too).
bool mode_available(Mode mode);

enum class Priority : std::uint8_t { High = 0, Normal = 1 };
inline constexpr std::uint32_t kPriorityCount = 2;

inline constexpr std::uint32_t kMaxWorkers = 64;       // participants, main thread included
inline constexpr std::uint32_t kMaxTags = 64;          // stage tags for per-tag timing
inline constexpr std::size_t kMaxCaptureBytes = 512;   // compile-time ceiling of capture_bytes
inline constexpr std::uint32_t kExternalThread = ~0u;  // current_worker() off the pool

// What a job is called and where its time is booked.
struct JobDesc {
  // Shown by the profiler and in error messages; must outlive the job (a string literal).
  const char* name = "job";
  // Stage tag (< kMaxTags): per-tag job counts and times feed the dynamic allocator.
  std::uint16_t tag = 0;
  Priority priority = Priority::Normal;
};

// Profiler hooks, called on the executing thread around every job (also inline ones).
struct JobHooks {
  void* user = nullptr;
  void (*on_begin)(void* user, const JobDesc& desc, std::uint32_t worker) = nullptr;
  void (*on_end)(void* user, const JobDesc& desc, std::uint32_t worker) = nullptr;
};

enum class LogLevel : std::uint8_t { Info, Warning, Error };
// The job system sits below core/ and cannot use its logger; core installs one through this.
using LogFn = void (*)(void* user, LogLevel level, const char* message);

struct Config {
  // Participants including the constructing thread; 0 means one per hardware thread.
  std::uint32_t workers = 0;
  // Pin worker thread i to CPU i (i >= 1). A failure is logged once and ignored.
  bool pin_workers = true;
  // Also pin the constructing thread to CPU 0 (its previous mask is restored on destruction).
  bool pin_main_thread = true;
  Mode mode = Mode::Dynamic;
  // Jobs each participant can have in flight; also each deque's and mailbox's size. Rounded up
  // to a power of two.
  std::uint32_t jobs_per_worker = 4096;
  // Inline capture bytes per job (<= kMaxCaptureBytes). Larger callables run inline.
  std::uint32_t capture_bytes = 96;
  // How long an idle participant keeps looking for work before it parks.
  std::uint32_t spin_before_park_us = 50;
  // Frames come at a steady cadence. When bursts of work arrive at regular intervals, worker 1
  // learns the period and wakes itself shortly before the next burst is due, so the submitting
  // thread does not pay the 10-25 us of a futex wake (a VM's cost) on its critical path. Costs
  // about spin_before_park_us of spinning per period; off: workers sleep until woken.
  bool predictive_wake = true;
  // Measure every job (per-tag and per-worker time). Costs two timestamp reads per job.
  bool time_jobs = true;
  JobHooks hooks{};
  LogFn log = nullptr;
  void* log_user = nullptr;
};

// Per-participant counters since construction or the last reset_stats().
struct WorkerStats {
  std::uint64_t busy_ns = 0;  // time inside jobs
  std::uint64_t jobs = 0;     // jobs run
  std::uint64_t steals = 0;   // jobs taken from another participant's deque
  std::uint64_t parks = 0;    // times it went to sleep for lack of work
};

struct TagStats {
  std::uint64_t jobs = 0;
  std::uint64_t total_ns = 0;  // summed job time over all participants
};

struct Stats {
  std::uint64_t inline_overflows = 0;  // jobs run inline because a capacity was exceeded
  std::uint64_t exceptions_dropped = 0;
};

class Counter;
class JobSystem;
struct RangeSpawner;

namespace detail {

struct Job;
using InvokeFn = void (*)(Job& job);

// A job slot. Lives in a participant's pool, or on the stack when run inline; the callable is
// constructed right after the header, inside the same slot, and never moves.
struct alignas(64) Job {
  InvokeFn invoke = nullptr;
  Counter* counter = nullptr;
  Job* next = nullptr;  // link in a counter's continuation list
  JobDesc desc{};
  // 0 free, 1 in use. The owner pool takes a slot; whoever finishes the job frees it (release).
  std::atomic<std::uint32_t> state{0};
  std::uint32_t flags = 0;

  std::byte* capture() { return reinterpret_cast<std::byte*>(this) + sizeof(Job); }

  template <class Fn>
  static void invoke_capture(Job& job) {
    Fn& fn = *std::launder(reinterpret_cast<Fn*>(job.capture()));
    struct Destroy {
      Fn& fn;
      ~Destroy() { fn.~Fn(); }
    } destroy{fn};
    fn();
  }
};

inline constexpr std::uint32_t kJobPooled = 1u;  // slot of a JobPool: freed by Job::state
inline constexpr std::uint32_t kJobHeap = 2u;    // emergency continuation: freed with delete

// A heap slot for a continuation that found no pool slot: it must wait for its dependency, and
// waiting in its place could deadlock (a job that run_after()s its own counter).
Job* allocate_heap_job(std::size_t capture_bytes);

class Scheduler;
class TbbBackend;

}  // namespace detail

// Counts unfinished jobs. Submitting against a counter adds one; a finished job removes one.
// done() is true when nothing submitted against it is unfinished. Reusable once done; must
// outlive every job counted on it and every run_after() that depends on it.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;
  ~Counter();

  bool done() const { return state_.load(std::memory_order_acquire) == 0; }
  std::uint32_t pending() const {
    return static_cast<std::uint32_t>(state_.load(std::memory_order_acquire) & kPendingMask);
  }

 private:
  friend class JobSystem;
  friend class detail::Scheduler;
  friend class detail::TbbBackend;

  static constexpr std::uint64_t kPendingMask = 0xffffffffull;
  static constexpr std::uint64_t kFinalizing = 1ull << 32;  // one finisher still finalizing

  void add(std::uint32_t n) { state_.fetch_add(n, std::memory_order_relaxed); }

  // Low 32 bits: pending jobs. High 32 bits: how many finishers that brought pending to zero are
  // still handing out continuations (kFinalizing each), so waiters must not return (and destroy
  // the counter) yet. A count, not a flag: pending can reach zero, rise again (jobs are added one
  // at a time while earlier ones already run) and reach zero again while the first finisher is
  // still inside finish(); a flag cleared by the second would let the waiter go early.
  std::atomic<std::uint64_t> state_{0};
  // Jobs to submit when pending reaches zero (intrusive list through Job::next).
  std::atomic<detail::Job*> continuations_{nullptr};
  // First exception thrown by a job counted here; error_flag_ guards the single write.
  std::atomic<std::uint32_t> error_flag_{0};
  std::exception_ptr error_;
  // Backend-specific state (the oneTBB backend keeps a task_group here), released with the
  // counter through release_backend_.
  void* backend_ = nullptr;
  void (*release_backend_)(void*) = nullptr;
};

class JobSystem {
 public:
  explicit JobSystem(const Config& config = {});
  ~JobSystem();  // finishes every submitted job, then stops the workers
  JobSystem(const JobSystem&) = delete;
  JobSystem& operator=(const JobSystem&) = delete;

  // Submits `fn` (invoked as fn()) counted on `counter`.
  template <class F>
  void run(Counter& counter, const JobDesc& desc, F&& fn) {
    submit_callable(&counter, nullptr, desc, std::forward<F>(fn));
  }
  // Submits `fn` with no counter: nothing can wait for it (shutdown still drains it).
  template <class F>
  void run_detached(const JobDesc& desc, F&& fn) {
    submit_callable(nullptr, nullptr, desc, std::forward<F>(fn));
  }
  // Submits `fn` counted on `counter`, to start only once `dependency` is done. No thread waits:
  // the job that finishes `dependency` submits it.
  template <class F>
  void run_after(Counter& dependency, Counter& counter, const JobDesc& desc, F&& fn) {
    submit_callable(&counter, &dependency, desc, std::forward<F>(fn));
  }

  // Runs jobs until `counter` is done, then rethrows the first exception of its jobs, if any.
  void wait(Counter& counter);

  // Calls fn(b, e) over disjoint sub-ranges covering [begin, end) and returns when all have run.
  // Dynamic and Tbb split recursively (thieves take big halves) down to at most `grain` (0:
  // chosen from the participant count); Static splits evenly, one chunk per participant it deals
  // to, each at least `grain` long. fn is called concurrently, through a const reference.
  template <class F>
  void parallel_for_range(std::size_t begin, std::size_t end, std::size_t grain, F&& fn,
                          const JobDesc& desc = {"parallel_for"}) {
    Counter counter;
    parallel_for_range(counter, begin, end, grain, fn, desc);
    wait(counter);
  }
  // Non-blocking form: the sub-range jobs count on `counter`; `fn` is referenced, not copied,
  // and must outlive them.
  template <class F>
  void parallel_for_range(Counter& counter, std::size_t begin, std::size_t end, std::size_t grain,
                          const F& fn, const JobDesc& desc = {"parallel_for"});
  template <class F>
  void parallel_for_range(Counter& counter, std::size_t begin, std::size_t end, std::size_t grain,
                          const F&& fn, const JobDesc& desc = {}) = delete;  // would dangle
  // Calls fn(i) for every i in [begin, end); blocking.
  template <class F>
  void parallel_for(std::size_t begin, std::size_t end, std::size_t grain, F&& fn,
                    const JobDesc& desc = {"parallel_for"}) {
    parallel_for_range(
        begin, end, grain,
        [&fn](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i) fn(i);
        },
        desc);
  }

  Mode mode() const { return mode_; }
  // Switches mode between frames. Refused, with a logged error, while any job is in flight.
  void set_mode(Mode mode);
  // Participants including the constructing thread (1 in Single mode builds).
  std::uint32_t worker_count() const { return worker_count_; }
  // Participant index of the calling thread, or kExternalThread.
  std::uint32_t current_worker() const;

  WorkerStats worker_stats(std::uint32_t worker) const;
  TagStats tag_stats(std::uint16_t tag) const;
  Stats stats() const;
  void reset_stats();
  void set_hooks(const JobHooks& hooks);
  const Config& config() const { return config_; }

 private:
  friend struct RangeSpawner;

  template <class F>
  void submit_callable(Counter* counter, Counter* dependency, const JobDesc& desc, F&& fn);

  detail::Job* acquire_job();
  void submit(detail::Job* job, Counter* dependency);
  void run_inline(detail::Job* job, Counter* dependency);
  void note_heap_continuation(const JobDesc& desc);
  void submit_range(Counter& counter, const JobDesc& desc, std::size_t begin, std::size_t end,
                    std::size_t grain, void (*call)(const void*, std::size_t, std::size_t),
                    const void* fn);

  Config config_;
  Mode mode_;
  std::uint32_t worker_count_ = 1;
  std::uint32_t job_stride_ = 0;
  std::unique_ptr<detail::Scheduler> scheduler_;
};

// --- implementation of the templates -----------------------------------------------------------

template <class F>
void JobSystem::submit_callable(Counter* counter, Counter* dependency, const JobDesc& desc,
                                F&& fn) {
  using Fn = std::decay_t<F>;
  static_assert(sizeof(Fn) <= kMaxCaptureBytes,
                "job callable is larger than kMaxCaptureBytes: capture a pointer to the data");
  static_assert(alignof(Fn) <= 64, "job callable needs more than 64-byte alignment");
  static_assert(std::is_invocable_v<Fn&>, "a job is invoked as fn()");

  detail::Job* job = sizeof(Fn) <= config_.capture_bytes ? acquire_job() : nullptr;
  if (job != nullptr) {
    job->invoke = &detail::Job::invoke_capture<Fn>;
    job->counter = counter;
    job->desc = desc;
    ::new (static_cast<void*>(job->capture())) Fn(std::forward<F>(fn));
    if (counter != nullptr) counter->add(1);
    submit(job, dependency);
    return;
  }
  if (dependency != nullptr && !dependency->done()) {
    // A continuation cannot run now; keep it, on the heap (counted and logged as an overflow).
    job = detail::allocate_heap_job(sizeof(Fn));
    job->invoke = &detail::Job::invoke_capture<Fn>;
    job->counter = counter;
    job->desc = desc;
    ::new (static_cast<void*>(job->capture())) Fn(std::forward<F>(fn));
    if (counter != nullptr) counter->add(1);
    note_heap_continuation(desc);
    submit(job, dependency);
    return;
  }
  // Over capacity: a stack slot with the same layout, run right here by the same code path.
  struct alignas(64) Inline {
    detail::Job header;
    alignas(Fn) std::byte storage[sizeof(Fn)];
  } slot;
  static_assert(offsetof(Inline, storage) == sizeof(detail::Job));
  slot.header.invoke = &detail::Job::invoke_capture<Fn>;
  slot.header.counter = counter;
  slot.header.desc = desc;
  ::new (static_cast<void*>(slot.header.capture())) Fn(std::forward<F>(fn));
  if (counter != nullptr) counter->add(1);
  run_inline(&slot.header, dependency);
}

template <class F>
void JobSystem::parallel_for_range(Counter& counter, std::size_t begin, std::size_t end,
                                   std::size_t grain, const F& fn, const JobDesc& desc) {
  if (begin >= end) return;
  auto call = [](const void* f, std::size_t b, std::size_t e) {
    (*static_cast<const F*>(f))(b, e);
  };
  submit_range(counter, desc, begin, end, grain, call, &fn);
}

}  // namespace spindle::jobs
