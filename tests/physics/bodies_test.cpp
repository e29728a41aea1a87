// Bodies: falling, resting and stacking, forces over sub-steps and impulses once, kinematic
// targets and teleports, removal (and what rested on a removed body), and bad bodies or inputs
// rejected with messages, logged once.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "physics_test_util.h"

namespace spindle::physics {
namespace {

using core::Entity;
using core::Transform;
using test::Rig;

TEST(Physics, BodiesFallLoseEnergyAndComeToRest) {
  Rig rig;
  RigidBody floor = RigidBody::fixed(rig.shape(ShapeDesc::plane({0, 1, 0}, 0)));
  floor.restitution = 1.0f;  // Bullet multiplies the two restitutions
  rig.body({0, 0, 0}, floor);
  RigidBody ball = RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.5f)), 2.0f);
  ball.restitution = 0.5f;
  const Entity e = rig.body({0, 5, 0}, ball);
  const float g = 9.81f;
  float previous = 2.0f * g * 5.0f;  // all potential at the start (mass 2, height 5)
  float lowest = 100;
  std::vector<float> apexes;  // heights where the ball turns from rising to falling
  float last_vy = 0;
  for (int i = 0; i < 600; ++i) {
    rig.engine.step();
    const glm::vec3 v = rig.rb(e).linear_velocity();
    const float y = rig.position(e).y;
    const float energy = 0.5f * 2.0f * glm::dot(v, v) + 2.0f * g * y;
    // Energy never grows, except for the contact solver pushing a resting ball out of a slight
    // penetration (a few hundredths of a joule here).
    EXPECT_LE(energy, previous + 0.1f) << "step " << i;
    previous = std::min(previous, energy);
    lowest = std::min(lowest, y);
    if (last_vy > 0.05f && v.y <= 0.0f) apexes.push_back(y);
    last_vy = v.y;
  }
  ASSERT_GE(apexes.size(), 2u);  // it bounced (restitution 0.5)
  for (std::size_t i = 1; i < apexes.size(); ++i) EXPECT_LT(apexes[i], apexes[i - 1]);
  EXPECT_LT(apexes[0], 5.0f);
  EXPECT_LT(previous, 2.0f * g * 0.6f);         // ends with about the resting ball's energy
  EXPECT_NEAR(rig.position(e).y, 0.5f, 0.02f);  // resting on the plane
  EXPECT_GT(lowest, 0.4f);                      // never went through it
  EXPECT_LT(glm::length(rig.rb(e).linear_velocity()), 0.01f);
  EXPECT_TRUE(rig.rb(e).sleeping());
  EXPECT_TRUE(rig.rb(e).simulated());
}

TEST(Physics, AStackOfBoxesStaysUp) {
  Rig rig;
  rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  std::vector<Entity> stack;
  for (int i = 0; i < 6; ++i)
    stack.push_back(rig.body({0, 0.5f + static_cast<float>(i), 0}, RigidBody::dynamic(box, 1.0f)));
  rig.run(300);
  for (int i = 0; i < 6; ++i) {
    const glm::vec3 p = rig.position(stack[i]);
    EXPECT_NEAR(p.y, 0.5f + static_cast<float>(i), 0.05f) << "box " << i;
    EXPECT_LT(std::abs(p.x) + std::abs(p.z), 0.05f) << "box " << i;
  }
}

