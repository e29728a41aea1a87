// spindle_bench_jobs: the job system against oneTBB and a serial loop, in one binary, one run.
//
//   ./build/release/bench/spindle_bench_jobs                      # all workloads + summary table
//   ./build/release/bench/spindle_bench_jobs --benchmark_format=csv  # for scripts
//   ./build/release/bench/spindle_bench_jobs --benchmark_filter=fib
//
// Every benchmark is named <workload>/<backend>: workloads empty, parallel_for, fib, frame, idle;
// backends serial (plain loop), single, static, dynamic (Spindle's modes) and tbb (oneTBB's own
// API, not our Tbb mode). All run with the same compiler flags and the same participant count
// (one per CPU of the process). By default each runs 5 times and the summary uses medians.
#include <benchmark/benchmark.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "spindle/jobs/job_system.h"

namespace {

using spindle::jobs::Config;
using spindle::jobs::Counter;
using spindle::jobs::JobSystem;
using spindle::jobs::Mode;

using Clock = std::chrono::steady_clock;

std::uint32_t g_workers = 0;
tbb::task_arena* g_arena = nullptr;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Config config_for(Mode mode) {
  Config config;
  config.mode = mode;
  config.workers = g_workers;
  return config;
}

// --- (a) spawn and wait for 1,000,000 empty jobs ------------------------------------------------

constexpr int kEmptyJobs = 1'000'000;

// Wall time per job in ns (an inverted rate over "1e-9 jobs" comes out in ns).
benchmark::Counter ns_per_job(const benchmark::State& state) {
  return benchmark::Counter(
      static_cast<double>(kEmptyJobs) * static_cast<double>(state.iterations()) * 1e-9,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void empty_spindle(benchmark::State& state, Mode mode) {
  Config config = config_for(mode);
  // 64 Ki jobs in flight per participant (12 MiB of slots). The submitter outruns the thieves;
  // when its pool is full it runs the job inline (the defined overflow policy), reported below as
  // inline_pct. With 1 Mi slots nothing runs inline but every slot is cold in cache.
  config.jobs_per_worker = 1u << 16;
  JobSystem js(config);
  for (auto _ : state) {
    Counter counter;
    for (int i = 0; i < kEmptyJobs; ++i) js.run(counter, {"empty"}, [] {});
    js.wait(counter);
  }
  state.counters["ns_per_job"] = ns_per_job(state);
  state.counters["inline_pct"] = 100.0 * static_cast<double>(js.stats().inline_overflows) /
                                 (static_cast<double>(kEmptyJobs) * state.iterations());
}

void empty_tbb(benchmark::State& state) {
  for (auto _ : state) {
    g_arena->execute([] {
      tbb::task_group group;
      for (int i = 0; i < kEmptyJobs; ++i) group.run([] {});
      group.wait();
    });
  }
  state.counters["ns_per_job"] = ns_per_job(state);
}

// --- (b) parallel_for over 10,000,000 floats, light update, 100 repetitions ---------------------

constexpr std::size_t kFloats = 10'000'000;
constexpr int kSweeps = 100;

// noipa: every contender calls this same out-of-line loop, so the serial baseline cannot be
// fused across sweeps or vectorised differently from the sub-range calls (DESIGN.md, "Fair
// benchmarks").
__attribute__((noipa)) void light_update(float* x, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) x[i] = x[i] * 0.999f + 0.5f;
}

std::vector<float>& floats() {
  static std::vector<float> data(kFloats, 1.0f);
  return data;
}

void parallel_for_serial(benchmark::State& state) {
  float* x = floats().data();
  for (auto _ : state) {
    for (int s = 0; s < kSweeps; ++s) light_update(x, 0, kFloats);
    benchmark::DoNotOptimize(x[kFloats / 2]);
  }
}

void parallel_for_spindle(benchmark::State& state, Mode mode) {
  JobSystem js(config_for(mode));
  float* x = floats().data();
  for (auto _ : state) {
    for (int s = 0; s < kSweeps; ++s) {
      js.parallel_for_range(0, kFloats, 0,
                            [x](std::size_t b, std::size_t e) { light_update(x, b, e); });
    }
    benchmark::DoNotOptimize(x[kFloats / 2]);
  }
}

void parallel_for_tbb(benchmark::State& state) {
  float* x = floats().data();
  for (auto _ : state) {
    g_arena->execute([x] {
      for (int s = 0; s < kSweeps; ++s) {
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, kFloats),
            [x](const tbb::blocked_range<std::size_t>& r) { light_update(x, r.begin(), r.end()); });
      }
    });
    benchmark::DoNotOptimize(x[kFloats / 2]);
  }
}

