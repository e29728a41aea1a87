// jobs: the job system on its own. Submit jobs against a Counter and wait for it, split a loop
// with parallel_for, and switch modes between batches of work; the results are the same in every
// mode.
//
//   spindle_sample_jobs [--mode single|static|dynamic|tbb] [--workers N]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <spindle/jobs/job_system.h>

#include "sample_args.h"

using namespace spindle;

// One batch of work: a few named jobs, then a parallel loop. Returns a checksum of the results.
std::uint64_t run_batch(jobs::JobSystem& jobs, std::vector<std::uint64_t>& squares) {
  // run + Counter + wait: four jobs each sum a quarter of 1..4000 into their own slot (no two
  // jobs write the same memory, so no atomics are needed).
  constexpr std::uint64_t kQuarter = 1000;
  std::uint64_t partial[4] = {};
  jobs::Counter sums;
  for (std::uint64_t q = 0; q < 4; ++q) {
    // The tag books the job's time under a stage (per-tag statistics feed the dynamic mode).
    jobs.run(sums, {"sum_quarter", 1}, [&partial, q] {
      for (std::uint64_t i = q * kQuarter + 1; i <= (q + 1) * kQuarter; ++i) partial[q] += i;
    });
  }
  // The waiting thread helps run jobs instead of blocking (single mode ran them inline already).
  jobs.wait(sums);

  // parallel_for: fn(i) for every index, in chunks of at most 256 indices.
  jobs.parallel_for(0, squares.size(), 256, [&](std::size_t i) { squares[i] = i * i; });

  // parallel_for_range: fn(begin, end) per sub-range, for loops that want a whole range at once.
  // Sub-ranges are not aligned to the grain, so each one writes only the indices it was given:
  // here the range is over blocks of 512 squares, and each block's sum has one writer.
  constexpr std::size_t kBlock = 512;
  std::vector<std::uint64_t> block_sums((squares.size() + kBlock - 1) / kBlock, 0);
  jobs.parallel_for_range(0, block_sums.size(), 4, [&](std::size_t b, std::size_t e) {
    for (std::size_t block = b; block < e; ++block) {
      const std::size_t end = std::min(squares.size(), (block + 1) * kBlock);
      for (std::size_t i = block * kBlock; i < end; ++i) block_sums[block] += squares[i] % 7;
    }
  });

  std::uint64_t checksum = partial[0] + partial[1] + partial[2] + partial[3];
  for (std::uint64_t s : block_sums) checksum = checksum * 1000003u + s;
  return checksum;
}

// What run_batch computes, by plain loops on one thread.
std::uint64_t serial_checksum(std::size_t n) {
  std::uint64_t checksum = 4000ull * 4001ull / 2;  // 1 + 2 + ... + 4000
  std::vector<std::uint64_t> block_sums((n + 511) / 512, 0);
  for (std::size_t i = 0; i < n; ++i) block_sums[i / 512] += (i * i) % 7;
  for (std::uint64_t s : block_sums) checksum = checksum * 1000003u + s;
  return checksum;
}

int main(int argc, char** argv) {
  samples::SampleArgs args;
  if (!samples::parse_sample_args(argc, argv, args)) return 2;

  jobs::Config config;  // defaults: one participant per core, dynamic mode
  config.mode = args.mode;
  config.workers = args.workers;
  jobs::JobSystem jobs(config);
  std::printf("jobs: %s mode, %u thread(s) run jobs\n", jobs::to_string(jobs.mode()),
              jobs.worker_count());

  std::vector<std::uint64_t> squares(100'000);
  const std::uint64_t first = run_batch(jobs, squares);

  // Modes switch between batches, with nothing in flight; the same code runs unchanged.
  jobs.set_mode(jobs::Mode::Single);
  const std::uint64_t again = run_batch(jobs, squares);
  std::printf("jobs: again in %s mode on %u thread: %s\n", jobs::to_string(jobs.mode()),
              jobs.worker_count(), again == first ? "same results" : "DIFFERENT results");

  std::uint64_t jobs_run = 0;
  for (std::uint32_t w = 0; w < jobs.participant_count(); ++w)
    jobs_run += jobs.worker_stats(w).jobs;
  std::printf("jobs: %llu jobs run, %llu ran inline for lack of a slot, hash %016llx\n",
              static_cast<unsigned long long>(jobs_run),
              static_cast<unsigned long long>(jobs.stats().inline_overflows),
              static_cast<unsigned long long>(first));

  // The same results as plain serial loops, and each of the 8 sum jobs ran exactly once.
  const bool ok =
      first == serial_checksum(squares.size()) && again == first && jobs.tag_stats(1).jobs == 8;
  if (!ok) std::fprintf(stderr, "jobs: the results are not what serial code computes\n");
  return ok ? 0 : 1;
}
