// Physics events: world events read exactly once (emitted in physics_step, read in the next
// step).
//
// Usage (a stage with read<CollisionBegan>()):
//
//   for (const spindle::physics::CollisionBegan& hit : world.read_events<CollisionBegan>()) ...
//
// CollisionBegan / CollisionEnded for pairs of solid bodies that start / stop touching, with the
// deepest contact point, its normal (from b towards a) and the summed impulse; TriggerEntered /
// TriggerExited for pairs involving a trigger (RigidBody::kTrigger: detects overlap, no
// response). Pairs are ordered (a.index < b.index) and sorted, so events come in the same order
// in every mode. A destroyed body ends its pairs with CollisionEnded / TriggerExited naming the
// (now stale) entity. BodyRejected names a body physics_sync could not simulate.
#pragma once

#include <glm/glm.hpp>

#include <spindle/ecs/entity.h>

namespace spindle::physics {

struct CollisionBegan {
  core::Entity a, b;  // a.index < b.index
  glm::vec3 point{0.0f};
  glm::vec3 normal{0.0f};  // from b towards a
  float impulse = 0;
};
struct CollisionEnded {
  core::Entity a, b;
};
struct TriggerEntered {
  core::Entity trigger, other;
};
struct TriggerExited {
  core::Entity trigger, other;
};
struct BodyRejected {
  core::Entity entity;
};

}  // namespace spindle::physics
