// Stable LSD radix sort of 64-bit keys carrying 32-bit payloads (draw-list sort keys, spatial keys,
// object indices), serial or split into chunks that run as parallel jobs.
//
// Usage:
//
//   std::vector<std::uint64_t> keys(n), key_tmp(n);          // sized once, reused every frame
//   std::vector<std::uint32_t> values(n), value_tmp(n);
//   spindle::core::radix_sort(keys, values, key_tmp, value_tmp);          // serial
//
//   spindle::core::RadixSortScratch scratch(64);           // histograms for up to 64 chunks
//   spindle::core::radix_sort(jobs, 8, scratch, keys, values, key_tmp, value_tmp, kTagRender);
//
// Both sort by key, keep equal keys in their input order and give identical results (the
// result of a stable sort is unique), whatever the chunk count, job mode or worker count.
//
// Why radix sort: a frame budget needs a sort whose time is fixed by n, not by the data. A
// comparison sort has a best and a worst case (quicksort's worst is quadratic, and "almost
// sorted" or "many equal keys" inputs move the time around); the PSP swarm-shooter post in
// docs/references.md makes the point: an algorithm that is fast most of the time but slow
// under some circumstances drops frames. LSD radix sort makes at most 8 passes of 8 bits, each
// one read to count and one read plus scattered write to move: O(8 * (n + 256)) for every input,
// no comparisons, no data-dependent branches. Passes whose byte is the same for every key are
// skipped (seen in the histograms of the first read); that only ever removes work, so the
// 8-pass time is a hard upper bound. Payload order among equal keys is preserved.
//
// Parallel form: the keys are cut into `chunks` contiguous ranges, each counted in a job. Then,
// where the keys spread evenly over the 8 bits that end at their highest varying bit, one scatter
// by those bits (chunks in order, so stable) gathers them into runs, and each job sorts about
// n / chunks keys of whole runs on its own, LSD in its core's cache ("radix_groups"): a key
// crosses between cores once. Otherwise (most keys share those bits, or only two bytes vary in
// small runs) every varying byte is a pass over the whole array: each chunk counts and scatters
// its range in a job, into disjoint slots in chunk order. spindle_bench_sort measures both
// against the serial sort. Histograms live in a RadixSortScratch sized at construction: 8 KiB
// per chunk, nothing is allocated per call. `chunks` is clamped to [1, min(scratch.max_chunks(),
// n)]; 1 runs everything inline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "spindle/jobs/job_system.h"

namespace spindle::core {

inline constexpr std::uint32_t kRadixPasses = 8;     // 64-bit keys, 8 bits a pass
inline constexpr std::uint32_t kRadixBuckets = 256;  // values of one digit

// Per-chunk histograms for the parallel sort, allocated once. Not thread-safe: one sort at a
// time per scratch.
class RadixSortScratch {
 public:
  // max_chunks == 0 is taken as 1.
  explicit RadixSortScratch(std::uint32_t max_chunks);

  std::uint32_t max_chunks() const { return max_chunks_; }
  // max_chunks * kRadixPasses * kRadixBuckets counts, chunk-major; used by radix_sort().
  std::span<std::uint32_t> counts() { return counts_; }

 private:
  std::uint32_t max_chunks_;
  std::vector<std::uint32_t> counts_;
};

// Serial sort. keys and values have the same size n (< 2^32); the scratch spans hold at least n
// elements. The result ends in keys/values; the scratch contents are unspecified afterwards.
// Returns false, touching nothing, when the sizes do not fit.
bool radix_sort(std::span<std::uint64_t> keys, std::span<std::uint32_t> values,
                std::span<std::uint64_t> key_scratch, std::span<std::uint32_t> value_scratch);

// Parallel sort over `chunks` jobs (named "radix_count", "radix_scatter", "radix_groups",
// "radix_copy", booked under `tag`); blocks until done, the calling thread helping. Same contract
// as the serial one.
bool radix_sort(jobs::JobSystem& jobs, std::uint32_t chunks, RadixSortScratch& scratch,
                std::span<std::uint64_t> keys, std::span<std::uint32_t> values,
                std::span<std::uint64_t> key_scratch, std::span<std::uint32_t> value_scratch,
                std::uint16_t tag = 0);

}  // namespace spindle::core
