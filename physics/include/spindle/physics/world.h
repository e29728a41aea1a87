// The physics world: Bullet rigid bodies for the entities with a RigidBody, stepped by three
// stages (added by PhysicsPlugin; plugin.h).
//
// Usage:
//
//   spindle::physics::Physics& physics = plugin.physics();   // or world.resource<Physics>()
//   auto ball = physics.create_shape(spindle::physics::ShapeDesc::sphere(0.5f));
//   auto hit = physics.raycast(from, to);                     // from a stage reading Physics
//   physics.stats().contact_pairs;
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
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <spindle/base/result.h>
#include <spindle/engine/engine.h>
#include <spindle/physics/queries.h>
#include <spindle/physics/rigid_body.h>
#include <spindle/physics/shapes.h>

namespace spindle::physics {

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

  // The Bullet side (physics/src/physics_impl.h).
  struct Impl;

 private:
  PhysicsConfig config_;
  Stats stats_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spindle::physics
