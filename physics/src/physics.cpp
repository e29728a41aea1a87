#include "spindle/physics/physics.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>

#include <btBulletDynamicsCommon.h>

#include <spindle/base/log.h>
#include <spindle/base/mutex.h>
#include <spindle/gameplay/transform.h>

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
// Bullet's quantized BVH keeps the part id in the top 10 of 31 bits: one part indexes 2^21
// triangles.
constexpr std::uint32_t kMaxMeshTriangles = (1u << 21) - 1;
constexpr std::uint32_t kMaxShapes = 1u << 20;
constexpr std::uint32_t kMaxCompoundChildren = 1u << 12;
constexpr float kMaxSize = 1e6f;   // larger than any sane game object; Bullet loses precision
constexpr float kMinSize = 1e-4f;  // 0.1 mm: smaller shapes give Bullet infinite inverse inertia
constexpr float kMaxPosition = 1e7f;
constexpr float kMinMass = 1e-6f, kMaxMass = 1e9f;
// Forces, impulses and velocities beyond this are dropped as bad input.
constexpr float kMaxInput = 1e9f;
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
  std::snprintf(buf, sizeof buf, ": %s is %g (must be finite, >= %g and <= %g)", field,
                static_cast<double>(value), static_cast<double>(kMinSize),
                static_cast<double>(kMaxSize));
  return Status::error(label(d) + buf);
}

