#include "spindle/ecs/entity.h"

namespace spindle::core {

EntityPool::EntityPool(std::uint32_t capacity, std::uint32_t generation_limit)
    : generations_(capacity, 0),
      live_(capacity, 0),
      free_(capacity),
      free_count_(capacity),
      generation_limit_(generation_limit) {
  for (std::uint32_t i = 0; i < capacity; ++i) free_[i] = i;
}

Entity EntityPool::create() {
  if (free_count_ == 0) return Entity::null();
  const std::uint32_t index = free_[head_];
  head_ = head_ + 1 == capacity() ? 0 : head_ + 1;
  --free_count_;
  live_[index] = 1;
  ++live_count_;
  return {index, generations_[index]};
}

bool EntityPool::destroy(Entity entity) {
  if (!alive(entity)) return false;
  live_[entity.index] = 0;
  --live_count_;
  if (generations_[entity.index] >= generation_limit_) {
    ++retired_;  // never handed out again: its next generation would repeat an old handle
    return true;
  }
  ++generations_[entity.index];
  const auto tail = static_cast<std::uint32_t>((std::uint64_t{head_} + free_count_) % capacity());
  free_[tail] = entity.index;
  ++free_count_;
  return true;
}

}  // namespace spindle::core
