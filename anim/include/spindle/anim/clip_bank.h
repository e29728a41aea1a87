// ClipBank: animation clips in a cache of fixed size, as the N64 article describes them. Packed
// clips (PackedClip) stay in the caller's memory, like a ROM; the ones being played are copied
// into a ResourceCache of `slots` slots of `slot_bytes`, taken once at construction (from a
// BudgetArena, or the heap). A character locks its clip while it plays it; clips nobody locks
// are evicted least recently used first.
//
// Usage:
//
//   spindle::anim::ClipBank bank({.slots = 4, .slot_bytes = 16u << 10,
//                                 .arena = budget.arena("anim")});
//   auto walk = bank.add(rom_walk_bytes);  // at start-up: Result<BankedClipId>, checked here
//   ...
//   if (const spindle::anim::PackedClip* clip = bank.lock(walk.value())) {
//     spindle::anim::SamplingJob job{.packed = clip, .time = t, .cache = &cache, .output = local};
//     job.run();
//     bank.unlock(walk.value());  // or keep it locked for as long as the clip plays
//   } else {
//     // panic: every slot holds a clip someone has locked; the character holds its last pose
//   }
//
// Panic mode (CacheConfig::panic_mode "the character holds its last pose"): when every slot is
// locked, lock() and touch() return nullptr, counted in stats().panics and logged once through
// the arena. A clip is checked once, by add(); a copy in a slot is the same bytes, so lock()
// does not check it again. Not thread-safe: lock and unlock from one thread (a stage); the
// sampling jobs only read the clip.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <spindle/anim/packed_clip.h>
#include <spindle/base/budget.h>
#include <spindle/base/cache.h>
#include <spindle/base/result.h>

namespace spindle::anim {

// A clip added to a bank: 1, 2, ... in the order added (AnimationPlugin's ClipId is another
// thing: a clip the plugin owns).
enum class BankedClipId : std::uint32_t { None = 0 };

struct ClipBankConfig {
  std::uint32_t slots = 8;
  std::size_t slot_bytes = 16u << 10;  // rounded up to a multiple of 16
  std::uint32_t max_clips = 64;        // clips add() accepts
  core::BudgetArena* arena = nullptr;  // nullptr: the heap
};

class ClipBank {
 public:
  // Takes the slots and room for max_clips clips now (footprint()). An arena that refuses: a bank
  // that accepts no clips, and the arena logs it.
  explicit ClipBank(const ClipBankConfig& config);
  ~ClipBank();
  ClipBank(const ClipBank&) = delete;
  ClipBank& operator=(const ClipBank&) = delete;

  // Registers packed bytes that stay in the caller's memory, unchanged, for the bank's life.
  // Errors name the clip: bytes PackedClip::open() refuses, a clip bigger than a slot, more than
  // max_clips clips.
  core::Result<BankedClipId> add(std::span<const std::byte> packed);

  // The clip in a slot, loaded on a miss and locked until unlock(id); nullptr in the panic mode
  // (every slot locked) or for an id add() did not return.
  const PackedClip* lock(BankedClipId id);
  void unlock(BankedClipId id);
  // The clip in a slot, valid until the next lock() or touch() (one sample now).
  const PackedClip* touch(BankedClipId id);

  // The clip as added (in the caller's memory); nullptr for an unknown id.
  const PackedClip* source(BankedClipId id) const;
  std::uint32_t clip_count() const { return count_; }
  // The id add() gave the n-th clip added (1, 2, ...): the bank's table as a ROM index.
  static BankedClipId id_of(std::uint32_t n) { return static_cast<BankedClipId>(n); }
  const core::CacheStats& stats() const { return cache_.stats(); }
  const core::ResourceCache& cache() const { return cache_; }
  // Bytes taken at construction: the slots and the clip table.
  std::size_t footprint() const;

 private:
  struct Entry {
    PackedClip source;
    PackedClip loaded;  // source copied to entry's slot, while resident
    core::CacheEntry* entry = nullptr;
  };
  template <bool Lock>
  const PackedClip* acquire(BankedClipId id);
  Entry* entry_of(BankedClipId id) const;

  core::ResourceCache cache_;
  Entry* clips_ = nullptr;
  std::unique_ptr<Entry[]> owned_;  // without an arena
  std::uint32_t capacity_ = 0;
  std::uint32_t count_ = 0;
};

}  // namespace spindle::anim
