// The RigidBody component: a body's configuration (read once, when physics_sync creates its
// Bullet body), the requests systems make of it (forces, impulses, velocities) and what the
// last step wrote back (velocities, sleep state, region).
//
// Usage:
//
//   world.add<spindle::core::Transform>(e, spindle::core::Transform::from({0, 5, 0}));
//   world.add<spindle::physics::RigidBody>(e, spindle::physics::RigidBody::dynamic(box, 1.0f));
//   // In a system with write<RigidBody>(): body.add_impulse({0, 5, 0});
//   // After the next step: body.linear_velocity(), body.sleeping().
//
// Bodies are roots: the Transform of an entity with a RigidBody is its world pose (a Parent is
// rejected); scale is ignored. Kinematic bodies ignore forces and follow their Transform; like
// Bullet's defaults otherwise, kinematic and static bodies are tested against each other
// (give them groups and masks to skip it).
//
// Physics::validate() rejects bodies with a bad mass (dynamic: 1e-6 to 1e9), an unknown shape,
// mass on a static mesh or bad material values; at sync, bodies without a finite Transform
// within 1e7 m, with a Parent, or whose inverse inertia is infinite are rejected too. A rejected
// body is not simulated: it is logged once (Physics channel), counted in stats().rejected, and a
// BodyRejected event names it; it is checked again every step, so adding the missing piece
// brings it to life. Non-finite or huge forces, impulses, velocities and teleports are dropped
// and counted in stats().bad_inputs (logged once).
#pragma once

#include <cstdint>

#include <glm/glm.hpp>

#include <spindle/physics/shapes.h>

namespace spindle::physics {

enum class BodyType : std::uint32_t { Dynamic, Kinematic, Static };

// The stages' access to a RigidBody's private part (physics/src/bodies.h).
struct BodyAccess;

// A rigid body. Configuration is read when the body is created (at the next physics_sync);
// changing it afterwards has no effect except through the setters below. Forces and impulses
// accumulate until the next step and are then cleared. Velocities and sleep state are written
// back after every step. All fields are 4-byte so the component hashes without padding.
struct RigidBody {
  static constexpr std::uint32_t kTrigger = 1;     // overlap volume: events, no response
  static constexpr std::uint32_t kNeverSleep = 2;  // stays active

  ShapeId shape;
  BodyType type = BodyType::Dynamic;
  float mass = 1.0f;  // dynamic: > 0; kinematic and static: 0
  float friction = 0.5f;
  float restitution = 0.0f;
  float linear_damping = 0.0f;
  float angular_damping = 0.0f;
  std::uint32_t flags = 0;
  std::uint32_t group = 1;           // collision filter: a and b collide when
  std::uint32_t mask = 0xffffffffu;  // (a.group & b.mask) && (b.group & a.mask)

  static RigidBody dynamic(ShapeId shape, float mass) {
    RigidBody b;
    b.shape = shape;
    b.mass = mass;
    return b;
  }
  static RigidBody fixed(ShapeId shape) {
    RigidBody b;
    b.shape = shape;
    b.type = BodyType::Static;
    b.mass = 0;
    return b;
  }
  static RigidBody kinematic(ShapeId shape) {
    RigidBody b = fixed(shape);
    b.type = BodyType::Kinematic;
    return b;
  }

  // From systems (write access to RigidBody), applied at the next step.
  void add_force(glm::vec3 f) { force_ += f; }
  void add_torque(glm::vec3 t) { torque_ += t; }
  void add_impulse(glm::vec3 i) { impulse_ += i; }
  void add_angular_impulse(glm::vec3 i) { angular_impulse_ += i; }
  void set_linear_velocity(glm::vec3 v) {
    new_linear_ = v;
    pending_ |= kSetLinear;
  }
  void set_angular_velocity(glm::vec3 v) {
    new_angular_ = v;
    pending_ |= kSetAngular;
  }

  // Written after each step.
  glm::vec3 linear_velocity() const { return linear_velocity_; }
  glm::vec3 angular_velocity() const { return angular_velocity_; }
  bool sleeping() const { return state_ & kSleeping; }
  bool simulated() const { return state_ & kSimulated; }  // has a Bullet body
  std::uint32_t region() const { return region_; }

 private:
  friend struct BodyAccess;
  static constexpr std::uint32_t kSetLinear = 1, kSetAngular = 2;
  static constexpr std::uint32_t kSleeping = 1, kSimulated = 2;
  glm::vec3 force_{0.0f}, torque_{0.0f}, impulse_{0.0f}, angular_impulse_{0.0f};
  glm::vec3 new_linear_{0.0f}, new_angular_{0.0f};
  std::uint32_t pending_ = 0;
  glm::vec3 linear_velocity_{0.0f}, angular_velocity_{0.0f};
  std::uint32_t state_ = 0;
  std::uint32_t region_ = 0;
};

}  // namespace spindle::physics
