#include "spindle/algorithms/radix_sort.h"

#include <algorithm>
#include <bit>
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

// The parallel sort sorts groups of buckets on their own (sort_chunks()) when at least this many
// bytes vary, or two with big buckets (kKeysPerBucketAlone). A group of small buckets makes the
// top byte's pass again and may end with a copy: with two varying bytes that costs more than the
// second pass over the whole array it saves (spindle_bench_sort, `cells` at 20,000 keys).
constexpr std::uint32_t kMinPassesByGroups = 3;
// A group sorts each of its buckets on its own, without the top byte's pass, when its buckets hold
// this many keys on average: below that, setting up 256 counts per bucket and pass costs more.
constexpr std::uint32_t kKeysPerBucketAlone = 256;

// Per chunk and pass (byte of the key, lowest first): its 256 digit counts, or output offsets.
struct PassCounts {
  std::uint32_t* counts;  // chunks * kRadixPasses * kRadixBuckets, chunk-major
  std::uint32_t* hist(std::uint32_t c, std::uint32_t pass) const {
    return counts + (std::size_t{c} * kRadixPasses + pass) * kRadixBuckets;
  }
};

constexpr std::uint32_t kAllPasses = (1u << kRadixPasses) - 1;

// Counts the digits of keys[begin, end) for the passes in `passes` (bit p: pass p), in one read,
// into h (kRadixPasses * kRadixBuckets entries; the other passes' counts are left as they were).
void count_digits(const std::uint64_t* keys, std::size_t begin, std::size_t end, std::uint32_t* h,
                  std::uint32_t passes = kAllPasses) {
  std::uint32_t list[kRadixPasses];
  std::uint32_t count = 0;
  for (std::uint32_t p = 0; p < kRadixPasses; ++p) {
    if ((passes >> p & 1u) == 0) continue;
    list[count++] = p;
    std::fill(h + p * kRadixBuckets, h + (p + 1) * kRadixBuckets, 0u);
  }
  if (count == kRadixPasses) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint64_t k = keys[i];
      for (std::uint32_t p = 0; p < kRadixPasses; ++p) ++h[p * kRadixBuckets + digit(k, p)];
    }
    return;
  }
  for (std::size_t i = begin; i < end; ++i) {
    const std::uint64_t k = keys[i];
    for (std::uint32_t j = 0; j < count; ++j) ++h[list[j] * kRadixBuckets + digit(k, list[j])];
  }
}

// Whether pass p would move anything: some key's byte p differs from the first key's.
bool pass_varies(const PassCounts& pc, std::uint32_t chunks, std::uint32_t p, std::uint64_t first,
                 std::size_t n) {
  std::size_t same = 0;
  for (std::uint32_t c = 0; c < chunks; ++c) same += pc.hist(c, p)[digit(first, p)];
  return same != n;
}

// The serial LSD sort of [begin, end) over the passes in `passes` whose byte varies there. The
// keys start in src; passes alternate between src and tmp, and the result ends in out (src or
// tmp), copied there if the last pass left it in the other. h holds the range's counts of those
// passes' digits (count_digits()); it is used up.
void sort_serially(std::uint64_t* src_k, std::uint32_t* src_v, std::uint64_t* tmp_k,
                   std::uint32_t* tmp_v, std::uint64_t* out_k, std::uint32_t* out_v,
                   std::size_t begin, std::size_t end, std::uint32_t* h,
                   std::uint32_t passes = kAllPasses) {
  const std::size_t n = end - begin;
  std::uint64_t* from_k = src_k + begin;
  std::uint32_t* from_v = src_v + begin;
  std::uint64_t* to_k = tmp_k + begin;
  std::uint32_t* to_v = tmp_v + begin;
  for (std::uint32_t p = 0; p < kRadixPasses && n > 1; ++p) {
    if ((passes >> p & 1u) == 0) continue;
    std::uint32_t* offsets = h + p * kRadixBuckets;
    if (offsets[digit(from_k[0], p)] == n) continue;  // every key has this byte
    std::uint32_t running = 0;
    for (std::uint32_t b = 0; b < kRadixBuckets; ++b) {
      const std::uint32_t count = offsets[b];
      offsets[b] = running;
      running += count;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t k = from_k[i];
      const std::uint32_t slot = offsets[digit(k, p)]++;
      to_k[slot] = k;
      to_v[slot] = from_v[i];
    }
    // The next pass reads what this one wrote and writes into what this one read.
    std::swap(from_k, to_k);
    std::swap(from_v, to_v);
  }
  if (from_k != out_k + begin) {
    std::copy(from_k, from_k + n, out_k + begin);
    std::copy(from_v, from_v + n, out_v + begin);
  }
}

