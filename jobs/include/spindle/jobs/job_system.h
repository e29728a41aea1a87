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
//   spindle::jobs::Counter last;            // a join: runs once both are done
//   jobs.run_after({&done, &after}, last, {"present"}, [&] { present(); });
//   jobs.wait({&after, &last});
//
//   jobs.parallel_for(0, n, 1024, [&](std::size_t i) { x[i] += v[i] * dt; });
//   jobs.parallel_for_range(0, n, 1024, [&](std::size_t b, std::size_t e) { update(b, e); });
//
// Modes (Config::mode, switchable with set_mode() between frames, i.e. with nothing in flight):
//   Single  - no worker threads; every job runs inline on the submitting thread, in submission
//             order. The only mode of a SPINDLE_THREADS=OFF build.
//   Static  - the source thesis's job system made lock-free: pinned workers, jobs dealt round-robin
//             into per-worker mailboxes, parallel_for split evenly over all workers, no stealing.
//             The main thread runs its share while it waits, or while a spawn has filled its pool.
//   Dynamic - work stealing: each participant owns a Chase-Lev deque, idle ones steal, outside
//             threads submit through an injection queue; parallel_for splits recursively.
//   Tbb     - the same jobs run through oneTBB (reference measurements only).
//
// Capacities are fixed: job slots at construction (Config::jobs_per_worker), the bytes a callable
// may capture at compile time (kCaptureBytes; a larger callable does not compile). Nothing is
// allocated from the heap per job. A participant whose pool is full, submitting from outside any
// job (the main thread's user code), first runs jobs it queued earlier (its share anyway) and
// reuses their slots: a job that spins on a flag this thread sets later must not be among them.
// Otherwise, or with none queued, the job runs inline on the submitting thread: correct, but
// serial, so it is counted in Stats::inline_overflows and logged once (the engine also reports it
// per frame). The one exception is a run_after() whose dependency is still pending: it cannot run
// now, so it goes to the heap (also counted and logged once). A join over N counters takes N
// more slots for its links (from the heap, counted too, when none is free).
//
// run_after(dependency, ...) waits for the jobs pending on `dependency` when it is called: it
// starts the next time that counter's pending count reaches zero, or at once if nothing is pending
// (so submit the dependency's jobs before the jobs that run after them). Jobs added to the
// dependency after the call are waited for only if they arrive before that count reaches zero.
// With several dependencies it starts once each of them has, by the same rule.
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
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
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

inline constexpr std::uint32_t kMaxWorkers = 64;  // participants, main thread included
inline constexpr std::uint32_t kMaxTags = 64;     // stage tags for per-tag timing
#ifndef SPINDLE_JOB_CAPTURE_BYTES
#define SPINDLE_JOB_CAPTURE_BYTES 96
#endif
// Bytes a job's callable may hold inline, fixed when the engine is built (CMake option
// SPINDLE_JOB_CAPTURE_BYTES; every user of the headers gets the same value through the target).
// A larger callable is a compile error, not a quiet inline run.
inline constexpr std::size_t kCaptureBytes = SPINDLE_JOB_CAPTURE_BYTES;
static_assert(kCaptureBytes >= sizeof(void*) && kCaptureBytes <= 4096,
              "SPINDLE_JOB_CAPTURE_BYTES must be between 8 and 4096");
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
  // Participants including the constructing thread; 0 means one per CPU the process may use.
  std::uint32_t workers = 0;
  // Pin each worker to its own CPU among those the process may use (the affinity mask the process
  // started with, whatever the constructing thread's mask is now), avoiding the CPU participant 0
  // is on (or the CPUs the game pinned it to). Fewer CPUs than participants: they share CPUs
  // round-robin, with a warning. A failure to pin is logged once; that worker, like every worker
  // when this is false, runs on the process's whole mask.
  bool pin_workers = true;
  // Also pin the constructing thread to the first of those CPUs (its previous mask is restored on
  // destruction).
  bool pin_main_thread = true;
  Mode mode = Mode::Dynamic;
  // Jobs each participant can have in flight; also each deque's and mailbox's size. Rounded up
  // to a power of two.
  std::uint32_t jobs_per_worker = 4096;
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
  // While in a counter's continuation list: how many times that counter had reached zero when
  // the job was attached. It is released when the count moves past this value.
  std::uint16_t epoch = 0;
  // A job with several dependencies: links still to release it (see kJobLink).
  std::atomic<std::uint32_t> joins{0};

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
// Not a job: stands in one dependency's continuation list for a job with several dependencies;
// its capture holds that job's address. Releasing it counts down Job::joins.
inline constexpr std::uint32_t kJobLink = 4u;

