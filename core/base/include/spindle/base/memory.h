// Memory tags and per-tag statistics, plus the tagged general heap.
//
// Usage:
//
//   void* p = spindle::core::tagged_alloc(spindle::core::MemTag::Physics, 4096, 64);
//   ...
//   spindle::core::tagged_free(spindle::core::MemTag::Physics, p, 4096);  // same size as alloc
//
//   spindle::core::MemStats s = spindle::core::mem_stats(spindle::core::MemTag::Physics);
//   printf("%s: %zu bytes live, peak %zu, %zu allocations\n",
//          spindle::core::to_string(spindle::core::MemTag::Physics), s.current_bytes,
//          s.peak_bytes, s.allocations);
//
// Statistics per tag: `current_bytes` are bytes handed out and not yet given back (by the heap
// and by arenas and pools), `peak_bytes` their high-water mark, `allocations` how many were
// handed out in total, `reserved_bytes` the backing memory that arenas and pools hold. Counters
// are relaxed atomics of pointer width (lock-free on 32-bit targets too): exact once threads
// have synchronised, cheap always.
#pragma once

#include <cstddef>
#include <cstdint>

namespace spindle::core {

enum class MemTag : std::uint8_t {
  Core,
  Jobs,
  Render,
  Physics,
  Anim,
  Audio,
  Platform,
  Game,
  Frame,
  Count
};

inline constexpr std::size_t kMemTagCount = static_cast<std::size_t>(MemTag::Count);

const char* to_string(MemTag tag);  // "core", "jobs", ..., "frame"

struct MemStats {
  std::size_t current_bytes = 0;
  std::size_t peak_bytes = 0;
  std::size_t allocations = 0;
  std::size_t reserved_bytes = 0;
};

MemStats mem_stats(MemTag tag);
// Sums current, allocations and reserved over all tags; peak is the sum of the tags' peaks.
MemStats mem_stats_total();
// Lowers the peak of `tag` to its current value (e.g. to measure one phase).
void mem_reset_peak(MemTag tag);

// Books `bytes` handed out / given back under `tag`. Allocators call these; code with its own
// allocator can too.
void mem_book_alloc(MemTag tag, std::size_t bytes);
void mem_book_free(MemTag tag, std::size_t bytes);
void mem_book_reserve(MemTag tag, std::size_t bytes);
void mem_book_release(MemTag tag, std::size_t bytes);

// General heap with tag booking. `align` is a power of two. Returns nullptr (and logs) when the
// heap is exhausted. tagged_free must get the same tag and size that tagged_alloc got.
void* tagged_alloc(MemTag tag, std::size_t size, std::size_t align = alignof(std::max_align_t));
void tagged_free(MemTag tag, void* ptr, std::size_t size);

namespace detail {
// Backing memory for arenas and pools: booked as reserved, not as handed-out bytes.
void* reserve_backing(MemTag tag, std::size_t size, std::size_t align);
void release_backing(MemTag tag, void* ptr, std::size_t size);
}  // namespace detail

}  // namespace spindle::core