// The one algorithm behind both entry points. `run(name, fn)` calls fn(c) for every chunk c
// (inline for the serial sort, as jobs for the parallel one); `counts` holds
// chunks * kRadixPasses * kRadixBuckets entries.
template <class RunChunks>
void sort_chunks(const RunChunks& run, std::uint32_t chunks, std::uint32_t* counts,
                 std::span<std::uint64_t> keys, std::span<std::uint32_t> values,
                 std::uint64_t* key_scratch, std::uint32_t* value_scratch) {
  const std::size_t n = keys.size();
  const PassCounts pc{counts};
  std::uint64_t* src_k = keys.data();
  std::uint32_t* src_v = values.data();
  std::uint64_t* dst_k = key_scratch;
  std::uint32_t* dst_v = value_scratch;

  // One read counts all eight digits of every chunk.
  run("radix_count", [&](std::uint32_t c) {
    const ChunkRange r = chunk_range(n, chunks, c);
    count_digits(src_k, r.begin, r.end, pc.hist(c, 0));
  });
  // Totals do not depend on the order, so the first read's counts tell every pass that moves
  // nothing (every key has the same byte there), whatever the passes before did.
  const std::uint64_t first = src_k[0];
  std::uint32_t varying = 0, top = 0, varying_passes = 0;
  for (std::uint32_t p = 0; p < kRadixPasses; ++p) {
    if (pass_varies(pc, chunks, p, first, n)) {
      ++varying;
      top = p;
      varying_passes |= 1u << p;
    }
  }
  if (chunks == 1) {
    sort_serially(src_k, src_v, dst_k, dst_v, keys.data(), values.data(), 0, n, pc.hist(0, 0));
    return;
  }
  if (varying == 0) return;

  // Counts become first output slots: bucket-major, then chunk order, which keeps it stable.
  auto offsets_from_counts = [&](std::uint32_t p) {
    std::uint32_t running = 0;
    for (std::uint32_t b = 0; b < kRadixBuckets; ++b) {
      for (std::uint32_t c = 0; c < chunks; ++c) {
        std::uint32_t& slot = pc.hist(c, p)[b];
        const std::uint32_t count = slot;
        slot = running;
        running += count;
      }
    }
  };
  // Scatters by the 8 bits from `shift` up, through pass p's offsets.
  auto scatter = [&](std::uint32_t p, std::uint32_t shift) {
    run("radix_scatter", [&](std::uint32_t c) {
      const ChunkRange r = chunk_range(n, chunks, c);
      std::uint32_t* offsets = pc.hist(c, p);
      for (std::size_t i = r.begin; i < r.end; ++i) {
        const std::uint64_t k = src_k[i];
        const std::uint32_t slot = offsets[static_cast<std::uint32_t>(k >> shift) & 0xffu]++;
        dst_k[slot] = k;
        dst_v[slot] = src_v[i];
      }
    });
    std::swap(src_k, dst_k);
    std::swap(src_v, dst_v);
  };

  // Most significant bits first, once: the keys go to one contiguous run per value of the 8 bits
  // that end at their highest varying bit, and runs of about n / chunks keys each (whole runs) are
  // then sorted on their own, one job each, in the cache of the core that sorts them. Each key
  // crosses between cores once, where passes over the whole array, each a scatter by every chunk
  // into every bucket, moved it once a pass (and twice the cache lines at the chunks' shared
  // edges). Those 8 bits, not the top varying byte: a byte whose high bits never vary (a depth
  // in the key's top bits, the near half of the view) would put most keys in one run. Kept when
  // no group outgrows twice its share; bits shared by most keys fall back to the passes.
  if (varying >= 2) {
    std::uint32_t differs = 0;  // bits of the top varying byte that some key has unlike the first
    for (std::uint32_t c = 0; c < chunks; ++c)
      for (std::uint32_t b = 0; b < kRadixBuckets; ++b)
        if (pc.hist(c, top)[b] != 0) differs |= b ^ digit(first, top);
    const std::uint32_t top_bit = 8 * top + static_cast<std::uint32_t>(std::bit_width(differs)) - 1;
    const std::uint32_t shift = top_bit >= 7 ? top_bit - 7 : 0;
    auto part = [shift](std::uint64_t key) {
      return static_cast<std::uint32_t>(key >> shift) & 0xffu;
    };
    // The partition's counts take the top byte's place (the passes below count it again).
    if (shift != 8 * top) {
      run("radix_count", [&](std::uint32_t c) {
        const ChunkRange r = chunk_range(n, chunks, c);
        std::uint32_t* h = pc.hist(c, top);
        std::fill(h, h + kRadixBuckets, 0u);
        for (std::size_t i = r.begin; i < r.end; ++i) ++h[part(src_k[i])];
      });
    }
    std::uint32_t totals[kRadixBuckets] = {};
    std::uint32_t used_buckets = 0;
    for (std::uint32_t c = 0; c < chunks; ++c)
      for (std::uint32_t b = 0; b < kRadixBuckets; ++b) totals[b] += pc.hist(c, top)[b];
    for (const std::uint32_t t : totals) used_buckets += t > 0 ? 1u : 0u;
    const std::uint32_t groups = std::min(chunks, kRadixBuckets);
    std::uint32_t group_begin[kRadixBuckets + 1];  // in keys
    std::uint32_t group_count = 0;
    std::size_t largest = 0;
    {
      std::size_t at = 0, group_start = 0;
      group_begin[group_count++] = 0;
      for (std::uint32_t b = 0; b < kRadixBuckets; ++b) {
        at += totals[b];
        if (at >= std::uint64_t{n} * group_count / groups && at < n && at > group_start) {
          largest = std::max(largest, at - group_start);
          group_begin[group_count++] = static_cast<std::uint32_t>(at);
          group_start = at;
        }
      }
      largest = std::max(largest, n - group_start);
      group_begin[group_count] = static_cast<std::uint32_t>(n);
    }
    const bool big_buckets = n >= std::size_t{kKeysPerBucketAlone} * used_buckets;
    if ((varying >= kMinPassesByGroups || big_buckets) &&
        largest <= 2 * (n + groups - 1) / groups) {
      offsets_from_counts(top);
      scatter(top, shift);  // keys -> scratch, grouped by the partition's bits
      std::uint64_t* const grouped_k = src_k;
      std::uint32_t* const grouped_v = src_v;
      // In one bucket the partition's bits are the same, so is every bit above: the top byte too.
      const std::uint32_t lower_passes = varying_passes & ~(1u << top);
      run("radix_groups", [&](std::uint32_t g) {
        if (g >= group_count) return;
        const std::size_t b = group_begin[g], e = group_begin[g + 1];
        if (e == b) return;
        std::uint32_t h[kRadixPasses * kRadixBuckets];
        const std::uint32_t first_bucket = part(grouped_k[b]);
        const std::uint32_t buckets = part(grouped_k[e - 1]) - first_bucket + 1;
        if (e - b < std::size_t{kKeysPerBucketAlone} * buckets) {
          // Small buckets: the group as one, over every varying byte (the top one's pass again).
          count_digits(grouped_k, b, e, h, varying_passes);
          sort_serially(grouped_k, grouped_v, keys.data(), values.data(), keys.data(),
                        values.data(), b, e, h, varying_passes);
          return;
        }
        // Big ones: each bucket on its own over the bytes below the top one.
        std::size_t at = b;
        for (std::uint32_t bucket = first_bucket; bucket < first_bucket + buckets; ++bucket) {
          const std::size_t end = at + totals[bucket];
          count_digits(grouped_k, at, end, h, lower_passes);
          sort_serially(grouped_k, grouped_v, keys.data(), values.data(), keys.data(),
                        values.data(), at, end, h, lower_passes);
          at = end;
        }
      });
      return;
    }
  }

  // Least significant byte first, every varying pass over the whole array. Scattering reorders
  // the chunks' contents, so the counts of a pass after the first are taken again.
  bool counted = true;
  for (std::uint32_t p = 0; p < kRadixPasses; ++p) {
    if ((varying_passes >> p & 1u) == 0) continue;
    if (!counted) {
      run("radix_count", [&](std::uint32_t c) {
        const ChunkRange r = chunk_range(n, chunks, c);
        count_digits(src_k, r.begin, r.end, pc.hist(c, 0), 1u << p);
      });
    }
    offsets_from_counts(p);
    scatter(p, 8 * p);
    counted = false;
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