// --- (c) recursive fib(30), a job per call above n = 15 -----------------------------------------

constexpr int kFibN = 30;
constexpr int kFibCutoff = 15;

long fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

long fib_spindle(JobSystem& js, int n) {
  if (n <= kFibCutoff) return fib_serial(n);
  long a = 0;
  Counter counter;
  js.run(counter, {"fib"}, [&js, &a, n] { a = fib_spindle(js, n - 1); });
  const long b = fib_spindle(js, n - 2);
  js.wait(counter);
  return a + b;
}

long fib_tbb(int n) {
  if (n <= kFibCutoff) return fib_serial(n);
  long a = 0;
  tbb::task_group group;
  group.run([&a, n] { a = fib_tbb(n - 1); });
  const long b = fib_tbb(n - 2);
  group.wait();
  return a + b;
}

void fib_serial_bench(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(fib_serial(kFibN));
}

void fib_spindle_bench(benchmark::State& state, Mode mode) {
  JobSystem js(config_for(mode));
  for (auto _ : state) benchmark::DoNotOptimize(fib_spindle(js, kFibN));
}

void fib_tbb_bench(benchmark::State& state) {
  for (auto _ : state) {
    g_arena->execute([] { benchmark::DoNotOptimize(fib_tbb(kFibN)); });
  }
}

// --- (d) a frame graph: 8 stages of 64-512 chunks of 2-20 us, some stages concurrent -------------
//
//   s0 -> {s1, s2} -> s3 -> {s4, s5, s6} -> s7
//
// Chunk work is arithmetic whose length is fixed per chunk (2-20 us, from a seeded generator),
// calibrated once so that every backend does the same work.

struct Stage {
  int chunks;
  int group;  // stages of one group run concurrently; groups run in order
};
constexpr Stage kStages[8] = {{64, 0},  {256, 1}, {128, 1}, {512, 2},
                              {128, 3}, {256, 3}, {96, 3},  {192, 4}};
constexpr int kGroups = 5;
constexpr int kFrames = 1000;

double g_iterations_per_us = 0;

std::vector<std::uint32_t>& chunk_iterations(int stage) {
  static std::vector<std::uint32_t> table[8];
  return table[stage];
}

// noipa: an opaque call (not even known to be pure) cannot move across the clock reads.
__attribute__((noipa)) float spin_work(std::uint32_t iterations, float seed) {
  float v = seed;
  for (std::uint32_t i = 0; i < iterations; ++i) v = v * 0.999f + 0.25f;
  return v;
}

void calibrate_frame_work() {
  std::uint32_t iterations = 1u << 16;
  for (;;) {
    const auto start = Clock::now();
    benchmark::DoNotOptimize(spin_work(iterations, 1.0f));
    const double us = seconds_since(start) * 1e6;
    if (us > 2000) {
      g_iterations_per_us = iterations / us;
      break;
    }
    iterations *= 2;
  }
  std::uint32_t rng = 12345;
  for (int s = 0; s < 8; ++s) {
    auto& table = chunk_iterations(s);
    table.resize(kStages[s].chunks);
    for (auto& it : table) {
      rng = rng * 1664525u + 1013904223u;
      const double us = 2.0 + 18.0 * ((rng >> 8) & 0xffff) / 65535.0;
      it = static_cast<std::uint32_t>(us * g_iterations_per_us);
    }
  }
}

