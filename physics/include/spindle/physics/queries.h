// What the physics world's queries (Physics::raycast(), sweep_sphere(), sweep()) return.
//
// Usage (from a stage that declares read<Physics>()):
//
//   if (auto hit = physics.raycast(from, to)) aim_at(hit->entity, hit->point);
//
// Queries see every region and skip triggers. They may be called from parallel jobs of stages
// that read Physics (Bullet's broadphase keeps one ray stack, so queries take a lock); never
// while physics_step runs (the frame graph guarantees it for stages that declare
// read<Physics>()).
#pragma once

#include <glm/glm.hpp>

#include <spindle/ecs/entity.h>

namespace spindle::physics {

struct RayHit {
  core::Entity entity;
  glm::vec3 point{0.0f};
  glm::vec3 normal{0.0f};
  float fraction = 0;  // along from -> to
  float distance = 0;
};

}  // namespace spindle::physics
