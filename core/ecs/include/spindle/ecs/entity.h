// Entity handles: an index into the world's slots plus the generation of that slot, so a handle
// to a destroyed entity is detected by every lookup instead of silently reaching its successor.
//
// Usage:
//
//   spindle::core::EntityPool pool(10'000);      // capacity fixed at start-up
//   spindle::core::Entity ship = pool.create();  // Entity::null() when the pool is full
//   pool.alive(ship);                            // true
//   pool.destroy(ship);                          // true; a second destroy returns false
//   pool.alive(ship);                            // false, even after the slot is reused
//
// Freed slots are reused oldest-first, so a slot's generation changes as rarely as possible;
// a slot whose generation would wrap is retired for good rather than ever repeating a handle.
// Not thread-safe: structural changes go through command buffers applied on one thread.
#pragma once

#include <cstdint>
#include <vector>

namespace spindle::core {

struct Entity {
  std::uint32_t index = ~0u;
  std::uint32_t generation = 0;

  static constexpr Entity null() { return {}; }
  constexpr bool is_null() const { return index == ~0u; }
  // One 64-bit value (generation high, index low), e.g. for hashing and sort keys.
  constexpr std::uint64_t bits() const {
    return (std::uint64_t{generation} << 32) | std::uint64_t{index};
  }
  friend constexpr bool operator==(Entity a, Entity b) {
    return a.index == b.index && a.generation == b.generation;
  }
};

class EntityPool {
 public:
  // `generation_limit` is for tests: a slot that reached it is retired.
  explicit EntityPool(std::uint32_t capacity, std::uint32_t generation_limit = ~0u - 1);

  // A new live handle, or Entity::null() when every slot is in use or retired.
  Entity create();
  // False (and nothing changes) for a stale or null handle.
  bool destroy(Entity entity);
  bool alive(Entity entity) const {
    return entity.index < generations_.size() && live_[entity.index] &&
           generations_[entity.index] == entity.generation;
  }
  // The live handle of slot `index`, or null.
  Entity at(std::uint32_t index) const {
    if (index >= generations_.size() || !live_[index]) return Entity::null();
    return {index, generations_[index]};
  }
  // Generation of every slot (for iteration that already knows a slot is live).
  const std::uint32_t* generations() const { return generations_.data(); }

  std::uint32_t size() const { return live_count_; }
  std::uint32_t capacity() const { return static_cast<std::uint32_t>(generations_.size()); }
  std::uint32_t retired() const { return retired_; }

 private:
  std::vector<std::uint32_t> generations_;
  std::vector<std::uint8_t> live_;
  // Ring of free slot indices: taken at head_, returned at tail_.
  std::vector<std::uint32_t> free_;
  std::uint32_t head_ = 0;
  std::uint32_t free_count_ = 0;
  std::uint32_t live_count_ = 0;
  std::uint32_t retired_ = 0;
  std::uint32_t generation_limit_;
};

}  // namespace spindle::core
