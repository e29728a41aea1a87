// Type ids: one small integer per component, event and resource type, the index into the World's
// per-type tables (storages, event queues, resources) and what stages name in their Access.
//
// Usage:
//
//   spindle::core::TypeId id = spindle::core::type_id<Position>();  // the same on every call
//
// Ids are handed out on first use, so they depend on the order a program first asks and are not
// stable between programs; nothing that must be deterministic (the state hash) depends on them.
// At most kMaxTypes types in one process; thread-safe.
#pragma once

#include <cstdint>

namespace spindle::core {

// Component, event and resource types share one id space, assigned on first use per process.
using TypeId = std::uint16_t;
inline constexpr TypeId kMaxTypes = 256;

namespace detail {
TypeId next_type_id();
}  // namespace detail

template <class T>
TypeId type_id() {
  static const TypeId id = detail::next_type_id();
  return id;
}

}  // namespace spindle::core
