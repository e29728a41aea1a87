// Shapes: every kind simulates, and bad descriptions are rejected with messages naming the
// shape and the field.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "physics_test_util.h"

namespace spindle::physics {
namespace {

using core::Entity;
using test::Rig;

TEST(Physics, ShapesOfEveryKindSimulate) {
  Rig rig;
  rig.ground();
  std::vector<Entity> bodies;
  bodies.push_back(
      rig.body({0, 2, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::capsule(0.3f, 1)), 1)));
  bodies.push_back(
      rig.body({3, 2, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::cylinder(0.4f, 1)), 1)));
  bodies.push_back(rig.body(
      {6, 2, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::convex_hull(
                                        {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}})),
                                    1)));
  const ShapeId part = rig.shape(ShapeDesc::box({0.5f, 0.1f, 0.1f}));
  bodies.push_back(rig.body(
      {9, 2, 0}, RigidBody::dynamic(
                     rig.shape(ShapeDesc::compound({{part, {0, 0, 0}, glm::quat(1, 0, 0, 0)},
                                                    {part, {0, 0.3f, 0}, glm::quat(1, 0, 0, 0)}})),
                     1)));
  // A static triangle-mesh ramp.
  rig.body({-5, 0, 0}, RigidBody::fixed(rig.shape(ShapeDesc::triangle_mesh(
                           {{-1, 0, -1}, {1, 0, -1}, {1, 1, 1}, {-1, 1, 1}}, {0, 1, 2, 0, 2, 3}))));
  const Entity on_ramp =
      rig.body({-5, 3, 0}, RigidBody::dynamic(rig.shape(ShapeDesc::sphere(0.2f)), 1));
  rig.run(240);
  for (Entity e : bodies) {
    EXPECT_GT(rig.position(e).y, 0.0f);
    EXPECT_LT(rig.position(e).y, 1.5f);
  }
  // The sphere landed on the ramp and rolled down its slope (towards -z).
  EXPECT_LT(rig.position(on_ramp).z, 0.0f);
}

TEST(Physics, BadShapesAreRejectedWithMessages) {
  Rig rig;
  const ShapeId box = rig.shape(ShapeDesc::box({1, 1, 1}));
  const ShapeId mesh =
      rig.shape(ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, {0, 1, 2}));
  struct Case {
    ShapeDesc desc;
    std::string expected;
  };
  ShapeDesc named = ShapeDesc::sphere(-1);
  named.name = "wheel";
  std::vector<Case> cases = {
      {ShapeDesc::box({1, 0, 1}), "half extent is 0"},
      {ShapeDesc::box({1, -2, 1}), "half extent is -2"},
      {ShapeDesc::box({1, NAN, 1}), "half extent is nan"},
      {ShapeDesc::box({1, INFINITY, 1}), "half extent is inf"},
      {ShapeDesc::box({1, 1e30f, 1}), "half extent"},
      {named, "sphere shape 'wheel': radius is -1"},
      {ShapeDesc::capsule(0.5f, 0), "height is 0"},
      {ShapeDesc::cylinder(NAN, 1), "radius is nan"},
      {ShapeDesc::convex_hull({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}), "3 points"},
      {ShapeDesc::convex_hull({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}), "degenerate"},
      {ShapeDesc::convex_hull({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}}),
       "degenerate"},
      {ShapeDesc::convex_hull({{0, 0, 0}, {1, 0, 0}, {0, NAN, 0}, {0, 0, 1}}), "point 2"},
      {ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, {0, 1, 3}), "index 2 is 3"},
      {ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {0, 0, 1}}, {0, 1}), "2 indices"},
      {ShapeDesc::triangle_mesh({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}}, {0, 1, 2}), "zero area"},
      {ShapeDesc::plane({0, 0, 0}, 0), "normal is zero"},
      {ShapeDesc::compound({}), "0 children"},
      {ShapeDesc::compound({{ShapeId{999}, {}, glm::quat(1, 0, 0, 0)}}), "names no shape"},
      {ShapeDesc::compound({{mesh, {}, glm::quat(1, 0, 0, 0)}}), "must be convex"},
      {ShapeDesc::compound({{box, {NAN, 0, 0}, glm::quat(1, 0, 0, 0)}}), "non-finite"},
  };
  const std::uint32_t before = rig.physics.shape_count();
  for (const Case& c : cases) {
    auto r = rig.physics.create_shape(c.desc);
    ASSERT_FALSE(r.ok()) << c.expected;
    EXPECT_NE(r.message().find(c.expected), std::string::npos) << r.message();
  }
  EXPECT_EQ(rig.physics.shape_count(), before);  // nothing half-made was kept
}

}  // namespace
}  // namespace spindle::physics