struct FrameStats {
  std::vector<double> frame_us;
  void report(benchmark::State& state) {
    std::sort(frame_us.begin(), frame_us.end());
    const double median = frame_us[frame_us.size() / 2];
    const double p99 = frame_us[static_cast<std::size_t>(frame_us.size() * 0.99)];
    state.counters["median_us"] = median;
    state.counters["p99_us"] = p99;
    state.counters["p99_over_median"] = p99 / median;
  }
};

float g_frame_sink[8][512];

void run_chunk(int stage, int chunk) {
  g_frame_sink[stage][chunk] = spin_work(chunk_iterations(stage)[chunk], 1.0f + chunk);
}

template <class RunFrame>
void frame_loop(benchmark::State& state, RunFrame&& run_frame) {
  FrameStats stats;
  stats.frame_us.reserve(kFrames);
  for (auto _ : state) {
    for (int f = 0; f < kFrames; ++f) {
      const auto start = Clock::now();
      run_frame();
      stats.frame_us.push_back(seconds_since(start) * 1e6);
    }
  }
  stats.report(state);
}

void frame_serial(benchmark::State& state) {
  frame_loop(state, [] {
    for (int s = 0; s < 8; ++s) {
      for (int c = 0; c < kStages[s].chunks; ++c) run_chunk(s, c);
    }
  });
}

void frame_spindle(benchmark::State& state, Mode mode) {
  JobSystem js(config_for(mode));
  frame_loop(state, [&js] {
    // One counter per group; each stage's chunks start once the previous group is done. No thread
    // waits between stages: the job that finishes a group releases the next one.
    Counter groups[kGroups];
    Counter start;  // already done: group 0 starts at once
    for (int s = 0; s < 8; ++s) {
      const int g = kStages[s].group;
      Counter& after = g == 0 ? start : groups[g - 1];
      for (int c = 0; c < kStages[s].chunks; ++c) {
        js.run_after(after, groups[g], {"chunk", static_cast<std::uint16_t>(s)},
                     [s, c] { run_chunk(s, c); });
      }
    }
    js.wait(groups[kGroups - 1]);
  });
}

void frame_tbb(benchmark::State& state) {
  g_arena->execute([&state] {
    frame_loop(state, [] {
      tbb::task_group group;
      for (int g = 0; g < kGroups; ++g) {
        for (int s = 0; s < 8; ++s) {
          if (kStages[s].group != g) continue;
          for (int c = 0; c < kStages[s].chunks; ++c) group.run([s, c] { run_chunk(s, c); });
        }
        group.wait();
      }
    });
  });
}

// --- (e) idle: 10 ms gaps between small bursts -------------------------------------------------
//
// Reports the CPU the whole process burns (cores, averaged over the run, bursts included, so an
// upper bound of idle burn) and the latency of a small job graph submitted after each gap.

constexpr int kBursts = 100;
constexpr int kBurstJobs = 16;

double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// cores_burnt: CPU of the whole process over the run (bursts, the main thread's sleeps and
// wake-ups included), comparable across backends. worker_idle_cores: CPU of the threads other
// than the main one, less the time they spent inside jobs (`job_seconds`, when the backend can
// say): what the workers burn while there is nothing to do.
template <class RunBurst, class JobSeconds>
void idle_loop(benchmark::State& state, RunBurst&& run_burst, JobSeconds&& job_seconds) {
  std::vector<double> latency_us;
  double cpu = 0;
  double main_cpu = 0;
  double wall = 0;
  for (auto _ : state) {
    const double cpu0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    const double main0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
    const auto wall0 = Clock::now();
    for (int b = 0; b < kBursts; ++b) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const auto start = Clock::now();
      run_burst();
      latency_us.push_back(seconds_since(start) * 1e6);
    }
    cpu += cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    main_cpu += cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - main0;
    wall += seconds_since(wall0);
  }
  std::sort(latency_us.begin(), latency_us.end());
  state.counters["cores_burnt"] = cpu / wall;
  state.counters["worker_idle_cores"] = std::max(0.0, cpu - main_cpu - job_seconds()) / wall;
  state.counters["burst_median_us"] = latency_us[latency_us.size() / 2];
}

void small_work(int i) {
  g_frame_sink[0][i] = spin_work(200, 1.0f + i);
}

