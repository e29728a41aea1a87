#include "spindle/render/camera.h"

#include <glm/gtc/matrix_transform.hpp>

namespace spindle::render {

glm::mat4 Camera::view() const {
  return glm::lookAt(position, target, up);
}

glm::mat4 Camera::projection() const {
  return glm::perspective(fov_y_radians, aspect, near_plane, far_plane);
}

glm::mat4 Camera::view_projection() const {
  return projection() * view();
}

Frustum Frustum::from_matrix(const glm::mat4& m) {
  // GLM is column-major: m[column][row].
  auto row = [&m](int r) { return glm::vec4(m[0][r], m[1][r], m[2][r], m[3][r]); };
  const glm::vec4 r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3);
  Frustum f;
  f.planes[Left] = r3 + r0;
  f.planes[Right] = r3 - r0;
  f.planes[Bottom] = r3 + r1;
  f.planes[Top] = r3 - r1;
  f.planes[Near] = r3 + r2;
  f.planes[Far] = r3 - r2;
  for (glm::vec4& p : f.planes) {
    const float len = glm::length(glm::vec3(p));
    if (len > 0.0f) p /= len;
  }
  return f;
}

bool Frustum::intersects_sphere(glm::vec3 c, float radius) const {
  for (const glm::vec4& p : planes) {
    if (p.x * c.x + p.y * c.y + p.z * c.z + p.w < -radius) return false;
  }
  return true;
}

}  // namespace spindle::render
