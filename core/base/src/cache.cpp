#include <spindle/base/cache.h>

#include <cstring>
#include <new>

#include <spindle/base/hash.h>
#include <spindle/base/log.h>

#include "bits.h"

namespace spindle::core {
namespace {

using detail::copy_text;
using detail::round_up;

}  // namespace

ResourceCache::ResourceCache(const CacheConfig& config, BudgetArena* arena) : config_(config) {
  copy_text(name_, sizeof name_, config.name);
  copy_text(panic_mode_, sizeof panic_mode_, config.panic_mode);
  config_.name = name_;
  config_.panic_mode = panic_mode_;
  config_.slot_bytes = round_up(config.slot_bytes == 0 ? 1 : config.slot_bytes, 16);
  std::uint32_t positions = 2;
  while (positions < 2 * config.slots && positions < (1u << 30)) positions *= 2;
  const std::size_t data_bytes = config.slots * config_.slot_bytes;
  const std::size_t entry_bytes = round_up(config.slots * sizeof(CacheEntry), 16);
  const std::size_t index_bytes = round_up(positions * sizeof(std::uint32_t), 16);
  const bool sane = config.slots != 0 && data_bytes / config.slots == config_.slot_bytes;
  const std::size_t total = data_bytes + entry_bytes + index_bytes;
  std::byte* block = nullptr;
  if (sane && arena != nullptr) {
    block = static_cast<std::byte*>(arena->allocate(total, 16));
  } else if (sane) {
    owned_.reset(new (std::nothrow) std::byte[total]);
    block = owned_.get();
  }
  if (block == nullptr) {
    if (arena == nullptr)
      SPINDLE_LOG_ERROR(Memory, "cache '%s': %u entries of %zu bytes do not fit; it holds none",
                        name_, config.slots, config_.slot_bytes);
    return;
  }
  slots_ = config.slots;
  footprint_ = total;
  mask_ = positions - 1;
  data_ = block;
  entries_ = reinterpret_cast<CacheEntry*>(block + data_bytes);
  index_ = reinterpret_cast<std::uint32_t*>(block + data_bytes + entry_bytes);
  for (std::uint32_t i = 0; i < slots_; ++i) {
    ::new (&entries_[i]) CacheEntry();
    entries_[i].data_ = data_ + i * config_.slot_bytes;
  }
  for (std::uint32_t i = 0; i <= mask_; ++i) index_[i] = 0;
}

ResourceCache::~ResourceCache() = default;

std::uint32_t ResourceCache::home(std::uint64_t key) const {
  return static_cast<std::uint32_t>(mix64(key)) & mask_;
}

CacheEntry* ResourceCache::lookup(std::uint64_t key) const {
  if (slots_ == 0) return nullptr;
  for (std::uint32_t p = home(key);; p = (p + 1) & mask_) {
    const std::uint32_t slot = index_[p];
    if (slot == 0) return nullptr;  // at most half full: an empty position ends every probe
    if (entries_[slot - 1].key_ == key) return &entries_[slot - 1];
  }
}

const CacheEntry* ResourceCache::find(std::uint64_t key) const {
  return lookup(key);
}

void ResourceCache::insert(CacheEntry* e) {
  std::uint32_t p = home(e->key_);
  while (index_[p] != 0) p = (p + 1) & mask_;
  index_[p] = static_cast<std::uint32_t>(e - entries_) + 1;
}

void ResourceCache::erase(const CacheEntry* e) {
  const std::uint32_t slot = static_cast<std::uint32_t>(e - entries_) + 1;
  std::uint32_t p = home(e->key_);
  while (index_[p] != slot) p = (p + 1) & mask_;
  // Backward shift: later entries of the run move up so no probe meets a hole early.
  for (std::uint32_t q = (p + 1) & mask_; index_[q] != 0; q = (q + 1) & mask_) {
    const std::uint32_t h = home(entries_[index_[q] - 1].key_);
    // Movable to p when its home is not in the cyclic range (p, q].
    const bool between = p <= q ? (h > p && h <= q) : (h > p || h <= q);
    if (!between) {
      index_[p] = index_[q];
      p = q;
    }
  }
  index_[p] = 0;
}

CacheEntry* ResourceCache::victim() {
  CacheEntry* best = nullptr;
  for (std::uint32_t i = 0; i < slots_; ++i) {
    CacheEntry& e = entries_[i];
    if (!e.resident_) {
      best = &e;
      break;
    }
    if (e.locks_ == 0 && (best == nullptr || e.last_use_ < best->last_use_)) best = &e;
  }
  if (best == nullptr) {
    ++stats_.panics;
    if (!logged_panic_) {
      logged_panic_ = true;
      SPINDLE_LOG_WARNING(Memory, "cache '%s': all %u entries are locked; panic mode: %s", name_,
                          slots_, panic_mode_);
    }
    return nullptr;
  }
  if (best->resident_) {
    erase(best);
    best->resident_ = false;
    best->size_ = 0;
    --stats_.resident;
    ++stats_.evictions;
  }
  return best;
}

void ResourceCache::unlock(CacheEntry* entry) {
  SPINDLE_ASSERTF(entry != nullptr && entry->locks_ > 0,
                  "cache '%s': unlock of an entry that is not locked", name_);
  if (entry == nullptr || entry->locks_ == 0) return;
  if (--entry->locks_ == 0) --stats_.locked;
}

void ResourceCache::clear() {
  for (std::uint32_t i = 0; i < slots_; ++i) {
    CacheEntry& e = entries_[i];
    if (!e.resident_ || e.locks_ != 0) continue;
    erase(&e);
    e.resident_ = false;
    e.size_ = 0;
    --stats_.resident;
  }
}

}  // namespace spindle::core
