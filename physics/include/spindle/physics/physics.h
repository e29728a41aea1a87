// Rigid bodies through Bullet, driven by the frame graph.
//
// Usage:
//
//   auto& physics = engine.add_plugin<spindle::physics::PhysicsPlugin>(
//       spindle::physics::PhysicsConfig{.gravity = {0, -9.81f, 0}});
//   spindle::physics::Physics& world = physics.physics();
//   auto box = world.create_shape(spindle::physics::ShapeDesc::box({0.5f, 0.5f, 0.5f}));
//   if (!box) { report(box.message()); return; }             // bad sizes: a message, no body
//   spindle::core::Entity e = engine.world().create();
//   engine.world().add<spindle::core::Transform>(e, spindle::core::Transform::from({0, 5, 0}));
//   engine.world().add<spindle::core::WorldTransform>(e);
//   engine.world().add<spindle::physics::RigidBody>(e, spindle::physics::RigidBody::dynamic(
//       box.value(), 1.0f));                                 // or cmd.spawn(...) from a system
//   // In a system: body.add_impulse({0, 5, 0}); body.set_linear_velocity(...);
//   // Next step: world.read_events<spindle::physics::CollisionBegan>(), body.linear_velocity().
//   // Queries (from any stage that reads Physics): world.raycast(from, to).
//
// The frame. The plugin adds three simulation stages in the Physics phase:
//   physics_sync       reads Transform, writes RigidBody and the Physics resource. Removes the
//                      bodies whose entity, RigidBody or Transform is gone (waking what touched
//                      them), creates Bullet bodies for new RigidBody components (in entity-index
//                      order), then in parallel over bodies: applies forces, impulses and
//                      velocity settings, takes kinematic targets and teleports dynamic bodies
//                      whose Transform a system changed; then moves those into their region.
//   physics_step       writes only the Physics resource and the collision events: steps every
//                      region's Bullet world with `substeps` fixed sub-steps, one job per region
//                      (kinematic bodies advance along their path each sub-step, forces apply on
//                      each). Since it touches no component, the frame graph lets every stage that
//                      does not read Physics (animation, audio, AI on other components...) run
//                      beside it, and the dynamic allocator books it as one long indivisible job
//                      (per region) and starts it first. Then, serially: region migration and
//                      collision events.
//   physics_writeback  reads Physics, writes Transform and RigidBody: in parallel over bodies,
//                      Bullet -> Transform (translation, rotation) and velocities, sleep state.
//
// Regions. PhysicsConfig::region_boundaries cut space into slabs along one axis; each slab is
// its own Bullet world, and the regions step as parallel jobs (Debian's Bullet is built without
// BT_THREADSAFE, so one world never uses more than one core; separate worlds on separate threads
// give the same results as stepping them one after the other). A dynamic body belongs to the
// region holding its centre; after each step (and after teleports and kinematic moves, before
// it), bodies whose centre crossed a boundary migrate, in the order the bodies were created,
// keeping position, rotation, velocities and collision filter. Static bodies are added to every
// region. What regions cannot do: bodies in different regions never touch in the same step (a
// box resting across a boundary collides only with what is in its own region; keep boundaries
// where little happens, or make bodies near them static), joints across regions are not
// supported, and a migrating body loses its contact cache (it may jitter for a step). Raycasts
// see every region.
//
// Events, world events read exactly once (emitted in physics_step, read in the next step):
// CollisionBegan / CollisionEnded for pairs of solid bodies that start / stop touching, with the
// deepest contact point, its normal (from b towards a) and the summed impulse; TriggerEntered /
// TriggerExited for pairs involving a trigger (RigidBody::kTrigger: detects overlap, no
// response). Pairs are ordered (a.index < b.index) and sorted, so events come in the same order
// in every mode. A destroyed body ends its pairs with CollisionEnded / TriggerExited naming the
// (now stale) entity.
//
// Bodies are roots: the Transform of an entity with a RigidBody is its world pose (a Parent is
// rejected); scale is ignored. Kinematic bodies ignore forces and follow their Transform; like
// Bullet's defaults otherwise, kinematic and static bodies are tested against each other
// (give them groups and masks to skip it).
//
// Bad input never reaches Bullet: create_shape() rejects zero, negative, NaN or infinite sizes,
// degenerate hulls and meshes, out-of-range indices, with a message naming the shape and the
// field (sizes must lie in [0.1 mm, 1e6 m]); validate() rejects bodies with a bad mass (dynamic:
// 1e-6 to 1e9), an unknown shape, mass on a static mesh or bad material values; at sync, bodies
// without a finite Transform within 1e7 m, with a Parent, or whose inverse inertia is infinite
// are rejected too. A rejected body is not simulated: it is logged once (Physics channel),
// counted in stats().rejected, and a BodyRejected event names it; it is checked again every
// step, so adding the missing piece brings it to life. Non-finite or huge forces, impulses,
// velocities and teleports are dropped and counted in stats().bad_inputs (logged once).
//
// Threads: raycast()/sweep_sphere() may be called from parallel jobs of stages that read
// Physics (Bullet's broadphase keeps one ray stack, so queries take a lock); never while
// physics_step runs (the frame graph guarantees it for stages that declare read<Physics>()).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <spindle/base/result.h>
#include <spindle/ecs/entity.h>
#include <spindle/engine/engine.h>

