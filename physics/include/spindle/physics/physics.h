// Rigid bodies through Bullet, driven by the frame graph. The one include a game needs.
//
// Usage:
//
//   auto& physics = engine.add_plugin<spindle::physics::PhysicsPlugin>(
//       spindle::physics::PhysicsConfig{.gravity = {0, -9.81f, 0}});
//   spindle::physics::Physics& world = physics.physics();
//   auto box = world.create_shape(spindle::physics::ShapeDesc::box({0.5f, 0.5f, 0.5f}));
//   if (!box) { report(box.message()); return; }             // bad sizes: a message, no body
//   spindle::core::Entity e = engine.world().create();
//   engine.world().add<spindle::core::Transform>(e, spindle::core::Transform::from({0, 5, 0}));
//   engine.world().add<spindle::core::WorldTransform>(e);
//   engine.world().add<spindle::physics::RigidBody>(e, spindle::physics::RigidBody::dynamic(
//       box.value(), 1.0f));                                 // or cmd.spawn(...) from a system
//   // In a system: body.add_impulse({0, 5, 0}); body.set_linear_velocity(...);
//   // Next step: world.read_events<spindle::physics::CollisionBegan>(), body.linear_velocity().
//   // Queries (from any stage that reads Physics): world.raycast(from, to).
//
// One header per concept, each with its own notes:
//   shapes.h      ShapeDesc, ShapeId: shapes and what create_shape() rejects
//   rigid_body.h  the RigidBody component: configuration, requests, what a step writes back
//   events.h      CollisionBegan/Ended, TriggerEntered/Exited, BodyRejected
//   queries.h     RayHit, and when queries may run
//   world.h       Physics and PhysicsConfig: the stages, regions, stats
//   plugin.h      PhysicsPlugin
#pragma once

#include <spindle/physics/events.h>
#include <spindle/physics/plugin.h>
#include <spindle/physics/queries.h>
#include <spindle/physics/rigid_body.h>
#include <spindle/physics/shapes.h>
#include <spindle/physics/world.h>