void idle_spindle(benchmark::State& state, Mode mode) {
  JobSystem js(config_for(mode));
  js.reset_stats();
  idle_loop(
      state,
      [&js] {
        Counter first;
        Counter second;
        for (int i = 0; i < kBurstJobs; ++i) js.run(first, {"burst"}, [i] { small_work(i); });
        for (int i = 0; i < kBurstJobs; ++i) {
          js.run_after(first, second, {"burst"}, [i] { small_work(i); });
        }
        js.wait(second);
      },
      [&js] {
        double busy_ns = 0;
        for (std::uint32_t w = 1; w < js.worker_count(); ++w) busy_ns += js.worker_stats(w).busy_ns;
        return busy_ns * 1e-9;
      });
}

void idle_tbb(benchmark::State& state) {
  idle_loop(
      state,
      [] {
        g_arena->execute([] {
          tbb::task_group group;
          for (int i = 0; i < kBurstJobs; ++i) group.run([i] { small_work(i); });
          group.wait();
          for (int i = 0; i < kBurstJobs; ++i) group.run([i] { small_work(i); });
          group.wait();
        });
      },
      [] { return 0.0; });  // oneTBB cannot say; its jobs here total about 1 us per burst
}

// --- registration and the summary table ---------------------------------------------------------

void register_all() {
  const std::pair<const char*, Mode> modes[] = {
      {"single", Mode::Single}, {"static", Mode::Static}, {"dynamic", Mode::Dynamic}};
  auto reg = [](const std::string& name, auto fn) {
    return benchmark::RegisterBenchmark(name.c_str(), fn)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  };
  for (auto [name, mode] : modes) {
    reg(std::string("empty/") + name, [mode](benchmark::State& s) { empty_spindle(s, mode); });
  }
  reg("empty/tbb", empty_tbb);

  reg("parallel_for/serial", parallel_for_serial);
  for (auto [name, mode] : modes) {
    if (mode == Mode::Single) continue;
    reg(std::string("parallel_for/") + name,
        [mode](benchmark::State& s) { parallel_for_spindle(s, mode); });
  }
  reg("parallel_for/tbb", parallel_for_tbb);

  reg("fib/serial", fib_serial_bench);
  for (auto [name, mode] : modes) {
    reg(std::string("fib/") + name, [mode](benchmark::State& s) { fib_spindle_bench(s, mode); });
  }
  reg("fib/tbb", fib_tbb_bench);

  reg("frame/serial", frame_serial)->Iterations(1);
  for (auto [name, mode] : modes) {
    if (mode == Mode::Single) continue;
    reg(std::string("frame/") + name, [mode](benchmark::State& s) {
      frame_spindle(s, mode);
    })->Iterations(1);
  }
  reg("frame/tbb", frame_tbb)->Iterations(1);

  for (auto [name, mode] : modes) {
    if (mode == Mode::Single) continue;
    reg(std::string("idle/") + name, [mode](benchmark::State& s) {
      idle_spindle(s, mode);
    })->Iterations(1);
  }
  reg("idle/tbb", idle_tbb)->Iterations(1);
}

struct Median {
  double real_ms = 0;
  std::map<std::string, double> counters;
};

// Console output as usual, plus the medians kept for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      const bool single_run = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (!single_run && !median) continue;
      Median& m = medians[run.run_name.function_name];
      m.real_ms = run.GetAdjustedRealTime();
      for (const auto& [name, counter] : run.counters) m.counters[name] = counter.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, Median> medians;
};