// A heap slot for a continuation that found no pool slot: it must wait for its dependency, and
// waiting in its place could deadlock (a job that run_after()s its own counter).
Job* allocate_heap_job(std::size_t capture_bytes);

class Scheduler;
class TbbBackend;

// Stress tests only: called by the finisher that brought a counter's pending count to zero,
// before it hands out the counter's continuations, so a test can stretch that window (a
// preempted finisher there once let a continuation start early). Null: no call.
void set_zero_hook_for_tests(void (*hook)());

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

  // Nothing pending, and no finisher still inside the counter: a waiter may destroy it.
  bool done() const {
    return (state_.load(std::memory_order_acquire) & (kPendingMask | kFinalizingMask)) == 0;
  }
  std::uint32_t pending() const {
    return static_cast<std::uint32_t>(state_.load(std::memory_order_acquire) & kPendingMask);
  }

 private:
  friend class JobSystem;
  friend class detail::Scheduler;
  friend class detail::TbbBackend;

  static constexpr std::uint64_t kPendingMask = 0xffffffffull;
  static constexpr std::uint64_t kFinalizing = 1ull << 32;  // one finisher still finalizing
  static constexpr std::uint64_t kFinalizingMask = 0xffffull << 32;
  static constexpr std::uint64_t kEpoch = 1ull << 48;  // one more time pending reached zero
  static constexpr int kEpochShift = 48;

  void add(std::uint32_t n) { state_.fetch_add(n, std::memory_order_relaxed); }

  // Bits 0-31: pending jobs. Bits 32-47: finishers that brought pending to zero and are still
  // handing out continuations (kFinalizing each), so waiters must not return (and destroy the
  // counter) yet. A count, not a flag: pending can reach zero, rise again and reach zero again
  // while the first finisher is still inside finish(). Bits 48-63: the epoch, how many times
  // pending reached zero (wrapping), bumped by the same step: it tells a finisher which
  // continuations were attached before its zero and which wait for jobs added since.
  std::atomic<std::uint64_t> state_{0};
  // Jobs to submit when pending reaches zero (intrusive list through Job::next, each tagged with
  // Job::epoch). Changed only under list_lock_; finishers read the head without it.
  std::atomic<detail::Job*> continuations_{nullptr};
  std::atomic<std::uint32_t> list_lock_{0};
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
  // Inline: checks that this file and the library agree on kCaptureBytes (a file compiled
  // without the target's definitions would write bigger captures than the slots hold).
  explicit JobSystem(const Config& config = {}) : JobSystem(config, kCaptureBytes) {}
  ~JobSystem();  // finishes every submitted job, then stops the workers
  JobSystem(const JobSystem&) = delete;
  JobSystem& operator=(const JobSystem&) = delete;

  // Submits `fn` (invoked as fn()) counted on `counter`.
  template <class F>
  void run(Counter& counter, const JobDesc& desc, F&& fn) {
    submit_callable(&counter, {}, desc, std::forward<F>(fn));
  }
  // Submits `fn` with no counter: nothing can wait for it (shutdown still drains it).
  template <class F>
  void run_detached(const JobDesc& desc, F&& fn) {
    submit_callable(nullptr, {}, desc, std::forward<F>(fn));
  }
  // Submits `fn` counted on `counter`, to start once the jobs pending on `dependency` now have
  // finished (at once if none are). No thread waits: the job that finishes them submits it.
  template <class F>
  void run_after(Counter& dependency, Counter& counter, const JobDesc& desc, F&& fn) {
    Counter* const deps[] = {&dependency};
    submit_callable(&counter, deps, desc, std::forward<F>(fn));
  }
  // The same, once every counter in `dependencies` has (a join). Null entries are ignored.
  template <class F>
  void run_after(std::span<Counter* const> dependencies, Counter& counter, const JobDesc& desc,
                 F&& fn) {
    submit_callable(&counter, dependencies, desc, std::forward<F>(fn));
  }
  template <class F>
  void run_after(std::initializer_list<Counter*> dependencies, Counter& counter,
                 const JobDesc& desc, F&& fn) {
    submit_callable(&counter, std::span<Counter* const>(dependencies.begin(), dependencies.size()),
                    desc, std::forward<F>(fn));
  }

  // Runs jobs until `counter` is done, then rethrows the first exception of its jobs, if any.
  void wait(Counter& counter);
  // Runs jobs until every counter is done; then rethrows the first exception found, in the
  // order given (each counter's own first). Null entries are ignored.
  void wait(std::span<Counter* const> counters);
  void wait(std::initializer_list<Counter*> counters) {
    wait(std::span<Counter* const>(counters.begin(), counters.size()));
  }

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
  // Threads that run jobs in the current mode, the constructing thread included: 1 in Single
  // mode (whatever Config::workers asked for), the participants in Static and Dynamic, oneTBB's
  // concurrency limit in Tbb.
  std::uint32_t worker_count() const { return mode_ == Mode::Single ? 1 : worker_count_; }
  // Participants the system was built with (threads started once a threaded mode is used).
  std::uint32_t participant_count() const { return worker_count_; }
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

  JobSystem(const Config& config, std::size_t caller_capture_bytes);

  template <class F>
  void submit_callable(Counter* counter, std::span<Counter* const> dependencies,
                       const JobDesc& desc, F&& fn);

  detail::Job* acquire_job();
  void submit(detail::Job* job, std::span<Counter* const> dependencies);
  void run_inline(detail::Job* job, std::span<Counter* const> dependencies);
  void note_heap_continuation(const JobDesc& desc);
  static bool any_pending(std::span<Counter* const> dependencies) {
    for (const Counter* c : dependencies) {
      if (c != nullptr && !c->done()) return true;
    }
    return false;
  }
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
void JobSystem::submit_callable(Counter* counter, std::span<Counter* const> dependencies,
                                const JobDesc& desc, F&& fn) {
  using Fn = std::decay_t<F>;
  static_assert(sizeof(Fn) <= kCaptureBytes,
                "job callable is larger than kCaptureBytes (SPINDLE_JOB_CAPTURE_BYTES): capture a "
                "pointer to the data, or build with a larger SPINDLE_JOB_CAPTURE_BYTES");
  static_assert(alignof(Fn) <= 64, "job callable needs more than 64-byte alignment");
  static_assert(std::is_invocable_v<Fn&>, "a job is invoked as fn()");

  detail::Job* job = acquire_job();
  if (job == nullptr && any_pending(dependencies)) {
    // A continuation cannot run now; keep it, on the heap (counted and logged as an overflow).
    job = detail::allocate_heap_job(sizeof(Fn));
    note_heap_continuation(desc);
  }
  if (job != nullptr) {
    job->invoke = &detail::Job::invoke_capture<Fn>;
    job->counter = counter;
    job->desc = desc;
    ::new (static_cast<void*>(job->capture())) Fn(std::forward<F>(fn));
    if (counter != nullptr) counter->add(1);
    submit(job, dependencies);
    return;
  }
  // No free slot: a stack slot with the same layout, run right here by the same code path.
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
  run_inline(&slot.header, dependencies);
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