namespace spindle::physics {

// --- shapes -------------------------------------------------------------------------------------

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

struct ShapeDesc;
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

// --- components and events ---------------------------------------------------------------------

enum class BodyType : std::uint32_t { Dynamic, Kinematic, Static };

// A rigid body. Configuration is read when the body is created (at the next physics_sync);
// changing it afterwards has no effect except through the setters below. Forces and impulses
// accumulate until the next step and are then cleared. Velocities and sleep state are written
// back after every step. All fields are 4-byte so the component hashes without padding.
struct RigidBody {
  static constexpr std::uint32_t kTrigger = 1;     // overlap volume: events, no response
  static constexpr std::uint32_t kNeverSleep = 2;  // stays active

  ShapeId shape;
  BodyType type = BodyType::Dynamic;
  float mass = 1.0f;  // dynamic: > 0; kinematic and static: 0
  float friction = 0.5f;
  float restitution = 0.0f;
  float linear_damping = 0.0f;
  float angular_damping = 0.0f;
  std::uint32_t flags = 0;
  std::uint32_t group = 1;           // collision filter: a and b collide when
  std::uint32_t mask = 0xffffffffu;  // (a.group & b.mask) && (b.group & a.mask)

  static RigidBody dynamic(ShapeId shape, float mass) {
    RigidBody b;
    b.shape = shape;
    b.mass = mass;
    return b;
  }
  static RigidBody fixed(ShapeId shape) {
    RigidBody b;
    b.shape = shape;
    b.type = BodyType::Static;
    b.mass = 0;
    return b;
  }
  static RigidBody kinematic(ShapeId shape) {
    RigidBody b = fixed(shape);
    b.type = BodyType::Kinematic;
    return b;
  }

  // From systems (write access to RigidBody), applied at the next step.
  void add_force(glm::vec3 f) { force_ += f; }
  void add_torque(glm::vec3 t) { torque_ += t; }
  void add_impulse(glm::vec3 i) { impulse_ += i; }
  void add_angular_impulse(glm::vec3 i) { angular_impulse_ += i; }
  void set_linear_velocity(glm::vec3 v) {
    new_linear_ = v;
    pending_ |= kSetLinear;
  }
  void set_angular_velocity(glm::vec3 v) {
    new_angular_ = v;
    pending_ |= kSetAngular;
  }

  // Written after each step.
  glm::vec3 linear_velocity() const { return linear_velocity_; }
  glm::vec3 angular_velocity() const { return angular_velocity_; }
  bool sleeping() const { return state_ & kSleeping; }
  bool simulated() const { return state_ & kSimulated; }  // has a Bullet body
  std::uint32_t region() const { return region_; }

