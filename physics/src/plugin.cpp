#include "spindle/physics/plugin.h"

#include <spindle/base/assert.h>
#include <spindle/base/log.h>
#include <spindle/gameplay/transform.h>
#include <spindle/physics/events.h>

namespace spindle::physics {

namespace {

// The engine phase the three stages run in.
constexpr core::Phase kPhase = kPhysicsPhase;

}  // namespace

void PhysicsPlugin::build(core::Engine& engine) {
  if (const core::Status ok = Physics::validate(config_); !ok) {
    SPINDLE_LOG_ERROR(Physics, "%s", ok.c_str());
    SPINDLE_ASSERT(false, "PhysicsPlugin: invalid PhysicsConfig (see the log)");
  }
  core::World& world = engine.world();
  world.register_component<RigidBody>("rigid_body");
  if (world.storage<core::Transform>() == nullptr)
    world.register_component<core::Transform>("transform");
  world.events<CollisionBegan>();
  world.events<CollisionEnded>();
  world.events<TriggerEntered>();
  world.events<TriggerExited>();
  world.events<BodyRejected>();
  physics_ = &world.set_resource<Physics>(config_, world.capacity());
  engine.add_stage(
      {.name = "physics_sync",
       .phase = kPhase,
       .access = core::Access{}.read<core::Transform>().write<RigidBody, Physics, BodyRejected>(),
       .run = [p = physics_](core::StageContext& ctx) { p->sync(ctx); }});
  engine.add_stage(
      {.name = "physics_step",
       .phase = kPhase,
       .access =
           core::Access{}
               .write<Physics, CollisionBegan, CollisionEnded, TriggerEntered, TriggerExited>(),
       .after = {"physics_sync"},
       .run = [p = physics_](core::StageContext& ctx) { p->step(ctx); }});
  engine.add_stage({.name = "physics_writeback",
                    .phase = kPhase,
                    .access = core::Access{}.read<Physics>().write<core::Transform, RigidBody>(),
                    .after = {"physics_step"},
                    .run = [p = physics_](core::StageContext& ctx) { p->writeback(ctx); }});
}

}  // namespace spindle::physics
