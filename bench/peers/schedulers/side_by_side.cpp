// spindle_sched_side_by_side: Spindle's job system beside enkiTS, oneTBB and Taskflow, all in one
// process with the same compiler flags, on the five workloads of /work/shared/sched-anchor.md.
//
//   spindle_sched_side_by_side [--threads N] [--reps R] [--only a,b,c,d,e] [--quick]
//       [--schedulers spindle-dynamic,spindle-static,enkits,tbb,taskflow,serial]
//
//   a) 1,000,000 empty jobs submitted one by one by one participant, then one wait: ns per job,
//      with N participants and with 1 (pure overhead);
//   b) parallel_for over 10M floats, x = x*1.0001f + 0.5f, 100 passes, default partitioning;
//   c) fib(30) by recursive spawn, serial below n = 15;
//   d) a frame graph of 8 stages x 208 chunks of 2-20 us (stages 0-1-2-3 a chain, 4-7 free);
//   e) idle: bursts of 64 chunks of 0.5 us after 10 ms (and 1 ms) sleeps.
//
// Every measurement builds its scheduler afresh and checks its result before it counts: a
// scheduler that loses, repeats or reorders work fails the run (exit status 1) instead of winning
// it. Repetitions are interleaved across schedulers (the order rotates each repetition); the
// table shows medians. README.md has the rules each library follows.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/task_scheduler_observer.h>
#include <oneapi/tbb/version.h>
#include <pthread.h>
#include <sched.h>
#include <spindle/jobs/job_system.h>
#include <sys/resource.h>
// g++ 12 sees an out-of-bounds read in Taskflow's IndexRangesPartitioner<T, 1> constructor that
// cannot happen (a loop of N - 1 = 0 iterations): a false -Warray-bounds, kept out of our build.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#include <taskflow/algorithm/for_each.hpp>
#include <taskflow/taskflow.hpp>
#pragma GCC diagnostic pop
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "TaskScheduler.h"  // enkiTS: <enkiTS source>/src is on the include path

#ifndef SIDE_BY_SIDE_SPINDLE_COMMIT
#define SIDE_BY_SIDE_SPINDLE_COMMIT "unknown"
#endif
#ifndef SIDE_BY_SIDE_ENKITS_VERSION
#define SIDE_BY_SIDE_ENKITS_VERSION "unknown"
#endif
#ifndef SIDE_BY_SIDE_TASKFLOW_VERSION
#define SIDE_BY_SIDE_TASKFLOW_VERSION "unknown"
#endif
#ifndef SIDE_BY_SIDE_FLAGS
#define SIDE_BY_SIDE_FLAGS "unknown"
#endif

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double process_cpu_seconds() {
  return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

// Context switches of the whole process, voluntary (a thread slept) and not (it was preempted).
long process_switches() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_nvcsw + u.ru_nivcsw;
}

// --- sizes -------------------------------------------------------------------------------------

struct Sizes {
  int empty_jobs = 1'000'000;
  std::size_t floats = 10'000'000;
  int passes = 100;
  int fib_runs = 20;  // fib(30) takes a few ms: the median of these is one sample
  int frames = 1'005;
  int bursts = 290;  // per sleep length
};

Sizes quick_sizes() {
  Sizes z;
  z.empty_jobs = 100'000;
  z.floats = 1'000'000;
  z.passes = 10;
  z.fib_runs = 3;
  z.frames = 20;
  z.bursts = 20;
  return z;
}

constexpr int kFibN = 30;
constexpr int kFibSerialBelow = 15;  // "serial below n = 15": fib(14) and smaller run inline
constexpr int kStages = 8;
constexpr int kChunks = 208;  // per stage: 1,664 chunks a frame
constexpr int kBurstChunks = 64;
constexpr double kBurstChunkUs = 0.5;

// --- CPUs and pinning --------------------------------------------------------------------------
//
// One rule for every library: participant 0 (the thread that submits and waits) on the first CPU
// of the process's mask, participant k on CPU k (round-robin past the end). Spindle applies the
// same rule itself (Config::pin_workers and pin_main_thread, its defaults).

std::vector<int> g_cpus;  // the process's CPUs at start, before anything pins
std::atomic<int> g_pin_failures{0};

std::vector<int> read_process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

void pin_participant(std::size_t index) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(g_cpus[index % g_cpus.size()], &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
    g_pin_failures.fetch_add(1, std::memory_order_relaxed);
  }
}

// --- per-thread tallies --------------------------------------------------------------------------
//
// Jobs bump a counter on their thread's own cache line (a plain load/add/store: one writer per
// slot), so the checks can count executed jobs and the threads that ran them at ~1 ns a job, the
// same for every library. A thread claims a slot on first use and frees it when it exits, since
// each measurement starts new worker threads.

constexpr int kTallySlots = 1024;
struct alignas(64) TallySlot {
  std::atomic<std::uint64_t> count{0};
};
TallySlot g_tally[kTallySlots];
std::atomic<int> g_tally_used{0};
thread_local int t_tally_slot = -1;  // constant-initialised: no TLS guard on the hot path

// Leaked on purpose: oneTBB's workers may exit after static destructors have run.
std::mutex& tally_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
std::vector<int>& free_tally_slots() {
  static auto* slots = new std::vector<int>;
  return *slots;
}

struct TallyRelease {
  int slot = -1;
  ~TallyRelease() {
    if (slot < 0) return;
    std::lock_guard lock(tally_mutex());
    free_tally_slots().push_back(slot);
  }
};

