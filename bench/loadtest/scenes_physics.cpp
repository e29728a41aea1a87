// The Bullet load-test scenes.
//
// spawn  The thesis experiment (docs/references.md, section 4.1): every step K new bodies of random
//        shape (box, sphere, capsule, cylinder; two sizes each) appear at random positions above
//        a ground plane and the oldest are destroyed, so exactly N exist; K = ceil(N / 60), so a
//        body lives one second of game time (60 steps): it falls, lands, tumbles and goes. The
//        area grows with N (about 4 m^2 per body) and is cut into 4 physics regions along x (a
//        fixed number, so the result is the same for every worker count). Stages: spawner,
//        expire (commands), physics (sync, 4 region steps, writeback), transforms, render prep.
//        The report shows the thesis's FPS beside ours.
// boxes  N boxes on a walled floor, never sleeping, kicked upwards in turn so that they keep
//        colliding (a steady state with every body awake), plus `particles`, game work that
//        touches no physics data (it can run beside the Bullet step). One Bullet world.
// boxes_r2, boxes_r4
//        The same with the floor cut into 2 or 4 regions along x: the scaling regions give.
#include <algorithm>
#include <cmath>

#include <glm/gtc/matrix_transform.hpp>

#include <spindle/anim/animation_plugin.h>
#include <spindle/gameplay/transform.h>
#include <spindle/physics/physics.h>
#include <spindle/render/render_plugin.h>

#include "scene.h"
#include "scene_common.h"

