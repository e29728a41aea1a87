#include "spindle/physics/physics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <btBulletDynamicsCommon.h>

#include <spindle/core/log.h>
#include <spindle/core/mutex.h>
#include <spindle/core/transform.h>

namespace spindle::physics {

using core::Entity;
using core::Status;

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
constexpr std::uint32_t kMaxMeshTriangles = 1u << 24;
constexpr std::uint32_t kMaxCompoundChildren = 1u << 12;
constexpr float kMaxSize = 1e6f;  // larger than any sane game object; Bullet loses precision
constexpr std::uint32_t kMaxRegions = 64;
constexpr std::uint32_t kMaxSubsteps = 64;
// Contact points closer than this count as touching (Bullet keeps points up to its breaking
// threshold, 0.02, apart).
constexpr float kTouching = 0.005f;

bool finite(float v) {
  return std::isfinite(v);
}
bool finite(glm::vec3 v) {
  return finite(v.x) && finite(v.y) && finite(v.z);
}
bool finite(glm::quat q) {
  return finite(q.x) && finite(q.y) && finite(q.z) && finite(q.w);
}

btVector3 bt(glm::vec3 v) {
  return {v.x, v.y, v.z};
}
glm::vec3 gl(const btVector3& v) {
  return {v.x(), v.y(), v.z()};
}
btQuaternion bt(glm::quat q) {
  return {q.x, q.y, q.z, q.w};
}
glm::quat gl(const btQuaternion& q) {
  return {q.w(), q.x(), q.y(), q.z()};
}

std::string label(const ShapeDesc& d) {
  return std::string(to_string(d.type)) + " shape '" + (d.name.empty() ? "shape" : d.name) + "'";
}

Status size_error(const ShapeDesc& d, const char* field, float value) {
  char buf[96];
  std::snprintf(buf, sizeof buf, ": %s is %g (must be finite, > 0 and <= %g)", field,
                static_cast<double>(value), static_cast<double>(kMaxSize));
  return Status::error(label(d) + buf);
}

bool good_size(float v) {
  return finite(v) && v > 0.0f && v <= kMaxSize;
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

// Pair bookkeeping for events: a and b ordered by index.
struct Pair {
  Entity a, b;
  glm::vec3 point{0.0f}, normal{0.0f};
  float impulse = 0;
  bool trigger = false;  // one of them is a trigger (a is the trigger when it is)
  bool a_is_trigger = false;
};
bool pair_less(const Pair& x, const Pair& y) {
  if (x.a.index != y.a.index) return x.a.index < y.a.index;
  if (x.a.generation != y.a.generation) return x.a.generation < y.a.generation;
  if (x.b.index != y.b.index) return x.b.index < y.b.index;
  return x.b.generation < y.b.generation;
}
bool same_pair(const Pair& x, const Pair& y) {
  return !pair_less(x, y) && !pair_less(y, x);
}

// Rays and sweeps skip triggers.
struct RayCallback final : btCollisionWorld::ClosestRayResultCallback {
  using ClosestRayResultCallback::ClosestRayResultCallback;
  bool needsCollision(btBroadphaseProxy* proxy) const override {
    const auto* o = static_cast<const btCollisionObject*>(proxy->m_clientObject);
    if (o->getCollisionFlags() & btCollisionObject::CF_NO_CONTACT_RESPONSE) return false;
    return ClosestRayResultCallback::needsCollision(proxy);
  }
};
struct SweepCallback final : btCollisionWorld::ClosestConvexResultCallback {
  using ClosestConvexResultCallback::ClosestConvexResultCallback;
  bool needsCollision(btBroadphaseProxy* proxy) const override {
    const auto* o = static_cast<const btCollisionObject*>(proxy->m_clientObject);
    if (o->getCollisionFlags() & btCollisionObject::CF_NO_CONTACT_RESPONSE) return false;
    return ClosestConvexResultCallback::needsCollision(proxy);
  }
};

Entity entity_of(const btCollisionObject* o) {
  return Entity{static_cast<std::uint32_t>(o->getUserIndex()),
                static_cast<std::uint32_t>(o->getUserIndex2())};
}

}  // namespace

struct Physics::Impl {
  struct Shape {
    ShapeType type;
    std::unique_ptr<btCollisionShape> shape;
    // Triangle meshes: the data Bullet's mesh interface points into.
    std::vector<float> vertices;
    std::vector<int> indices;
    std::unique_ptr<btTriangleIndexVertexArray> mesh;
  };
  struct Region {
    std::unique_ptr<btDefaultCollisionConfiguration> config;
    std::unique_ptr<btCollisionDispatcher> dispatcher;
    std::unique_ptr<btDbvtBroadphase> broadphase;
    std::unique_ptr<btSequentialImpulseConstraintSolver> solver;
    std::unique_ptr<btDiscreteDynamicsWorld> world;
    std::vector<std::uint32_t> forced;  // bodies with a force or torque this step
    std::vector<Pair> pairs;            // touching pairs after the step
  };
  struct Slot {
    std::unique_ptr<btRigidBody> body;
    std::vector<std::unique_ptr<btRigidBody>> copies;  // a static body in regions 1..R-1
    std::uint32_t generation = 0;
    std::uint32_t region = 0;
    bool live = false;
    bool rejected = false;  // this generation failed validation (logged once)
    BodyType type = BodyType::Dynamic;
    glm::vec3 force{0.0f}, torque{0.0f};
    glm::vec3 last_position{0.0f};  // what writeback put in the Transform
    glm::quat last_rotation{1.0f, 0.0f, 0.0f, 0.0f};
  };

