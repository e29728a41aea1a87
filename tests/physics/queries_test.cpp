// Queries: raycasts and sweeps hit the right body at the right distance, skip triggers and
// masked groups, and run from parallel systems in every mode.
#include <cmath>

#include <gtest/gtest.h>

#include "physics_test_util.h"

namespace spindle::physics {
namespace {

using core::Entity;
using core::Transform;
using test::available_modes;
using test::Rig;

TEST(Physics, RaycastsHitTheRightBodyAtTheRightDistance) {
  Rig rig;
  const Entity floor = rig.ground();
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  const Entity near_box = rig.body({3, 0.5f, 0}, RigidBody::fixed(box));
  const Entity far_box = rig.body({6, 0.5f, 0}, RigidBody::fixed(box));
  RigidBody zone = RigidBody::fixed(box);
  zone.flags = RigidBody::kTrigger;
  rig.body({1.5f, 0.5f, 0}, zone);  // rays pass through triggers
  rig.run(1);
  auto hit = rig.physics.raycast({0, 0.5f, 0}, {10, 0.5f, 0});
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entity, near_box);
  EXPECT_NEAR(hit->distance, 2.5f, 1e-3f);
  EXPECT_NEAR(hit->point.x, 2.5f, 1e-3f);
  EXPECT_NEAR(hit->normal.x, -1.0f, 1e-3f);
  hit = rig.physics.raycast({10, 0.5f, 0}, {4.5f, 0.5f, 0});
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entity, far_box);
  EXPECT_NEAR(hit->distance, 3.5f, 1e-3f);
  hit = rig.physics.raycast({0, 5, 0}, {0, -5, 0});
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entity, floor);
  EXPECT_NEAR(hit->distance, 5.0f, 1e-3f);
  EXPECT_FALSE(rig.physics.raycast({0, 5, 0}, {0, 20, 0}).has_value());
  auto sweep = rig.physics.sweep_sphere({0, 3, 0}, {0, -3, 0}, 0.5f);
  ASSERT_TRUE(sweep.has_value());
  EXPECT_EQ(sweep->entity, floor);
  EXPECT_NEAR(sweep->fraction * 6.0f, 2.5f, 0.05f);  // stops when the sphere's bottom touches
  EXPECT_FALSE(rig.physics.raycast({0, 0, 0}, {NAN, 0, 0}).has_value());
  // A box (half height 0.25) swept down stops 0.25 above the floor; a mesh cannot be swept.
  const ShapeId flat = rig.shape(ShapeDesc::box({0.25f, 0.25f, 0.25f}));
  auto box_sweep = rig.physics.sweep(flat, {-2, 3, 0}, {-2, -3, 0});
  ASSERT_TRUE(box_sweep.has_value());
  EXPECT_EQ(box_sweep->entity, floor);
  EXPECT_NEAR(box_sweep->fraction * 6.0f, 2.75f, 0.05f);
  const ShapeId mesh =
      rig.shape(ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, {0, 1, 2}));
  EXPECT_FALSE(rig.physics.sweep(mesh, {0, 3, 0}, {0, -3, 0}).has_value());
  EXPECT_FALSE(rig.physics.sweep(ShapeId{12345}, {0, 3, 0}, {0, -3, 0}).has_value());
}

// Systems cast rays in parallel (every mode): each probe finds the floor below it.
TEST(Physics, RaycastsFromParallelSystemsInEveryMode) {
  struct Probe {
    float height = 0;
  };
  for (jobs::Mode mode : available_modes()) {
    Rig rig({}, mode, 2);
    const Entity floor = rig.ground();
    const ShapeId step = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
    rig.body({100, 0.5f, 0}, RigidBody::fixed(step));
    core::World& w = rig.engine.world();
    w.register_component<Probe>("probe");
    for (int i = 0; i < 400; ++i) {
      const Entity e = w.create();
      w.add<Transform>(e, Transform::from({i % 2 ? 100.0f : -1.0f - static_cast<float>(i), 5, 0}));
    }
    for (std::uint32_t i = 0; i < w.storage<Transform>()->size(); ++i) {
      const Entity e = w.entity_at(w.storage<Transform>()->entities()[i]);
      if (!w.has<RigidBody>(e)) w.add<Probe>(e);
    }
    rig.engine.add_system<const Transform, Probe>(
        "probe",
        [floor](core::StageContext& ctx, Entity, const Transform& t, Probe& p) {
          const Physics& physics = *ctx.world().resource<Physics>();
          const auto hit = physics.raycast(t.translation(), t.translation() - glm::vec3(0, 10, 0));
          p.height = hit ? hit->point.y + (hit->entity == floor ? 0.0f : 1000.0f) : -1.0f;
        },
        core::Phase::Gameplay, {}, core::Access{}.read<Physics>());
    rig.run(2);
    std::uint32_t on_step = 0, on_floor = 0;
    for (const Probe& p : w.storage<Probe>()->data()) {
      if (std::abs(p.height - 1001.0f) < 1e-3f) ++on_step;
      if (std::abs(p.height) < 1e-3f) ++on_floor;
    }
    EXPECT_EQ(on_step, 200u) << jobs::to_string(mode);
    EXPECT_EQ(on_floor, 200u) << jobs::to_string(mode);
  }
}

TEST(Physics, RaycastMaskSkipsGroups) {
  Rig rig;
  const ShapeId box = rig.shape(ShapeDesc::box({0.5f, 0.5f, 0.5f}));
  RigidBody a = RigidBody::fixed(box);
  a.group = 2;
  rig.body({2, 0, 0}, a);
  const Entity b = rig.body({4, 0, 0}, RigidBody::fixed(box));
  rig.run(1);
  auto hit = rig.physics.raycast({0, 0, 0}, {10, 0, 0}, /*mask=*/1);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->entity, b);
}

}  // namespace
}  // namespace spindle::physics
