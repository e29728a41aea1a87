// Between our types and Bullet's: GLM vectors and quaternions, and the entity a Bullet object
// belongs to (kept in its user indices).
#pragma once

#include <cstdint>

#include <btBulletDynamicsCommon.h>
#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <spindle/ecs/entity.h>

namespace spindle::physics {

inline btVector3 bt(glm::vec3 v) {
  return {v.x, v.y, v.z};
}
inline glm::vec3 gl(const btVector3& v) {
  return {v.x(), v.y(), v.z()};
}
inline btQuaternion bt(glm::quat q) {
  return {q.x, q.y, q.z, q.w};
}
inline glm::quat gl(const btQuaternion& q) {
  return {q.w(), q.x(), q.y(), q.z()};
}

inline core::Entity entity_of(const btCollisionObject* o) {
  return core::Entity{static_cast<std::uint32_t>(o->getUserIndex()),
                      static_cast<std::uint32_t>(o->getUserIndex2())};
}

}  // namespace spindle::physics
