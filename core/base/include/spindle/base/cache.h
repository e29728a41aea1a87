// A resource cache with a fixed footprint, as the N64 article describes them: `slots` entries of
// at most `slot_bytes` each, all taken once at construction (from a BudgetArena, or the heap),
// found by a 64-bit key (a texture, mesh, sound or clip id). lock() pins an entry until unlock();
// touch() gives one valid until the next lock() or touch() on the cache. A miss loads into the
// least recently used unlocked entry. When every entry is locked the cache is in its panic mode:
// lock() and touch() return nullptr, counted and logged once, and the caller does what
// panic_mode says (the renderer skips the object, the mixer drops the quietest voice, ...).
//
// Usage:
//
//   spindle::core::ResourceCache textures({.name = "textures", .slots = 16,
//                                          .slot_bytes = 32u << 10,
//                                          .panic_mode = "the object is drawn flat"},
//                                         budget.arena("render"));  // nullptr: the heap
//   spindle::core::CacheEntry* e = textures.lock(id, [&](std::span<std::byte> out) {
//     return decode_texture(id, out);  // bytes written (<= out.size()), or 0: cannot load
//   });
//   if (e == nullptr) {
//     draw_flat();  // every entry locked (panic), or the load failed
//   } else {
//     draw(e->bytes());
//     textures.unlock(e);
//   }
//
// Lookups are a probe of an index twice the size of the cache; a miss also scans the entries for
// the least recently used one (loading costs far more). Not thread-safe: one owner (a stage).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <spindle/base/budget.h>

namespace spindle::core {

struct CacheConfig {
  const char* name = "cache";
  std::uint32_t slots = 16;
  std::size_t slot_bytes = 4096;
  const char* panic_mode = "the caller skips the resource";
};

struct CacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;         // loads attempted
  std::uint64_t evictions = 0;      // entries replaced by a load
  std::uint64_t load_failures = 0;  // the loader returned 0
  std::uint64_t panics = 0;         // every entry locked: nothing could be loaded
  std::uint32_t resident = 0;       // entries holding a resource now
  std::uint32_t locked = 0;         // entries locked now
};

class CacheEntry {
 public:
  std::uint64_t key() const { return key_; }
  std::span<std::byte> bytes() const { return {data_, size_}; }  // what the loader wrote
  std::uint32_t locks() const { return locks_; }

 private:
  friend class ResourceCache;
  std::byte* data_ = nullptr;
  std::uint64_t key_ = 0;
  std::uint64_t last_use_ = 0;
  std::size_t size_ = 0;
  std::uint32_t locks_ = 0;
  bool resident_ = false;
};

class ResourceCache {
 public:
  // Takes slots * (slot_bytes + an entry and two index words) now, from `arena` when given (a
  // refusal there: a cache of 0 entries, which panics at every load, and the arena logs it).
  explicit ResourceCache(const CacheConfig& config, BudgetArena* arena = nullptr);
  ~ResourceCache();
  ResourceCache(const ResourceCache&) = delete;
  ResourceCache& operator=(const ResourceCache&) = delete;

  // The entry of `key`, loaded with `load(std::span<std::byte>) -> std::size_t` on a miss;
  // locked (lock()) or valid until the next call (touch()). nullptr: panic or failed load.
  template <class Load>
  CacheEntry* lock(std::uint64_t key, Load&& load) {
    CacheEntry* e = find_or_load(key, load);
    if (e != nullptr && e->locks_++ == 0) ++stats_.locked;
    return e;
  }
  template <class Load>
  CacheEntry* touch(std::uint64_t key, Load&& load) {
    return find_or_load(key, load);
  }
  void unlock(CacheEntry* entry);
  // The entry of `key` if resident (no load, no use recorded), else nullptr.
  const CacheEntry* find(std::uint64_t key) const;
  // Drops every unlocked entry (a level change).
  void clear();

  const CacheConfig& config() const { return config_; }
  std::uint32_t capacity() const { return slots_; }  // 0 if its memory was refused
  std::size_t footprint() const { return footprint_; }
  const CacheStats& stats() const { return stats_; }

 private:
  template <class Load>
  CacheEntry* find_or_load(std::uint64_t key, Load& load) {
    ++tick_;
    if (CacheEntry* e = lookup(key)) {
      ++stats_.hits;
      e->last_use_ = tick_;
      return e;
    }
    CacheEntry* e = victim();
    if (e == nullptr) return nullptr;  // panic: counted and logged by victim()
    ++stats_.misses;
    const std::size_t size = load(std::span<std::byte>(e->data_, config_.slot_bytes));
    if (size == 0 || size > config_.slot_bytes) {
      ++stats_.load_failures;
      return nullptr;
    }
    e->key_ = key;
    e->size_ = size;
    e->last_use_ = tick_;
    e->resident_ = true;
    ++stats_.resident;
    insert(e);
    return e;
  }

  CacheEntry* lookup(std::uint64_t key) const;
  // The free or least recently used unlocked entry, emptied and out of the index; nullptr and a
  // panic when all are locked.
  CacheEntry* victim();
  void insert(CacheEntry* e);
  void erase(const CacheEntry* e);
  std::uint32_t home(std::uint64_t key) const;

  CacheConfig config_;
  std::uint32_t slots_ = 0;
  std::size_t footprint_ = 0;
  CacheEntry* entries_ = nullptr;
  std::uint32_t* index_ = nullptr;  // entry + 1 per position, 0 where empty; mask_ + 1 positions
  std::uint32_t mask_ = 0;
  std::byte* data_ = nullptr;
  std::unique_ptr<std::byte[]> owned_;  // without an arena
  std::uint64_t tick_ = 0;
  CacheStats stats_;
  bool logged_panic_ = false;
  char name_[32] = {};
  char panic_mode_[80] = {};
};

}  // namespace spindle::core