bool good_size(float v) {
  return finite(v) && v >= kMinSize && v <= kMaxSize;
}
// A usable rotation: finite, and its squared length neither overflows nor vanishes.
bool good_rotation(glm::quat q) {
  const float n = glm::dot(q, q);
  return finite(n) && n > 1e-12f;
}
bool good_position(glm::vec3 p) {
  return finite(p) && std::abs(p.x) <= kMaxPosition && std::abs(p.y) <= kMaxPosition &&
         std::abs(p.z) <= kMaxPosition;
}
bool good_input(glm::vec3 v) {
  return finite(v) && std::abs(v.x) <= kMaxInput && std::abs(v.y) <= kMaxInput &&
         std::abs(v.z) <= kMaxInput;
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

// Queries look in every region: keeps the hit nearest along the segment (the first region's on
// a tie, so statics copied into every region answer once).
void keep_nearest(std::optional<RayHit>& best, const btCollisionObject* object,
                  const btVector3& point, const btVector3& normal, float fraction, float length) {
  if (best && fraction >= best->fraction) return;
  best = RayHit{entity_of(object), gl(point), gl(normal), fraction, length * fraction};
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
    std::vector<std::uint32_t> forced;     // bodies with a force or torque this step
    std::vector<std::uint32_t> kinematic;  // kinematic bodies moving this step
    std::vector<std::uint32_t> leaving;    // sync: bodies to remove, in live order
    std::vector<std::uint32_t> joining;    // sync: bodies to add, in entity-index order
    std::vector<Pair> pairs;               // touching pairs after the step
  };
  struct Slot {
    std::unique_ptr<btRigidBody> body;
    std::vector<std::unique_ptr<btRigidBody>> copies;  // a static body in regions 1..R-1
    std::uint32_t generation = 0;
    std::uint32_t region = 0;
    bool live = false;
    bool rejected = false;          // this generation failed validation (logged once)
    bool removing = false;          // scratch of sync: leaves this step
    bool moving = false;            // kinematic with a new target this step
    std::uint32_t next_region = 0;  // scratch of rehome()
    BodyType type = BodyType::Dynamic;
    std::uint32_t group = 1, mask = 0xffffffffu;  // the filter it was created with
    glm::vec3 force{0.0f}, torque{0.0f};
    btTransform kinematic_from, kinematic_to;  // a moving kinematic body's path this step
    glm::vec3 last_position{0.0f};             // what writeback put in the Transform
    glm::quat last_rotation{1.0f, 0.0f, 0.0f, 0.0f};
  };

  std::vector<Shape> shapes;
  std::vector<Region> regions;
  std::vector<Slot> slots;            // by entity index
  std::vector<std::uint32_t> live;    // entity indices with bodies, in creation order
  std::vector<std::uint32_t> fresh;   // scratch: new bodies of this sync
  std::vector<Pair> pairs, previous;  // this step's and the last step's touching pairs
  mutable core::Mutex query_lock;

  void add_to_region(btRigidBody* body, std::uint32_t region, const Slot& slot) {
    regions[region].world->addRigidBody(body, static_cast<int>(slot.group),
                                        static_cast<int>(slot.mask));
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
  if (c.max_shapes == 0 || c.max_shapes > kMaxShapes)
    return Status::error("physics config: max_shapes is " + std::to_string(c.max_shapes) +
                         " (must be 1.." + std::to_string(kMaxShapes) + ")");
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
        if (!finite(c.position) || glm::length(c.position) > kMaxSize || !good_rotation(c.rotation))
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
      if (!finite(b.mass) || !(b.mass >= kMinMass) || b.mass > kMaxMass)
        return Status::error("a dynamic body's mass is " + std::to_string(b.mass) +
                             " (must be finite, in [1e-6, 1e9])");
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
    if (cb.hasHit())
      keep_nearest(best, cb.m_collisionObject, cb.m_hitPointWorld, cb.m_hitNormalWorld,
                   cb.m_closestHitFraction, glm::length(to - from));
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
    if (cb.hasHit())
      keep_nearest(best, cb.m_hitCollisionObject, cb.m_hitPointWorld, cb.m_hitNormalWorld,
                   cb.m_closestHitFraction, glm::length(to - from));
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
  if (shape.index >= impl_->shapes.size() || !finite(from) || !finite(to) ||
      !good_rotation(rotation))
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

namespace {

void remove_body(Physics::Impl& m, Physics::Impl::Slot& s) {
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
}

// Moves every non-static body whose centre left its region into the region holding it, in the
// live list's (creation) order. Kinematic bodies moving this step go where their target is.
// Where each body belongs is found in parallel (it reads every body); the moves, few, serially.
// Returns the moves; counts awake dynamic bodies into `active` when given.
std::uint64_t rehome(Physics::Impl& m, const Physics& physics, core::StageContext& ctx,
                     std::uint32_t* active = nullptr) {
  const bool regions = m.regions.size() > 1;
  if (!regions && active == nullptr) return 0;
  std::atomic<std::uint32_t> awake{0};
  ctx.parallel_for(
      static_cast<std::uint32_t>(m.live.size()), [&](std::uint32_t b, std::uint32_t e) {
        std::uint32_t count = 0;
        for (std::uint32_t i = b; i < e; ++i) {
          Physics::Impl::Slot& s = m.slots[m.live[i]];
          if (s.type == BodyType::Static) continue;
          if (s.type == BodyType::Dynamic && s.body->isActive()) ++count;
          const btTransform& x = s.moving ? s.kinematic_to : s.body->getWorldTransform();
          s.next_region = regions ? physics.region_of(gl(x.getOrigin())) : 0;
        }
        awake.fetch_add(count, std::memory_order_relaxed);
      });
  if (active != nullptr) *active = awake.load();
  if (!regions) return 0;
  std::uint64_t moved = 0;
  for (std::uint32_t index : m.live) {
    Physics::Impl::Slot& s = m.slots[index];
    if (s.type == BodyType::Static || s.next_region == s.region) continue;
    m.regions[s.region].world->removeRigidBody(s.body.get());
    s.region = s.next_region;
    m.add_to_region(s.body.get(), s.region, s);
    ++moved;
  }
  return moved;
}

}  // namespace

void Physics::sync(core::StageContext& ctx) {
  core::World& world = ctx.world();
  Impl& m = *impl_;
  auto* bodies = world.storage<RigidBody>();
  auto* transforms = world.storage<core::Transform>();
  const auto* parents = world.storage<core::Parent>();

  // 1. Bodies whose entity died, or whose RigidBody or Transform went away, leave their worlds.
  // Bullet deletes their contacts but leaves the bodies they touched asleep (a box resting on a
  // removed one would float), so those are woken first, from the last step's pairs.
  bool any_removed = false;
  for (std::uint32_t index : m.live) {
    Impl::Slot& s = m.slots[index];
    s.removing = !world.alive(Entity{index, s.generation}) || !bodies->has(index) ||
                 transforms == nullptr || !transforms->has(index);
    any_removed |= s.removing;
  }
  if (any_removed) {
    const auto slot_of = [&](Entity e) -> Impl::Slot* {
      Impl::Slot& s = m.slots[e.index];
      return s.live && s.generation == e.generation ? &s : nullptr;
    };
    for (const Pair& p : m.previous) {
      Impl::Slot* a = slot_of(p.a);
      Impl::Slot* b = slot_of(p.b);
      if (a == nullptr || b == nullptr || a->removing == b->removing) continue;
      Impl::Slot& stays = a->removing ? *b : *a;
      if (stays.type == BodyType::Dynamic) stays.body->activate(true);
    }
    // Removal costs Bullet a scan of the world's bodies and pairs per body, so each region
    // removes its own in a job (regions share nothing); statics, in every region, go serially.
    for (Impl::Region& r : m.regions) r.leaving.clear();
    std::size_t kept = 0;
    for (std::uint32_t index : m.live) {
      Impl::Slot& s = m.slots[index];
      if (!s.removing) {
        m.live[kept++] = index;
        continue;
      }
      s.removing = false;
      ++stats_.removed;
      if (s.type == BodyType::Static)
        remove_body(m, s);
      else
        m.regions[s.region].leaving.push_back(index);
    }
    m.live.resize(kept);
    ctx.parallel_for(static_cast<std::uint32_t>(m.regions.size()),
                     [&](std::uint32_t begin, std::uint32_t end) {
                       for (std::uint32_t r = begin; r < end; ++r)
                         for (std::uint32_t index : m.regions[r].leaving)
                           remove_body(m, m.slots[index]);
                     });
  }

  // 2. New RigidBody components get Bullet bodies, in entity-index order (Bullet's results
  // depend on insertion order; dense order depends on history, index order does not). Rejected
  // bodies are checked again every step (a missing Transform may have been added since), but
  // reported only once per entity.
  m.fresh.clear();
  for (Impl::Region& r : m.regions) r.joining.clear();
  const std::span<const std::uint32_t> entities = bodies->entities();
  const std::uint32_t* generations = world.entity_generations();
  for (std::uint32_t index : entities) {
    const Impl::Slot& s = m.slots[index];
    if (!(s.live && s.generation == generations[index])) m.fresh.push_back(index);
  }
  std::sort(m.fresh.begin(), m.fresh.end());
  for (std::uint32_t index : m.fresh) {
    Impl::Slot& s = m.slots[index];
    const Entity e = world.entity_at(index);
    RigidBody& desc = *bodies->get(index);
    const core::Transform* t = transforms != nullptr ? transforms->get(index) : nullptr;
    Status ok = validate(desc);
    if (ok && t == nullptr) ok = Status::error("no Transform component");
    if (ok && (!good_position(t->translation()) || !good_rotation(t->rotation())))
      ok = Status::error("its Transform is not finite or lies beyond 1e7 m");
    if (ok && parents != nullptr && parents->has(index))
      ok = Status::error(
          "it has a Parent (a rigid body's Transform is its world pose: bodies are roots)");
    std::unique_ptr<btRigidBody> body;
    btCollisionShape* shape = ok ? m.shapes[desc.shape.index].shape.get() : nullptr;
    const float mass = desc.type == BodyType::Dynamic ? desc.mass : 0.0f;
    btVector3 inertia(0, 0, 0);
    const auto make = [&] {
      btRigidBody::btRigidBodyConstructionInfo info(mass, nullptr, shape, inertia);
      info.m_startWorldTransform =
          btTransform(bt(glm::normalize(t->rotation())), bt(t->translation()));
      info.m_friction = desc.friction;
      info.m_restitution = desc.restitution;
      info.m_linearDamping = desc.linear_damping;
      info.m_angularDamping = desc.angular_damping;
      auto made = std::make_unique<btRigidBody>(info);
      int flags = made->getCollisionFlags();
      if (desc.type == BodyType::Kinematic) flags |= btCollisionObject::CF_KINEMATIC_OBJECT;
      if (desc.type == BodyType::Static) flags |= btCollisionObject::CF_STATIC_OBJECT;
      if (desc.flags & RigidBody::kTrigger) flags |= btCollisionObject::CF_NO_CONTACT_RESPONSE;
      made->setCollisionFlags(flags);
      if (desc.type == BodyType::Kinematic || (desc.flags & RigidBody::kNeverSleep))
        made->setActivationState(DISABLE_DEACTIVATION);
      made->setUserIndex(static_cast<int>(e.index));
      made->setUserIndex2(static_cast<int>(e.generation));
      return made;
    };
    if (ok) {
      if (mass > 0) shape->calculateLocalInertia(mass, inertia);
      body = make();
      const btVector3 inv = body->getInvInertiaDiagLocal();
      if (!std::isfinite(body->getInvMass()) || !finite(gl(inv)))
        ok = Status::error(
            "its mass and shape give an infinite inverse inertia (too light or "
            "too thin)");
    }
    if (!ok) {
      desc.state_ = 0;
      if (s.rejected && s.generation == e.generation) continue;  // reported already
      SPINDLE_LOG_ERROR(Physics, "rigid body of entity %u:%u rejected: %s", e.index, e.generation,
                        ok.c_str());
      s.generation = e.generation;
      s.rejected = true;
      ++stats_.rejected;
      world.emit(BodyRejected{e});
      continue;
    }
    s.generation = e.generation;
    s.rejected = false;
    s.type = desc.type;
    s.group = desc.group;
    s.mask = desc.mask;
    s.body = std::move(body);
    s.force = s.torque = glm::vec3(0.0f);
    s.moving = false;
    s.last_position = t->translation();
    s.last_rotation = t->rotation();
    if (desc.type == BodyType::Static) {
      s.region = 0;
      m.add_to_region(s.body.get(), 0, s);
      for (std::uint32_t r = 1; r < m.regions.size(); ++r) {
        s.copies.push_back(make());
        m.add_to_region(s.copies.back().get(), r, s);
      }
    } else {
      s.region = region_of(t->translation());
      m.regions[s.region].joining.push_back(index);
    }
    desc.state_ = RigidBody::kSimulated;
    desc.region_ = s.region;
    s.live = true;
    m.live.push_back(index);
    ++stats_.created;
  }
  // Each region adds its new bodies in a job, in entity-index order.
  ctx.parallel_for(static_cast<std::uint32_t>(m.regions.size()),
                   [&](std::uint32_t begin, std::uint32_t end) {
                     for (std::uint32_t r = begin; r < end; ++r)
                       for (std::uint32_t index : m.regions[r].joining)
                         m.add_to_region(m.slots[index].body.get(), r, m.slots[index]);
                   });
  stats_.bodies = static_cast<std::uint32_t>(m.live.size());

  // 3. In parallel over bodies: what systems asked for, kinematic targets and teleports. Each
  // body is touched by one chunk only. Non-finite or huge requests are dropped and counted.
  std::atomic<std::uint32_t> bad_inputs{0};
  const auto count = static_cast<std::uint32_t>(m.live.size());
  ctx.parallel_for(count, [&](std::uint32_t begin, std::uint32_t end) {
    std::uint32_t bad = 0;
    for (std::uint32_t i = begin; i < end; ++i) {
      const std::uint32_t index = m.live[i];
      Impl::Slot& s = m.slots[index];
      s.moving = false;
      if (s.type == BodyType::Static) continue;
      RigidBody& desc = *bodies->get(index);
      btRigidBody& body = *s.body;
      const core::Transform& t = *transforms->get(index);
      if (t.translation() != s.last_position || t.rotation() != s.last_rotation) {
        s.last_position = t.translation();
        s.last_rotation = t.rotation();
        if (!good_position(t.translation()) || !good_rotation(t.rotation())) {
          ++bad;
        } else if (s.type == BodyType::Kinematic) {
          // Followed over the sub-steps (physics_step), so Bullet sees its true velocity.
          s.kinematic_from = body.getWorldTransform();
          s.kinematic_to = btTransform(bt(glm::normalize(t.rotation())), bt(t.translation()));
          s.moving = true;
        } else {
          // A system moved it: a teleport.
          const btTransform to(bt(glm::normalize(t.rotation())), bt(t.translation()));
          body.setWorldTransform(to);
          body.setInterpolationWorldTransform(to);
          body.activate(true);
        }
      }
      const std::uint32_t pending = desc.pending_;
      const glm::vec3 linear = desc.new_linear_, angular = desc.new_angular_;
      const glm::vec3 impulse = desc.impulse_, angular_impulse = desc.angular_impulse_;
      const glm::vec3 force = desc.force_, torque = desc.torque_;
      desc.pending_ = 0;
      desc.force_ = desc.torque_ = desc.impulse_ = desc.angular_impulse_ = glm::vec3(0.0f);
      s.force = s.torque = glm::vec3(0.0f);
      if (s.type != BodyType::Dynamic) continue;  // kinematic bodies ignore forces
      bool wake = false;
      const auto take = [&](glm::vec3 v) {
        if (good_input(v)) return true;
        ++bad;
        return false;
      };
      if ((pending & RigidBody::kSetLinear) && take(linear)) {
        body.setLinearVelocity(bt(linear));
        wake = true;
      }
      if ((pending & RigidBody::kSetAngular) && take(angular)) {
        body.setAngularVelocity(bt(angular));
        wake = true;
      }
      if (impulse != glm::vec3(0.0f) && take(impulse)) {
        body.applyCentralImpulse(bt(impulse));
        wake = true;
      }
      if (angular_impulse != glm::vec3(0.0f) && take(angular_impulse)) {
        body.applyTorqueImpulse(bt(angular_impulse));
        wake = true;
      }
      if (force != glm::vec3(0.0f) && take(force)) s.force = force, wake = true;
      if (torque != glm::vec3(0.0f) && take(torque)) s.torque = torque, wake = true;
      if (wake) body.activate(true);
    }
    if (bad > 0) bad_inputs.fetch_add(bad, std::memory_order_relaxed);
  });
  if (const std::uint32_t bad = bad_inputs.load(); bad > 0) {
    if (stats_.bad_inputs == 0)
      SPINDLE_LOG_WARNING(Physics,
                          "%u forces, impulses, velocities or transforms were not finite or "
                          "beyond 1e9 and were dropped (counted in Physics::stats().bad_inputs; "
                          "logged once)",
                          bad);
    stats_.bad_inputs += bad;
  }

  // 4. Teleported and kinematic bodies go to the region they are now in; then each region lists
  // its bodies with forces (applied before every sub-step: Bullet clears them after each) and
  // its moving kinematic bodies.
  stats_.migrated += rehome(m, *this, ctx);
  for (Impl::Region& r : m.regions) r.forced.clear(), r.kinematic.clear();
  for (std::uint32_t index : m.live) {
    const Impl::Slot& s = m.slots[index];
    if (s.moving) m.regions[s.region].kinematic.push_back(index);
    if (s.type == BodyType::Dynamic && (s.force != glm::vec3(0.0f) || s.torque != glm::vec3(0.0f)))
      m.regions[s.region].forced.push_back(index);
  }
}

void Physics::step(core::StageContext& ctx) {
  Impl& m = *impl_;
  const std::uint32_t substeps = config_.substeps;
  const float h = ctx.dt() / static_cast<float>(substeps);
  const auto region_count = static_cast<std::uint32_t>(m.regions.size());
  ctx.parallel_for(region_count, [&](std::uint32_t begin, std::uint32_t end) {
    for (std::uint32_t ri = begin; ri < end; ++ri) {
      Impl::Region& r = m.regions[ri];
      for (std::uint32_t sub = 0; sub < substeps; ++sub) {
        // Kinematic bodies advance a fraction of their path per sub-step.
        const float f = static_cast<float>(sub + 1) / static_cast<float>(substeps);
        for (std::uint32_t index : r.kinematic) {
          Impl::Slot& s = m.slots[index];
          if (sub + 1 == substeps) {
            s.body->setWorldTransform(s.kinematic_to);
            continue;
          }
          btTransform x;
          x.setOrigin(s.kinematic_from.getOrigin().lerp(s.kinematic_to.getOrigin(), f));
          x.setRotation(s.kinematic_from.getRotation().slerp(s.kinematic_to.getRotation(), f));
          s.body->setWorldTransform(x);
        }
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

  // Migration between regions (bodies whose centre crossed a boundary during the step).
  for (const Impl::Region& r : m.regions)
    for (std::uint32_t index : r.kinematic) m.slots[index].moving = false;
  stats_.migrated += rehome(m, *this, ctx, &stats_.active);

  // Events: this step's pairs against the last step's, both sorted.
  core::World& world = ctx.world();
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
      RigidBody& desc = *bodies->get(index);
      desc.region_ = s.region;
      const btRigidBody& body = *s.body;
      const bool asleep = s.type == BodyType::Dynamic && !body.isActive();
      desc.state_ = RigidBody::kSimulated | (asleep ? RigidBody::kSleeping : 0u);
      if (s.type == BodyType::Static) continue;
      desc.linear_velocity_ = gl(body.getLinearVelocity());
      desc.angular_velocity_ = gl(body.getAngularVelocity());
      if (s.type != BodyType::Dynamic) continue;
      const btTransform& x = body.getWorldTransform();
      const glm::vec3 position = gl(x.getOrigin());
      const glm::quat rotation = gl(x.getRotation());
      if (position == s.last_position && rotation == s.last_rotation) continue;
      core::Transform* t = transforms->get(index);
      if (t == nullptr) continue;  // removed during the frame: the body goes at the next sync
      t->set_translation(position);
      t->set_rotation(rotation);
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
       .phase = kPhysicsPhase,
       .access = core::Access{}.read<core::Transform>().write<RigidBody, Physics, BodyRejected>(),
       .run = [p = physics_](core::StageContext& ctx) { p->sync(ctx); }});
  engine.add_stage(
      {.name = "physics_step",
       .phase = kPhysicsPhase,
       .access =
           core::Access{}
               .write<Physics, CollisionBegan, CollisionEnded, TriggerEntered, TriggerExited>(),
       .after = {"physics_sync"},
       .run = [p = physics_](core::StageContext& ctx) { p->step(ctx); }});
  engine.add_stage({.name = "physics_writeback",
                    .phase = kPhysicsPhase,
                    .access = core::Access{}.read<Physics>().write<core::Transform, RigidBody>(),
                    .after = {"physics_step"},
                    .run = [p = physics_](core::StageContext& ctx) { p->writeback(ctx); }});
}

}  // namespace spindle::physics
