#include "spindle/algorithms/radix_sort.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "spindle/algorithms/chunks.h"

namespace spindle::core {
namespace {

inline std::uint32_t digit(std::uint64_t key, std::uint32_t pass) {
  return static_cast<std::uint32_t>(key >> (pass * 8)) & 0xffu;
}

bool sizes_fit(std::span<std::uint64_t> keys, std::span<std::uint32_t> values,
               std::span<std::uint64_t> key_scratch, std::span<std::uint32_t> value_scratch) {
  return values.size() == keys.size() && key_scratch.size() >= keys.size() &&
         value_scratch.size() >= keys.size() &&
         keys.size() <= std::numeric_limits<std::uint32_t>::max();
}

// The one algorithm behind both entry points. `run(name, fn)` calls fn(c) for every chunk c
// (inline for the serial sort, as jobs for the parallel one); `counts` holds
// chunks * kRadixPasses * kRadixBuckets entries.
template <class RunChunks>
void sort_chunks(const RunChunks& run, std::uint32_t chunks, std::uint32_t* counts,
                 std::span<std::uint64_t> keys, std::span<std::uint32_t> values,
                 std::uint64_t* key_scratch, std::uint32_t* value_scratch) {
  const std::size_t n = keys.size();
  auto hist = [counts](std::uint32_t c, std::uint32_t pass) {
    return counts + (std::size_t{c} * kRadixPasses + pass) * kRadixBuckets;
  };
  std::uint64_t* src_k = keys.data();
  std::uint32_t* src_v = values.data();
  std::uint64_t* dst_k = key_scratch;
  std::uint32_t* dst_v = value_scratch;

  // One read counts all eight digits of every chunk.
  run("radix_count", [&](std::uint32_t c) {
    const ChunkRange r = chunk_range(n, chunks, c);
    std::uint32_t* h = hist(c, 0);
    std::fill(h, h + kRadixPasses * kRadixBuckets, 0u);
    for (std::size_t i = r.begin; i < r.end; ++i) {
      const std::uint64_t k = src_k[i];
      for (std::uint32_t p = 0; p < kRadixPasses; ++p) ++h[p * kRadixBuckets + digit(k, p)];
    }
  });

  // Whether hist(c, p) counts the current src order for passes not yet run. Scattering
  // reorders the chunks' contents, so only a single chunk's counts stay valid.
  bool counted = true;
  const std::uint64_t first = src_k[0];
  for (std::uint32_t p = 0; p < kRadixPasses; ++p) {
    // Totals do not depend on the order, so stale per-chunk counts still give them.
    std::size_t same = 0;
    for (std::uint32_t c = 0; c < chunks; ++c) same += hist(c, p)[digit(first, p)];
    if (same == n) continue;  // every key has this byte: the pass would move nothing

    if (!counted) {
      run("radix_count", [&](std::uint32_t c) {
        const ChunkRange r = chunk_range(n, chunks, c);
        std::uint32_t* h = hist(c, p);
        std::fill(h, h + kRadixBuckets, 0u);
        for (std::size_t i = r.begin; i < r.end; ++i) ++h[digit(src_k[i], p)];
      });
    }
    // Counts become first output slots: bucket-major, then chunk order, which keeps it stable.
    std::uint32_t running = 0;
    for (std::uint32_t b = 0; b < kRadixBuckets; ++b) {
      for (std::uint32_t c = 0; c < chunks; ++c) {
        std::uint32_t& slot = hist(c, p)[b];
        const std::uint32_t count = slot;
        slot = running;
        running += count;
      }
    }
    run("radix_scatter", [&](std::uint32_t c) {
      const ChunkRange r = chunk_range(n, chunks, c);
      std::uint32_t* offsets = hist(c, p);
      for (std::size_t i = r.begin; i < r.end; ++i) {
        const std::uint64_t k = src_k[i];
        const std::uint32_t slot = offsets[digit(k, p)]++;
        dst_k[slot] = k;
        dst_v[slot] = src_v[i];
      }
    });
    std::swap(src_k, dst_k);
    std::swap(src_v, dst_v);
    counted = chunks == 1;
  }

  if (src_k != keys.data()) {
    run("radix_copy", [&](std::uint32_t c) {
      const ChunkRange r = chunk_range(n, chunks, c);
      std::copy(src_k + r.begin, src_k + r.end, keys.data() + r.begin);
      std::copy(src_v + r.begin, src_v + r.end, values.data() + r.begin);
    });
  }
}

}  // namespace

RadixSortScratch::RadixSortScratch(std::uint32_t max_chunks)
    : max_chunks_(std::max(max_chunks, 1u)),
      counts_(std::size_t{max_chunks_} * kRadixPasses * kRadixBuckets, 0u) {}

bool radix_sort(std::span<std::uint64_t> keys, std::span<std::uint32_t> values,
                std::span<std::uint64_t> key_scratch, std::span<std::uint32_t> value_scratch) {
  if (!sizes_fit(keys, values, key_scratch, value_scratch)) return false;
  if (keys.size() < 2) return true;
  std::uint32_t counts[kRadixPasses * kRadixBuckets];
  auto inline_run = [](const char*, const auto& fn) { fn(std::uint32_t{0}); };
  sort_chunks(inline_run, 1, counts, keys, values, key_scratch.data(), value_scratch.data());
  return true;
}

bool radix_sort(jobs::JobSystem& jobs, std::uint32_t chunks, RadixSortScratch& scratch,
                std::span<std::uint64_t> keys, std::span<std::uint32_t> values,
                std::span<std::uint64_t> key_scratch, std::span<std::uint32_t> value_scratch,
                std::uint16_t tag) {
  if (!sizes_fit(keys, values, key_scratch, value_scratch)) return false;
  if (keys.size() < 2) return true;
  const std::size_t limit = std::min<std::size_t>(scratch.max_chunks(), keys.size());
  chunks = static_cast<std::uint32_t>(std::clamp<std::size_t>(chunks, 1, limit));
  auto job_run = [&jobs, chunks, tag](const char* name, const auto& fn) {
    for_each_chunk(jobs, chunks, jobs::JobDesc{name, tag}, fn);
  };
  sort_chunks(job_run, chunks, scratch.counts().data(), keys, values, key_scratch.data(),
              value_scratch.data());
  return true;
}

}  // namespace spindle::core
