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
//   {
//     spindle::jobs::JobSystem::WakeBatch batch(jobs);  // several jobs, at most one wake
//     for (Task& t : tasks) jobs.run(done, {"task"}, [&t] { t.run(); });
//   }
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
// Capacities are fixed at construction (Config::jobs_per_worker) and at compile time
// (kCaptureBytes); nothing is allocated per job. Overflow runs a job inline and counts it
// (Stats::inline_overflows). A job's exception is rethrown by wait() on its counter. docs/jobs.md
// has the details: capacity overflow, run_after() timing, exceptions, waiting and parking, and how
// the modes are built.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "spindle/jobs/detail/counter_state.h"

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
  // Stage tag (< kMaxTags): per-tag job counts and times feed the dynamic allocator. 0: the tag
  // of the job that submits it (0 outside jobs), so work a stage's jobs start is booked to it.
  std::uint16_t tag = 0;
  Priority priority = Priority::Normal;
  // parallel_for: its items are fixed units of work (a rasteriser's tiles), not a split the
  // caller scales with the workers. Only read by job-graph replays (job_graph.h), which then never
  // cut it finer than its items for more workers.
  bool fixed_split = false;
  // parallel_for (the blocking forms): its items are handed out one at a time, in index order,
  // to whichever participant is free, instead of halved. With items sorted by descending cost
  // that is longest-first scheduling: the last items to start are the short ones, so the range
  // ends with its participants together. Each participant the mode would give the range
  // (Dynamic: the active ones; Static: those it deals to; Single: one) takes items until none are
  // left; `grain` is ignored (one item at a time). The non-blocking form ignores it.
  bool in_order = false;
  // With in_order: each job chooses which item to work on itself, costliest first, whatever index
  // it is handed (a rasteriser's tiles dealt into per-worker bands, each drawn costliest first,
  // the costliest next of any band once its own is done). Only read by job-graph replays
  // (job_graph.h): the recording took the items in its own workers' order, and a replay on
  // another count hands them out costliest first instead of in that order.
  bool costliest_first = false;
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
  // How long an idle participant keeps looking for work before it parks. At most two idle
  // workers spin at a time; the others park at once.
  std::uint32_t spin_before_park_us = 50;
  // Frames come at a steady cadence. When bursts of work arrive at regular intervals, worker 1
  // learns the period and wakes itself shortly before the next burst is due, so the submitting
  // thread does not pay the 10-25 us of a futex wake (a VM's cost) on its critical path. It costs
  // about 240 us of spinning per period (a timed sleep on a VM ends up to 150 us late): 24 ms of
  // CPU per second at 100 bursts a second, against 20 us less latency per burst. Off by default:
  // a good neighbour does not spin for 2% of a frame (docs/jobs.md has the numbers).
  bool predictive_wake = false;
  // Measure every job (per-tag and per-worker time). Costs two timestamp reads per job.
  bool time_jobs = true;
  // Dynamic mode with one active participant (one in all, or set_active_workers(1)), or Static
  // mode with one participant in all: a job it submits runs at once, as in Single mode, since
  // nobody else could start it sooner. false: queued all the same, so that priorities order what
  // it runs while it waits.
  bool run_at_once_when_alone = true;
  // Dynamic and Static modes: a blocking parallel_for that will end before a parked worker could
  // join it does not wake one. When its tag's last blocking ranges each took less time than a
  // wake takes to land (measured: from the wake call to the worker running) and a worker sleeps,
  // its caller starts it alone. If it is still running after that long, the caller wakes a worker
  // at its next piece. Only ranges of at least 4 pieces per participant, not in order, so that a
  // range that turns out long reaches a piece's end early; Static cuts such a range into 4 chunks
  // per participant instead of 1. On a VM whose wake costs the waker ~17 us and lands ~70 us
  // later, a 30 us range is then faster and takes half the CPU (docs/jobs.md).
  // Stats::ranges_alone counts them.
  bool skip_wakes_for_short_ranges = true;
  JobHooks hooks{};
  LogFn log = nullptr;
  void* log_user = nullptr;
};

// Per-participant counters since construction or the last reset_stats().
struct WorkerStats {
  // Own time of the jobs it ran: a job's time minus the jobs it ran nested and its waits, so
  // nested work counts once, where it ran.
  std::uint64_t busy_ns = 0;
  std::uint64_t jobs = 0;     // jobs run
  std::uint64_t steals = 0;   // jobs taken from another participant's deque
  std::uint64_t parks = 0;    // times it went to sleep for lack of work
  std::uint64_t wakes = 0;    // times another thread woke it for work
  std::uint64_t wake_ns = 0;  // from those wake calls to it running again, summed
};

struct TagStats {
  std::uint64_t jobs = 0;
  std::uint64_t total_ns = 0;  // summed job time over all participants
};