  std::vector<Shape> shapes;
  std::vector<Region> regions;
  std::vector<Slot> slots;            // by entity index
  std::vector<std::uint32_t> live;    // entity indices with bodies, in creation order
  std::vector<std::uint32_t> fresh;   // scratch: new bodies of this sync
  std::vector<Pair> pairs, previous;  // this step's and the last step's touching pairs
  mutable core::Mutex query_lock;

  void add_to_region(btRigidBody* body, std::uint32_t region, const RigidBody& desc) {
    regions[region].world->addRigidBody(body, static_cast<int>(desc.group),
                                        static_cast<int>(desc.mask));
  }
};

// --- construction and shapes -------------------------------------------------------------------

Status Physics::validate(const PhysicsConfig& c) {
  if (!finite(c.gravity)) return Status::error("physics config: gravity is not finite");
  if (c.substeps == 0 || c.substeps > kMaxSubsteps)
    return Status::error("physics config: substeps is " + std::to_string(c.substeps) +
                         " (must be 1.." + std::to_string(kMaxSubsteps) + ")");
  if (c.region_axis > 2)
    return Status::error("physics config: region_axis is " + std::to_string(c.region_axis) +
                         " (must be 0, 1 or 2)");
  if (c.region_boundaries.size() + 1 > kMaxRegions)
    return Status::error("physics config: " + std::to_string(c.region_boundaries.size() + 1) +
                         " regions (at most " + std::to_string(kMaxRegions) + ")");
  for (std::size_t i = 0; i < c.region_boundaries.size(); ++i) {
    if (!finite(c.region_boundaries[i]))
      return Status::error("physics config: region boundary " + std::to_string(i) +
                           " is not finite");
    if (i > 0 && !(c.region_boundaries[i] > c.region_boundaries[i - 1]))
      return Status::error("physics config: region boundaries must ascend (boundary " +
                           std::to_string(i) + ")");
  }
  if (c.max_shapes == 0) return Status::error("physics config: max_shapes is 0");
  return {};
}

Physics::Physics(PhysicsConfig config, std::uint32_t entity_capacity)
    : config_(std::move(config)), impl_(std::make_unique<Impl>()) {
  const Status ok = validate(config_);
  SPINDLE_ASSERT(ok, "Physics built from a config that failed Physics::validate()");
  impl_->shapes.reserve(config_.max_shapes);
  impl_->slots.resize(entity_capacity);
  impl_->live.reserve(entity_capacity);
  impl_->fresh.reserve(entity_capacity);
  impl_->regions.resize(config_.region_boundaries.size() + 1);
  for (Impl::Region& r : impl_->regions) {
    r.config = std::make_unique<btDefaultCollisionConfiguration>();
    r.dispatcher = std::make_unique<btCollisionDispatcher>(r.config.get());
    r.broadphase = std::make_unique<btDbvtBroadphase>();
    r.solver = std::make_unique<btSequentialImpulseConstraintSolver>();
    r.world = std::make_unique<btDiscreteDynamicsWorld>(r.dispatcher.get(), r.broadphase.get(),
                                                        r.solver.get(), r.config.get());
    r.world->setGravity(bt(config_.gravity));
  }
}

Physics::~Physics() {
  // Bodies leave their worlds before the worlds (and shapes) go.
  for (std::uint32_t index : impl_->live) {
    Impl::Slot& s = impl_->slots[index];
    if (s.type == BodyType::Static) {
      impl_->regions[0].world->removeRigidBody(s.body.get());
      for (std::size_t r = 0; r < s.copies.size(); ++r)
        impl_->regions[r + 1].world->removeRigidBody(s.copies[r].get());
    } else {
      impl_->regions[s.region].world->removeRigidBody(s.body.get());
    }
  }
  impl_->slots.clear();
  impl_->regions.clear();
}

std::uint32_t Physics::shape_count() const {
  return static_cast<std::uint32_t>(impl_->shapes.size());
}
std::uint32_t Physics::region_count() const {
  return static_cast<std::uint32_t>(impl_->regions.size());
}
std::uint32_t Physics::region_objects(std::uint32_t region) const {
  return region < impl_->regions.size()
             ? static_cast<std::uint32_t>(impl_->regions[region].world->getNumCollisionObjects())
             : 0;
}
std::uint32_t Physics::region_of(glm::vec3 p) const {
  const auto& b = config_.region_boundaries;
  return static_cast<std::uint32_t>(std::upper_bound(b.begin(), b.end(), p[config_.region_axis]) -
                                    b.begin());
}

core::Result<ShapeId> Physics::create_shape(const ShapeDesc& d) {
  if (impl_->shapes.size() >= config_.max_shapes)
    return Status::error(label(d) + ": the physics world already holds max_shapes (" +
                         std::to_string(config_.max_shapes) + ") shapes");
  Impl::Shape shape{d.type, nullptr, {}, {}, nullptr};
  switch (d.type) {
    case ShapeType::Box:
      for (int a = 0; a < 3; ++a)
        if (!good_size(d.half_extents[a])) return size_error(d, "a half extent", d.half_extents[a]);
      shape.shape = std::make_unique<btBoxShape>(bt(d.half_extents));
      break;
    case ShapeType::Sphere:
      if (!good_size(d.radius)) return size_error(d, "radius", d.radius);
      shape.shape = std::make_unique<btSphereShape>(d.radius);
      break;
    case ShapeType::Capsule:
    case ShapeType::Cylinder:
      if (!good_size(d.radius)) return size_error(d, "radius", d.radius);
      if (!good_size(d.height)) return size_error(d, "height", d.height);
      if (d.type == ShapeType::Capsule)
        shape.shape = std::make_unique<btCapsuleShape>(d.radius, d.height);
      else
        shape.shape =
            std::make_unique<btCylinderShape>(btVector3(d.radius, 0.5f * d.height, d.radius));
      break;
    case ShapeType::ConvexHull: {
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
      shape.shape = std::move(hull);
      break;
    }
    case ShapeType::TriangleMesh: {
      if (d.indices.empty() || d.indices.size() % 3 != 0 ||
          d.indices.size() / 3 > kMaxMeshTriangles)
        return Status::error(label(d) + ": " + std::to_string(d.indices.size()) +
                             " indices (must be a positive multiple of 3, at most " +
                             std::to_string(kMaxMeshTriangles) + " triangles)");
      if (d.points.size() < 3 || d.points.size() > 0x7fffffffu)
        return Status::error(label(d) + ": " + std::to_string(d.points.size()) + " vertices");
      for (std::size_t i = 0; i < d.points.size(); ++i)
        if (!finite(d.points[i]) || glm::length(d.points[i]) > kMaxSize)
          return Status::error(label(d) + ": vertex " + std::to_string(i) +
                               " is not finite or too far from the origin");
      bool has_area = false;
      for (std::size_t i = 0; i < d.indices.size(); ++i)
        if (d.indices[i] >= d.points.size())
          return Status::error(label(d) + ": index " + std::to_string(i) + " is " +
                               std::to_string(d.indices[i]) + " but there are " +
                               std::to_string(d.points.size()) + " vertices");
      for (std::size_t t = 0; t < d.indices.size() && !has_area; t += 3) {
        const glm::vec3 a = d.points[d.indices[t]], b = d.points[d.indices[t + 1]],
                        c = d.points[d.indices[t + 2]];
        has_area = glm::length(glm::cross(b - a, c - a)) > 1e-12f;
      }
      if (!has_area) return Status::error(label(d) + ": every triangle has zero area");
      shape.vertices.reserve(d.points.size() * 3);
      for (const glm::vec3& p : d.points)
        shape.vertices.insert(shape.vertices.end(), {p.x, p.y, p.z});
      shape.indices.assign(d.indices.begin(), d.indices.end());
      shape.mesh = std::make_unique<btTriangleIndexVertexArray>(
          static_cast<int>(shape.indices.size() / 3), shape.indices.data(),
          static_cast<int>(3 * sizeof(int)), static_cast<int>(d.points.size()),
          shape.vertices.data(), static_cast<int>(3 * sizeof(float)));
      shape.shape = std::make_unique<btBvhTriangleMeshShape>(shape.mesh.get(), true);
      break;
    }
    case ShapeType::Plane: {
      const float len = glm::length(d.normal);
      if (!finite(d.normal) || !(len > 1e-6f))
        return Status::error(label(d) + ": the normal is zero or not finite");
      if (!finite(d.offset) || std::abs(d.offset) > kMaxSize)
        return Status::error(label(d) + ": the offset is not finite or too large");
      shape.shape = std::make_unique<btStaticPlaneShape>(bt(d.normal / len), d.offset);
      break;
    }
    case ShapeType::Compound: {
      if (d.children.empty() || d.children.size() > kMaxCompoundChildren)
        return Status::error(label(d) + ": " + std::to_string(d.children.size()) +
                             " children (must be 1.." + std::to_string(kMaxCompoundChildren) + ")");
      auto compound = std::make_unique<btCompoundShape>(true, static_cast<int>(d.children.size()));
      for (std::size_t i = 0; i < d.children.size(); ++i) {
        const CompoundChild& c = d.children[i];
        const std::string which = label(d) + ": child " + std::to_string(i);
        if (c.shape.index >= impl_->shapes.size())
          return Status::error(which + " names no shape (id " + std::to_string(c.shape.index) +
                               ")");
        const ShapeType t = impl_->shapes[c.shape.index].type;
        if (t == ShapeType::TriangleMesh || t == ShapeType::Plane || t == ShapeType::Compound)
          return Status::error(which + " is a " + to_string(t) +
                               " (children must be convex: box, sphere, capsule, cylinder, hull)");
        if (!finite(c.position) || glm::length(c.position) > kMaxSize || !finite(c.rotation) ||
            !(glm::length(c.rotation) > 1e-6f))
          return Status::error(which + " has a non-finite or degenerate local transform");
        compound->addChildShape(btTransform(bt(glm::normalize(c.rotation)), bt(c.position)),
                                impl_->shapes[c.shape.index].shape.get());
      }
      shape.shape = std::move(compound);
      break;
    }
    default:
      return Status::error(label(d) + ": unknown shape type " +
                           std::to_string(static_cast<std::uint32_t>(d.type)));
  }
  impl_->shapes.push_back(std::move(shape));
  return ShapeId{static_cast<std::uint32_t>(impl_->shapes.size() - 1)};
}

Status Physics::validate(const RigidBody& b) const {
  if (b.shape.index >= impl_->shapes.size())
    return Status::error(b.shape.valid()
                             ? "the shape id " + std::to_string(b.shape.index) + " names no shape"
                             : "no shape");
  const ShapeType shape = impl_->shapes[b.shape.index].type;
  const bool concave = shape == ShapeType::TriangleMesh || shape == ShapeType::Plane;
  switch (b.type) {
    case BodyType::Dynamic:
      if (!finite(b.mass) || !(b.mass > 0.0f) || b.mass > 1e9f)
        return Status::error("a dynamic body's mass is " + std::to_string(b.mass) +
                             " (must be > 0 and finite)");
      if (concave)
        return Status::error(std::string("a dynamic body cannot have a ") + to_string(shape) +
                             " shape (mass on a static mesh or plane; use a hull or compound)");
      break;
    case BodyType::Kinematic:
    case BodyType::Static:
      if (b.mass != 0.0f)
        return Status::error(std::string("a ") +
                             (b.type == BodyType::Static ? "static" : "kinematic") +
                             " body has mass " + std::to_string(b.mass) + " (must be 0)");
      if (shape == ShapeType::Plane && b.type == BodyType::Kinematic)
        return Status::error("a plane can only be static");
      break;
    default:
      return Status::error("unknown body type " +
                           std::to_string(static_cast<std::uint32_t>(b.type)));
  }
  const float values[] = {b.friction, b.restitution, b.linear_damping, b.angular_damping};
  const char* names[] = {"friction", "restitution", "linear damping", "angular damping"};
  for (int i = 0; i < 4; ++i)
    if (!finite(values[i]) || values[i] < 0.0f || (i >= 2 && values[i] > 1.0f))
      return Status::error(std::string(names[i]) + " is " + std::to_string(values[i]) +
                           (i >= 2 ? " (must be in [0, 1])" : " (must be finite and >= 0)"));
  return {};
}

// --- queries -----------------------------------------------------------------------------------

std::optional<RayHit> Physics::raycast(glm::vec3 from, glm::vec3 to, std::uint32_t mask) const {
  if (!finite(from) || !finite(to)) return std::nullopt;
  core::LockGuard lock(impl_->query_lock);
  std::optional<RayHit> best;
  for (const Impl::Region& r : impl_->regions) {
    RayCallback cb(bt(from), bt(to));
    cb.m_collisionFilterGroup = -1;
    cb.m_collisionFilterMask = static_cast<int>(mask);
    r.world->rayTest(bt(from), bt(to), cb);
    if (!cb.hasHit() || (best && cb.m_closestHitFraction >= best->fraction)) continue;
    RayHit hit;
    hit.entity = entity_of(cb.m_collisionObject);
    hit.point = gl(cb.m_hitPointWorld);
    hit.normal = gl(cb.m_hitNormalWorld);
    hit.fraction = cb.m_closestHitFraction;
    hit.distance = glm::length(to - from) * hit.fraction;
    best = hit;
  }
  return best;
}

namespace {
std::optional<RayHit> sweep_convex(const std::vector<Physics::Impl::Region>& regions,
                                   const btConvexShape& shape, glm::vec3 from, glm::vec3 to,
                                   glm::quat rotation, std::uint32_t mask) {
  const btTransform start(bt(rotation), bt(from));
  const btTransform end(bt(rotation), bt(to));
  std::optional<RayHit> best;
  for (const Physics::Impl::Region& r : regions) {
    SweepCallback cb(bt(from), bt(to));
    cb.m_collisionFilterGroup = -1;
    cb.m_collisionFilterMask = static_cast<int>(mask);
    r.world->convexSweepTest(&shape, start, end, cb);
    if (!cb.hasHit() || (best && cb.m_closestHitFraction >= best->fraction)) continue;
    RayHit hit;
    hit.entity = entity_of(cb.m_hitCollisionObject);
    hit.point = gl(cb.m_hitPointWorld);
    hit.normal = gl(cb.m_hitNormalWorld);
    hit.fraction = cb.m_closestHitFraction;
    hit.distance = glm::length(to - from) * hit.fraction;
    best = hit;
  }
  return best;
}
}  // namespace

std::optional<RayHit> Physics::sweep_sphere(glm::vec3 from, glm::vec3 to, float radius,
                                            std::uint32_t mask) const {
  if (!finite(from) || !finite(to) || !good_size(radius)) return std::nullopt;
  core::LockGuard lock(impl_->query_lock);
  const btSphereShape sphere(radius);
  return sweep_convex(impl_->regions, sphere, from, to, glm::quat(1, 0, 0, 0), mask);
}

std::optional<RayHit> Physics::sweep(ShapeId shape, glm::vec3 from, glm::vec3 to,
                                     glm::quat rotation, std::uint32_t mask) const {
  if (shape.index >= impl_->shapes.size() || !finite(from) || !finite(to) || !finite(rotation) ||
      !(glm::length(rotation) > 1e-6f))
    return std::nullopt;
  const Impl::Shape& s = impl_->shapes[shape.index];
  if (s.type == ShapeType::TriangleMesh || s.type == ShapeType::Plane ||
      s.type == ShapeType::Compound)
    return std::nullopt;
  core::LockGuard lock(impl_->query_lock);
  return sweep_convex(impl_->regions, static_cast<const btConvexShape&>(*s.shape), from, to,
                      glm::normalize(rotation), mask);
}

// --- the stages --------------------------------------------------------------------------------

void Physics::sync(core::StageContext& ctx) {
  core::World& world = ctx.world();
  Impl& m = *impl_;
  auto* bodies = world.storage<RigidBody>();
  auto* transforms = world.storage<core::Transform>();

  // 1. Bodies whose entity died or whose RigidBody went away leave their worlds.
  const auto gone = [&](std::uint32_t index) {
    Impl::Slot& s = m.slots[index];
    const Entity e{index, s.generation};
    return !world.alive(e) || !bodies->has(index);
  };
  std::size_t kept = 0;
  for (std::uint32_t index : m.live) {
    if (!gone(index)) {
      m.live[kept++] = index;
      continue;
    }
    Impl::Slot& s = m.slots[index];
    if (s.type == BodyType::Static) {
      m.regions[0].world->removeRigidBody(s.body.get());
      for (std::size_t r = 0; r < s.copies.size(); ++r)
        m.regions[r + 1].world->removeRigidBody(s.copies[r].get());
    } else {
      m.regions[s.region].world->removeRigidBody(s.body.get());
    }
    s.body.reset();
    s.copies.clear();
    s.live = false;
    ++stats_.removed;
  }
  m.live.resize(kept);

  // 2. New RigidBody components get Bullet bodies, in entity-index order (Bullet's results
  // depend on insertion order; dense order depends on history, index order does not).
  m.fresh.clear();
  if (bodies != nullptr) {
    const std::span<const std::uint32_t> entities = bodies->entities();
    const std::uint32_t* generations = world.entity_generations();
    for (std::uint32_t index : entities) {
      Impl::Slot& s = m.slots[index];
      if ((s.live || s.rejected) && s.generation == generations[index]) continue;
      m.fresh.push_back(index);
    }
    std::sort(m.fresh.begin(), m.fresh.end());
    for (std::uint32_t index : m.fresh) {
      Impl::Slot& s = m.slots[index];
      const Entity e = world.entity_at(index);
      RigidBody& desc = *bodies->get(index);
      s.generation = e.generation;
      s.rejected = false;
      const core::Transform* t = transforms != nullptr ? transforms->get(index) : nullptr;
      Status ok = validate(desc);
      if (ok && t == nullptr) ok = Status::error("no Transform component");
      if (ok && (!finite(t->translation()) || !finite(t->rotation()) ||
                 !(glm::length(t->rotation()) > 1e-6f)))
        ok = Status::error("its Transform is not finite");
      if (!ok) {
        SPINDLE_LOG_ERROR(Physics, "rigid body of entity %u:%u rejected: %s", e.index, e.generation,
                          ok.c_str());
        s.rejected = true;
        desc.state_ = 0;
        ++stats_.rejected;
        world.emit(BodyRejected{e});
        continue;
      }
      btCollisionShape* shape = m.shapes[desc.shape.index].shape.get();
      const float mass = desc.type == BodyType::Dynamic ? desc.mass : 0.0f;
      btVector3 inertia(0, 0, 0);
      if (mass > 0) shape->calculateLocalInertia(mass, inertia);
      const btTransform start(bt(glm::normalize(t->rotation())), bt(t->translation()));
      const auto make = [&] {
        btRigidBody::btRigidBodyConstructionInfo info(mass, nullptr, shape, inertia);
        info.m_startWorldTransform = start;
        info.m_friction = desc.friction;
        info.m_restitution = desc.restitution;
        info.m_linearDamping = desc.linear_damping;
        info.m_angularDamping = desc.angular_damping;
        auto body = std::make_unique<btRigidBody>(info);
        int flags = body->getCollisionFlags();
        if (desc.type == BodyType::Kinematic) flags |= btCollisionObject::CF_KINEMATIC_OBJECT;
        if (desc.type == BodyType::Static) flags |= btCollisionObject::CF_STATIC_OBJECT;
        if (desc.flags & RigidBody::kTrigger) flags |= btCollisionObject::CF_NO_CONTACT_RESPONSE;
        body->setCollisionFlags(flags);
        if (desc.type == BodyType::Kinematic || (desc.flags & RigidBody::kNeverSleep))
          body->setActivationState(DISABLE_DEACTIVATION);
        body->setUserIndex(static_cast<int>(e.index));
        body->setUserIndex2(static_cast<int>(e.generation));
        return body;
      };
      s.type = desc.type;
      s.body = make();
      s.force = s.torque = glm::vec3(0.0f);
      s.last_position = t->translation();
      s.last_rotation = t->rotation();
      if (desc.type == BodyType::Static) {
        s.region = 0;
        m.add_to_region(s.body.get(), 0, desc);
        for (std::uint32_t r = 1; r < m.regions.size(); ++r) {
          s.copies.push_back(make());
          m.add_to_region(s.copies.back().get(), r, desc);
        }
      } else {
        s.region = region_of(t->translation());
        m.add_to_region(s.body.get(), s.region, desc);
      }
      desc.state_ = RigidBody::kSimulated;
      desc.region_ = s.region;
      s.live = true;
      m.live.push_back(index);
      ++stats_.created;
    }
  }
  stats_.bodies = static_cast<std::uint32_t>(m.live.size());

  // 3. In parallel over bodies: what systems asked for, kinematic moves and teleports. Each body
  // is touched by one chunk only.
  const auto count = static_cast<std::uint32_t>(m.live.size());
  ctx.parallel_for(count, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t i = begin; i < end; ++i) {
      const std::uint32_t index = m.live[i];
      Impl::Slot& s = m.slots[index];
      if (s.type == BodyType::Static) continue;
      RigidBody& desc = *bodies->get(index);
      btRigidBody& body = *s.body;
      const core::Transform* t = transforms->get(index);
      if (t != nullptr &&
          (t->translation() != s.last_position || t->rotation() != s.last_rotation) &&
          finite(t->translation()) && finite(t->rotation()) && glm::length(t->rotation()) > 1e-6f) {
        // A system moved it (or it is kinematic and follows its Transform).
        const btTransform to(bt(glm::normalize(t->rotation())), bt(t->translation()));
        body.setWorldTransform(to);
        if (s.type == BodyType::Dynamic) body.setInterpolationWorldTransform(to);
        s.last_position = t->translation();
        s.last_rotation = t->rotation();
        body.activate(true);
      }
      if (s.type != BodyType::Dynamic) continue;
      bool wake = false;
      if (desc.pending_ & RigidBody::kSetLinear) {
        body.setLinearVelocity(bt(desc.new_linear_));
        wake = true;
      }
      if (desc.pending_ & RigidBody::kSetAngular) {
        body.setAngularVelocity(bt(desc.new_angular_));
        wake = true;
      }
      if (desc.impulse_ != glm::vec3(0.0f)) {
        body.applyCentralImpulse(bt(desc.impulse_));
        wake = true;
      }
      if (desc.angular_impulse_ != glm::vec3(0.0f)) {
        body.applyTorqueImpulse(bt(desc.angular_impulse_));
        wake = true;
      }
      s.force = desc.force_;
      s.torque = desc.torque_;
      if (s.force != glm::vec3(0.0f) || s.torque != glm::vec3(0.0f)) wake = true;
      if (wake) body.activate(true);
      desc.pending_ = 0;
      desc.force_ = desc.torque_ = desc.impulse_ = desc.angular_impulse_ = glm::vec3(0.0f);
    }
  });
  // Forces are applied before every sub-step (Bullet clears them after each); list who has one.
  for (Impl::Region& r : m.regions) r.forced.clear();
  for (std::uint32_t index : m.live) {
    const Impl::Slot& s = m.slots[index];
    if (s.type == BodyType::Dynamic && (s.force != glm::vec3(0.0f) || s.torque != glm::vec3(0.0f)))
      m.regions[s.region].forced.push_back(index);
  }
}

