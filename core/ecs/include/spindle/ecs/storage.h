// Component storage: one sparse set per component type, owned by the World.
//
// Usage (games mostly go through World::add/get/remove and queries; the storage is for bulk
// access to one type):
//
//   spindle::core::ComponentStorage<Position>* s = world.storage<Position>();  // null:
//   unregistered for (Position& p : s->data()) p.y -= 1.0f;         // every Position, in dense
//   order std::span<const std::uint32_t> who = s->entities();  // entity index of each dense slot
//
// Adding and removing are O(1) and never move the entity's other components; removal moves the
// last slot into the hole. Each type reserves the world's capacity when it is registered, so no
// frame allocates. Components are plain values without padding or pointers, or give
// `std::uint64_t spindle_hash(const T&)` (found by argument-dependent lookup) for the state hash.
// Why sparse sets and not archetypes: docs/ecs.md.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <spindle/base/assert.h>
#include <spindle/base/hash.h>
#include <spindle/base/memory.h>
#include <spindle/ecs/type_id.h>

namespace spindle::core {

class World;

// What the World needs of every storage, whatever its type: membership, the dense entity
// array, and the byte-level operations that command buffers and the state hash use.
class ComponentStorageBase {
 public:
  static constexpr std::uint32_t kNone = ~0u;

  // `capacity` entity slots; room for `reserve` (<= capacity) components before growing.
  ComponentStorageBase(const char* name, TypeId id, std::uint32_t capacity, std::uint32_t reserve)
      : name_(name), id_(id), sparse_(capacity, kNone) {
    dense_.reserve(reserve);
  }
  virtual ~ComponentStorageBase() = default;
  ComponentStorageBase(const ComponentStorageBase&) = delete;
  ComponentStorageBase& operator=(const ComponentStorageBase&) = delete;

  const char* name() const { return name_; }
  TypeId id() const { return id_; }
  bool has(std::uint32_t index) const { return index < sparse_.size() && sparse_[index] != kNone; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(dense_.size()); }
  // Entity index of each dense slot.
  std::span<const std::uint32_t> entities() const { return dense_; }
  std::uint32_t dense_index(std::uint32_t index) const { return sparse_[index]; }
  // Dense slot of every entity index (kNone where absent); capacity() entries.
  const std::uint32_t* sparse_data() const { return sparse_.data(); }
  // Lowest dense slot whose entity changed since World::refresh_order() last ran.
  std::uint32_t first_changed_slot() const { return first_changed_; }

  virtual bool remove(std::uint32_t index) = 0;
  virtual void add_bytes(std::uint32_t index, const void* bytes, std::size_t size) = 0;
  virtual void hash_slot(std::uint32_t dense, Hasher& hasher) const = 0;
  virtual void clear() = 0;

 protected:
  const char* name_;
  TypeId id_;
  friend class World;
  void changed_at(std::uint32_t slot) {
    first_changed_ = slot < first_changed_ ? slot : first_changed_;
  }

  std::vector<std::uint32_t> sparse_;
  std::vector<std::uint32_t> dense_;
  std::uint32_t first_changed_ = 0;
};

template <class T>
std::uint64_t hash_component(const T& value) {
  if constexpr (requires {
                  { spindle_hash(value) } -> std::convertible_to<std::uint64_t>;
                }) {
    return spindle_hash(value);
  } else {
    static_assert(std::is_trivially_copyable_v<T>,
                  "a component that is not trivially copyable needs spindle_hash(const T&)");
    Hasher h;
    h.add_bytes(&value, sizeof(T));
    return h.value();
  }
}

template <class T>
class ComponentStorage final : public ComponentStorageBase {
 public:
  ComponentStorage(const char* name, std::uint32_t capacity, std::uint32_t reserve)
      : ComponentStorageBase(name, type_id<T>(), capacity, reserve) {
    data_.reserve(reserve);
    reserved_ = capacity * sizeof(std::uint32_t) + reserve * (sizeof(T) + sizeof(std::uint32_t));
    mem_book_reserve(MemTag::Core, reserved_);  // world memory shows in the memory statistics
  }
  ~ComponentStorage() override { mem_book_release(MemTag::Core, reserved_); }

  T* get(std::uint32_t index) { return has(index) ? &data_[sparse_[index]] : nullptr; }
  const T* get(std::uint32_t index) const { return has(index) ? &data_[sparse_[index]] : nullptr; }
  // Adds or replaces the component of entity slot `index`.
  template <class... A>
  T& emplace(std::uint32_t index, A&&... args) {
    SPINDLE_ASSERT(index < sparse_.size(), "component storage: entity index within capacity");
    if (has(index)) {
      T& slot = data_[sparse_[index]];
      slot = T{std::forward<A>(args)...};
      return slot;
    }
    sparse_[index] = static_cast<std::uint32_t>(dense_.size());
    changed_at(static_cast<std::uint32_t>(dense_.size()));
    dense_.push_back(index);
    data_.emplace_back(std::forward<A>(args)...);
    return data_.back();
  }
  bool remove(std::uint32_t index) override {
    if (!has(index)) return false;
    const std::uint32_t hole = sparse_[index];
    const std::uint32_t last = static_cast<std::uint32_t>(dense_.size() - 1);
    changed_at(hole);
    if (hole != last) {
      data_[hole] = std::move(data_[last]);
      dense_[hole] = dense_[last];
      sparse_[dense_[hole]] = hole;
    }
    data_.pop_back();
    dense_.pop_back();
    sparse_[index] = kNone;
    return true;
  }
  void add_bytes(std::uint32_t index, const void* bytes, std::size_t size) override {
    if constexpr (std::is_trivially_copyable_v<T>) {
      SPINDLE_ASSERT(size == sizeof(T), "command payload has the component's size");
      alignas(T) std::byte buffer[sizeof(T)];
      std::memcpy(buffer, bytes, sizeof(T));
      emplace(index, *std::launder(reinterpret_cast<T*>(buffer)));
    } else {
      (void)index, (void)bytes, (void)size;
      SPINDLE_ASSERT(false, "components added through command buffers are trivially copyable");
    }
  }
  void hash_slot(std::uint32_t dense, Hasher& hasher) const override {
    hasher.add(hash_component(data_[dense]));
  }
  void clear() override {
    changed_at(0);
    for (std::uint32_t index : dense_) sparse_[index] = kNone;
    dense_.clear();
    data_.clear();
  }

  std::span<T> data() { return data_; }
  std::span<const T> data() const { return data_; }

 private:
  std::vector<T> data_;
  std::size_t reserved_ = 0;
};

}  // namespace spindle::core
