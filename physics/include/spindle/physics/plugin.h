// PhysicsPlugin: registers RigidBody and the physics events, and adds the Physics resource and
// its three stages (physics_sync -> physics_step -> physics_writeback; world.h).
//
// Usage:
//
//   auto& plugin = engine.add_plugin<spindle::physics::PhysicsPlugin>(
//       spindle::physics::PhysicsConfig{.gravity = {0, -9.81f, 0}});
//   spindle::physics::Physics& physics = plugin.physics();
#pragma once

#include <utility>

#include <spindle/engine/engine.h>
#include <spindle/physics/world.h>

namespace spindle::physics {

// Where the physics stages run: after gameplay (200), before transforms (400).
inline constexpr core::Phase kPhysicsPhase{"physics", 300};

class PhysicsPlugin final : public core::Plugin {
 public:
  explicit PhysicsPlugin(PhysicsConfig config = {}) : config_(std::move(config)) {}
  const char* name() const override { return "physics"; }
  // Stops with an assert (after logging why) when the config fails Physics::validate().
  void build(core::Engine& engine) override;
  Physics& physics() { return *physics_; }

 private:
  PhysicsConfig config_;
  Physics* physics_ = nullptr;
};

}  // namespace spindle::physics