[[gnu::noinline]] int claim_tally_slot() {
  static thread_local TallyRelease release;
  int slot = -1;
  {
    std::lock_guard lock(tally_mutex());
    auto& slots = free_tally_slots();
    if (!slots.empty()) {
      slot = slots.back();
      slots.pop_back();
    } else {
      slot = g_tally_used.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (slot >= kTallySlots) {
    std::fprintf(stderr, "side_by_side: more than %d live threads\n", kTallySlots);
    std::abort();
  }
  release.slot = slot;
  t_tally_slot = slot;
  return slot;
}

int my_tally_slot() {
  return t_tally_slot >= 0 ? t_tally_slot : claim_tally_slot();
}

inline void tally() {
  std::atomic<std::uint64_t>& count = g_tally[my_tally_slot()].count;
  count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

std::vector<std::uint64_t> tally_snapshot() {
  std::vector<std::uint64_t> counts(kTallySlots);
  const int used = std::min(g_tally_used.load(std::memory_order_relaxed), kTallySlots);
  for (int i = 0; i < used; ++i) counts[i] = g_tally[i].count.load(std::memory_order_relaxed);
  return counts;
}

struct TallyDelta {
  std::uint64_t total = 0;
  int threads = 0;  // slots that ran anything
  std::vector<std::uint64_t> per_slot;
};

TallyDelta tally_since(const std::vector<std::uint64_t>& before) {
  TallyDelta d;
  d.per_slot = tally_snapshot();
  for (int i = 0; i < kTallySlots; ++i) {
    d.per_slot[i] -= before[i];
    d.total += d.per_slot[i];
    d.threads += d.per_slot[i] != 0 ? 1 : 0;
  }
  return d;
}

// --- the work ----------------------------------------------------------------------------------

// noipa: every contender calls the same out-of-line loop on its sub-ranges, so the serial
// baseline cannot be vectorised differently or fused across passes (DESIGN.md, "Fair
// benchmarks").
__attribute__((noipa)) void light_update(float* x, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) x[i] = x[i] * 1.0001f + 0.5f;
}

__attribute__((noipa)) long fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

// A chain of dependent multiplies: its length is fixed per chunk and no compiler can shorten it.
__attribute__((noipa)) std::uint64_t int_work(std::uint64_t iterations, std::uint64_t v) {
  for (std::uint64_t i = 0; i < iterations; ++i) v = (v ^ (v >> 31)) * 0x9e3779b97f4a7c15ull;
  return v;
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double g_iterations_per_us = 0;

void calibrate_int_work() {
  std::uint64_t iterations = 1u << 16;
  double best_us = 0;
  for (;;) {
    const auto start = Clock::now();
    volatile std::uint64_t sink = int_work(iterations, 1);
    (void)sink;
    best_us = seconds_since(start) * 1e6;
    if (best_us > 10'000) break;
    iterations *= 2;
  }
  for (int i = 0; i < 4; ++i) {
    const auto start = Clock::now();
    volatile std::uint64_t sink = int_work(iterations, 1);
    (void)sink;
    best_us = std::min(best_us, seconds_since(start) * 1e6);
  }
  g_iterations_per_us = static_cast<double>(iterations) / best_us;
}

// (d) The frame graph. Chunk (s, c) of a chain stage (1-3) seeds its work with the output of
// chunk (s-1, c) and checks that stage s-1 has finished, so a dependency the scheduler breaks
// shows up as a wrong output or a counted violation.
struct FrameGraph {
  std::uint64_t iterations[kStages][kChunks];
  std::uint64_t seed[kStages][kChunks];
  std::uint64_t expected[kStages][kChunks];
  std::uint64_t out[kStages][kChunks];
  struct alignas(64) Done {
    std::atomic<int> chunks{0};
  } done[kStages];
  std::atomic<int> order_violations{0};
};
FrameGraph g_frame;

constexpr bool follows_previous_stage(int s) {
  return s >= 1 && s <= 3;
}

void run_chunk(int s, int c) {
  std::uint64_t seed = g_frame.seed[s][c];
  if (follows_previous_stage(s)) {
    if (g_frame.done[s - 1].chunks.load(std::memory_order_relaxed) != kChunks) {
      g_frame.order_violations.fetch_add(1, std::memory_order_relaxed);
    }
    seed ^= g_frame.out[s - 1][c];
  }
  g_frame.out[s][c] = int_work(g_frame.iterations[s][c], seed | 1);
  g_frame.done[s].chunks.fetch_add(1, std::memory_order_relaxed);
}

void reset_frame() {
  std::memset(g_frame.out, 0, sizeof(g_frame.out));
  for (auto& d : g_frame.done) d.chunks.store(0, std::memory_order_relaxed);
  g_frame.order_violations.store(0, std::memory_order_relaxed);
}

void run_frame_serially() {
  for (int s = 0; s < kStages; ++s) {
    for (int c = 0; c < kChunks; ++c) run_chunk(s, c);
  }
}

// Chunk sizes 2-20 us from splitmix64 of a fixed seed: 11 us on average, ~18 ms a frame.
void build_frame_graph() {
  std::uint64_t state = 0x5eed'f4a3'e000'0001ull;
  for (int s = 0; s < kStages; ++s) {
    for (int c = 0; c < kChunks; ++c) {
      const double unit = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
      g_frame.iterations[s][c] =
          static_cast<std::uint64_t>((2.0 + 18.0 * unit) * g_iterations_per_us);
      g_frame.seed[s][c] = splitmix64(state);
    }
  }
  reset_frame();
  run_frame_serially();
  std::memcpy(g_frame.expected, g_frame.out, sizeof(g_frame.out));
}

std::string frame_problem() {
  if (g_frame.order_violations.load() != 0) {
    return std::to_string(g_frame.order_violations.load()) +
           " chunks started before their stage's "
           "predecessor had finished";
  }
  for (int s = 0; s < kStages; ++s) {
    const int done = g_frame.done[s].chunks.load();
    if (done != kChunks) {
      return "stage " + std::to_string(s) + " ran " + std::to_string(done) + " chunks of " +
             std::to_string(kChunks);
    }
  }
  if (std::memcmp(g_frame.out, g_frame.expected, sizeof(g_frame.out)) != 0) {
    return "chunk outputs differ from the serial frame's";
  }
  return {};
}

// (e) The bursts: 64 chunks of 0.5 us.
struct BurstData {
  std::uint64_t iterations = 0;
  std::uint64_t out[kBurstChunks];
  std::uint64_t expected[kBurstChunks];
};
BurstData g_burst;
double g_burst_work_s = 0;  // one burst run serially, hot: the work subtracted from idle CPU

struct BurstChunks {
  void operator()(std::size_t begin, std::size_t end) const {
    for (std::size_t i = begin; i < end; ++i) g_burst.out[i] = int_work(g_burst.iterations, i + 1);
  }
};
const BurstChunks kBurst{};

void build_bursts() {
  g_burst.iterations = static_cast<std::uint64_t>(kBurstChunkUs * g_iterations_per_us);
  kBurst(0, kBurstChunks);
  std::memcpy(g_burst.expected, g_burst.out, sizeof(g_burst.out));
  std::vector<double> times;
  for (int i = 0; i < 200; ++i) {
    const auto start = Clock::now();
    kBurst(0, kBurstChunks);
    times.push_back(seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  g_burst_work_s = times[times.size() / 2];
}

// --- the contenders ------------------------------------------------------------------------------
//
// Each offers the same five operations, written the way its library's documentation does them:
//   int  empty_jobs(count)  submit `count` empty jobs from one participant, wait; returns the
//                           submitting thread's tally slot
//   auto loop(n, fn)        a callable running fn(begin, end) over [0, n) with default partitioning
//   long fib(n)
//   auto frame()            a callable running one frame of the graph

class SerialContender {
 public:
  explicit SerialContender(std::uint32_t) {}
  int empty_jobs(int count) {
    for (int i = 0; i < count; ++i) tally();
    return my_tally_slot();
  }
  template <class F>
  auto loop(std::size_t n, const F& fn) {
    return [n, &fn] { fn(0, n); };
  }
  long fib(int n) { return fib_serial(n); }
  auto frame() {
    return [] { run_frame_serially(); };
  }
};

void spindle_log(void*, spindle::jobs::LogLevel, const char* message) {
  // Each JobSystem logs its capacity overflow once; say each distinct message once per run.
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard lock(mutex);
  if (seen.insert(message).second) std::fprintf(stderr, "[spindle] %s\n", message);
}

class SpindleContender {
 public:
  // `timed`: Config::time_jobs, Spindle's per-job timing (two TSC reads per job, on by default;
  // none of the others times its tasks).
  SpindleContender(std::uint32_t participants, spindle::jobs::Mode mode, bool timed = true)
      : js_(config(participants, mode, timed)) {}

  int empty_jobs(int count) {
    spindle::jobs::Counter counter;
    for (int i = 0; i < count; ++i) js_.run(counter, {"empty"}, [] { tally(); });
    js_.wait(counter);
    return my_tally_slot();
  }
  std::uint64_t inline_overflows() const { return js_.stats().inline_overflows; }
  // Blocking ranges started without waking a worker (Config::skip_wakes_for_short_ranges).
  std::uint64_t ranges_alone() const { return js_.stats().ranges_alone; }
  // Times a participant was woken by another thread, all participants together.
  std::uint64_t wakes() const {
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < js_.participant_count(); ++i) sum += js_.worker_stats(i).wakes;
    return sum;
  }

  template <class F>
  auto loop(std::size_t n, const F& fn) {
    return [this, n, &fn] { js_.parallel_for_range(0, n, 0, fn); };
  }

  long fib(int n) {
    if (n < kFibSerialBelow) return fib_serial(n);
    long a = 0;
    spindle::jobs::Counter counter;
    js_.run(counter, {"fib"}, [this, &a, n] { a = fib(n - 1); });
    const long b = fib(n - 2);
    js_.wait(counter);
    return a + b;
  }

  // A job per chunk; the chain through run_after, so no thread waits between stages.
  auto frame() {
    return [this] {
      spindle::jobs::Counter done[kStages];
      for (int s = 0; s < kStages; ++s) {
        const spindle::jobs::JobDesc desc{"chunk", static_cast<std::uint16_t>(s)};
        for (int c = 0; c < kChunks; ++c) {
          if (follows_previous_stage(s)) {
            js_.run_after(done[s - 1], done[s], desc, [s, c] { run_chunk(s, c); });
          } else {
            js_.run(done[s], desc, [s, c] { run_chunk(s, c); });
          }
        }
      }
      spindle::jobs::Counter* const all[kStages] = {&done[0], &done[1], &done[2], &done[3],
                                                    &done[4], &done[5], &done[6], &done[7]};
      js_.wait(std::span<spindle::jobs::Counter* const>(all));
    };
  }

 private:
  static spindle::jobs::Config config(std::uint32_t participants, spindle::jobs::Mode mode,
                                      bool timed) {
    spindle::jobs::Config config;  // defaults otherwise: pinning, 4,096 job slots
    config.time_jobs = timed;
    config.mode = mode;
    config.workers = participants;
    config.log = spindle_log;
    return config;
  }
  spindle::jobs::JobSystem js_;
};

// enkiTS has no affinity setting; its thread-start callback runs on each new task thread.
void pin_enkits_thread(std::uint32_t thread_num) {
  pin_participant(thread_num);
}

class EnkitsContender {
 public:
  explicit EnkitsContender(std::uint32_t participants) {
    enki::TaskSchedulerConfig config;
    config.numTaskThreadsToCreate = participants - 1;
    config.profilerCallbacks.threadStart = pin_enkits_thread;
    ts_.Initialize(config);
  }

  // enkiTS has no group or counter: a job is a task set of size 1 that must stay alive until it
  // completes, so the jobs are preallocated (untimed), each added to the pipe, then each waited
  // for. A full pipe (256 per thread) runs the task inline, as Spindle's full pool does.
  void prepare_empty(int count) { empty_tasks_.reset(new EmptyTask[count]); }
  int empty_jobs(int count) {
    for (int i = 0; i < count; ++i) ts_.AddTaskSetToPipe(&empty_tasks_[i]);
    for (int i = 0; i < count; ++i) ts_.WaitforTask(&empty_tasks_[i]);
    return my_tally_slot();
  }

  template <class F>
  auto loop(std::size_t n, const F& fn) {
    auto task = std::make_unique<RangeTask<F>>();
    task->m_SetSize = static_cast<std::uint32_t>(n);  // m_MinRange stays 1: enkiTS partitions
    task->fn = &fn;
    return [this, task = std::move(task)] {
      ts_.AddTaskSetToPipe(task.get());
      ts_.WaitforTask(task.get());
    };
  }

  long fib(int n) {
    if (n < kFibSerialBelow) return fib_serial(n);
    FibTask child;
    child.self = this;
    child.n = n - 1;
    ts_.AddTaskSetToPipe(&child);
    const long b = fib(n - 2);
    ts_.WaitforTask(&child);
    return child.result + b;
  }

  // A task set per stage over its chunks; the chain through enki::Dependency.
  auto frame() {
    auto graph = std::make_unique<StageTask[]>(kStages);
    for (int s = 0; s < kStages; ++s) {
      graph[s].stage = s;
      graph[s].m_SetSize = kChunks;
      if (follows_previous_stage(s)) graph[s].SetDependency(graph[s].after, &graph[s - 1]);
    }
    return [this, graph = std::move(graph)] {
      ts_.AddTaskSetToPipe(&graph[0]);
      for (int s = 4; s < kStages; ++s) ts_.AddTaskSetToPipe(&graph[s]);
      ts_.WaitforTask(&graph[3]);
      for (int s = 4; s < kStages; ++s) ts_.WaitforTask(&graph[s]);
    };
  }

 private:
  struct EmptyTask : enki::ITaskSet {
    void ExecuteRange(enki::TaskSetPartition, std::uint32_t) override { tally(); }
  };
  template <class F>
  struct RangeTask : enki::ITaskSet {
    const F* fn = nullptr;
    void ExecuteRange(enki::TaskSetPartition range, std::uint32_t) override {
      (*fn)(range.start, range.end);
    }
  };
  struct FibTask : enki::ITaskSet {
    EnkitsContender* self = nullptr;
    int n = 0;
    long result = 0;
    void ExecuteRange(enki::TaskSetPartition, std::uint32_t) override { result = self->fib(n); }
  };
  struct StageTask : enki::ITaskSet {
    int stage = 0;
    enki::Dependency after;  // on the previous stage, for stages 1-3
    void ExecuteRange(enki::TaskSetPartition range, std::uint32_t) override {
      for (std::uint32_t c = range.start; c < range.end; ++c) run_chunk(stage, static_cast<int>(c));
    }
  };

  enki::TaskScheduler ts_;
  std::unique_ptr<EmptyTask[]> empty_tasks_;
};

// oneTBB: one arena of N slots (slot 0 reserved for the main thread) and one of 1, both made in
// main() before anything pins the main thread. An observer pins each worker to the CPU of its
// arena slot whenever it joins.
tbb::task_arena* g_tbb_arena = nullptr;
tbb::task_arena* g_tbb_arena_single = nullptr;

class TbbPinner : public tbb::task_scheduler_observer {
 public:
  explicit TbbPinner(tbb::task_arena& arena) : tbb::task_scheduler_observer(arena) {
    observe(true);
  }
  ~TbbPinner() override { observe(false); }  // before the base: no call into a half-dead object
  void on_scheduler_entry(bool is_worker) override {
    if (is_worker) {
      pin_participant(static_cast<std::size_t>(tbb::this_task_arena::current_thread_index()));
    }
  }
};

long fib_tbb(int n) {
  if (n < kFibSerialBelow) return fib_serial(n);
  long a = 0;
  tbb::task_group group;
  group.run([&a, n] { a = fib_tbb(n - 1); });
  const long b = fib_tbb(n - 2);
  group.wait();
  return a + b;
}

void tbb_stage(int s) {
  tbb::parallel_for(tbb::blocked_range<int>(0, kChunks), [s](const tbb::blocked_range<int>& r) {
    for (int c = r.begin(); c < r.end(); ++c) run_chunk(s, c);
  });
}

class TbbContender {
 public:
  explicit TbbContender(std::uint32_t participants)
      : arena_(participants == 1 ? g_tbb_arena_single : g_tbb_arena) {}

  int empty_jobs(int count) {
    int slot = -1;
    arena_->execute([&] {
      tbb::task_group group;
      for (int i = 0; i < count; ++i) group.run([] { tally(); });
      group.wait();
      slot = my_tally_slot();
    });
    return slot;
  }

  template <class F>
  auto loop(std::size_t n, const F& fn) {
    return [this, n, &fn] {
      arena_->execute([n, &fn] {
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, n),
            [&fn](const tbb::blocked_range<std::size_t>& r) { fn(r.begin(), r.end()); });
      });
    };
  }

  long fib(int n) {
    long result = 0;
    arena_->execute([&] { result = fib_tbb(n); });
    return result;
  }

  // The chain as one task running its stages' parallel_fors in turn, beside a task per free stage.
  auto frame() {
    return [this] {
      arena_->execute([] {
        tbb::task_group group;
        group.run([] {
          for (int s = 0; s < 4; ++s) tbb_stage(s);
        });
        for (int s = 4; s < kStages; ++s) group.run([s] { tbb_stage(s); });
        group.wait();
      });
    };
  }

 private:
  tbb::task_arena* arena_;
};

// Taskflow's workers are all executor threads: the main thread submits and blocks on a future,
// it does not run tasks. So N participants are N workers; worker w is pinned to CPU w, in the
// prologue, which runs on the worker itself (Worker::thread() may still be being assigned then).
class TaskflowPinner : public tf::WorkerInterface {
 public:
  void scheduler_prologue(tf::Worker& worker) override { pin_participant(worker.id()); }
  void scheduler_epilogue(tf::Worker&, std::exception_ptr) override {}
};

class TaskflowContender {
 public:
  explicit TaskflowContender(std::uint32_t participants)
      : executor_(participants, tf::make_worker_interface<TaskflowPinner>()) {}

  // A task group may only be made by a worker, and its submitter then helps (corun) like the
  // other libraries' waiting thread: one worker submits every job into its own queue (256 slots,
  // then Taskflow's shared overflow queues).
  int empty_jobs(int count) {
    return executor_
        .async([this, count] {
          tf::TaskGroup group = executor_.task_group();
          for (int i = 0; i < count; ++i) group.silent_async([] { tally(); });
          group.corun();
          return my_tally_slot();
        })
        .get();
  }

  template <class F>
  auto loop(std::size_t n, const F& fn) {
    auto flow = std::make_unique<tf::Taskflow>();
    flow->for_each_by_index(tf::IndexRange<std::size_t>(0, n, 1),
                            [&fn](tf::IndexRange<std::size_t> r) { fn(r.begin(), r.end()); });
    return [this, flow = std::move(flow)] { executor_.run(*flow).wait(); };
  }

  long fib(int n) {
    return executor_.async([this, n] { return fib_in_worker(n); }).get();
  }

  // A for_each_by_index task per stage; the chain through precede().
  auto frame() {
    auto flow = std::make_unique<tf::Taskflow>();
    tf::Task stages[kStages];
    for (int s = 0; s < kStages; ++s) {
      stages[s] =
          flow->for_each_by_index(tf::IndexRange<int>(0, kChunks, 1), [s](tf::IndexRange<int> r) {
            for (int c = r.begin(); c < r.end(); ++c) run_chunk(s, c);
          });
      if (follows_previous_stage(s)) stages[s - 1].precede(stages[s]);
    }
    return [this, flow = std::move(flow)] { executor_.run(*flow).wait(); };
  }

 private:
  long fib_in_worker(int n) {
    if (n < kFibSerialBelow) return fib_serial(n);
    long a = 0;
    tf::TaskGroup group = executor_.task_group();
    group.silent_async([this, &a, n] { a = fib_in_worker(n - 1); });
    const long b = fib_in_worker(n - 2);
    group.corun();
    return a + b;
  }

  tf::Executor executor_;
};

// --- contenders by name ------------------------------------------------------------------------

enum Contender { kSerial, kSpindleDynamic, kSpindleStatic, kEnkits, kTbb, kTaskflow, kContenders };
constexpr const char* kContenderIds[kContenders] = {
    "serial", "spindle-dynamic", "spindle-static", "enkits", "tbb", "taskflow"};
constexpr const char* kContenderTitles[kContenders] = {
    "serial", "Spindle dynamic", "Spindle static", "enkiTS", "oneTBB", "Taskflow"};

template <class Fn>
auto with_contender(Contender id, std::uint32_t participants, Fn&& fn) {
  switch (id) {
    case kSpindleDynamic: {
      SpindleContender s(participants, spindle::jobs::Mode::Dynamic);
      return fn(s);
    }
    case kSpindleStatic: {
      SpindleContender s(participants, spindle::jobs::Mode::Static);
      return fn(s);
    }
    case kEnkits: {
      EnkitsContender s(participants);
      return fn(s);
    }
    case kTbb: {
      TbbContender s(participants);
      return fn(s);
    }
    case kTaskflow: {
      TaskflowContender s(participants);
      return fn(s);
    }
    default: {
      SerialContender s(participants);
      return fn(s);
    }
  }
}

// --- measurements --------------------------------------------------------------------------------

enum Metric {
  kEmptyNs,
  kEmptyNsSingle,
  kEmptyColdNs,
  kEmptyColdNsSingle,
  kEmptySubmitterPct,
  kEmptySubmitterPctSingle,
  kEmptyInlinePct,
  kEmptyInlinePctSingle,
  kEmptyWakesPerK,
  kEmptyUntimedNs,
  kEmptyUntimedNsSingle,
  kLoopMs,
  kLoopThreads,
  kFibMs,
  kFrameMedianMs,
  kFrameP99OverMedian,
  kIdleMsPerS,
  kIdleRawMsPerS,
  kIdleMainMsPerS,
  kIdleSwitchesPerBurst,
  kIdleAlonePct,
  kBurstAfter1msUs,
  kBurstAfter10msUs,
  kMetrics
};

struct Sample {
  std::vector<std::pair<Metric, double>> values;
  std::string failure;  // empty when every check passed
};

double median_of(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// (a) Twice on the same scheduler; the second pass is the one in the table. The first finds
// allocating schedulers (oneTBB, Taskflow) without memory for a million tasks, and what it costs
// then depends on what ran before in this process; it is reported as a detail.
template <class S>
Sample measure_empty(S& s, int count, bool single) {
  if constexpr (requires { s.prepare_empty(count); }) s.prepare_empty(count);
  Sample out;
  double ns[2] = {};
  double submitter_pct = 0;
  double inline_pct = std::nan("");
  double wakes_per_k = std::nan("");
  for (double& ns_per_job : ns) {
    std::uint64_t overflows = 0;
    if constexpr (requires { s.inline_overflows(); }) overflows = s.inline_overflows();
    std::uint64_t wakes = 0;
    if constexpr (requires { s.wakes(); }) wakes = s.wakes();
    const auto before = tally_snapshot();
    const auto start = Clock::now();
    const int submitter = s.empty_jobs(count);
    ns_per_job = seconds_since(start) * 1e9 / count;
    const TallyDelta ran = tally_since(before);
    if (ran.total != static_cast<std::uint64_t>(count)) {
      out.failure = std::to_string(ran.total) + " of " + std::to_string(count) + " empty jobs ran";
      return out;
    }
    submitter_pct = 100.0 * static_cast<double>(ran.per_slot[submitter]) / count;
    if constexpr (requires { s.inline_overflows(); }) {
      inline_pct = 100.0 * static_cast<double>(s.inline_overflows() - overflows) / count;
    }
    if constexpr (requires { s.wakes(); }) {
      wakes_per_k = 1000.0 * static_cast<double>(s.wakes() - wakes) / count;
    }
  }
  out.values.push_back({single ? kEmptyNsSingle : kEmptyNs, ns[1]});
  out.values.push_back({single ? kEmptyColdNsSingle : kEmptyColdNs, ns[0]});
  out.values.push_back({single ? kEmptySubmitterPctSingle : kEmptySubmitterPct, submitter_pct});
  if (!std::isnan(inline_pct)) {
    out.values.push_back({single ? kEmptyInlinePctSingle : kEmptyInlinePct, inline_pct});
  }
  if (!single && !std::isnan(wakes_per_k)) out.values.push_back({kEmptyWakesPerK, wakes_per_k});
  return out;
}

// (b)
std::vector<float> g_floats;
std::vector<float> g_floats_expected;

void fill_floats() {
  for (std::size_t i = 0; i < g_floats.size(); ++i) {
    g_floats[i] = static_cast<float>(i % 1000) * 0.001f;
  }
}

template <class S>
Sample measure_loop(S& s, const Sizes& z) {
  fill_floats();
  float* const x = g_floats.data();
  const auto update = [x](std::size_t begin, std::size_t end) {
    tally();
    light_update(x, begin, end);
  };
  auto loop = s.loop(g_floats.size(), update);
  const auto before = tally_snapshot();
  const auto start = Clock::now();
  for (int p = 0; p < z.passes; ++p) loop();
  const double seconds = seconds_since(start);
  const TallyDelta ran = tally_since(before);

  Sample out;
  if (std::memcmp(g_floats.data(), g_floats_expected.data(), g_floats.size() * sizeof(float)) !=
      0) {
    out.failure = "the array differs from the serial loop's";
    return out;
  }
  out.values.push_back({kLoopMs, seconds * 1e3});
  out.values.push_back({kLoopThreads, static_cast<double>(ran.threads)});
  return out;
}

// (c)
template <class S>
Sample measure_fib(S& s, const Sizes& z) {
  const long expected = fib_serial(kFibN);
  std::vector<double> ms;
  Sample out;
  for (int r = 0; r < z.fib_runs; ++r) {
    const auto start = Clock::now();
    const long value = s.fib(kFibN);
    ms.push_back(seconds_since(start) * 1e3);
    if (value != expected) {
      out.failure = "fib(30) = " + std::to_string(value) + ", not " + std::to_string(expected);
      return out;
    }
  }
  out.values.push_back({kFibMs, median_of(ms)});
  return out;
}

// (d)
template <class S>
Sample measure_frames(S& s, const Sizes& z) {
  auto frame = s.frame();
  std::vector<double> ms;
  Sample out;
  for (int f = 0; f < z.frames; ++f) {
    reset_frame();
    const auto start = Clock::now();
    frame();
    ms.push_back(seconds_since(start) * 1e3);
    out.failure = frame_problem();
    if (!out.failure.empty()) {
      out.failure = "frame " + std::to_string(f) + ": " + out.failure;
      return out;
    }
  }
  std::sort(ms.begin(), ms.end());
  const double median = median_of(ms);
  const std::size_t p99 = static_cast<std::size_t>(std::ceil(0.99 * ms.size())) - 1;
  out.values.push_back({kFrameMedianMs, median});
  out.values.push_back({kFrameP99OverMedian, ms[p99] / median});
  return out;
}

// (e) Process CPU over the 10 ms phase (sleeps, bursts and all threads) less the bursts' own
// work, per wall second; then the same bursts after 1 ms sleeps, for their latency only.
template <class S>
Sample measure_idle(S& s, const Sizes& z) {
  auto loop = s.loop(kBurstChunks, kBurst);
  Sample out;
  auto phase = [&](std::chrono::microseconds gap, std::vector<double>& latency_us) {
    for (int b = 0; b < z.bursts; ++b) {
      std::memset(g_burst.out, 0, sizeof(g_burst.out));
      std::this_thread::sleep_for(gap);
      const auto start = Clock::now();
      loop();
      latency_us.push_back(seconds_since(start) * 1e6);
      if (std::memcmp(g_burst.out, g_burst.expected, sizeof(g_burst.out)) != 0) {
        out.failure = "burst " + std::to_string(b) + " left chunks undone or wrong";
        return false;
      }
    }
    return true;
  };
  std::vector<double> after_10ms;
  std::vector<double> after_1ms;
  const double cpu0 = process_cpu_seconds();
  const double main0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
  const long switches0 = process_switches();
  const auto wall0 = Clock::now();
  if (!phase(std::chrono::milliseconds(10), after_10ms)) return out;
  const double cpu = process_cpu_seconds() - cpu0;
  const double main_cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - main0;
  const long switches = process_switches() - switches0;
  const double wall = seconds_since(wall0);
  if (!phase(std::chrono::milliseconds(1), after_1ms)) return out;

  out.values.push_back({kIdleMsPerS, (cpu - z.bursts * g_burst_work_s) / wall * 1e3});
  out.values.push_back({kIdleRawMsPerS, cpu / wall * 1e3});
  out.values.push_back({kIdleMainMsPerS, main_cpu / wall * 1e3});
  out.values.push_back({kIdleSwitchesPerBurst, static_cast<double>(switches) / z.bursts});
  if constexpr (requires { s.ranges_alone(); }) {
    out.values.push_back(
        {kIdleAlonePct, 100.0 * static_cast<double>(s.ranges_alone()) / (2.0 * z.bursts)});
  }
  out.values.push_back({kBurstAfter10msUs, median_of(after_10ms)});
  out.values.push_back({kBurstAfter1msUs, median_of(after_1ms)});
  return out;
}

// --- the run -------------------------------------------------------------------------------------

struct Options {
  std::uint32_t threads = 0;
  int reps = 5;
  std::string only = "abcde";
  std::vector<Contender> contenders;
  bool quick = false;
};

std::vector<double> g_samples[kMetrics][kContenders];
bool g_failed[5][kContenders] = {};  // by workload a-e
int g_failures = 0;

void record(char workload, Contender who, const Sample& sample) {
  if (!sample.failure.empty()) {
    std::fprintf(stderr, "CHECK FAILED: %s, workload %c: %s\n", kContenderIds[who], workload,
                 sample.failure.c_str());
    g_failed[workload - 'a'][who] = true;
    ++g_failures;
    return;
  }
  for (const auto& [metric, value] : sample.values) g_samples[metric][who].push_back(value);
}

void run_workload(char workload, const Options& o, const Sizes& z) {
  std::vector<Contender> order;
  for (Contender c : o.contenders) {
    if (workload == 'a' && c == kSerial) continue;  // nothing to schedule
    order.push_back(c);
  }
  for (int rep = 0; rep < o.reps; ++rep) {
    std::fprintf(stderr, "  %c) rep %d/%d\n", workload, rep + 1, o.reps);
    for (std::size_t k = 0; k < order.size(); ++k) {
      const Contender who = order[(k + static_cast<std::size_t>(rep)) % order.size()];
      if (g_failed[workload - 'a'][who]) continue;  // a broken scheduler is not timed again
      switch (workload) {
        case 'a':
          record('a', who, with_contender(who, o.threads, [&](auto& s) {
                   return measure_empty(s, z.empty_jobs, false);
                 }));
          record('a', who, with_contender(who, 1, [&](auto& s) {
                   return measure_empty(s, z.empty_jobs, true);
                 }));
          if (who == kSpindleDynamic) {
            // The same without Spindle's per-job timing, which the others do not have.
            for (const bool single : {false, true}) {
              SpindleContender untimed(single ? 1 : o.threads, spindle::jobs::Mode::Dynamic, false);
              Sample sample = measure_empty(untimed, z.empty_jobs, single);
              Sample renamed;
              renamed.failure = sample.failure;
              for (const auto& [metric, value] : sample.values) {
                if (metric == kEmptyNs) renamed.values.push_back({kEmptyUntimedNs, value});
                if (metric == kEmptyNsSingle)
                  renamed.values.push_back({kEmptyUntimedNsSingle, value});
              }
              record('a', who, renamed);
            }
          }
          break;
        case 'b':
          record('b', who,
                 with_contender(who, o.threads, [&](auto& s) { return measure_loop(s, z); }));
          break;
        case 'c':
          record('c', who,
                 with_contender(who, o.threads, [&](auto& s) { return measure_fib(s, z); }));
          break;
        case 'd':
          record('d', who,
                 with_contender(who, o.threads, [&](auto& s) { return measure_frames(s, z); }));
          break;
        case 'e':
          record('e', who,
                 with_contender(who, o.threads, [&](auto& s) { return measure_idle(s, z); }));
          break;
      }
    }
  }
}

// --- the report ----------------------------------------------------------------------------------

std::string format_value(double v, int decimals) {
  if (std::isnan(v)) return "-";
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", v >= 1000 ? 0 : decimals, v);
  std::string s = text;
  if (v >= 10000) {
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) {
      s.insert(static_cast<std::size_t>(i), ",");
    }
  }
  return s;
}

struct Row {
  char workload;
  std::string label;
  Metric metric;
  int decimals;
  bool speedup;      // serial median / this median, serial's cell "1"
  bool serial_cell;  // whether serial has a value of its own
};

std::string cell(const Row& row, Contender who, const std::vector<bool>& ran, bool spread) {
  if (!row.serial_cell && who == kSerial) return "-";
  if (!ran[who]) return "n/r";
  if (g_failed[row.workload - 'a'][who]) return "FAIL";
  const auto& v = g_samples[row.metric][who];
  if (v.empty()) return "-";
  if (spread) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    if (row.speedup) {
      return format_value(*lo, row.decimals) + "-" + format_value(*hi, row.decimals) + " ms";
    }
    return format_value(*lo, row.decimals) + "-" + format_value(*hi, row.decimals);
  }
  if (!row.speedup) return format_value(median_of(v), row.decimals);
  if (who == kSerial) return "1";
  return format_value(median_of(g_samples[row.metric][kSerial]) / median_of(v), 2);
}

void print_table(const std::vector<Row>& rows, const std::vector<bool>& ran, const Options& o,
                 bool spread) {
  std::printf("| workload |");
  for (const char* title : kContenderTitles) std::printf(" %s |", title);
  std::printf("\n|---|---|---|---|---|---|---|\n");
  for (const Row& row : rows) {
    if (o.only.find(row.workload) == std::string::npos) continue;
    std::printf("| %s |", row.label.c_str());
    for (int k = 0; k < kContenders; ++k) {
      std::printf(" %s |", cell(row, static_cast<Contender>(k), ran, spread).c_str());
    }
    std::printf("\n");
  }
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

std::string load_average() {
  double load[3] = {};
  if (getloadavg(load, 3) != 3) return "unknown";
  char text[64];
  std::snprintf(text, sizeof(text), "%.2f %.2f %.2f", load[0], load[1], load[2]);
  return text;
}

void print_report(const Options& o, const Sizes& z, const std::string& load_at_start) {
  std::vector<bool> ran(kContenders, false);
  for (Contender c : o.contenders) ran[c] = true;
  const std::string n = std::to_string(o.threads);
  const std::string participants = n + (o.threads == 1 ? " participant" : " participants");
  const std::vector<Row> rows = {
      {'a', "a) empty job, " + participants + ", ns", kEmptyNs, 1, false, false},
      {'a', "a) empty job, 1 participant, ns", kEmptyNsSingle, 1, false, false},
      {'b', "b) parallel_for, speedup", kLoopMs, 2, true, true},
      {'c', "c) fib(30), speedup", kFibMs, 2, true, true},
      {'d', "d) frame median, speedup", kFrameMedianMs, 2, true, true},
      {'d', "d) frame p99 / median", kFrameP99OverMedian, 2, false, true},
      {'e', "e) idle CPU, ms per s", kIdleMsPerS, 1, false, true},
      {'e', "e) burst after 1 ms idle, us", kBurstAfter1msUs, 1, false, true},
      {'e', "e) burst after 10 ms idle, us", kBurstAfter10msUs, 1, false, true},
  };

  std::printf("\n## Job schedulers side by side: %s, %d reps (medians)%s\n\n", participants.c_str(),
              o.reps, o.quick ? ", --quick sizes" : "");
  std::printf(
      "%s, nproc %ld (this process may use %zu), --threads %u, load average %s at start, "
      "%s at end.\n",
      cpu_model().c_str(), sysconf(_SC_NPROCESSORS_ONLN), g_cpus.size(), o.threads,
      load_at_start.c_str(), load_average().c_str());
  std::printf(
      "Spindle %s (public header, installed library) | enkiTS %s | oneTBB %s (runtime %s) | "
      "Taskflow %d.%d.%d (%s).\n",
      SIDE_BY_SIDE_SPINDLE_COMMIT, SIDE_BY_SIDE_ENKITS_VERSION, TBB_VERSION_STRING,
      TBB_runtime_version(), TF_MAJOR_VERSION, TF_MINOR_VERSION, TF_PATCH_VERSION,
      SIDE_BY_SIDE_TASKFLOW_VERSION);
  std::printf(
      "g++ %s, -std=c++20 %s for the driver and enkiTS (Spindle's and oneTBB's libraries "
      "as installed).\n\n",
      __VERSION__, SIDE_BY_SIDE_FLAGS);
  print_table(rows, ran, o, false);

  auto detail = [&](char workload, const char* what, Metric metric, int decimals) {
    if (o.only.find(workload) == std::string::npos) return;
    std::printf("- %s:", what);
    for (Contender c : o.contenders) {
      const auto& v = g_samples[metric][c];
      if (v.empty()) continue;
      std::printf(" %s %s;", kContenderIds[c], format_value(median_of(v), decimals).c_str());
    }
    std::printf("\n");
  };
  std::printf(
      "\nSizes: a) %d jobs; b) %zu floats x %d passes; c) fib(%d) x %d runs; d) %d frames; "
      "e) %d bursts per sleep length. Work: %.1f iterations per us; a burst's own work "
      "%.1f us serially.\n\n",
      z.empty_jobs, z.floats, z.passes, kFibN, z.fib_runs, z.frames, z.bursts, g_iterations_per_us,
      g_burst_work_s * 1e6);
  detail('a', "a) first pass on a fresh scheduler, ns per job (N participants)", kEmptyColdNs, 1);
  detail('a', "a) first pass on a fresh scheduler, ns per job (1 participant)", kEmptyColdNsSingle,
         1);
  detail('a', "a) jobs run by the submitting thread, % (N participants)", kEmptySubmitterPct, 1);
  detail('a', "a) jobs run by the submitting thread, % (1 participant)", kEmptySubmitterPctSingle,
         1);
  detail('a', "a) Spindle jobs run inline, pool full, % (N participants)", kEmptyInlinePct, 1);
  detail('a', "a) Spindle jobs run inline, pool full, % (1 participant)", kEmptyInlinePctSingle, 1);
  detail('a', "a) Spindle participants woken by another thread, per 1,000 jobs (N participants)",
         kEmptyWakesPerK, 1);
  detail('a',
         "a) Spindle without its per-job timing (Config::time_jobs = false), ns per job (N "
         "participants)",
         kEmptyUntimedNs, 1);
  detail('a',
         "a) Spindle without its per-job timing (Config::time_jobs = false), ns per job (1 "
         "participant)",
         kEmptyUntimedNsSingle, 1);
  detail('b', "b) ms for all passes", kLoopMs, 1);
  detail('b', "b) threads that ran sub-ranges (median)", kLoopThreads, 0);
  detail('c', "c) ms per fib(30)", kFibMs, 2);
  detail('d', "d) median frame, ms", kFrameMedianMs, 2);
  detail('e', "e) process CPU incl. the bursts' work, ms per s", kIdleRawMsPerS, 1);
  detail('e', "e) of which the submitting thread's, ms per s", kIdleMainMsPerS, 1);
  detail('e', "e) context switches per burst, whole process", kIdleSwitchesPerBurst, 1);
  detail('e', "e) Spindle bursts started without waking a worker, % (both sleep lengths)",
         kIdleAlonePct, 1);
  if (o.reps > 1) {
    std::printf("\nSpread over the reps (min-max; speedup rows: the contender's own time):\n\n");
    print_table(rows, ran, o, true);
  }
  if (g_pin_failures.load() != 0) {
    std::printf("\nWARNING: %d worker threads could not be pinned.\n", g_pin_failures.load());
  }
  if (g_failures != 0) {
    std::printf("\n%d measurements FAILED their checks (see stderr).\n", g_failures);
  }
}

[[noreturn]] void usage(int status) {
  std::fprintf(status == 0 ? stdout : stderr,
               "usage: spindle_sched_side_by_side [--threads N] [--reps R] [--only a,b,c,d,e]\n"
               "  [--schedulers spindle-dynamic,spindle-static,enkits,tbb,taskflow,serial] "
               "[--quick]\n"
               "  --threads  participants incl. the main thread (default: CPUs of the process)\n"
               "  --reps     repetitions, interleaved across schedulers; medians reported (5)\n"
               "  --quick    small sizes, for a smoke test\n");
  std::exit(status);
}

Options parse(int argc, char** argv) {
  Options o;
  std::string schedulers = "serial,spindle-dynamic,spindle-static,enkits,tbb,taskflow";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(2);
      return argv[++i];
    };
    if (arg == "--threads") {
      o.threads = static_cast<std::uint32_t>(std::atoi(value().c_str()));
      if (o.threads < 1 || o.threads > spindle::jobs::kMaxWorkers) usage(2);
    } else if (arg == "--reps") {
      o.reps = std::atoi(value().c_str());
      if (o.reps < 1) usage(2);
    } else if (arg == "--only") {
      o.only.clear();
      for (char c : value()) {
        if (c >= 'a' && c <= 'e') {
          o.only += c;
        } else if (c != ',') {
          usage(2);
        }
      }
    } else if (arg == "--schedulers") {
      schedulers = value();
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "--help" || arg == "-h") {
      usage(0);
    } else {
      usage(2);
    }
  }
  bool chosen[kContenders] = {};
  std::size_t start = 0;
  while (start <= schedulers.size()) {
    const std::size_t comma = std::min(schedulers.find(',', start), schedulers.size());
    const std::string name = schedulers.substr(start, comma - start);
    start = comma + 1;
    if (name.empty()) continue;
    const auto* found = std::find_if(std::begin(kContenderIds), std::end(kContenderIds),
                                     [&](const char* id) { return name == id; });
    if (found == std::end(kContenderIds)) {
      std::fprintf(stderr, "unknown scheduler '%s'\n", name.c_str());
      usage(2);
    }
    chosen[found - std::begin(kContenderIds)] = true;
  }
  if (!chosen[kSerial] && o.only.find_first_of("bcd") != std::string::npos) {
    std::fprintf(stderr, "note: adding serial, the baseline of the speedups in b-d\n");
    chosen[kSerial] = true;
  }
  for (int k = 0; k < kContenders; ++k) {
    if (chosen[k]) o.contenders.push_back(static_cast<Contender>(k));
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  const Sizes z = o.quick ? quick_sizes() : Sizes{};
  const std::string load_at_start = load_average();
  g_cpus = read_process_cpus();
  if (o.threads == 0) {
    o.threads = static_cast<std::uint32_t>(
        std::min<std::size_t>(g_cpus.size(), spindle::jobs::kMaxWorkers));
  }
  if (o.threads > g_cpus.size()) {
    std::fprintf(stderr, "note: %u participants on %zu CPUs: they share CPUs round-robin\n",
                 o.threads, g_cpus.size());
  }

  // oneTBB first, from the unpinned main thread: it sizes its pool from the caller's affinity
  // mask. The global_control fixes the worker count; the warm-up starts the workers.
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, o.threads);
  tbb::task_arena arena(static_cast<int>(o.threads));
  tbb::task_arena arena_single(1);
  arena.initialize();
  arena_single.initialize();
  TbbPinner pinner(arena);
  g_tbb_arena = &arena;
  g_tbb_arena_single = &arena_single;
  arena.execute([] { tbb::parallel_for(0, 1 << 16, [](int) { tally(); }); });

  pin_participant(0);  // the main thread, for every contender and the serial loops alike
  calibrate_int_work();
  std::fprintf(stderr, "side_by_side: %u participants, %d reps%s\n", o.threads, o.reps,
               o.quick ? ", quick" : "");
  for (char workload : std::string("abcde")) {
    if (o.only.find(workload) == std::string::npos) continue;
    switch (workload) {
      case 'b':
        g_floats.assign(z.floats, 0.0f);
        fill_floats();
        for (int p = 0; p < z.passes; ++p) light_update(g_floats.data(), 0, g_floats.size());
        g_floats_expected = g_floats;
        break;
      case 'd':
        build_frame_graph();
        break;
      case 'e':
        build_bursts();
        break;
      default:
        break;
    }
    run_workload(workload, o, z);
  }
  print_report(o, z, load_at_start);
  return g_failures == 0 ? 0 : 1;
}
