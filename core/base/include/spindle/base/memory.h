// Memory tags and per-tag statistics, plus the tagged general heap.
//
// Usage:
//
//   // Core books under its own tags: MemTag::Core, Jobs, Game, Frame. A subsystem or a plugin
//   // declares its tag once, by name; the same name always gives the same tag:
//   spindle::core::MemTag physics_mem_tag() {
//     static const spindle::core::MemTag tag = spindle::core::register_mem_tag("physics");
//     return tag;
//   }
//
//   void* p = spindle::core::tagged_alloc(physics_mem_tag(), 4096, 64);
//   ...
//   spindle::core::tagged_free(physics_mem_tag(), p, 4096);  // same size as alloc
//
//   for (std::size_t i = 0; i < spindle::core::mem_tag_count(); ++i) {  // a report
//     spindle::core::MemTag tag = spindle::core::mem_tag_at(i);
//     spindle::core::MemStats s = spindle::core::mem_stats(tag);
//     printf("%s: %zu bytes live, peak %zu, %zu allocations\n", spindle::core::to_string(tag),
//            s.current_bytes, s.peak_bytes, s.allocations);
//   }
//
// Statistics per tag: `current_bytes` are bytes handed out and not yet given back (by the heap
// and by arenas and pools), `peak_bytes` their high-water mark, `allocations` how many were
// handed out in total, `reserved_bytes` the backing memory that arenas and pools hold. Counters
// are relaxed atomics of pointer width (lock-free on 32-bit targets too): exact once threads
// have synchronised, cheap always.
//
// Tags live in a fixed table of kMaxMemTags. Registering takes a lock and allocates nothing;
// booking, statistics and names take no lock. A full table is an assert failure naming the tag
// (with asserts off: an error in the log, and the tag books under MemTag::Core).
#pragma once

#include <cstddef>
#include <cstdint>

namespace spindle::core {

inline constexpr std::size_t kMaxMemTags = 32;
inline constexpr std::size_t kMaxMemTagName = 31;  // characters, the terminator not counted

// A registered memory tag: an index into the tag table. Constant-initialised, so core's own tags
// may be used during the static initialisation of any file.
struct MemTag {
  std::uint8_t index = 0;

  friend constexpr bool operator==(MemTag, MemTag) = default;

  // Core's own tags, registered from the start.
  static const MemTag Core;   // "core": the ECS world's storage, settings, ...
  static const MemTag Jobs;   // "jobs"
  static const MemTag Game;   // "game": code of the game itself
  static const MemTag Frame;  // "frame": FrameArenas and other per-frame scratch
};

inline constexpr MemTag MemTag::Core{0};
inline constexpr MemTag MemTag::Jobs{1};
inline constexpr MemTag MemTag::Game{2};
inline constexpr MemTag MemTag::Frame{3};

// The tag called `name` (at most kMaxMemTagName characters, copied), registered on first use.
// Thread-safe; calling it again with the same name returns the same tag.
MemTag register_mem_tag(const char* name);
// Registered tags, core's first, then in the order of registration: mem_tag_at(i), i < count.
std::size_t mem_tag_count();
MemTag mem_tag_at(std::size_t i);

const char* to_string(MemTag tag);  // the registered name: "core", "jobs", "physics", ...

struct MemStats {
  std::size_t current_bytes = 0;
  std::size_t peak_bytes = 0;  // never below current_bytes in one snapshot
  std::size_t allocations = 0;
  std::size_t reserved_bytes = 0;
};

MemStats mem_stats(MemTag tag);
// Sums current, allocations and reserved over all tags; peak is the sum of the tags' peaks.
MemStats mem_stats_total();
// Lowers the peak of `tag` to its current value (e.g. to measure one phase). A booking that
// overlaps the reset counts as before or after it, never lost.
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