TEST(Physics, ForcesApplyOnEverySubstepAndImpulsesOnce) {
  PhysicsConfig config;
  config.substeps = 4;
  Rig rig(config);
  const ShapeId ball = rig.shape(ShapeDesc::sphere(0.5f));
  RigidBody hover_desc = RigidBody::dynamic(ball, 2.0f);
  hover_desc.flags = RigidBody::kNeverSleep;
  const Entity hover = rig.body({0, 10, 0}, hover_desc);
  const Entity kicked = rig.body({10, 10, 0}, RigidBody::dynamic(ball, 2.0f));
  rig.engine.add_stage({.name = "thrust",
                        .phase = core::Phase::Gameplay,
                        .access = core::Access{}.write<RigidBody>(),
                        .run = [hover, kicked](core::StageContext& ctx) {
                          ctx.world().get<RigidBody>(hover)->add_force({0, 2.0f * 9.81f, 0});
                          if (ctx.tick() == 0)
                            ctx.world().get<RigidBody>(kicked)->add_impulse({4.0f, 0, 0});
                        }});
  rig.run(60);
  EXPECT_NEAR(rig.position(hover).y, 10.0f, 1e-3f);  // thrust cancels gravity on every sub-step
  EXPECT_NEAR(rig.rb(kicked).linear_velocity().x, 2.0f, 1e-4f);  // 4 N s on 2 kg, once
  EXPECT_NEAR(rig.position(kicked).x, 12.0f, 0.05f);             // 1 s at 2 m/s
}

TEST(Physics, KinematicBodiesFollowTheirTransformAndTeleportsMoveDynamicOnes) {
  Rig rig;
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity platform = rig.body({0, 0, 0}, RigidBody::kinematic(box));
  RigidBody floating = RigidBody::dynamic(box, 1.0f);
  const Entity crate = rig.body({0, 20, 0}, floating);
  rig.run(1);
  rig.engine.world().get<Transform>(platform)->set_translation({5, 0, 0});
  rig.engine.world().get<Transform>(crate)->set_translation({-5, 50, 0});
  rig.run(1);
  auto hit = rig.physics.raycast({5, 5, 0}, {5, -5, 0});
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entity, platform);
  EXPECT_NEAR(rig.position(crate).x, -5.0f, 1e-4f);
  EXPECT_GT(rig.position(crate).y, 49.0f);
}

TEST(Physics, RemovingASupportWakesWhatRestsOnIt) {
  Rig rig;
  rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity support = rig.body({0, 0.5f, 0}, RigidBody::fixed(box));
  const Entity top = rig.body({0, 1.5f, 0}, RigidBody::dynamic(box, 1));
  rig.run(200);
  ASSERT_TRUE(rig.rb(top).sleeping());
  rig.engine.world().destroy(support);
  rig.run(120);
  EXPECT_NEAR(rig.position(top).y, 0.5f, 0.02f);  // fell to the ground
}

TEST(Physics, RemovingTheTransformRemovesTheBody) {
  Rig rig;
  const Entity e = rig.body({0, 5, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.5f)), 1));
  rig.run(3);
  rig.engine.world().remove<Transform>(e);
  rig.run(3);
  EXPECT_EQ(rig.physics.stats().removed, 1u);
  EXPECT_EQ(rig.physics.region_objects(0), 0u);
}

TEST(Physics, ARejectedBodyIsSimulatedOnceItIsFixedAndReportedOnce) {
  Rig rig;
  core::test::ScopedLogCapture capture;
  core::World& w = rig.engine.world();
  const Entity e = w.create();
  w.add<RigidBody>(e, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.5f)), 1));  // no Transform
  rig.run(5);
  EXPECT_FALSE(rig.rb(e).simulated());
  EXPECT_EQ(rig.log.rejected.size(), 1u);
  w.add<Transform>(e, Transform::from({0, 5, 0}));
  rig.run(5);
  EXPECT_TRUE(rig.rb(e).simulated());
  EXPECT_LT(rig.position(e).y, 5.0f);
  EXPECT_EQ(rig.log.rejected.size(), 1u);
  EXPECT_EQ(rig.physics.stats().rejected, 1u);
}