struct Stats {
  std::uint64_t inline_overflows = 0;  // jobs run inline because a capacity was exceeded
  std::uint64_t exceptions_dropped = 0;
  // Blocking parallel_fors started without waking a parked worker, as too short for a wake to
  // land in time (Config::skip_wakes_for_short_ranges), and those of them that ran longer than
  // that after all, so that their caller woke a worker part way through.
  std::uint64_t ranges_alone = 0;
  std::uint64_t ranges_alone_woke = 0;
};

}  // namespace spindle::jobs

// The layout of a job slot, which the templates below fill in (it holds a JobDesc).
#include "spindle/jobs/detail/job.h"

namespace spindle::jobs {

struct JobGraph;
class JobSystem;
namespace detail {
class Scheduler;
struct RangeSpawner;
// A blocking parallel_for's pieces in bands, one per participant (Dynamic mode; scheduler.cpp):
// on the caller's stack, filled by the scheduler only when used, so it costs nothing otherwise.
struct RangeBands {
  std::uint32_t pieces = 0;              // equal pieces of the range
  std::uint32_t lanes = 0;               // bands: participant p draws band p first
  std::uint32_t first[kMaxWorkers + 1];  // band l: pieces [first[l], first[l + 1])
  std::uint32_t next[kMaxWorkers];       // band l's next piece (std::atomic_ref)
};
// Tests only: the wake latency Config::skip_wakes_for_short_ranges assumes, in ns (0: measured).
void set_wake_latency_for_tests(JobSystem& js, std::uint64_t ns);
// The at-once path of the templates below, each one call into the scheduler (scheduler.cpp).
bool may_run_at_once(const Scheduler& scheduler);
void run_at_once(Scheduler& scheduler, Job* job);
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
  bool done() const { return state_.done(); }
  std::uint32_t pending() const { return state_.pending(); }

 private:
  friend class JobSystem;
  friend detail::CounterState& detail::state_of(Counter& counter);

  detail::CounterState state_;
};

// How a frame graph should run a group of stages under the current mode (asked per group).
struct StagePolicy {
  // true: stages run as jobs, concurrently where the graph allows (dynamic, tbb);
  // false: one after another on the calling thread, each parallel inside (single, static).
  bool concurrent_stages = false;
  // true: the caller measures stage costs and plans splits/workers/launch order (dynamic);
  // false: it uses `chunks_per_worker` for every parallel_for.
  bool planned = false;
  // Chunks per worker for an unplanned parallel_for: 0 = one chunk in all (single),
  // 1 = one per worker (static), kOversplit = the caller's oversplit factor (tbb).
  std::uint32_t chunks_per_worker = 0;
  // Launch the longest stage last onto the caller's own deque so that it starts at once (dynamic).
  bool longest_first = false;
};
inline constexpr std::uint32_t kOversplit = ~0u;

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

  // Runs `fn` on the calling thread now, as a job of its own (any size of callable): timed and
  // booked under desc.tag like a queued job, seen by the hooks and by a recording; an exception
  // it throws is rethrown here. For serial work that should count as job time (a frame graph
  // running a stage inline).
  template <class F>
  void run_here(const JobDesc& desc, F&& fn);

  // Runs jobs until `counter` is done, then rethrows the first exception of its jobs, if any.
  void wait(Counter& counter);
  // Runs jobs until every counter is done; then rethrows the first exception found, in the
  // order given (each counter's own first). Null entries are ignored.
  void wait(std::span<Counter* const> counters);
  void wait(std::initializer_list<Counter*> counters) {
    wait(std::span<Counter* const>(counters.begin(), counters.size()));
  }

