// Collision shapes: described by a ShapeDesc, created (and checked) by Physics::create_shape(),
// referred to by ShapeId. Shapes live as long as the Physics object.
//
// Usage:
//
//   auto box = physics.create_shape(spindle::physics::ShapeDesc::box({0.5f, 0.5f, 0.5f}));
//   if (!box) { report(box.message()); return; }   // bad sizes: a message, no shape
//   RigidBody::dynamic(box.value(), 1.0f);
//
// Bad input never reaches Bullet: create_shape() rejects zero, negative, NaN or infinite sizes,
// degenerate hulls and meshes, out-of-range indices, with a message naming the shape and the
// field (sizes must lie in [0.1 mm, 1e6 m]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

namespace spindle::physics {

enum class ShapeType : std::uint32_t {
  Box,
  Sphere,
  Capsule,       // along Y: radius, height of the cylinder part
  Cylinder,      // along Y: radius, height
  ConvexHull,    // points
  TriangleMesh,  // vertices + indices; static or kinematic bodies only
  Plane,         // normal, offset (n . x = offset); static only
  Compound       // children with local transforms
};
const char* to_string(ShapeType type);

struct ShapeId {
  static constexpr std::uint32_t kNone = 0xffffffffu;
  std::uint32_t index = kNone;
  bool valid() const { return index != kNone; }
  friend bool operator==(ShapeId, ShapeId) = default;
};

struct CompoundChild {
  ShapeId shape;  // an already created convex shape (not a mesh, plane or compound)
  glm::vec3 position{0.0f};
  glm::quat rotation{1.0f, 0.0f, 0.0f, 0.0f};
};

struct ShapeDesc {
  ShapeType type = ShapeType::Box;
  glm::vec3 half_extents{0.5f};         // Box
  float radius = 0.5f;                  // Sphere, Capsule, Cylinder
  float height = 1.0f;                  // Capsule, Cylinder
  glm::vec3 normal{0, 1, 0};            // Plane
  float offset = 0;                     // Plane
  std::vector<glm::vec3> points;        // ConvexHull; TriangleMesh vertices
  std::vector<std::uint32_t> indices;   // TriangleMesh, 3 per triangle
  std::vector<CompoundChild> children;  // Compound
  std::string name;                     // named in error messages ("" -> "shape")

  static ShapeDesc box(glm::vec3 half_extents);
  static ShapeDesc sphere(float radius);
  static ShapeDesc capsule(float radius, float height);
  static ShapeDesc cylinder(float radius, float height);
  static ShapeDesc convex_hull(std::vector<glm::vec3> points);
  static ShapeDesc triangle_mesh(std::vector<glm::vec3> vertices,
                                 std::vector<std::uint32_t> indices);
  static ShapeDesc plane(glm::vec3 normal, float offset);
  static ShapeDesc compound(std::vector<CompoundChild> children);
};

}  // namespace spindle::physics
