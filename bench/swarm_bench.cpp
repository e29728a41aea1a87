// The swarm collision system per agent, single vs parallel, in one binary and one run:
//   neighbours/<mode>/<n>  find_neighbours() alone over an already built index
//   frame/<mode>/<n>       build() + find_neighbours() + resolve_overlaps()
// for n = 10k, 20k, 50k, 100k, 200k agents spread uniformly at the `swarm` load-test scene's
// density (1 agent per unit^2, cell = radius = 1, k = 16, M = 64). `single` is one chunk run
// inline on the calling thread; `parallel` is 16 chunks on a dynamic JobSystem with 2
// participants. After the runs a summary prints ns per agent and the speedup of each pass, and
// how flat the cost per agent is from the smallest to the largest n. By default every benchmark
// runs 5 times, the repetitions interleaved at random (outside load then hits single and
// parallel alike), and the summary uses the medians.
//
//   ./build/h-swarm/bench/spindle_bench_swarm
//   ./build/h-swarm/bench/spindle_bench_swarm --benchmark_filter=neighbours
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <spindle/physics/swarm.h>

#include "two_workers.h"

namespace {

using namespace spindle;

constexpr std::uint32_t kParallelChunks = 16;
const std::uint32_t kCounts[] = {10000, 20000, 50000, 100000, 200000};

jobs::JobSystem& parallel_jobs() {
  return bench::two_worker_jobs();
}

struct Fixture {
  std::vector<float> x, y, r;
  std::unique_ptr<swarm::Swarm<float>> swarm;

  explicit Fixture(std::uint32_t n) {
    const float side = std::sqrt(static_cast<float>(n));
    std::mt19937 rng(n);
    std::uniform_real_distribution<float> pos(0.0f, side);
    for (std::uint32_t i = 0; i < n; ++i) {
      x.push_back(pos(rng));
      y.push_back(pos(rng));
      r.push_back(0.35f);
    }
    swarm::Config<float> c;
    c.max_agents = n;
    c.max_x = c.max_y = side;
    c.cell_size = c.radius = 1.0f;
    c.max_neighbours = 16;
    c.max_candidates = 64;
    c.max_chunks = 64;
    swarm = std::make_unique<swarm::Swarm<float>>(c);
  }
  swarm::AgentSpans<float> spans() const { return {x, y, {}, {}, r}; }
};

void neighbours(benchmark::State& state, std::uint32_t n, bool parallel) {
  const std::uint32_t chunks = parallel ? kParallelChunks : 1;
  jobs::JobSystem& js = parallel_jobs();
  Fixture f(n);
  f.swarm->build(js, chunks, f.spans());
  for (auto _ : state) {
    f.swarm->find_neighbours(js, chunks);
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_agent"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["mean_neighbours"] = [&] {
    double sum = 0;
    for (std::uint32_t k = 0; k < n; ++k) sum += static_cast<double>(f.swarm->neighbours(k).size());
    return sum / n;
  }();
}

void frame(benchmark::State& state, std::uint32_t n, bool parallel) {
  const std::uint32_t chunks = parallel ? kParallelChunks : 1;
  jobs::JobSystem& js = parallel_jobs();
  Fixture f(n);
  for (auto _ : state) {
    f.swarm->build(js, chunks, f.spans());
    f.swarm->find_neighbours(js, chunks);
    f.swarm->resolve_overlaps(js, chunks, 0.5f);
    benchmark::ClobberMemory();
  }
  state.counters["ns_per_agent"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void register_all() {
  for (const char* pass : {"neighbours", "frame"}) {
    for (const std::uint32_t n : kCounts) {
      for (const int parallel : {0, 1}) {
        char name[64];
        std::snprintf(name, sizeof name, "%s/%s/%u", pass, parallel ? "parallel" : "single", n);
        const bool is_neighbours = pass[0] == 'n';
        benchmark::RegisterBenchmark(name,
                                     [n, parallel, is_neighbours](benchmark::State& st) {
                                       is_neighbours ? neighbours(st, n, parallel != 0)
                                                     : frame(st, n, parallel != 0);
                                     })
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime()
            ->MinTime(0.3);
      }
    }
  }
}

// Keeps every run's real time per iteration (microseconds) by name for the summary: the median
// aggregate where repetitions produce one, else the median of the runs seen.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      if (r.run_type == Run::RT_Iteration)
        runs_us_[r.run_name.function_name].push_back(r.GetAdjustedRealTime());
      else if (r.aggregate_name == "median")
        median_us_[r.run_name.function_name] = r.GetAdjustedRealTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // Median microseconds per iteration, or 0 when the benchmark did not run.
  double median_us(const std::string& name) const {
    if (const auto m = median_us_.find(name); m != median_us_.end()) return m->second;
    const auto it = runs_us_.find(name);
    if (it == runs_us_.end() || it->second.empty()) return 0;
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }

 private:
  std::map<std::string, std::vector<double>> runs_us_;
  std::map<std::string, double> median_us_;
};

}  // namespace

int main(int argc, char** argv) {
  // Defaults for a fair single-vs-parallel comparison on a shared machine: repetitions
  // interleaved at random, so a burst of outside load hits both sides alike, and medians.
  // Flags given on the command line come later and win.
  std::vector<char*> args = {argv[0]};
  char repetitions[] = "--benchmark_repetitions=5";
  char interleave[] = "--benchmark_enable_random_interleaving=true";
  char aggregates[] = "--benchmark_display_aggregates_only=true";
  args.insert(args.end(), {repetitions, interleave, aggregates});
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  register_all();
  parallel_jobs();  // start the workers before anything is timed
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::printf("\n%-11s %8s %16s %16s %9s\n", "pass", "agents", "single ns/agent",
              "parallel ns/agent", "speedup");
  for (const char* pass : {"neighbours", "frame"}) {
    double lo_single = 0, hi_single = 0, lo_par = 0, hi_par = 0;
    for (const std::uint32_t n : kCounts) {
      char single_name[64], parallel_name[64];
      std::snprintf(single_name, sizeof single_name, "%s/single/%u", pass, n);
      std::snprintf(parallel_name, sizeof parallel_name, "%s/parallel/%u", pass, n);
      const double us_s = reporter.median_us(single_name);
      const double us_p = reporter.median_us(parallel_name);
      if (us_s == 0 || us_p == 0) continue;
      const double ns_s = us_s * 1000.0 / n, ns_p = us_p * 1000.0 / n;
      std::printf("%-11s %8u %16.2f %16.2f %8.2fx\n", pass, n, ns_s, ns_p, ns_s / ns_p);
      if (lo_single == 0) {
        lo_single = ns_s;
        lo_par = ns_p;
      }
      hi_single = ns_s;
      hi_par = ns_p;
    }
    if (lo_single > 0)
      std::printf("%-11s cost per agent, largest n / smallest n: single %.2fx, parallel %.2fx\n",
                  pass, hi_single / lo_single, hi_par / lo_par);
  }
  benchmark::Shutdown();
  return 0;
}
