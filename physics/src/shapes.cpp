#include "spindle/physics/shapes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <utility>

#include "bullet_convert.h"
#include "input_checks.h"
#include "physics_impl.h"

namespace spindle::physics {

using core::Status;
using Shape = Physics::Impl::Shape;

const char* to_string(ShapeType type) {
  switch (type) {
    case ShapeType::Box:
      return "box";
    case ShapeType::Sphere:
      return "sphere";
    case ShapeType::Capsule:
      return "capsule";
    case ShapeType::Cylinder:
      return "cylinder";
    case ShapeType::ConvexHull:
      return "convex hull";
    case ShapeType::TriangleMesh:
      return "triangle mesh";
    case ShapeType::Plane:
      return "plane";
    case ShapeType::Compound:
      return "compound";
  }
  return "shape";
}

ShapeDesc ShapeDesc::box(glm::vec3 half_extents) {
  ShapeDesc d;
  d.type = ShapeType::Box;
  d.half_extents = half_extents;
  return d;
}
ShapeDesc ShapeDesc::sphere(float radius) {
  ShapeDesc d;
  d.type = ShapeType::Sphere;
  d.radius = radius;
  return d;
}
ShapeDesc ShapeDesc::capsule(float radius, float height) {
  ShapeDesc d = sphere(radius);
  d.type = ShapeType::Capsule;
  d.height = height;
  return d;
}
ShapeDesc ShapeDesc::cylinder(float radius, float height) {
  ShapeDesc d = capsule(radius, height);
  d.type = ShapeType::Cylinder;
  return d;
}
ShapeDesc ShapeDesc::convex_hull(std::vector<glm::vec3> points) {
  ShapeDesc d;
  d.type = ShapeType::ConvexHull;
  d.points = std::move(points);
  return d;
}
ShapeDesc ShapeDesc::triangle_mesh(std::vector<glm::vec3> vertices,
                                   std::vector<std::uint32_t> indices) {
  ShapeDesc d;
  d.type = ShapeType::TriangleMesh;
  d.points = std::move(vertices);
  d.indices = std::move(indices);
  return d;
}
ShapeDesc ShapeDesc::plane(glm::vec3 normal, float offset) {
  ShapeDesc d;
  d.type = ShapeType::Plane;
  d.normal = normal;
  d.offset = offset;
  return d;
}
ShapeDesc ShapeDesc::compound(std::vector<CompoundChild> children) {
  ShapeDesc d;
  d.type = ShapeType::Compound;
  d.children = std::move(children);
  return d;
}

namespace {

constexpr std::uint32_t kMaxHullPoints = 1u << 16;
// Bullet's quantized BVH keeps the part id in the top 10 of 31 bits: one part indexes 2^21
// triangles.
constexpr std::uint32_t kMaxMeshTriangles = (1u << 21) - 1;
constexpr std::uint32_t kMaxCompoundChildren = 1u << 12;

std::string label(const ShapeDesc& d) {
  return std::string(to_string(d.type)) + " shape '" + (d.name.empty() ? "shape" : d.name) + "'";
}

Status size_error(const ShapeDesc& d, const char* field, float value) {
  char buf[96];
  std::snprintf(buf, sizeof buf, ": %s is %g (must be finite, >= %g and <= %g)", field,
                static_cast<double>(value), static_cast<double>(kMinSize),
                static_cast<double>(kMaxSize));
  return Status::error(label(d) + buf);
}

// A hull is degenerate when its points span less than a tetrahedron of noticeable volume.
bool degenerate(std::span<const glm::vec3> p) {
  const glm::vec3 a = p[0];
  std::size_t ib = 0;
  float best = 0;
  for (std::size_t i = 1; i < p.size(); ++i) {
    const float d = glm::dot(p[i] - a, p[i] - a);
    if (d > best) best = d, ib = i;
  }
  const float scale = std::sqrt(best);
  if (scale < 1e-6f) return true;
  const glm::vec3 ab = p[ib] - a;
  std::size_t ic = 0;
  best = 0;
  for (std::size_t i = 1; i < p.size(); ++i) {
    const float d = glm::length(glm::cross(ab, p[i] - a));
    if (d > best) best = d, ic = i;
  }
  if (best < 1e-6f * scale * scale) return true;
  const glm::vec3 n = glm::cross(ab, p[ic] - a);
  best = 0;
  for (std::size_t i = 1; i < p.size(); ++i) best = std::max(best, std::abs(glm::dot(n, p[i] - a)));
  return best < 1e-6f * scale * scale * scale;
}

// Each builder checks the description's fields, then fills `out`; on an error `out` is left
// half-made and dropped by the caller.

Status build_box(const ShapeDesc& d, Shape& out) {
  for (int a = 0; a < 3; ++a)
    if (!good_size(d.half_extents[a])) return size_error(d, "a half extent", d.half_extents[a]);
  out.shape = std::make_unique<btBoxShape>(bt(d.half_extents));
  return {};
}

Status build_round(const ShapeDesc& d, Shape& out) {
  if (!good_size(d.radius)) return size_error(d, "radius", d.radius);
  if (d.type == ShapeType::Sphere) {
    out.shape = std::make_unique<btSphereShape>(d.radius);
    return {};
  }
  if (!good_size(d.height)) return size_error(d, "height", d.height);
  if (d.type == ShapeType::Capsule)
    out.shape = std::make_unique<btCapsuleShape>(d.radius, d.height);
  else
    out.shape = std::make_unique<btCylinderShape>(btVector3(d.radius, 0.5f * d.height, d.radius));
  return {};
}

Status build_hull(const ShapeDesc& d, Shape& out) {
  if (d.points.size() < 4 || d.points.size() > kMaxHullPoints)
    return Status::error(label(d) + ": " + std::to_string(d.points.size()) +
                         " points (a hull needs 4 to " + std::to_string(kMaxHullPoints) + ")");
  for (std::size_t i = 0; i < d.points.size(); ++i)
    if (!finite(d.points[i]) || glm::length(d.points[i]) > kMaxSize)
      return Status::error(label(d) + ": point " + std::to_string(i) +
                           " is not finite or too far from the origin");
  if (degenerate(d.points))
    return Status::error(label(d) +
                         ": the points are degenerate (all on one plane, line or "
                         "point; a hull needs volume)");
  auto hull = std::make_unique<btConvexHullShape>();
  for (const glm::vec3& p : d.points) hull->addPoint(bt(p), false);
  hull->recalcLocalAabb();
  hull->optimizeConvexHull();
  out.shape = std::move(hull);
  return {};
}

Status build_mesh(const ShapeDesc& d, Shape& out) {
  if (d.indices.empty() || d.indices.size() % 3 != 0 || d.indices.size() / 3 > kMaxMeshTriangles)
    return Status::error(label(d) + ": " + std::to_string(d.indices.size()) +
                         " indices (must be a positive multiple of 3, at most " +
                         std::to_string(kMaxMeshTriangles) + " triangles)");
  if (d.points.size() < 3 || d.points.size() > 0x7fffffffu)
    return Status::error(label(d) + ": " + std::to_string(d.points.size()) + " vertices");
  for (std::size_t i = 0; i < d.points.size(); ++i)
    if (!finite(d.points[i]) || glm::length(d.points[i]) > kMaxSize)
      return Status::error(label(d) + ": vertex " + std::to_string(i) +
                           " is not finite or too far from the origin");
  for (std::size_t i = 0; i < d.indices.size(); ++i)
    if (d.indices[i] >= d.points.size())
      return Status::error(label(d) + ": index " + std::to_string(i) + " is " +
                           std::to_string(d.indices[i]) + " but there are " +
                           std::to_string(d.points.size()) + " vertices");
  bool has_area = false;
  for (std::size_t t = 0; t < d.indices.size() && !has_area; t += 3) {
    const glm::vec3 a = d.points[d.indices[t]], b = d.points[d.indices[t + 1]],
                    c = d.points[d.indices[t + 2]];
    has_area = glm::length(glm::cross(b - a, c - a)) > 1e-12f;
  }
  if (!has_area) return Status::error(label(d) + ": every triangle has zero area");
  out.vertices.reserve(d.points.size() * 3);
  for (const glm::vec3& p : d.points) out.vertices.insert(out.vertices.end(), {p.x, p.y, p.z});
  out.indices.assign(d.indices.begin(), d.indices.end());
  out.mesh = std::make_unique<btTriangleIndexVertexArray>(
      static_cast<int>(out.indices.size() / 3), out.indices.data(),
      static_cast<int>(3 * sizeof(int)), static_cast<int>(d.points.size()), out.vertices.data(),
      static_cast<int>(3 * sizeof(float)));
  out.shape = std::make_unique<btBvhTriangleMeshShape>(out.mesh.get(), true);
  return {};
}

Status build_plane(const ShapeDesc& d, Shape& out) {
  const float len = glm::length(d.normal);
  if (!finite(d.normal) || !(len > 1e-6f))
    return Status::error(label(d) + ": the normal is zero or not finite");
  if (!finite(d.offset) || std::abs(d.offset) > kMaxSize)
    return Status::error(label(d) + ": the offset is not finite or too large");
  out.shape = std::make_unique<btStaticPlaneShape>(bt(d.normal / len), d.offset);
  return {};
}

// Children are shapes created before, shared with the compound (they live as long as it).
Status build_compound(const ShapeDesc& d, std::span<const Shape> shapes, Shape& out) {
  if (d.children.empty() || d.children.size() > kMaxCompoundChildren)
    return Status::error(label(d) + ": " + std::to_string(d.children.size()) +
                         " children (must be 1.." + std::to_string(kMaxCompoundChildren) + ")");
  auto compound = std::make_unique<btCompoundShape>(true, static_cast<int>(d.children.size()));
  for (std::size_t i = 0; i < d.children.size(); ++i) {
    const CompoundChild& c = d.children[i];
    const std::string which = label(d) + ": child " + std::to_string(i);
    if (c.shape.index >= shapes.size())
      return Status::error(which + " names no shape (id " + std::to_string(c.shape.index) + ")");
    const ShapeType t = shapes[c.shape.index].type;
    if (t == ShapeType::TriangleMesh || t == ShapeType::Plane || t == ShapeType::Compound)
      return Status::error(which + " is a " + to_string(t) +
                           " (children must be convex: box, sphere, capsule, cylinder, hull)");
    if (!finite(c.position) || glm::length(c.position) > kMaxSize || !good_rotation(c.rotation))
      return Status::error(which + " has a non-finite or degenerate local transform");
    compound->addChildShape(btTransform(bt(glm::normalize(c.rotation)), bt(c.position)),
                            shapes[c.shape.index].shape.get());
  }
  out.shape = std::move(compound);
  return {};
}

}  // namespace

core::Result<ShapeId> Physics::create_shape(const ShapeDesc& d) {
  if (impl_->shapes.size() >= config_.max_shapes)
    return Status::error(label(d) + ": the physics world already holds max_shapes (" +
                         std::to_string(config_.max_shapes) + ") shapes");
  Shape shape{d.type, nullptr, {}, {}, nullptr};
  Status built;
  switch (d.type) {
    case ShapeType::Box:
      built = build_box(d, shape);
      break;
    case ShapeType::Sphere:
    case ShapeType::Capsule:
    case ShapeType::Cylinder:
      built = build_round(d, shape);
      break;
    case ShapeType::ConvexHull:
      built = build_hull(d, shape);
      break;
    case ShapeType::TriangleMesh:
      built = build_mesh(d, shape);
      break;
    case ShapeType::Plane:
      built = build_plane(d, shape);
      break;
    case ShapeType::Compound:
      built = build_compound(d, impl_->shapes, shape);
      break;
    default:
      built = Status::error(label(d) + ": unknown shape type " +
                            std::to_string(static_cast<std::uint32_t>(d.type)));
  }
  if (!built) return built;
  impl_->shapes.push_back(std::move(shape));
  return ShapeId{static_cast<std::uint32_t>(impl_->shapes.size() - 1)};
}

std::uint32_t Physics::shape_count() const {
  return static_cast<std::uint32_t>(impl_->shapes.size());
}

}  // namespace spindle::physics