 private:
  friend class Physics;
  static constexpr std::uint32_t kSetLinear = 1, kSetAngular = 2;
  static constexpr std::uint32_t kSleeping = 1, kSimulated = 2;
  glm::vec3 force_{0.0f}, torque_{0.0f}, impulse_{0.0f}, angular_impulse_{0.0f};
  glm::vec3 new_linear_{0.0f}, new_angular_{0.0f};
  std::uint32_t pending_ = 0;
  glm::vec3 linear_velocity_{0.0f}, angular_velocity_{0.0f};
  std::uint32_t state_ = 0;
  std::uint32_t region_ = 0;
};

struct CollisionBegan {
  core::Entity a, b;  // a.index < b.index
  glm::vec3 point{0.0f};
  glm::vec3 normal{0.0f};  // from b towards a
  float impulse = 0;
};
struct CollisionEnded {
  core::Entity a, b;
};
struct TriggerEntered {
  core::Entity trigger, other;
};
struct TriggerExited {
  core::Entity trigger, other;
};
struct BodyRejected {
  core::Entity entity;
};

struct RayHit {
  core::Entity entity;
  glm::vec3 point{0.0f};
  glm::vec3 normal{0.0f};
  float fraction = 0;  // along from -> to
  float distance = 0;
};

// --- the physics world -------------------------------------------------------------------------

struct PhysicsConfig {
  glm::vec3 gravity{0.0f, -9.81f, 0.0f};
  std::uint32_t substeps = 1;  // Bullet steps per simulation step, each dt / substeps
  // Regions: slabs along `region_axis` (0 x, 1 y, 2 z) cut at these ascending coordinates;
  // empty: one world.
  std::vector<float> region_boundaries;
  std::uint32_t region_axis = 0;
  std::uint32_t max_shapes = 4096;
};

class Physics {
 public:
  struct Stats {
    std::uint32_t bodies = 0;  // simulated bodies (statics counted once)
    std::uint32_t active = 0;  // awake dynamic bodies after the last step
    std::uint64_t created = 0;
    std::uint64_t removed = 0;
    std::uint64_t rejected = 0;
    std::uint64_t migrated = 0;    // region changes
    std::uint64_t bad_inputs = 0;  // dropped non-finite/huge forces, velocities, transforms
    std::uint32_t contact_pairs = 0;
  };

  // Checks a config; the plugin refuses to build with a bad one.
  static core::Status validate(const PhysicsConfig& config);
  Physics(PhysicsConfig config, std::uint32_t entity_capacity);
  ~Physics();
  Physics(const Physics&) = delete;
  Physics& operator=(const Physics&) = delete;

  // Shapes live as long as the Physics object; bodies refer to them by id.
  core::Result<ShapeId> create_shape(const ShapeDesc& desc);
  std::uint32_t shape_count() const;
  // Why this body cannot be simulated, or success.
  core::Status validate(const RigidBody& body) const;

  // Nearest hit along the segment, over every region. `mask` filters by RigidBody::group.
  std::optional<RayHit> raycast(glm::vec3 from, glm::vec3 to,
                                std::uint32_t mask = 0xffffffffu) const;
  // A sphere of `radius` swept from -> to: the first body it touches.
  std::optional<RayHit> sweep_sphere(glm::vec3 from, glm::vec3 to, float radius,
                                     std::uint32_t mask = 0xffffffffu) const;
  // A created convex shape (box, sphere, capsule, cylinder, hull) swept from -> to at a fixed
  // rotation; nothing for concave or compound shapes, unknown ids and non-finite input.
  std::optional<RayHit> sweep(ShapeId shape, glm::vec3 from, glm::vec3 to,
                              glm::quat rotation = glm::quat(1, 0, 0, 0),
                              std::uint32_t mask = 0xffffffffu) const;

  std::uint32_t region_count() const;
  std::uint32_t region_of(glm::vec3 position) const;
  // Collision objects in one region's Bullet world (a static body counts once per region).
  std::uint32_t region_objects(std::uint32_t region) const;
  const Stats& stats() const { return stats_; }
  const PhysicsConfig& config() const { return config_; }

  // The three stages' work (the plugin calls them; public for tests and custom frames).
  void sync(core::StageContext& ctx);
  void step(core::StageContext& ctx);
  void writeback(core::StageContext& ctx);

  struct Impl;

 private:
  PhysicsConfig config_;
  Stats stats_;
  std::unique_ptr<Impl> impl_;
};

// Where the physics stages run: after gameplay (200), before transforms (400).
inline constexpr core::Phase kPhysicsPhase{"physics", 300};

// Registers RigidBody and the events, and adds the Physics resource and the three stages.
class PhysicsPlugin final : public core::Plugin {
 public:
  explicit PhysicsPlugin(PhysicsConfig config = {}) : config_(std::move(config)) {}
  const char* name() const override { return "physics"; }
  void build(core::Engine& engine) override;
  Physics& physics() { return *physics_; }

 private:
  PhysicsConfig config_;
  Physics* physics_ = nullptr;
};

}  // namespace spindle::physics
