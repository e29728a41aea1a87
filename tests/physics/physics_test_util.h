// Helpers shared by the physics tests: an engine with the physics plugin in any mode (Rig), with
// shapes and bodies made in one call, and every physics event collected as it is read.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/engine/engine.h>
#include <spindle/gameplay/transform.h>
#include <spindle/physics/physics.h>

#include "../core/test_support.h"

namespace spindle::physics::test {

using ::spindle::test::available_modes;

inline core::EngineConfig config_for(jobs::Mode mode, std::uint32_t workers) {
  return core::test::engine_config(mode, workers, 4096);
}

// Every physics event, in the order a stage read them.
struct EventLog {
  std::vector<CollisionBegan> began;
  std::vector<CollisionEnded> ended;
  std::vector<TriggerEntered> entered;
  std::vector<TriggerExited> exited;
  std::vector<BodyRejected> rejected;
};

struct Rig {
  explicit Rig(PhysicsConfig config = {}, jobs::Mode mode = jobs::Mode::Single,
               std::uint32_t workers = 1)
      : engine(config_for(mode, workers)),
        physics(engine.add_plugin<PhysicsPlugin>(std::move(config)).physics()) {
    engine.add_plugin<core::TransformPlugin>();
    engine.add_stage({.name = "event_log",
                      .phase = core::Phase::Gameplay,
                      .access = core::Access{}
                                    .read<CollisionBegan, CollisionEnded, TriggerEntered,
                                          TriggerExited, BodyRejected>(),
                      .run = [this](core::StageContext& ctx) {
                        core::World& w = ctx.world();
                        for (const auto& e : w.read_events<CollisionBegan>())
                          log.began.push_back(e);
                        for (const auto& e : w.read_events<CollisionEnded>())
                          log.ended.push_back(e);
                        for (const auto& e : w.read_events<TriggerEntered>())
                          log.entered.push_back(e);
                        for (const auto& e : w.read_events<TriggerExited>())
                          log.exited.push_back(e);
                        for (const auto& e : w.read_events<BodyRejected>())
                          log.rejected.push_back(e);
                      }});
  }

  ShapeId shape(const ShapeDesc& d) {
    auto r = physics.create_shape(d);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.value_or(ShapeId{});
  }
  core::Entity body(glm::vec3 at, const RigidBody& b, glm::quat rot = glm::quat(1, 0, 0, 0)) {
    core::World& w = engine.world();
    const core::Entity e = w.create();
    w.add<core::Transform>(e, core::Transform::from(at, rot));
    w.add<core::WorldTransform>(e);
    w.add<RigidBody>(e, b);
    return e;
  }
  core::Entity ground() {
    return body({0, 0, 0}, RigidBody::fixed(shape(ShapeDesc::plane({0, 1, 0}, 0))));
  }
  glm::vec3 position(core::Entity e) {
    return engine.world().get<core::Transform>(e)->translation();
  }
  const RigidBody& rb(core::Entity e) { return *engine.world().get<RigidBody>(e); }
  void run(int steps) {
    for (int i = 0; i < steps; ++i) engine.step();
  }

  core::Engine engine;
  Physics& physics;
  EventLog log;
};

}  // namespace spindle::physics::test
