// Bodies: what the stages read from and write into a RigidBody's private part, and a body's
// life on the Bullet side (created from a checked RigidBody, moved between regions, removed).
#pragma once

#include <cstdint>
#include <memory>

#include <btBulletDynamicsCommon.h>
#include <glm/glm.hpp>

#include <spindle/base/result.h>
#include <spindle/ecs/entity.h>
#include <spindle/engine/engine.h>
#include <spindle/gameplay/transform.h>
#include <spindle/physics/rigid_body.h>

#include "physics_impl.h"

namespace spindle::physics {

// The only code that touches RigidBody's private fields (RigidBody befriends it).
struct BodyAccess {
  // What systems asked of a body since the last step.
  struct Requests {
    bool set_linear = false, set_angular = false;
    glm::vec3 linear{0.0f}, angular{0.0f};  // the velocities to set
    glm::vec3 impulse{0.0f}, angular_impulse{0.0f}, force{0.0f}, torque{0.0f};
  };
  // Returns the requests and clears them.
  static Requests take_requests(RigidBody& b) {
    const Requests r{(b.pending_ & RigidBody::kSetLinear) != 0,
                     (b.pending_ & RigidBody::kSetAngular) != 0,
                     b.new_linear_,
                     b.new_angular_,
                     b.impulse_,
                     b.angular_impulse_,
                     b.force_,
                     b.torque_};
    b.pending_ = 0;
    b.force_ = b.torque_ = b.impulse_ = b.angular_impulse_ = glm::vec3(0.0f);
    return r;
  }
  static void mark_rejected(RigidBody& b) { b.state_ = 0; }
  static void mark_created(RigidBody& b, std::uint32_t region) {
    b.state_ = RigidBody::kSimulated;
    b.region_ = region;
  }
  // After a step: region and sleep state, and (dynamic and kinematic) velocities.
  static void write_state(RigidBody& b, std::uint32_t region, bool asleep) {
    b.region_ = region;
    b.state_ = RigidBody::kSimulated | (asleep ? RigidBody::kSleeping : 0u);
  }
  static void write_velocities(RigidBody& b, glm::vec3 linear, glm::vec3 angular) {
    b.linear_velocity_ = linear;
    b.angular_velocity_ = angular;
  }
};

// Why a new body cannot be simulated at `t` (which may be null), beyond Physics::validate():
// no Transform, a non-finite or far Transform, a Parent.
core::Status check_placement(const core::Transform* t, bool has_parent);

// A Bullet body for a checked RigidBody of entity `e`, at `t`, with the shape's inertia for
// `mass` (0 for kinematic and static bodies); not yet in any world.
std::unique_ptr<btRigidBody> make_bullet_body(const RigidBody& desc, btCollisionShape& shape,
                                              float mass, const btVector3& inertia,
                                              const core::Transform& t, core::Entity e);

// Takes a body (and a static body's copies) out of its worlds and frees it.
void remove_body(Physics::Impl& m, Physics::Impl::Slot& s);

// Moves every non-static body whose centre left its region into the region holding it, in the
// live list's (creation) order. Kinematic bodies moving this step go where their target is.
// Where each body belongs is found in parallel (it reads every body); the moves, few, serially.
// Returns the moves; counts awake dynamic bodies into `active` when given.
std::uint64_t migrate_bodies(Physics::Impl& m, const Physics& physics, core::StageContext& ctx,
                             std::uint32_t* active = nullptr);

}  // namespace spindle::physics
