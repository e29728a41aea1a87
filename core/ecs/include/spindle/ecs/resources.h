// Resources: one value per type for what is not per entity (the score, the input state, a
// settings block), owned by the World.
//
// Usage (through the World):
//
//   struct Game { int score = 0; };
//   world.set_resource<Game>();                  // makes it (or replaces it) in place
//   if (Game* game = world.resource<Game>()) ++game->score;  // nullptr when never set
//
// A stage that reads or writes a resource names its type in its Access like a component's, so
// the frame graph orders it against the other users. Setting is a main-thread call between
// frames; reading is free of locks and allocations.
#pragma once

#include <array>
#include <memory>
#include <utility>

#include <spindle/ecs/type_id.h>

namespace spindle::core {

class Resources {
 public:
  // Makes the T from `args`, replacing (destroying) any previous one.
  template <class T, class... A>
  T& set(A&&... args) {
    auto& slot = slots_[type_id<T>()];
    slot = std::make_unique<Holder<T>>(std::forward<A>(args)...);
    return *static_cast<T*>(slot->value);
  }
  // nullptr when never set.
  template <class T>
  T* get() {
    auto& slot = slots_[type_id<T>()];
    return slot ? static_cast<T*>(slot->value) : nullptr;
  }
  template <class T>
  const T* get() const {
    const auto& slot = slots_[type_id<T>()];
    return slot ? static_cast<const T*>(slot->value) : nullptr;
  }
  // By type id: the value, or nullptr when never set.
  const void* get(TypeId id) const { return slots_[id] ? slots_[id]->value : nullptr; }

 private:
  // The value's address is kept beside the owner, so a lookup (often once per entity in a
  // system) is a load, not a virtual call.
  struct HolderBase {
    virtual ~HolderBase() = default;
    void* value = nullptr;
  };
  template <class T>
  struct Holder final : HolderBase {
    template <class... A>
    explicit Holder(A&&... args) : held(std::forward<A>(args)...) {
      value = &held;
    }
    T held;
  };

  std::array<std::unique_ptr<HolderBase>, kMaxTypes> slots_{};
};

}  // namespace spindle::core