  // Calls fn(b, e) over disjoint sub-ranges covering [begin, end) and returns when all have run.
  // Dynamic cuts it into equal pieces of at most `grain` (0: chosen from the participant count),
  // one job each, the jobs halved recursively (thieves take big halves); the pieces lie in one
  // band per active participant, and each job draws the next piece of its own participant's band
  // (that band drawn, another's), so a participant gets the same items range after range. Tbb
  // halves the range itself down to `grain`; Static splits evenly, one chunk per participant it
  // deals to (four when the range starts alone, Config::skip_wakes_for_short_ranges), each at
  // least `grain` long. fn is called concurrently, through a const reference.
  template <class F>
  void parallel_for_range(std::size_t begin, std::size_t end, std::size_t grain, F&& fn,
                          const JobDesc& desc = {"parallel_for"}) {
    Counter counter;
    std::atomic<std::size_t> next{0};  // JobDesc::in_order: the next item to hand out
    detail::RangeBands bands;          // Dynamic: the pieces in bands (scheduler.cpp)
    // Config::skip_wakes_for_short_ranges. An in-order range's caller takes item after item in
    // one job, so it has no piece's end at which to wake a worker: it never starts alone.
    const BlockingRange scope(*this, desc.tag, desc.in_order ? 0 : pieces(begin, end, grain));
    submit_range_of(counter, begin, end, grain, fn, desc, desc.in_order ? &next : nullptr,
                    desc.in_order ? nullptr : &bands);
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
  // How a frame graph should run its stages in the current mode (see StagePolicy).
  StagePolicy stage_policy() const;
  // Switches mode between frames. Refused, with a logged error, while any job is in flight.
  void set_mode(Mode mode);
  // Threads that run jobs in the current mode, the constructing thread included: 1 in Single
  // mode (whatever Config::workers asked for), the participants in Static and Dynamic, oneTBB's
  // concurrency limit in Tbb.
  std::uint32_t worker_count() const { return mode_ == Mode::Single ? 1 : worker_count_; }
  // Participants the system was built with (threads started once a threaded mode is used).
  std::uint32_t participant_count() const { return worker_count_; }
  // Dynamic mode: how many participants (participant 0 and the next count - 1) may be handed
  // work; the others finish what they hold and stay asleep until raised again, so a frame that
  // cannot use them does not pay for waking them. Clamped to [1, participant_count()]; other
  // modes ignore it. The engine sets it every frame (core::WorkerController).
  void set_active_workers(std::uint32_t count);
  std::uint32_t active_workers() const;
  // Whether the participants keep to the CPUs Config::pin_workers gave them (true, the start) or
  // may run anywhere the process may: a quiet machine is faster pinned, one whose every core is
  // busy with other programs often faster not (docs/jobs.md has the numbers). Participant 0
  // follows at once, each worker before it next looks for work. A no-op where nothing was
  // pinned. From participant 0, between frames; the engine's dynamic mode chooses every frame.
  void set_pinned(bool pinned);
  bool pinned() const;
  // Participant index of the calling thread, or kExternalThread.
  std::uint32_t current_worker() const;

  // Job-graph recording (job_graph.h): between frames, with nothing in flight. While recording,
  // every job, wait and parallel_for is logged per thread; end_recording() turns the log into
  // `out` (false when nothing was recorded). The first recordings allocate their buffers, later
  // ones reuse them. stop_recording() (optional) ends the graph where it is called, so that the
  // caller's own bookkeeping between it and end_recording() is not in the graph; recording() is
  // false from then on.
  void begin_recording();
  void stop_recording();
  bool end_recording(JobGraph& out);
  bool recording() const;
  // An order the caller keeps itself, for the recording: recorded_job() is the id the recording
  // gave the job running on this thread (0: none, or not recording); record_after(id) makes the
  // next job this thread submits start after that job too in the graph, as a run_after()
  // dependency would (a frame graph that launches a stage from whichever of its predecessors
  // finished last records the others). At most kMaxRecordAfter before that submission; nothing
  // changes how jobs run.
  static constexpr std::uint32_t kMaxRecordAfter = 64;
  std::uint32_t recorded_job() const;
  void record_after(std::uint32_t job);

  // Several jobs submitted together, one wake: while a WakeBatch lives, the jobs its thread
  // submits are published at once (a spinning worker takes them, a waiting thread helps with
  // them) but wake no parked worker; its end makes one wake if work is still queued, and a
  // worker woken so wakes the next while more is queued. A wake costs its caller 2-5 us on bare
  // metal and 30-45 us on a VM, and the jobs submitted after it wait for it: a batch puts every
  // job out first. Dynamic and Static modes (in the others it does nothing); inside another
  // batch the outer one decides. Jobs the thread runs meanwhile (helping in a wait, or at once
  // for lack of a slot) wake as they always do, and a wait makes the wakes owed so far before it
  // sleeps. Keep it short: a parked worker only starts on its jobs after the batch ends.
  class WakeBatch {
   public:
    explicit WakeBatch(JobSystem& jobs);
    ~WakeBatch();
    WakeBatch(const WakeBatch&) = delete;
    WakeBatch& operator=(const WakeBatch&) = delete;

   private:
    JobSystem& js_;
    bool held_;
  };

  WorkerStats worker_stats(std::uint32_t worker) const;
  TagStats tag_stats(std::uint16_t tag) const;
  Stats stats() const;
  void reset_stats();
  void set_hooks(const JobHooks& hooks);
  const Config& config() const { return config_; }

 private:
  friend struct detail::RangeSpawner;
  friend void detail::set_wake_latency_for_tests(JobSystem& js, std::uint64_t ns);

  JobSystem(const Config& config, std::size_t caller_capture_bytes);

  template <class F>
  void submit_callable(Counter* counter, std::span<Counter* const> dependencies,
                       const JobDesc& desc, F&& fn);

  detail::Job* acquire_job();
  void submit(detail::Job* job, std::span<Counter* const> dependencies);
  void run_inline(detail::Job* job, std::span<Counter* const> dependencies);
  void run_now(detail::Job* job, Counter& counter);
  void update_at_once();
  void note_heap_continuation(const JobDesc& desc);
  static bool any_pending(std::span<Counter* const> dependencies) {
    for (const Counter* c : dependencies) {
      if (c != nullptr && !c->done()) return true;
    }
    return false;
  }
  void submit_range(Counter& counter, const JobDesc& desc, std::size_t begin, std::size_t end,
                    std::size_t grain, void (*call)(const void*, std::size_t, std::size_t),
                    const void* fn, std::atomic<std::size_t>* next, detail::RangeBands* bands);
  template <class F>
  void submit_range_of(Counter& counter, std::size_t begin, std::size_t end, std::size_t grain,
                       const F& fn, const JobDesc& desc, std::atomic<std::size_t>* next,
                       detail::RangeBands* bands = nullptr);
  // How many jobs a range of [begin, end) cut at most `grain` long (0: Dynamic's default) makes.
  std::size_t pieces(std::size_t begin, std::size_t end, std::size_t grain) const {
    const std::size_t n = end > begin ? end - begin : 0;
    if (grain == 0) grain = n / (std::size_t{worker_count_} * 8);
    if (grain == 0) grain = 1;
    return (n + grain - 1) / grain;
  }
  // Around a blocking parallel_for (Config::skip_wakes_for_short_ranges): whether its caller
  // starts it alone, and, at its end, how long it took, for the next range of its tag.
  struct BlockingRange {
    BlockingRange(JobSystem& js, std::uint16_t tag, std::size_t pieces);
    ~BlockingRange();
    BlockingRange(const BlockingRange&) = delete;
    BlockingRange& operator=(const BlockingRange&) = delete;
    JobSystem& js;
    std::uint16_t tag;
    bool held = false;        // this scope holds the caller's wakes
    std::uint64_t start = 0;  // ns; 0: not measured (Single, Tbb, outside threads, alone)
  };

  Config config_;
  Mode mode_;
  std::uint32_t worker_count_ = 1;
  std::uint32_t job_stride_ = 0;
  // Dynamic mode with one active participant (set_active_workers(1), or one participant).
  std::atomic<bool> at_once_{false};
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

  // One active participant and this is it: nobody else could start the job sooner, so it runs
  // now, as in Single mode, without a trip through the queues.
  if (at_once_.load(std::memory_order_relaxed) && dependencies.empty() &&
      detail::may_run_at_once(*scheduler_)) {
    detail::StackJob<Fn> slot;
    slot.header.template prepare<Fn>(counter, desc, std::forward<F>(fn));
    slot.header.flags = detail::kJobAtOnce;
    detail::run_at_once(*scheduler_, &slot.header);
    return;
  }
  detail::Job* job = acquire_job();
  if (job == nullptr && any_pending(dependencies)) {
    // A continuation cannot run now; keep it, on the heap (counted and logged as an overflow).
    job = detail::allocate_heap_job(sizeof(Fn));
    note_heap_continuation(desc);
  }
  if (job != nullptr) {
    job->prepare<Fn>(counter, desc, std::forward<F>(fn));
    if (counter != nullptr) counter->state_.add(1);
    submit(job, dependencies);
    return;
  }
  // No free slot: a stack slot with the same layout, run right here by the same code path.
  detail::StackJob<Fn> slot;
  slot.header.template prepare<Fn>(counter, desc, std::forward<F>(fn));
  if (counter != nullptr) counter->state_.add(1);
  run_inline(&slot.header, dependencies);
}

template <class F>
void JobSystem::run_here(const JobDesc& desc, F&& fn) {
  using Fn = std::decay_t<F>;
  static_assert(std::is_invocable_v<Fn&>, "a job is invoked as fn()");
  detail::StackJob<Fn> slot;
  Counter counter;
  slot.header.template prepare<Fn>(&counter, desc, std::forward<F>(fn));
  counter.state_.add(1);
  run_now(&slot.header, counter);
}

template <class F>
void JobSystem::parallel_for_range(Counter& counter, std::size_t begin, std::size_t end,
                                   std::size_t grain, const F& fn, const JobDesc& desc) {
  submit_range_of(counter, begin, end, grain, fn, desc, nullptr);
}

template <class F>
void JobSystem::submit_range_of(Counter& counter, std::size_t begin, std::size_t end,
                                std::size_t grain, const F& fn, const JobDesc& desc,
                                std::atomic<std::size_t>* next, detail::RangeBands* bands) {
  if (begin >= end) return;
  auto call = [](const void* f, std::size_t b, std::size_t e) {
    (*static_cast<const F*>(f))(b, e);
  };
  submit_range(counter, desc, begin, end, grain, call, &fn, next, bands);
}

}  // namespace spindle::jobs
