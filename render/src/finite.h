// Finiteness checks shared by the renderer's input validation (internal to render/src).
#pragma once

#include <cmath>

#include <glm/glm.hpp>

namespace spindle::render::detail {

inline bool finite(glm::vec2 v) {
  return std::isfinite(v.x) && std::isfinite(v.y);
}
inline bool finite(glm::vec3 v) {
  return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z);
}
inline bool finite(glm::vec4 v) {
  return finite(glm::vec3(v)) && std::isfinite(v.w);
}

}  // namespace spindle::render::detail
