// Splitting an array into `chunks` contiguous ranges and running one job per range: the shared
// shape of the parallel passes outside the frame graph (culling, compaction, sort passes, swarm
// passes).
//
// Usage: for_each_chunk(jobs, 8, {.name = "my_pass", .tag = tag}, [&](std::uint32_t c) {
//          auto [b, e] = chunk_range(n, 8, c); for (auto i = b; i < e; ++i) ...; });
#pragma once

#include <cstddef>
#include <cstdint>

#include "spindle/jobs/job_system.h"

namespace spindle::core {

struct ChunkRange {
  std::size_t begin;
  std::size_t end;
};

// Chunk `c` of `chunks` over [0, n): sizes differ by at most one, fixed by (n, chunks) only.
inline ChunkRange chunk_range(std::size_t n, std::uint32_t chunks, std::uint32_t c) {
  return {n * c / chunks, n * (std::size_t{c} + 1) / chunks};
}

// Calls fn(c) for every c in [0, chunks) and returns when all have run; one chunk runs inline.
template <class F>
void for_each_chunk(jobs::JobSystem& jobs, std::uint32_t chunks, const jobs::JobDesc& desc,
                    const F& fn) {
  if (chunks <= 1) {
    fn(std::uint32_t{0});
    return;
  }
  jobs.parallel_for_range(
      0, chunks, 1,
      [&fn](std::size_t b, std::size_t e) {
        for (std::size_t c = b; c < e; ++c) fn(static_cast<std::uint32_t>(c));
      },
      desc);
}

}  // namespace spindle::core
