// What counts as sane input for Bullet, shared by shapes, bodies, queries and the sync: the
// limits and the checks against them. Bad input never reaches Bullet.
#pragma once

#include <cmath>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

namespace spindle::physics {

inline constexpr float kMaxSize = 1e6f;  // larger than any sane game object; Bullet loses precision
inline constexpr float kMinSize =
    1e-4f;  // 0.1 mm: smaller shapes give Bullet infinite inverse inertia
inline constexpr float kMaxPosition = 1e7f;
// Forces, impulses and velocities beyond this are dropped as bad input.
inline constexpr float kMaxInput = 1e9f;

inline bool finite(float v) {
  return std::isfinite(v);
}
inline bool finite(glm::vec3 v) {
  return finite(v.x) && finite(v.y) && finite(v.z);
}
inline bool good_size(float v) {
  return finite(v) && v >= kMinSize && v <= kMaxSize;
}
// A usable rotation: finite, and its squared length neither overflows nor vanishes.
inline bool good_rotation(glm::quat q) {
  const float n = glm::dot(q, q);
  return finite(n) && n > 1e-12f;
}
inline bool good_position(glm::vec3 p) {
  return finite(p) && std::abs(p.x) <= kMaxPosition && std::abs(p.y) <= kMaxPosition &&
         std::abs(p.z) <= kMaxPosition;
}
inline bool good_input(glm::vec3 v) {
  return finite(v) && std::abs(v.x) <= kMaxInput && std::abs(v.y) <= kMaxInput &&
         std::abs(v.z) <= kMaxInput;
}

}  // namespace spindle::physics
