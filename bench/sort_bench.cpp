// The radix sort (spindle/algorithms/radix_sort.h), serial against parallel, in one binary and
// one run:
//   sort/<keys>/<variant>/<n>
// keys:    `cells`  the swarm's Morton cell codes: values below 2n (two varying bytes from 20k)
//          `wide`   random 64-bit keys: every byte varies
//          `skewed` cell codes of which half share one top byte (a crowd in one corner)
// variant: `serial` the serial sort; `parallel` 8 chunks (the engine's 4 per worker) on a dynamic
//          JobSystem with 2 participants
// n:       20k, 100k, 1M keys with their 32-bit payloads.
// Each iteration sorts a fresh copy of the same input (the copy is not timed). Every benchmark
// runs 5 times and reports medians; --benchmark_enable_random_interleaving=true interleaves the
// repetitions, so outside load hits serial and parallel alike.
//
//   ./build/release/bench/spindle_bench_sort
//   ./build/release/bench/spindle_bench_sort --benchmark_filter=cells
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <spindle/algorithms/radix_sort.h>

#include "two_workers.h"

namespace {

using namespace spindle;

constexpr std::uint32_t kChunks = 8;

jobs::JobSystem& parallel_jobs() {
  return bench::two_worker_jobs();
}

enum class Keys { Cells, Wide, Skewed };

std::vector<std::uint64_t> make_keys(Keys kind, std::size_t n) {
  std::mt19937_64 rng(n);
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (kind) {
      case Keys::Cells:
        keys[i] = rng() % (2 * n);
        break;
      case Keys::Wide:
        keys[i] = rng();
        break;
      case Keys::Skewed:
        keys[i] = i % 2 == 0 ? rng() % 256 : rng() % (2 * n);
        break;
    }
  }
  return keys;
}

void sort(benchmark::State& state, Keys kind, bool parallel) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<std::uint64_t> input = make_keys(kind, n);
  std::vector<std::uint64_t> keys(n), key_tmp(n);
  std::vector<std::uint32_t> values(n), value_tmp(n);
  core::RadixSortScratch scratch(kChunks);
  for (auto _ : state) {
    state.PauseTiming();
    keys = input;
    std::iota(values.begin(), values.end(), 0u);
    state.ResumeTiming();
    const bool ok = parallel ? core::radix_sort(parallel_jobs(), kChunks, scratch, keys, values,
                                                key_tmp, value_tmp)
                             : core::radix_sort(keys, values, key_tmp, value_tmp);
    if (!ok) state.SkipWithError("radix_sort refused the sizes");
    benchmark::DoNotOptimize(keys.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}

void register_all() {
  const struct {
    const char* name;
    Keys kind;
  } kinds[] = {{"cells", Keys::Cells}, {"wide", Keys::Wide}, {"skewed", Keys::Skewed}};
  for (const auto& k : kinds) {
    for (const bool parallel : {false, true}) {
      const std::string name = std::string("sort/") + k.name + (parallel ? "/parallel" : "/serial");
      benchmark::RegisterBenchmark(name.c_str(), sort, k.kind, parallel)
          ->Arg(20000)
          ->Arg(100000)
          ->Arg(1000000)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime()
          ->Repetitions(5)
          ->ReportAggregatesOnly(true);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