void Physics::step(core::StageContext& ctx) {
  Impl& m = *impl_;
  const float h = ctx.dt() / static_cast<float>(config_.substeps);
  const auto region_count = static_cast<std::uint32_t>(m.regions.size());
  ctx.parallel_for(region_count, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t ri = begin; ri < end; ++ri) {
      Impl::Region& r = m.regions[ri];
      for (std::uint32_t sub = 0; sub < config_.substeps; ++sub) {
        for (std::uint32_t index : r.forced) {
          btRigidBody& body = *m.slots[index].body;
          body.applyCentralForce(bt(m.slots[index].force));
          body.applyTorque(bt(m.slots[index].torque));
        }
        r.world->stepSimulation(h, 0, h);
      }
      // Touching pairs of this region.
      r.pairs.clear();
      btDispatcher& dispatcher = *r.world->getDispatcher();
      const int manifolds = dispatcher.getNumManifolds();
      for (int i = 0; i < manifolds; ++i) {
        const btPersistentManifold* pm = dispatcher.getManifoldByIndexInternal(i);
        const int points = pm->getNumContacts();
        int deepest = -1;
        float impulse = 0;
        for (int p = 0; p < points; ++p) {
          const btManifoldPoint& pt = pm->getContactPoint(p);
          if (pt.getDistance() > kTouching) continue;
          impulse += pt.getAppliedImpulse();
          if (deepest < 0 || pt.getDistance() < pm->getContactPoint(deepest).getDistance())
            deepest = p;
        }
        if (deepest < 0) continue;
        Pair pair;
        const btCollisionObject* oa = pm->getBody0();
        const btCollisionObject* ob = pm->getBody1();
        const btManifoldPoint& pt = pm->getContactPoint(deepest);
        pair.point = gl(pt.getPositionWorldOnB());
        pair.normal = gl(pt.m_normalWorldOnB);  // from b towards a
        if (entity_of(oa).index > entity_of(ob).index) {
          std::swap(oa, ob);
          pair.point = gl(pt.getPositionWorldOnA());
          pair.normal = -pair.normal;
        }
        pair.a = entity_of(oa);
        pair.b = entity_of(ob);
        pair.impulse = impulse;
        const bool ta = oa->getCollisionFlags() & btCollisionObject::CF_NO_CONTACT_RESPONSE;
        const bool tb = ob->getCollisionFlags() & btCollisionObject::CF_NO_CONTACT_RESPONSE;
        pair.trigger = ta || tb;
        pair.a_is_trigger = ta;
        r.pairs.push_back(pair);
      }
    }
  });

  // Migration between regions, in entity-index-stable order (the live list's).
  core::World& world = ctx.world();
  std::uint32_t active = 0;
  for (std::uint32_t index : m.live) {
    Impl::Slot& s = m.slots[index];
    if (s.type != BodyType::Dynamic) continue;
    if (s.body->isActive()) ++active;
    if (region_count == 1) continue;
    const std::uint32_t to = region_of(gl(s.body->getWorldTransform().getOrigin()));
    if (to == s.region) continue;
    const RigidBody* desc = world.get<RigidBody>(Entity{index, s.generation});
    m.regions[s.region].world->removeRigidBody(s.body.get());
    s.region = to;
    m.add_to_region(s.body.get(), to, desc != nullptr ? *desc : RigidBody{});
    ++stats_.migrated;
  }
  stats_.active = active;

  // Events: this step's pairs against the last step's, both sorted.
  m.pairs.clear();
  for (const Impl::Region& r : m.regions)
    m.pairs.insert(m.pairs.end(), r.pairs.begin(), r.pairs.end());
  std::sort(m.pairs.begin(), m.pairs.end(), pair_less);
  m.pairs.erase(std::unique(m.pairs.begin(), m.pairs.end(), same_pair), m.pairs.end());
  stats_.contact_pairs = static_cast<std::uint32_t>(m.pairs.size());
  const auto began = [&](const Pair& p) {
    if (p.trigger)
      world.emit(p.a_is_trigger ? TriggerEntered{p.a, p.b} : TriggerEntered{p.b, p.a});
    else
      world.emit(CollisionBegan{p.a, p.b, p.point, p.normal, p.impulse});
  };
  const auto ended = [&](const Pair& p) {
    if (p.trigger)
      world.emit(p.a_is_trigger ? TriggerExited{p.a, p.b} : TriggerExited{p.b, p.a});
    else
      world.emit(CollisionEnded{p.a, p.b});
  };
  std::size_t i = 0, j = 0;
  while (i < m.pairs.size() || j < m.previous.size()) {
    if (j == m.previous.size() || (i < m.pairs.size() && pair_less(m.pairs[i], m.previous[j]))) {
      began(m.pairs[i++]);
    } else if (i == m.pairs.size() || pair_less(m.previous[j], m.pairs[i])) {
      ended(m.previous[j++]);
    } else {
      ++i, ++j;
    }
  }
  std::swap(m.pairs, m.previous);
}

