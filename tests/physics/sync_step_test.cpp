// The sync and the step over whole frames: kinematic bodies over sub-steps and across regions,
// region migration keeping every body exactly once, and the same world hash in every mode and
// worker count.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "physics_test_util.h"

namespace spindle::physics {
namespace {

using core::Entity;
using core::Transform;
using test::available_modes;
using test::Rig;

TEST(Physics, KinematicBodiesMoveSmoothlyOverSubstepsAndAcrossRegions) {
  PhysicsConfig config;
  config.substeps = 4;
  config.region_boundaries = {0.0f};
  Rig rig(config);
  const Entity platform =
      rig.body({-5, 0, 0}, RigidBody::kinematic(rig.shape(ShapeDesc::box({2, 0.25f, 2}))));
  rig.run(1);
  EXPECT_EQ(rig.rb(platform).region(), 0u);
  // Carried at 3 m/s: Bullet sees that speed on every sub-step, not 4x on the first.
  rig.engine.add_stage({.name = "carry",
                        .phase = core::Phase::Gameplay,
                        .access = core::Access{}.write<Transform>(),
                        .run = [platform](core::StageContext& ctx) {
                          Transform& t = *ctx.world().get<Transform>(platform);
                          if (t.translation().x < 5.0f)
                            t.set_translation(t.translation() + glm::vec3(3.0f * ctx.dt(), 0, 0));
                        }});
  rig.run(30);
  EXPECT_NEAR(rig.rb(platform).linear_velocity().x, 3.0f, 1e-3f);
  rig.run(200);  // arrives at x = 5, in region 1
  EXPECT_EQ(rig.rb(platform).region(), 1u);
  const Entity ball =
      rig.body({5, 3, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.3f)), 1));
  rig.run(120);
  EXPECT_NEAR(rig.position(ball).y, 0.55f, 0.03f);  // landed on the platform, not through it
}

// Bodies thrown across two boundaries in both directions; after every step each body is in
// exactly one region, the one holding its centre.
TEST(Physics, RegionMigrationKeepsEveryBodyExactlyOnce) {
  PhysicsConfig config;
  config.gravity = glm::vec3(0.0f);
  config.region_boundaries = {-4.0f, 4.0f};
  Rig rig(config);
  const ShapeId ball = rig.shape(ShapeDesc::sphere(0.3f));
  const ShapeId wall = rig.shape(ShapeDesc::box({0.5f, 20, 20}));
  rig.body({-20, 0, 0}, RigidBody::fixed(wall));  // a static body in every region
  rig.body({20, 0, 0}, RigidBody::fixed(wall));
  std::vector<Entity> balls;
  for (int i = 0; i < 40; ++i) {
    RigidBody b = RigidBody::dynamic(ball, 1);
    b.restitution = 1;
    b.flags = RigidBody::kNeverSleep;
    const float x = -15.0f + 0.75f * static_cast<float>(i);
    const Entity e = rig.body({x, static_cast<float>(i % 5) - 2.0f, static_cast<float>(i % 3)}, b);
    rig.engine.world().get<RigidBody>(e)->set_linear_velocity(
        {(i % 2 ? 1.0f : -1.0f) * 12.0f, 0, 0});
    balls.push_back(e);
  }
  for (int step = 0; step < 200; ++step) {
    rig.engine.step();
    std::uint32_t total = 0;
    for (std::uint32_t r = 0; r < rig.physics.region_count(); ++r)
      total += rig.physics.region_objects(r) - 2;  // minus the two walls' copies
    ASSERT_EQ(total, balls.size()) << "step " << step;
    for (Entity e : balls)
      ASSERT_EQ(rig.rb(e).region(), rig.physics.region_of(rig.position(e))) << "step " << step;
  }
  EXPECT_GT(rig.physics.stats().migrated, 30u);
  for (Entity e : balls) EXPECT_LT(std::abs(rig.position(e).x), 20.0f);  // the walls held
}

// A pile in two regions plus spawning and destruction through commands.
std::uint64_t run_pile(jobs::Mode mode, std::uint32_t workers, int steps) {
  PhysicsConfig config;
  config.region_boundaries = {0.0f};
  config.substeps = 2;
  Rig rig(config, mode, workers);
  rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.4f, 0.4f, 0.4f}));
  // A kinematic paddle sweeping across the boundary, and a trigger zone.
  const Entity paddle = rig.body(
      {-4, 0.5f, 1.5f}, RigidBody::kinematic(rig.shape(ShapeDesc::box({0.3f, 0.5f, 2.0f}))));
  RigidBody zone = RigidBody::fixed(rig.shape(ShapeDesc::box({1, 1, 1})));
  zone.flags = RigidBody::kTrigger;
  rig.body({2, 1, 1}, zone);
  rig.engine.add_stage({.name = "paddle",
                        .phase = core::Phase::Gameplay,
                        .access = core::Access{}.write<Transform>(),
                        .run = [paddle](core::StageContext& ctx) {
                          const float x = -4.0f + 8.0f * std::abs(std::sin(0.02f * ctx.tick()));
                          ctx.world().get<Transform>(paddle)->set_translation({x, 0.5f, 1.5f});
                        }});
  rig.engine.add_system<RigidBody>("wind", [](core::StageContext& ctx, Entity e, RigidBody& b) {
    if ((e.index + ctx.tick()) % 7 == 0) b.add_force({0.0f, 0.0f, 3.0f});
  });
  const ShapeId ball = rig.shape(ShapeDesc::sphere(0.4f));
  for (int i = 0; i < 120; ++i) {
    const float x = static_cast<float>(i % 10) - 4.5f, z = static_cast<float>((i / 10) % 4);
    rig.body({x * 0.7f, 1.0f + static_cast<float>(i / 40), z * 0.9f},
             RigidBody::dynamic(i % 3 ? box : ball, 1.0f + static_cast<float>(i % 4)),
             glm::angleAxis(0.1f * static_cast<float>(i), glm::vec3(0, 1, 0)));
  }
  rig.engine.add_stage({.name = "churn",
                        .phase = core::Phase::Gameplay,
                        .access = core::Access{}.read<RigidBody>(),
                        .run = [box](core::StageContext& ctx) {
                          if (ctx.tick() % 10 != 5) return;
                          const auto t = static_cast<float>(ctx.tick() % 7);
                          ctx.commands().spawn(Transform::from({t - 3.0f, 6.0f, 1.0f}),
                                               core::WorldTransform{},
                                               RigidBody::dynamic(box, 1.0f));
                          const auto* s = ctx.world().storage<RigidBody>();
                          ctx.commands().destroy(ctx.world().entity_at(s->entities()[3]));
                        }});
  rig.run(steps);
  EXPECT_GT(rig.log.began.size(), 50u);
  EXPECT_GT(rig.log.entered.size(), 0u);
  EXPECT_GT(rig.physics.stats().migrated, 0u);
  return rig.engine.world().state_hash();
}

TEST(Physics, SameHashInEveryModeAndWorkerCount) {
  ::spindle::test::expect_same_in_every_mode(
      [](jobs::Mode mode, std::uint32_t workers) { return run_pile(mode, workers, 90); });
}

}  // namespace
}  // namespace spindle::physics