namespace spindle::loadtest {
namespace {

using physics::Physics;
using physics::PhysicsConfig;
using physics::PhysicsPlugin;
using physics::RigidBody;
using physics::ShapeDesc;
using physics::ShapeId;

ShapeId must(core::Result<ShapeId> r) {
  SPINDLE_ASSERT(r.ok(), "load-test scene shapes are valid");
  return r.value();
}

// --- spawn ---------------------------------------------------------------------------------------

struct Spawned {
  std::uint32_t serial = 0;
};
struct SpawnState {
  std::uint64_t seed = 1;
  std::uint32_t target = 0;       // N
  std::uint32_t per_step = 1;     // K
  std::uint32_t next_serial = 0;  // serials below next_serial - N are expired
  float side = 16;
  ShapeId shapes[8];
  render::MeshInstance looks[8];  // how a body of each shape is drawn
};

constexpr std::uint32_t kSpawnLifetimeSteps = 60;
constexpr std::uint32_t kSpawnRegions = 4;

// Body `serial`: shape, position and spin from the seed only.
void spawn_body(core::CommandBuffer* cmd, core::World* world, const SpawnState& s,
                std::uint32_t serial) {
  const float x = (scene_unit(s.seed, serial, 0) - 0.5f) * s.side;
  const float z = (scene_unit(s.seed, serial, 1) - 0.5f) * s.side;
  const float y = 1.0f + 5.0f * scene_unit(s.seed, serial, 2);
  const auto shape = static_cast<std::uint32_t>(scene_unit(s.seed, serial, 3) * 8.0f) & 7u;
  const glm::quat rot = glm::angleAxis(6.2831853f * scene_unit(s.seed, serial, 4),
                                       glm::normalize(glm::vec3(1.0f, 2.0f, 0.5f)));
  const core::Transform t = core::Transform::from(glm::vec3(x, y, z), rot);
  const RigidBody body = RigidBody::dynamic(s.shapes[shape], 1.0f + static_cast<float>(shape));
  if (cmd != nullptr) {
    cmd->spawn(t, core::WorldTransform{}, body, Spawned{serial}, s.looks[shape]);
  } else {
    const core::Entity e = world->create();
    world->add<core::Transform>(e, t);
    world->add<core::WorldTransform>(e);
    world->add<RigidBody>(e, body);
    world->add<Spawned>(e, Spawned{serial});
    world->add<render::MeshInstance>(e, s.looks[shape]);
  }
}

void setup_spawn(core::Engine& engine, const SceneParams& p) {
  core::World& world = engine.world();
  const std::uint32_t n = std::max(1u, p.objects);
  const float side = std::max(16.0f, 2.0f * std::sqrt(static_cast<float>(n)));
  PhysicsConfig config;
  for (std::uint32_t r = 1; r < kSpawnRegions; ++r)
    config.region_boundaries.push_back(side * (static_cast<float>(r) / kSpawnRegions - 0.5f));
  Physics& physics = engine.add_plugin<PhysicsPlugin>(config).physics();
  use_transforms(engine);
  world.register_component<Spawned>("spawned");

  SpawnState& s = world.set_resource<SpawnState>();
  s.seed = p.seed;
  s.target = n;
  s.per_step = (n + kSpawnLifetimeSteps - 1) / kSpawnLifetimeSteps;
  s.side = side;
  s.shapes[0] = must(physics.create_shape(ShapeDesc::box({0.25f, 0.25f, 0.25f})));
  s.shapes[1] = must(physics.create_shape(ShapeDesc::box({0.5f, 0.3f, 0.4f})));
  s.shapes[2] = must(physics.create_shape(ShapeDesc::sphere(0.25f)));
  s.shapes[3] = must(physics.create_shape(ShapeDesc::sphere(0.45f)));
  s.shapes[4] = must(physics.create_shape(ShapeDesc::capsule(0.2f, 0.5f)));
  s.shapes[5] = must(physics.create_shape(ShapeDesc::capsule(0.3f, 0.8f)));
  s.shapes[6] = must(physics.create_shape(ShapeDesc::cylinder(0.25f, 0.5f)));
  s.shapes[7] = must(physics.create_shape(ShapeDesc::cylinder(0.4f, 0.6f)));
  // What each shape looks like: boxes as boxes, spheres as spheres, capsules as stretched
  // spheres, cylinders as boxes of their size.
  render::Renderer& r =
      add_scene_renderer(engine, p, overview_camera(side, 0.6f, 0.9f), n + 2 * s.per_step + 16);
  add_impact_sounds(engine);
  const std::vector<render::MaterialId> colours = add_palette(r, 8);
  const auto box = [](glm::vec3 half) {
    return transformed_mesh(render::make_cube(1.0f), glm::scale(glm::mat4(1.0f), 2.0f * half));
  };
  const auto ball = [](glm::vec3 radii) {
    return transformed_mesh(render::make_sphere(1.0f, 6, 8), glm::scale(glm::mat4(1.0f), radii));
  };
  const render::Mesh looks[8] = {box({0.25f, 0.25f, 0.25f}), box({0.5f, 0.3f, 0.4f}),
                                 ball(glm::vec3(0.25f)),     ball(glm::vec3(0.45f)),
                                 ball({0.2f, 0.45f, 0.2f}),  ball({0.3f, 0.7f, 0.3f}),
                                 box({0.25f, 0.25f, 0.25f}), box({0.4f, 0.3f, 0.4f})};
  for (std::uint32_t k = 0; k < 8; ++k)
    s.looks[k] = {.mesh = r.add_mesh(looks[k]).value(), .material = colours[k]};

  const core::Entity ground = world.create();
  world.add<core::Transform>(ground);
  world.add<RigidBody>(
      ground,
      RigidBody::fixed(must(physics.create_shape(ShapeDesc::plane(glm::vec3(0, 1, 0), 0.0f)))));
  // Start in the steady state: N bodies at their spawn positions.
  for (std::uint32_t i = 0; i < n; ++i) spawn_body(nullptr, &world, s, i);
  s.next_serial = n;

  engine.add_stage({.name = "spawner",
                    .phase = core::Phase::Gameplay,
                    .access = core::Access{}.write<SpawnState>(),
                    .run = [](core::StageContext& ctx) {
                      SpawnState& st = *ctx.world().resource<SpawnState>();
                      core::CommandBuffer& cmd = ctx.commands();
                      for (std::uint32_t k = 0; k < st.per_step; ++k)
                        spawn_body(&cmd, nullptr, st, st.next_serial++);
                    }});
  engine.add_system<const Spawned>(
      "expire",
      [](core::StageContext& ctx, core::Entity e, const Spawned& sp) {
        const SpawnState& st = *ctx.world().resource<SpawnState>();
        if (sp.serial + st.target < st.next_serial) ctx.commands().destroy(e);
      },
      core::Phase::Gameplay, {"spawner"}, core::Access{}.read<SpawnState>());
}

std::vector<report::Reference> thesis_reference() {
  report::Reference ref;
  ref.source =
      "the thesis \"Multithreaded game engine architecture\" (2019), section 4.1: load "
      "testing";
  ref.note =
      "The thesis generated objects with physics every frame on its own machine (PhysX, a "
      "different CPU with more cores, FPS averaged per second); its job system is our static "
      "mode's nearest kin, its dynamic thread allocation our dynamic mode. Ours: median frame "
      "time -> FPS on this machine, Bullet, 4 physics regions.";
  ref.modes = {{"single", "single-threaded"}, {"static", "job system"}, {"dynamic", "dynamic"}};
  ref.rows = {{10, "single", 1706},    {100, "single", 1621},  {1000, "single", 48},
              {10, "static", 5326},    {100, "static", 3020},  {1000, "static", 48},
              {10, "dynamic", 4483},   {100, "dynamic", 4315}, {1000, "dynamic", 3532},
              {5000, "dynamic", 1894}, {8000, "dynamic", 1444}};
  return {ref};
}

// --- boxes ---------------------------------------------------------------------------------------

struct Particle {
  glm::vec3 position{0.0f};
  glm::vec3 velocity{0.0f};
};
struct Particles {
  std::vector<Particle> items;
};
struct Kick {
  std::uint32_t phase = 0;  // this box is kicked when tick % kKickPeriod == phase
};
constexpr std::uint32_t kKickPeriod = 120;
constexpr std::uint32_t kParticlesPerBox = 24;

void setup_boxes(core::Engine& engine, const SceneParams& p, std::uint32_t regions) {
  core::World& world = engine.world();
  const std::uint32_t n = std::max(1u, p.objects);
  // About one box per 2.5 m^2: they have room to fall back but meet their neighbours.
  const float side = std::max(8.0f, std::sqrt(2.5f * static_cast<float>(n)));
  PhysicsConfig config;
  for (std::uint32_t r = 1; r < regions; ++r)
    config.region_boundaries.push_back(side * (static_cast<float>(r) / regions - 0.5f));
  Physics& physics = engine.add_plugin<PhysicsPlugin>(config).physics();
  use_transforms(engine);
  world.register_component<Kick>("kick");

  const ShapeId box = must(physics.create_shape(ShapeDesc::box({0.4f, 0.4f, 0.4f})));
  render::Renderer& r = add_scene_renderer(engine, p, overview_camera(side, 0.6f, 0.9f), n + 16);
  add_impact_sounds(engine);
  const render::MeshId cube = r.add_mesh(render::make_cube(0.8f)).value();
  const std::vector<render::MaterialId> colours = add_palette(r, 6);
  const ShapeId wall = must(physics.create_shape(ShapeDesc::box({side * 0.5f + 1, 2, 0.5f})));
  const auto fixed_body = [&](glm::vec3 at, glm::quat rot, ShapeId shape) {
    const core::Entity e = world.create();
    world.add<core::Transform>(e, core::Transform::from(at, rot));
    world.add<RigidBody>(e, RigidBody::fixed(shape));
  };
  fixed_body(glm::vec3(0), glm::quat(1, 0, 0, 0),
             must(physics.create_shape(ShapeDesc::plane(glm::vec3(0, 1, 0), 0.0f))));
  const glm::quat turn = glm::angleAxis(1.5707964f, glm::vec3(0, 1, 0));
  const float h = side * 0.5f + 0.5f;
  fixed_body({0, 2, -h}, glm::quat(1, 0, 0, 0), wall);
  fixed_body({0, 2, h}, glm::quat(1, 0, 0, 0), wall);
  fixed_body({-h, 2, 0}, turn, wall);
  fixed_body({h, 2, 0}, turn, wall);

  const auto per_row = static_cast<std::uint32_t>(std::ceil(std::sqrt(static_cast<float>(n))));
  const float spacing = side / static_cast<float>(per_row);
  for (std::uint32_t i = 0; i < n; ++i) {
    const float x = (static_cast<float>(i % per_row) + 0.5f) * spacing - side * 0.5f;
    const float z = (static_cast<float>(i / per_row) + 0.5f) * spacing - side * 0.5f;
    const float y = 0.4f + 1.5f * scene_unit(p.seed, i, 0);
    const core::Entity e = world.create();
    world.add<core::Transform>(
        e, core::Transform::from(
               {x, y, z}, glm::angleAxis(3.0f * scene_unit(p.seed, i, 1), glm::vec3(0, 1, 0))));
    world.add<core::WorldTransform>(e);
    RigidBody body = RigidBody::dynamic(box, 1.0f);
    body.flags = RigidBody::kNeverSleep;
    world.add<RigidBody>(e, body);
    world.add<Kick>(e, Kick{static_cast<std::uint32_t>(scene_unit(p.seed, i, 2) * kKickPeriod)});
    world.add<render::MeshInstance>(
        e, render::MeshInstance{.mesh = cube, .material = colours[i % colours.size()]});
  }
  engine.add_system<const Kick, RigidBody>(
      "kick",
      [](core::StageContext& ctx, core::Entity e, const Kick& k, RigidBody& body) {
        if (ctx.tick() % kKickPeriod != k.phase) return;
        // Up and a little sideways (towards the centre or away, by entity).
        const float side_push = (e.index % 2 ? 1.0f : -1.0f);
        body.add_impulse(glm::vec3(side_push, 4.0f, 0.5f * side_push));
        body.add_angular_impulse(glm::vec3(0.1f, 0.0f, 0.05f));
      },
      core::Phase::Gameplay);

  // Game work that touches no physics data: it may run while Bullet steps.
  Particles& parts = world.set_resource<Particles>();
  parts.items.resize(std::size_t{n} * kParticlesPerBox);
  for (std::size_t i = 0; i < parts.items.size(); ++i)
    parts.items[i] = {glm::vec3(scene_unit(p.seed, i, 5), scene_unit(p.seed, i, 6), 0.0f),
                      glm::vec3(0.0f, scene_unit(p.seed, i, 7), 0.0f)};
  engine.add_stage({.name = "particles",
                    .phase = anim::kAnimationPhase,
                    .access = core::Access{}.write<Particles>(),
                    .run = [](core::StageContext& ctx) {
                      std::vector<Particle>& items = ctx.world().resource<Particles>()->items;
                      const float dt = ctx.dt();
                      ctx.parallel_for(static_cast<std::uint32_t>(items.size()),
                                       [&](std::uint32_t b, std::uint32_t e) {
                                         for (std::uint32_t i = b; i < e; ++i) {
                                           Particle& q = items[i];
                                           const glm::vec3 swirl(std::sin(q.position.y * 3.0f),
                                                                 -9.81f,
                                                                 std::cos(q.position.x * 3.0f));
                                           q.velocity += swirl * dt;
                                           q.position += q.velocity * dt;
                                           if (q.position.y < 0.0f) {
                                             q.position.y = -q.position.y;
                                             q.velocity.y = std::abs(q.velocity.y) * 0.8f;
                                           }
                                         }
                                       });
                    }});
}

}  // namespace

void register_physics_scenes() {
  // Bullet's step grows faster than the body count: about 47 ms at 10,000 bodies and 410 ms at
  // 40,000 in `single` mode (180 MB), so 50,000 (the top of the default counts) is about the
  // most that steps in a second.
  constexpr ObjectRange kBodies{1, 50'000};
  register_scene({.name = "spawn",
                  .description = "the thesis experiment: K Bullet bodies of random shape spawned "
                                 "every step, the oldest destroyed, N alive (4 regions)",
                  .objects = kBodies,
                  .setup = setup_spawn,
                  .capacity = [](std::uint32_t objects) { return objects + objects / 30 + 1024; },
                  .references = thesis_reference()});
  register_scene({.name = "boxes",
                  .description = "N awake boxes kicked about a walled floor, one Bullet world, "
                                 "with particles beside the step",
                  .objects = kBodies,
                  .setup = [](core::Engine& e, const SceneParams& p) { setup_boxes(e, p, 1); }});
  register_scene({.name = "boxes_r2",
                  .description = "`boxes` with the floor cut into 2 physics regions",
                  .objects = kBodies,
                  .setup = [](core::Engine& e, const SceneParams& p) { setup_boxes(e, p, 2); }});
  register_scene({.name = "boxes_r4",
                  .description = "`boxes` with the floor cut into 4 physics regions",
                  .objects = kBodies,
                  .setup = [](core::Engine& e, const SceneParams& p) { setup_boxes(e, p, 4); }});
}

}  // namespace spindle::loadtest
