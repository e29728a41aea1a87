#include <spindle/ecs/type_id.h>

#include <atomic>

#include <spindle/base/assert.h>

namespace spindle::core::detail {

TypeId next_type_id() {
  static std::atomic<std::uint32_t> next{0};
  const std::uint32_t id = next.fetch_add(1, std::memory_order_relaxed);
  SPINDLE_ASSERTF(id < kMaxTypes, "at most %u component, event and resource types",
                  static_cast<unsigned>(kMaxTypes));
  return static_cast<TypeId>(id);
}

}  // namespace spindle::core::detail