void Physics::writeback(core::StageContext& ctx) {
  core::World& world = ctx.world();
  Impl& m = *impl_;
  auto* bodies = world.storage<RigidBody>();
  auto* transforms = world.storage<core::Transform>();
  const auto count = static_cast<std::uint32_t>(m.live.size());
  ctx.parallel_for(count, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t i = begin; i < end; ++i) {
      const std::uint32_t index = m.live[i];
      Impl::Slot& s = m.slots[index];
      if (s.type != BodyType::Dynamic) continue;
      const btRigidBody& body = *s.body;
      RigidBody& desc = *bodies->get(index);
      desc.region_ = s.region;
      const bool asleep = !body.isActive();
      desc.state_ = RigidBody::kSimulated | (asleep ? RigidBody::kSleeping : 0u);
      desc.linear_velocity_ = gl(body.getLinearVelocity());
      desc.angular_velocity_ = gl(body.getAngularVelocity());
      const btTransform& x = body.getWorldTransform();
      const glm::vec3 position = gl(x.getOrigin());
      const glm::quat rotation = gl(x.getRotation());
      if (position == s.last_position && rotation == s.last_rotation) continue;
      core::Transform& t = *transforms->get(index);
      t.set_translation(position);
      t.set_rotation(rotation);
      s.last_position = position;
      s.last_rotation = rotation;
    }
  });
}

// --- the plugin --------------------------------------------------------------------------------

void PhysicsPlugin::build(core::Engine& engine) {
  if (const Status ok = Physics::validate(config_); !ok) {
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
       .phase = core::Phase::Physics,
       .access = core::Access{}.read<core::Transform>().write<RigidBody, Physics, BodyRejected>(),
       .run = [p = physics_](core::StageContext& ctx) { p->sync(ctx); }});
  engine.add_stage(
      {.name = "physics_step",
       .phase = core::Phase::Physics,
       .access =
           core::Access{}
               .write<Physics, CollisionBegan, CollisionEnded, TriggerEntered, TriggerExited>(),
       .after = {"physics_sync"},
       .run = [p = physics_](core::StageContext& ctx) { p->step(ctx); }});
  engine.add_stage({.name = "physics_writeback",
                    .phase = core::Phase::Physics,
                    .access = core::Access{}.read<Physics>().write<core::Transform, RigidBody>(),
                    .after = {"physics_sync", "physics_step"},
                    .run = [p = physics_](core::StageContext& ctx) { p->writeback(ctx); }});
}

}  // namespace spindle::physics
