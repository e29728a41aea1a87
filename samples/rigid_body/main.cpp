// rigid_body: a first rigid body with the physics plugin. A bouncy ball is dropped from 5 m
// onto a ground plane; its height is printed as it bounces and comes to rest. The plugin steps
// Bullet inside the frame and writes each body's pose back to its Transform; collisions arrive as
// events. Passes when the ball bounced, lost height with every bounce and came to rest on the
// ground.
//
//   spindle_sample_rigid_body [--mode single|static|dynamic|tbb] [--workers N]
#include <cmath>
#include <cstdint>
#include <cstdio>

#include <spindle/spindle.h>  // with the physics plugin: <spindle/physics/physics.h>

#include "sample_args.h"

using namespace spindle;

int main(int argc, char** argv) {
  samples::SampleArgs args;
  if (!samples::parse_sample_args(argc, argv, args)) return 2;
  core::Engine engine(core::EngineConfig{.mode = args.mode, .workers = args.workers});
  core::World& world = engine.world();

  // The plugin adds the Physics resource, the RigidBody component, the collision events and its
  // stages (sync, step, writeback). Default config: gravity -9.81 along y, one Bullet world.
  physics::Physics& bodies = engine.add_plugin<physics::PhysicsPlugin>().physics();

  // Shapes are created once and shared by bodies; bad sizes give a message, not a crash.
  const core::Result<physics::ShapeId> ground_shape =
      bodies.create_shape(physics::ShapeDesc::plane({0, 1, 0}, 0.0f));
  const core::Result<physics::ShapeId> ball_shape =
      bodies.create_shape(physics::ShapeDesc::sphere(0.5f));
  if (!ground_shape || !ball_shape) {
    std::fprintf(stderr, "rigid_body: %s%s\n", ground_shape.message().c_str(),
                 ball_shape.message().c_str());
    return 1;
  }

  // A body is an entity with a Transform (its pose) and a RigidBody (what Bullet simulates).
  // Restitutions multiply: 0.8 x 0.8 keeps 64% of the speed at each bounce.
  const core::Entity ground = world.create();
  world.add<core::Transform>(ground, core::Transform::from({0, 0, 0}));
  physics::RigidBody ground_body = physics::RigidBody::fixed(ground_shape.value());
  ground_body.restitution = 0.8f;
  world.add<physics::RigidBody>(ground, ground_body);

  const core::Entity ball = world.create();
  world.add<core::Transform>(ball, core::Transform::from({0, 5, 0}));
  physics::RigidBody ball_body = physics::RigidBody::dynamic(ball_shape.value(), 1.0f);
  ball_body.restitution = 0.8f;
  world.add<physics::RigidBody>(ball, ball_body);

  int bounces = 0;
  float last_apex = 5.0f, previous_height = 5.0f;
  bool rising = false, apexes_fall = true;
  for (int step = 1; step <= 360; ++step) {  // 6 s of 60 Hz steps
    engine.step();
    // Collision events from the step are read once here (or by a system in the next step).
    for (const physics::CollisionBegan& c : world.read_events<physics::CollisionBegan>()) {
      if (c.a == ball || c.b == ball) ++bounces;
    }
    const float height = world.get<core::Transform>(ball)->translation().y;
    // An apex: the ball stopped rising. Each must be lower than the one before (hops of under
    // 5 cm, once contact has mostly settled, are not reported).
    if (rising && height < previous_height && previous_height > 0.55f) {
      apexes_fall = apexes_fall && previous_height < last_apex;
      last_apex = previous_height;
      std::printf("rigid_body: step %3d: up to %.2f m after bounce %d\n", step, last_apex, bounces);
    }
    rising = height > previous_height;
    previous_height = height;
    if (step % 60 == 0) std::printf("rigid_body: %d s: ball at %.3f m\n", step / 60, height);
  }

  const physics::RigidBody& final_body = *world.get<physics::RigidBody>(ball);
  const float height = world.get<core::Transform>(ball)->translation().y;
  const float speed = glm::length(final_body.linear_velocity());
  std::printf(
      "rigid_body: %s mode, %d bounce(s), at rest at %.3f m (speed %.4f m/s, %s), hash %016llx\n",
      jobs::to_string(engine.mode()), bounces, height, speed,
      final_body.sleeping() ? "asleep" : "awake",
      static_cast<unsigned long long>(world.state_hash()));
  // At rest means resting on the ground: the centre one radius above the plane.
  const bool ok = bounces >= 2 && apexes_fall && speed < 0.05f && std::fabs(height - 0.5f) < 0.02f;
  if (!ok) std::fprintf(stderr, "rigid_body: the ball did not bounce to rest on the ground\n");
  return ok ? 0 : 1;
}