void print_summary(const std::map<std::string, Median>& m) {
  auto get = [&](const std::string& name) -> const Median* {
    auto it = m.find(name);
    return it == m.end() ? nullptr : &it->second;
  };
  auto counter = [&](const std::string& name, const char* key) {
    const Median* r = get(name);
    if (r == nullptr) return std::nan("");
    auto it = r->counters.find(key);
    return it == r->counters.end() ? std::nan("") : it->second;
  };
  auto time = [&](const std::string& name) {
    const Median* r = get(name);
    return r == nullptr ? std::nan("") : r->real_ms;
  };
  const char* backends[] = {"serial", "single", "static", "dynamic", "tbb"};

  std::printf("\nSummary (medians; %u participants; ratios from this run)\n", g_workers);
  std::printf("%-34s %10s %10s %10s %10s %10s\n", "workload", "serial", "single", "static",
              "dynamic", "tbb");
  auto row = [&](const char* label, auto value) {
    std::printf("%-34s", label);
    for (const char* b : backends) {
      const double v = value(b);
      if (std::isnan(v)) {
        std::printf(" %10s", "-");
      } else {
        std::printf(" %10.3f", v);
      }
    }
    std::printf("\n");
  };
  row("empty: ns per job",
      [&](const char* b) { return counter(std::string("empty/") + b, "ns_per_job"); });
  row("empty: % run inline (pool full)",
      [&](const char* b) { return counter(std::string("empty/") + b, "inline_pct"); });
  row("parallel_for: ms per 100 sweeps",
      [&](const char* b) { return time(std::string("parallel_for/") + b); });
  row("parallel_for: speedup vs serial", [&](const char* b) {
    return time("parallel_for/serial") / time(std::string("parallel_for/") + b);
  });
  row("fib(30): ms", [&](const char* b) { return time(std::string("fib/") + b); });
  row("fib(30): speedup vs serial",
      [&](const char* b) { return time("fib/serial") / time(std::string("fib/") + b); });
  row("frame: median us",
      [&](const char* b) { return counter(std::string("frame/") + b, "median_us"); });
  row("frame: median speedup vs serial", [&](const char* b) {
    return counter("frame/serial", "median_us") / counter(std::string("frame/") + b, "median_us");
  });
  row("frame: p99 / median",
      [&](const char* b) { return counter(std::string("frame/") + b, "p99_over_median"); });
  row("idle: process cores (10 ms gaps)",
      [&](const char* b) { return counter(std::string("idle/") + b, "cores_burnt"); });
  row("idle: worker cores burnt idle",
      [&](const char* b) { return counter(std::string("idle/") + b, "worker_idle_cores"); });
  row("idle: burst latency median us",
      [&](const char* b) { return counter(std::string("idle/") + b, "burst_median_us"); });
  const double ours = counter("empty/dynamic", "ns_per_job");
  const double theirs = counter("empty/tbb", "ns_per_job");
  if (!std::isnan(ours) && !std::isnan(theirs)) {
    std::printf("\nempty jobs, dynamic / tbb ns per job: %.2f (target <= 0.5)\n", ours / theirs);
  }
  const double fib_ratio = time("fib/dynamic") / time("fib/tbb");
  if (!std::isnan(fib_ratio)) {
    std::printf("fib(30), dynamic / tbb time:          %.2f (target <= 1.0)\n", fib_ratio);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool custom_format = false;
  bool repetitions_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--benchmark_format", 0) == 0 && arg != "--benchmark_format=console") {
      custom_format = true;
    }
    if (arg.rfind("--benchmark_repetitions", 0) == 0) repetitions_given = true;
  }
  std::vector<char*> args(argv, argv + argc);
  std::string default_reps = "--benchmark_repetitions=5";
  std::string aggregates = "--benchmark_report_aggregates_only=true";
  if (!repetitions_given) {
    args.push_back(default_reps.data());
    args.push_back(aggregates.data());
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;

  {
    // Participants: one per CPU of this process. oneTBB starts first, from an unpinned thread,
    // so its workers get the whole mask (it sizes itself from the caller's affinity).
    spindle::jobs::Config probe;
    probe.mode = Mode::Single;
    g_workers = JobSystem(probe).participant_count();
  }
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, g_workers);
  tbb::task_arena arena(static_cast<int>(g_workers));
  arena.initialize();
  g_arena = &arena;
  arena.execute([] { tbb::parallel_for(0, 1 << 16, [](int i) { benchmark::DoNotOptimize(i); }); });

  calibrate_frame_work();
  register_all();
  if (custom_format) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    SummaryReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
    print_summary(reporter.medians);
  }
  benchmark::Shutdown();
  return 0;
}
