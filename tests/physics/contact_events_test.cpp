// Contact events through Bullet: collisions and triggers begin and end exactly once, and a body
// destroyed mid-contact ends its pairs once. (The diff alone, without Bullet:
// contact_diff_job_test.cpp.)
#include <cmath>

#include <gtest/gtest.h>

#include "physics_test_util.h"

namespace spindle::physics {
namespace {

using core::Entity;
using test::Rig;

TEST(Physics, CollisionEventsBeginAndEndExactlyOnce) {
  Rig rig;
  const Entity floor = rig.ground();
  const Entity ball =
      rig.body({0, 2, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.5f)), 1.0f));
  rig.run(120);  // falls and lands
  ASSERT_EQ(rig.log.began.size(), 1u);
  EXPECT_TRUE(rig.log.ended.empty());
  const CollisionBegan& b = rig.log.began[0];
  EXPECT_EQ(b.a, floor);  // a has the smaller index
  EXPECT_EQ(b.b, ball);
  EXPECT_NEAR(b.point.y, 0.0f, 0.05f);
  EXPECT_NEAR(std::abs(b.normal.y), 1.0f, 1e-3f);
  EXPECT_GT(b.impulse, 0.0f);
  // Thrown up: the contact ends once, then begins again when it lands.
  rig.engine.world().get<RigidBody>(ball)->set_linear_velocity({0, 6, 0});
  rig.run(10);
  ASSERT_EQ(rig.log.ended.size(), 1u);
  EXPECT_EQ(rig.log.ended[0].a, floor);
  EXPECT_EQ(rig.log.ended[0].b, ball);
  rig.run(150);
  EXPECT_EQ(rig.log.began.size(), 2u);
  EXPECT_EQ(rig.log.ended.size(), 1u);
}

TEST(Physics, TriggersReportEnterAndExitOnceAndDoNotPush) {
  Rig rig;
  RigidBody zone = RigidBody::fixed(rig.shape(ShapeDesc::box({2, 0.5f, 2})));
  zone.flags = RigidBody::kTrigger;
  const Entity trigger = rig.body({0, 5, 0}, zone);
  const Entity ball =
      rig.body({0, 8, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.25f)), 1.0f));
  rig.run(120);  // falls through the zone and on into the void
  ASSERT_EQ(rig.log.entered.size(), 1u);
  ASSERT_EQ(rig.log.exited.size(), 1u);
  EXPECT_EQ(rig.log.entered[0].trigger, trigger);
  EXPECT_EQ(rig.log.entered[0].other, ball);
  EXPECT_EQ(rig.log.exited[0].trigger, trigger);
  EXPECT_TRUE(rig.log.began.empty());
  EXPECT_LT(rig.position(ball).y, 0.0f);  // the trigger did not stop it
}

TEST(Physics, DestroyingABodyMidContactIsSafeAndEndsItsPairsOnce) {
  Rig rig;
  const Entity floor = rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity a = rig.body({0, 0.5f, 0}, RigidBody::dynamic(box, 1.0f));
  const Entity b = rig.body({0, 1.5f, 0}, RigidBody::dynamic(box, 1.0f));
  rig.run(30);
  ASSERT_EQ(rig.log.began.size(), 2u);  // floor-a, a-b
  // Destroyed through a command buffer from a system while touching both.
  rig.engine.add_stage(
      {.name = "destroyer", .phase = core::Phase::Gameplay, .run = [a](core::StageContext& ctx) {
         if (ctx.tick() == 31) ctx.commands().destroy(a);
       }});
  rig.run(60);
  EXPECT_FALSE(rig.engine.world().alive(a));
  ASSERT_EQ(rig.log.ended.size(), 2u);
  for (const CollisionEnded& e : rig.log.ended) EXPECT_TRUE(e.a == a || e.b == a);
  // b falls onto the floor: a new pair, begun once.
  ASSERT_EQ(rig.log.began.size(), 3u);
  EXPECT_EQ(rig.log.began[2].a, floor);
  EXPECT_EQ(rig.log.began[2].b, b);
  EXPECT_NEAR(rig.position(b).y, 0.5f, 0.05f);
  EXPECT_EQ(rig.physics.stats().removed, 1u);
  // Removing the component alone removes the body too.
  rig.engine.world().remove<RigidBody>(b);
  rig.run(2);
  EXPECT_EQ(rig.physics.stats().removed, 2u);
  EXPECT_EQ(rig.physics.region_objects(0), 1u);  // the floor
}

}  // namespace
}  // namespace spindle::physics