TEST(Physics, NonFiniteForcesAndVelocitiesAreDroppedAndCounted) {
  Rig rig;
  rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity a = rig.body({0, 0.5f, 0}, RigidBody::dynamic(box, 1));
  const Entity b = rig.body({1.0f, 0.5f, 0}, RigidBody::dynamic(box, 1));
  core::test::ScopedLogCapture capture;
  rig.engine.add_stage({.name = "vandal",
                        .phase = core::Phase::Gameplay,
                        .access = core::Access{}.write<RigidBody>(),
                        .run = [a](core::StageContext& ctx) {
                          RigidBody& body = *ctx.world().get<RigidBody>(a);
                          body.add_impulse({NAN, 0, 0});
                          body.add_force({0, INFINITY, 0});
                          body.set_linear_velocity({1e30f, 0, 0});
                        }});
  rig.run(30);
  EXPECT_EQ(rig.physics.stats().bad_inputs, 90u);
  EXPECT_EQ(capture.count(core::LogLevel::Warning), 1u);  // logged once, counted always
  for (Entity e : {a, b}) {
    EXPECT_TRUE(std::isfinite(rig.position(e).x));
    EXPECT_NEAR(rig.position(e).y, 0.5f, 0.02f);
  }
}

TEST(Physics, BodiesWithAParentOrTooLittleInertiaAreRejected) {
  Rig rig;
  core::test::ScopedLogCapture capture;
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity root = rig.body({0, 0, 0}, RigidBody::fixed(box));
  const Entity child = rig.body({0, 2, 0}, RigidBody::dynamic(box, 1));
  rig.engine.world().add<core::Parent>(child, core::Parent{root});
  const Entity feather = rig.body({3, 2, 0}, RigidBody::dynamic(box, 1e-39f));
  rig.run(2);
  EXPECT_FALSE(rig.rb(child).simulated());
  EXPECT_FALSE(rig.rb(feather).simulated());
  EXPECT_EQ(rig.physics.stats().rejected, 2u);
  EXPECT_FALSE(rig.physics.create_shape(ShapeDesc::box({1e-6f, 1, 1})).ok());  // below 0.1 mm
}

TEST(Physics, BadBodiesAreRejectedAndTheRestSimulates) {
  Rig rig;
  rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const ShapeId mesh =
      rig.shape(ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, {0, 1, 2}));
  RigidBody heavy_static = RigidBody::fixed(box);
  heavy_static.mass = 5;
  RigidBody heavy_mesh = RigidBody::dynamic(mesh, 3);
  RigidBody no_mass = RigidBody::dynamic(box, 0);
  RigidBody nan_mass = RigidBody::dynamic(box, NAN);
  RigidBody bad_friction = RigidBody::dynamic(box, 1);
  bad_friction.friction = -1;
  RigidBody no_shape = RigidBody::dynamic(ShapeId{77}, 1);
  EXPECT_NE(rig.physics.validate(heavy_static).message().find("has mass 5"), std::string::npos);
  EXPECT_NE(rig.physics.validate(heavy_mesh).message().find("mass on a static mesh"),
            std::string::npos);
  EXPECT_NE(rig.physics.validate(no_mass).message().find("mass"), std::string::npos);
  EXPECT_NE(rig.physics.validate(nan_mass).message().find("mass"), std::string::npos);
  EXPECT_NE(rig.physics.validate(bad_friction).message().find("friction"), std::string::npos);
  EXPECT_NE(rig.physics.validate(no_shape).message().find("names no shape"), std::string::npos);

  core::test::ScopedLogCapture capture;
  std::vector<Entity> bad;
  for (const RigidBody& b : {heavy_static, heavy_mesh, no_mass, nan_mass, bad_friction, no_shape})
    bad.push_back(rig.body({0, 3, 0}, b));
  bad.push_back(rig.body({0, 3, 0}, RigidBody::dynamic(box, 1),
                         glm::quat(NAN, 0, 0, 0)));  // non-finite transform
  const Entity good = rig.body({2, 3, 0}, RigidBody::dynamic(box, 1));
  rig.run(120);
  EXPECT_EQ(rig.physics.stats().rejected, bad.size());
  ASSERT_EQ(rig.log.rejected.size(), bad.size());
  for (std::size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(rig.log.rejected[i].entity, bad[i]);
    EXPECT_FALSE(rig.rb(bad[i]).simulated());
  }
  EXPECT_EQ(capture.count(core::LogLevel::Error), bad.size());  // logged once each, not per step
  EXPECT_NEAR(rig.position(good).y, 0.5f, 0.02f);
}

}  // namespace
}  // namespace spindle::physics
