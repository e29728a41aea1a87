// The built-in load-test scenes: `boids` (steering agents with neighbour queries, transforms,
// culling and sorting), `swarm` (tens of thousands of colliding agents through spindle::swarm)
// and `imbalanced` (independent stages of deliberately different cost).
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include <spindle/anim/animation_plugin.h>
#include <spindle/gameplay/transform.h>
#include <spindle/physics/physics.h>
#include <spindle/physics/swarm.h>
#include <glm/gtc/matrix_transform.hpp>

#include <spindle/render/render_plugin.h>

#include "scene.h"
#include "scene_common.h"

namespace spindle::loadtest {

namespace {
std::map<std::string, SceneDef, std::less<>>& registry() {
  static std::map<std::string, SceneDef, std::less<>> scenes;
  return scenes;
}
}  // namespace

bool register_scene(SceneDef def) {
  SPINDLE_ASSERTF(def.objects.min >= 1 && def.objects.min <= def.objects.max,
                  "scene %s declares the object counts it accepts (SceneDef::objects)",
                  def.name.c_str());
  SPINDLE_ASSERTF(!def.default_objects.empty() &&
                      std::is_sorted(def.default_objects.begin(), def.default_objects.end()) &&
                      def.default_objects.front() >= def.objects.min &&
                      def.default_objects.back() <= def.objects.max,
                  "scene %s: default object counts ascending, within %u to %u", def.name.c_str(),
                  def.objects.min, def.objects.max);
  // Every scene can leave drawing out (--draw 0), so a subsystem is measured on its own; a scene
  // that draws in its own way (crowd, orchestra) declares "draw" itself.
  if (std::none_of(def.params.begin(), def.params.end(),
                   [](const SceneParam& p) { return p.name == "draw"; }))
    def.params.push_back({"draw", kDrawParam, 1, 0, 1});
  std::string name = def.name;
  registry()[name] = std::move(def);
  return true;
}

const SceneDef* find_scene(std::string_view name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::int64_t SceneParams::param(std::string_view name) const {
  for (const SceneParam& p : params)
    if (p.name == name) return p.value;
  SPINDLE_ASSERTF(false, "scene parameter '%.*s' was not declared", static_cast<int>(name.size()),
                  name.data());
  return 0;
}

std::vector<std::string> scene_names() {
  std::vector<std::string> out;
  for (const auto& [name, def] : registry()) out.push_back(name);
  return out;
}

// --- boids -------------------------------------------------------------------------------------
//
// Agents on a torus of side sqrt(N) (about one agent per unit area). Each step:
//   grid        the swarm index (spindle::swarm): Morton keys, parallel radix sort, cell table
//   steer       the swarm's neighbour pass (at most kMaxNeighbours within kRadius, at most
//               kMaxCandidates examined: the worst case stays flat), then separation /
//               alignment / cohesion from them
//   integrate   position, wrap, Transform (translation and heading rotation)
//   transforms  world matrices (TransformPlugin)
//   flock_stats centroid and mean speed (reads agents; overlaps transforms and render_prep)
//   render_prep culling, 64-bit sort keys and radix sort of the draw list (spindle::render)
namespace {

struct Agent {
  glm::vec2 pos{0.0f};
  glm::vec2 vel{0.0f};
};

// The swarm of the current step: built by `grid`, queried by `steer`, read by `integrate`
// (declared as a type for the frame graph's access sets).
struct FlockGrid {
  float side = 1;
  std::unique_ptr<swarm::Swarm<float>> swarm;
  std::vector<glm::vec2> steered;  // new velocity, in the swarm's sorted order (steer)
};
struct FlockStats {
  glm::vec2 centroid{0.0f};
  float mean_speed = 0;
  std::vector<glm::vec3> partial;  // per chunk: sum x, sum y, sum speed
};

constexpr std::uint32_t kMaxNeighbours = 24;
constexpr std::uint32_t kMaxCandidates = 128;
constexpr float kRadius = 2.0f;

float wrap(float v, float side) {
  v = v - side * std::floor(v / side);
  return v >= side ? 0.0f : v;
}

// Separation, alignment and cohesion for the agent at sorted position k.
glm::vec2 steer(const swarm::Swarm<float>& s, std::uint32_t k) {
  const swarm::FlockSums<float> f = s.flock(k);
  glm::vec2 v(s.vx()[k], s.vy()[k]);
  if (f.count > 0) {
    const float inv = 1.0f / static_cast<float>(f.count);
    v += 0.05f * glm::vec2(f.separation_x, f.separation_y) +
         0.05f * (glm::vec2(f.velocity_x, f.velocity_y) * inv - v) +
         0.01f * glm::vec2(f.offset_x, f.offset_y) * inv;
  }
  const float speed = std::sqrt(v.x * v.x + v.y * v.y);
  if (speed > 2.0f) v *= 2.0f / speed;
  if (speed < 0.5f) v = speed > 1e-6f ? v * (0.5f / speed) : glm::vec2(0.5f, 0.0f);
  return v;
}

void setup_boids(core::Engine& engine, const SceneParams& p) {
  core::World& world = engine.world();
  world.register_component<Agent>("agent");
  use_transforms(engine);
  const std::uint32_t n = p.objects;

  FlockGrid& grid = world.set_resource<FlockGrid>();
  grid.side = std::max(4.0f, std::sqrt(static_cast<float>(n)));
  swarm::Config<float> cfg;
  cfg.max_agents = std::max(n, 1u);
  cfg.max_x = cfg.max_y = grid.side;
  cfg.cell_size = cfg.radius = kRadius;  // a torus: cells stretch to tile it
  cfg.max_neighbours = kMaxNeighbours;
  cfg.max_candidates = kMaxCandidates;
  cfg.max_chunks = 256;
  cfg.min_chunk_agents = 256;  // steering a boid costs ~0.2 us: 256 of them make a fair job
  cfg.boundary = swarm::Boundary::Wrap;
  grid.swarm = std::make_unique<swarm::Swarm<float>>(cfg);
  SPINDLE_ASSERTF(grid.swarm->valid(), "boids: swarm config: %s", grid.swarm->error());
  grid.steered.resize(n);
  FlockStats& stats = world.set_resource<FlockStats>();
  stats.partial.resize(1024);
  render::Camera camera;
  camera.position = glm::vec3(grid.side * 0.5f, grid.side * 0.3f, grid.side * 0.9f);
  camera.target = glm::vec3(grid.side * 0.5f, grid.side * 0.5f, 0.0f);
  camera.up = glm::vec3(0, 0, 1);
  camera.fov_y_radians = 1.0f;
  camera.aspect = 4.0f / 3.0f;
  camera.near_plane = 0.1f;
  camera.far_plane = grid.side * 3.0f;
  // Each boid is a dart in the XY plane pointing along its heading (+X before rotation).
  render::Renderer& r = add_scene_renderer(engine, p, camera, n);
  const render::MeshId dart =
      r.add_mesh(transformed_mesh(render::make_dart(0.9f),
                                  glm::rotate(glm::mat4(1.0f), 1.5707964f, glm::vec3(1, 0, 0))))
          .value();
  const std::vector<render::MaterialId> colours = add_palette(r, 7);

  for (std::uint32_t i = 0; i < n; ++i) {
    const core::Entity e = world.create();
    const float angle = scene_unit(p.seed, i, 2) * 6.2831853f;
    world.add<Agent>(
        e, Agent{glm::vec2(scene_unit(p.seed, i, 0), scene_unit(p.seed, i, 1)) * grid.side,
                 glm::vec2(std::cos(angle), std::sin(angle))});
    world.add<core::Transform>(e);
    world.add<core::WorldTransform>(e);
    world.add<render::MeshInstance>(
        e, render::MeshInstance{.mesh = dart, .material = colours[i % colours.size()]});
  }

  engine.add_stage(
      {.name = "grid",
       .phase = core::Phase::Gameplay,
       .access = core::Access{}.read<Agent>().write<FlockGrid>(),
       .run = [](core::StageContext& ctx) {
         FlockGrid& g = *ctx.world().resource<FlockGrid>();
         const std::span<const Agent> a = ctx.world().storage<Agent>()->data();
         const bool built = g.swarm->build(
             ctx.jobs(), ctx.split(), static_cast<std::uint32_t>(a.size()),
             [a](std::uint32_t i) {
               return swarm::Agent<float>{a[i].pos.x, a[i].pos.y, a[i].vel.x, a[i].vel.y, 0.0f};
             },
             ctx.tag());
         SPINDLE_ASSERT(built, "boids: swarm sized for every agent");
       }});

  // Steering walks the agents in the swarm's sorted order (by cell), so the neighbours it reads
  // are close in memory to the ones the previous agent read, and writes its results in that
  // order too: chunks write disjoint cache lines (writing the agents themselves, scattered in
  // memory, made two workers fight over the same lines and doubled the stage's CPU time).
  engine.add_stage({.name = "steer",
                    .phase = core::Phase::Gameplay,
                    .access = core::Access{}.write<FlockGrid>(),
                    .after = {"grid"},
                    .run = [](core::StageContext& ctx) {
                      FlockGrid& g = *ctx.world().resource<FlockGrid>();
                      g.swarm->find_neighbours(ctx.jobs(), ctx.split(), ctx.tag());
                      g.swarm->for_each_range(ctx.jobs(), ctx.split(), {"boids_steer", ctx.tag()},
                                              [&g](std::uint32_t b, std::uint32_t e) {
                                                for (std::uint32_t k = b; k < e; ++k)
                                                  g.steered[k] = steer(*g.swarm, k);
                                              });
                    }});
  engine.add_system<Agent, core::Transform>(
      "integrate",
      [](core::StageContext& ctx, core::Entity e, Agent& a, core::Transform& t) {
        const FlockGrid& g = *ctx.world().resource<FlockGrid>();
        const std::uint32_t agent = ctx.world().storage<Agent>()->dense_index(e.index);
        a.vel = g.steered[g.swarm->rank()[agent]];
        a.pos = glm::vec2(wrap(a.pos.x + a.vel.x * ctx.dt() * 4.0f, g.side),
                          wrap(a.pos.y + a.vel.y * ctx.dt() * 4.0f, g.side));
        t.set_translation(glm::vec3(a.pos, 0.0f));
        t.set_rotation(glm::angleAxis(std::atan2(a.vel.y, a.vel.x), glm::vec3(0, 0, 1)));
      },
      physics::kPhysicsPhase, {}, core::Access{}.read<FlockGrid>());  // the steered velocities
  engine.add_stage({.name = "flock_stats",
                    .phase = anim::kAnimationPhase,
                    .access = core::Access{}.read<Agent>().write<FlockStats>(),
                    .run = [](core::StageContext& ctx) {
                      FlockStats& s = *ctx.world().resource<FlockStats>();
                      const std::span<const Agent> a = ctx.world().storage<Agent>()->data();
                      const auto count = static_cast<std::uint32_t>(a.size());
                      // Fixed partition into 1024-item blocks so the float sums are identical
                      // for any split.
                      const std::uint32_t blocks = std::min<std::uint32_t>(
                          static_cast<std::uint32_t>(s.partial.size()), (count + 1023) / 1024);
                      ctx.parallel_for(blocks, [&](std::uint32_t b, std::uint32_t e) {
                        for (std::uint32_t blk = b; blk < e; ++blk) {
                          glm::vec3 sum(0.0f);
                          const std::uint32_t end = blk + 1 == blocks ? count : (blk + 1) * 1024;
                          for (std::uint32_t i = blk * 1024; i < end; ++i)
                            sum += glm::vec3(a[i].pos, glm::length(a[i].vel));
                          s.partial[blk] = sum;
                        }
                      });
                      glm::vec3 total(0.0f);
                      for (std::uint32_t blk = 0; blk < blocks; ++blk) total += s.partial[blk];
                      const float inv = count > 0 ? 1.0f / static_cast<float>(count) : 0.0f;
                      s.centroid = glm::vec2(total) * inv;
                      s.mean_speed = total.z * inv;
                    }});
}

// --- swarm -------------------------------------------------------------------------------------
//
// N circles (radius 0.35) at one per unit area in a bounded square of side sqrt(N), each
// seeking one of 8 attractors that circle the centre, pushed apart where they overlap. A third
// start in tight crowds around the attractors and the rest join them, so the neighbour and
// candidate caps bite from the first frame: the frame cost stays linear in N whatever the
// crowding. Each step:
//   swarm_index       spindle::swarm build: Morton keys, parallel radix sort, cell table
//   swarm_neighbours  at most 16 neighbours within 1.0 per agent, at most 64 examined
//   swarm_resolve     overlap pushes (Jacobi) and seeking, new position and velocity in sorted
//                     order
//   swarm_integrate   each agent takes its new state (a system over the agents)
struct SwarmAgent {
  glm::vec2 pos{0.0f};
  glm::vec2 vel{0.0f};
  std::uint32_t group = 0;
};

// Built by swarm_index, queried by swarm_neighbours and swarm_resolve, read by swarm_integrate.
struct SwarmState {
  float side = 1;
  std::unique_ptr<swarm::Swarm<float>> swarm;
  std::vector<glm::vec2> pos, vel;  // next state, in the swarm's sorted order
};

constexpr std::uint32_t kSwarmGroups = 8;
constexpr float kSwarmAgentRadius = 0.35f;
constexpr float kSwarmSpeed = 6.0f;

glm::vec2 attractor(float side, std::uint32_t group, std::uint64_t tick) {
  const float angle = 6.2831853f * static_cast<float>(group) / kSwarmGroups +
                      0.002f * static_cast<float>(tick % 3142);
  return glm::vec2(0.5f * side) + 0.3f * side * glm::vec2(std::cos(angle), std::sin(angle));
}

void setup_swarm(core::Engine& engine, const SceneParams& p) {
  core::World& world = engine.world();
  world.register_component<SwarmAgent>("swarm_agent");
  const std::uint32_t n = p.objects;
  SwarmState& state = world.set_resource<SwarmState>();
  state.side = std::max(4.0f, std::sqrt(static_cast<float>(n)));
  swarm::Config<float> cfg;
  cfg.max_agents = std::max(n, 1u);
  cfg.max_x = cfg.max_y = state.side;
  cfg.cell_size = cfg.radius = 1.0f;  // >= twice the agent radius: every overlap is seen
  cfg.max_neighbours = 16;
  cfg.max_candidates = 64;
  cfg.max_chunks = 256;
  cfg.boundary = swarm::Boundary::Clamp;
  state.swarm = std::make_unique<swarm::Swarm<float>>(cfg);
  SPINDLE_ASSERTF(state.swarm->valid(), "swarm: config: %s", state.swarm->error());
  state.pos.resize(n);
  state.vel.resize(n);

  for (std::uint32_t i = 0; i < n; ++i) {
    const core::Entity e = world.create();
    const auto group = static_cast<std::uint32_t>(scene_unit(p.seed, i, 3) * kSwarmGroups);
    glm::vec2 pos = glm::vec2(scene_unit(p.seed, i, 0), scene_unit(p.seed, i, 1)) * state.side;
    if (i % 3 == 0) {  // a crowd around the attractor
      const float angle = scene_unit(p.seed, i, 4) * 6.2831853f;
      const float r = 0.02f * state.side * scene_unit(p.seed, i, 5);
      pos = attractor(state.side, group, 0) + r * glm::vec2(std::cos(angle), std::sin(angle));
    }
    world.add<SwarmAgent>(e, SwarmAgent{pos, glm::vec2(0.0f), group});
  }

  // Each agent is a cube as wide as its circle, coloured by its group, drawn from the agents
  // themselves (they are not transforms).
  render::Camera camera;
  camera.position = glm::vec3(state.side * 0.5f, -0.15f * state.side, 0.95f * state.side);
  camera.target = glm::vec3(state.side * 0.5f, state.side * 0.45f, 0.0f);
  camera.up = glm::vec3(0, 0, 1);
  camera.near_plane = 0.1f;
  camera.far_plane = state.side * 3.0f;
  struct SwarmLook {
    render::MeshId cube = 0;
    std::vector<render::MaterialId> colours;
  };
  auto look = std::make_shared<SwarmLook>();
  render::Renderer& r = add_scene_renderer(
      engine, p, camera, n,
      [look](core::StageContext& ctx, render::Renderer& rr) {
        const std::span<const SwarmAgent> a = ctx.world().storage<SwarmAgent>()->data();
        // Every draw is written below, in parallel: no serial clearing first.
        const std::span<render::DrawCommand> draws =
            rr.append_draws(static_cast<std::uint32_t>(a.size()), false);
        ctx.parallel_for(
            static_cast<std::uint32_t>(draws.size()), [&](std::uint32_t b, std::uint32_t e) {
              for (std::uint32_t i = b; i < e; ++i)
                draws[i] = {.mesh = look->cube,
                            .material = look->colours[a[i].group],
                            .model = glm::translate(glm::mat4(1.0f), glm::vec3(a[i].pos, 0.35f))};
            });
      },
      core::Access{}.read<SwarmAgent>());
  look->cube = r.add_mesh(render::make_cube(2.0f * kSwarmAgentRadius)).value();
  look->colours = add_palette(r, kSwarmGroups);

  engine.add_stage({.name = "swarm_index",
                    .phase = physics::kPhysicsPhase,
                    .access = core::Access{}.read<SwarmAgent>().write<SwarmState>(),
                    .run = [](core::StageContext& ctx) {
                      SwarmState& st = *ctx.world().resource<SwarmState>();
                      const std::span<const SwarmAgent> a =
                          ctx.world().storage<SwarmAgent>()->data();
                      const bool built = st.swarm->build(
                          ctx.jobs(), ctx.split(), static_cast<std::uint32_t>(a.size()),
                          [a](std::uint32_t i) {
                            return swarm::Agent<float>{a[i].pos.x, a[i].pos.y, a[i].vel.x,
                                                       a[i].vel.y, kSwarmAgentRadius};
                          },
                          ctx.tag());
                      SPINDLE_ASSERT(built, "swarm: sized for every agent");
                    }});
  engine.add_stage({.name = "swarm_neighbours",
                    .phase = physics::kPhysicsPhase,
                    .access = core::Access{}.write<SwarmState>(),
                    .after = {"swarm_index"},
                    .run = [](core::StageContext& ctx) {
                      SwarmState& st = *ctx.world().resource<SwarmState>();
                      st.swarm->find_neighbours(ctx.jobs(), ctx.split(), ctx.tag());
                    }});
  engine.add_stage(
      {.name = "swarm_resolve",
       .phase = physics::kPhysicsPhase,
       .access = core::Access{}.read<SwarmAgent>().write<SwarmState>(),
       .after = {"swarm_neighbours"},
       .run = [](core::StageContext& ctx) {
         SwarmState& st = *ctx.world().resource<SwarmState>();
         const swarm::Swarm<float>& s = *st.swarm;
         st.swarm->resolve_overlaps(ctx.jobs(), ctx.split(), 0.8f, ctx.tag());
         const std::span<const SwarmAgent> agents = ctx.world().storage<SwarmAgent>()->data();
         const float dt = ctx.dt();
         glm::vec2 targets[kSwarmGroups];
         for (std::uint32_t g = 0; g < kSwarmGroups; ++g)
           targets[g] = attractor(st.side, g, ctx.tick());
         s.for_each_range(
             ctx.jobs(), ctx.split(), {"swarm_seek", ctx.tag()},
             [&](std::uint32_t b, std::uint32_t e) {
               const float hi = st.side - 1e-3f;
               for (std::uint32_t k = b; k < e; ++k) {
                 const glm::vec2 pos(s.x()[k], s.y()[k]);
                 const glm::vec2 vel(s.vx()[k], s.vy()[k]);
                 const glm::vec2 to = targets[agents[s.order()[k]].group] - pos;
                 const float d = std::sqrt(to.x * to.x + to.y * to.y);
                 const glm::vec2 want = d > 1e-4f ? to * (kSwarmSpeed / d) : glm::vec2(0.0f);
                 const glm::vec2 v = vel + 0.1f * (want - vel);
                 const glm::vec2 next = pos + v * dt + glm::vec2(s.push_x()[k], s.push_y()[k]);
                 st.pos[k] = glm::clamp(next, glm::vec2(0.0f), glm::vec2(hi));
                 st.vel[k] = v;
               }
             });
       }});
  engine.add_system<SwarmAgent>(
      "swarm_integrate",
      [](core::StageContext& ctx, core::Entity e, SwarmAgent& a) {
        const SwarmState& st = *ctx.world().resource<SwarmState>();
        const std::uint32_t k =
            st.swarm->rank()[ctx.world().storage<SwarmAgent>()->dense_index(e.index)];
        a.pos = st.pos[k];
        a.vel = st.vel[k];
      },
      physics::kPhysicsPhase, {"swarm_resolve"}, core::Access{}.read<SwarmState>());
}

// --- imbalanced --------------------------------------------------------------------------------
//
// Four stages with no data in common, of deliberately different cost and shape:
//   serial       one indivisible job (like a physics step that cannot be split): 4 units/object
//   skewed       parallel, but the first quarter of the objects costs 12 units, the rest 1
//   light        parallel, 1 unit per object
//   after_light  parallel, 1 unit per object, must follow `light`
// `static` runs them one after another, each split evenly over the workers: the serial stage
// leaves the other workers idle and the even split of `skewed` gives one worker most of its
// work. `dynamic` runs them concurrently, longest first, with a finer split and stealing.
struct WorkA {
  float v = 0;
};
struct WorkB {
  float v = 0;
};
struct WorkC {
  float v = 0;
};
struct WorkD {
  float v = 0;
};

// One unit of work: a dependent chain of arithmetic the compiler cannot remove. Not inlined, so
// it is not vectorised across objects either: every object costs the same in every stage.
[[gnu::noinline]] float burn(float x, std::uint32_t units) {
  for (std::uint32_t u = 0; u < units * 64; ++u) x = x * 0.999991f + 0.37f;
  return x;
}

void setup_imbalanced(core::Engine& engine, const SceneParams& p) {
  core::World& world = engine.world();
  world.register_component<WorkA>("work_a");
  world.register_component<WorkB>("work_b");
  world.register_component<WorkC>("work_c");
  world.register_component<WorkD>("work_d");
  for (std::uint32_t i = 0; i < p.objects; ++i) {
    const core::Entity e = world.create();
    const float v = scene_unit(p.seed, i, 0);
    world.add<WorkA>(e, WorkA{v});
    world.add<WorkB>(e, WorkB{v});
    world.add<WorkC>(e, WorkC{v});
    world.add<WorkD>(e, WorkD{v});
  }
  // Each object is a cube on a grid, turned by its four work values (so the picture changes as
  // they do), coloured by the stage cost of its quarter.
  const auto per_row = static_cast<std::uint32_t>(
      std::ceil(std::sqrt(std::max(1.0f, static_cast<float>(p.objects)))));
  const float side = 1.5f * static_cast<float>(per_row);
  struct WorkLook {
    render::MeshId cube = 0;
    std::vector<render::MaterialId> colours;
    std::uint32_t per_row = 1;
  };
  auto look = std::make_shared<WorkLook>();
  look->per_row = per_row;
  render::Renderer& r = add_scene_renderer(
      engine, p, overview_camera(side, 0.7f, 0.6f), p.objects,
      [look](core::StageContext& ctx, render::Renderer& rr) {
        core::World& w = ctx.world();
        const std::span<const WorkA> a = w.storage<WorkA>()->data();
        const std::span<const WorkB> b = w.storage<WorkB>()->data();
        const std::span<const WorkC> c = w.storage<WorkC>()->data();
        const std::span<const WorkD> d = w.storage<WorkD>()->data();
        const auto n = static_cast<std::uint32_t>(a.size());
        const std::span<render::DrawCommand> draws =
            rr.append_draws(n, false);  // all written below
        const float half = 0.75f * static_cast<float>(look->per_row);
        ctx.parallel_for(
            static_cast<std::uint32_t>(draws.size()), [&](std::uint32_t lo, std::uint32_t hi) {
              for (std::uint32_t i = lo; i < hi; ++i) {
                const glm::vec3 at(1.5f * static_cast<float>(i % look->per_row) - half, 0.5f,
                                   1.5f * static_cast<float>(i / look->per_row) - half);
                const float turn = a[i].v + b[i].v + c[i].v + d[i].v;
                draws[i] = {.mesh = look->cube,
                            .material = look->colours[4 * i / std::max(n, 1u)],
                            .model = glm::rotate(glm::translate(glm::mat4(1.0f), at), turn,
                                                 glm::vec3(0.3f, 1.0f, 0.2f))};
              }
            });
      },
      core::Access{}.read<WorkA, WorkB, WorkC, WorkD>());
  look->cube = r.add_mesh(render::make_cube(1.0f)).value();
  look->colours = add_palette(r, 4);
  engine.add_stage({.name = "serial",
                    .phase = physics::kPhysicsPhase,
                    .access = core::Access{}.write<WorkA>(),
                    .run = [](core::StageContext& ctx) {
                      for (WorkA& a : ctx.world().storage<WorkA>()->data()) a.v = burn(a.v, 4);
                    }});
  engine.add_stage({.name = "skewed",
                    .phase = core::Phase::Gameplay,
                    .access = core::Access{}.write<WorkB>(),
                    .run = [](core::StageContext& ctx) {
                      const std::span<WorkB> b = ctx.world().storage<WorkB>()->data();
                      const auto n = static_cast<std::uint32_t>(b.size());
                      ctx.parallel_for(n, [&](std::uint32_t begin, std::uint32_t end) {
                        for (std::uint32_t i = begin; i < end; ++i)
                          b[i].v = burn(b[i].v, i < n / 4 ? 12 : 1);
                      });
                    }});
  engine.add_stage({.name = "light",
                    .phase = anim::kAnimationPhase,
                    .access = core::Access{}.write<WorkC>(),
                    .run = [](core::StageContext& ctx) {
                      const std::span<WorkC> c = ctx.world().storage<WorkC>()->data();
                      ctx.parallel_for(static_cast<std::uint32_t>(c.size()),
                                       [&](std::uint32_t begin, std::uint32_t end) {
                                         for (std::uint32_t i = begin; i < end; ++i)
                                           c[i].v = burn(c[i].v, 1);
                                       });
                    }});
  engine.add_stage({.name = "after_light",
                    .phase = render::kRenderPrepPhase,
                    .access = core::Access{}.read<WorkC>().write<WorkD>(),
                    .run = [](core::StageContext& ctx) {
                      const std::span<const WorkC> c = ctx.world().storage<WorkC>()->data();
                      const std::span<WorkD> d = ctx.world().storage<WorkD>()->data();
                      ctx.parallel_for(static_cast<std::uint32_t>(d.size()),
                                       [&](std::uint32_t begin, std::uint32_t end) {
                                         for (std::uint32_t i = begin; i < end; ++i)
                                           d[i].v = burn(d[i].v + c[i].v, 1);
                                       });
                    }});
}

}  // namespace

void register_builtin_scenes() {
  // boids and swarm: 1,000,000 agents take about 0.9 s and 0.5 s a frame in `single` mode (450 MB
  // and 200 MB); imbalanced burns about 1.6 us per object a frame, so 500,000 take 0.8 s.
  register_scene({.name = "boids",
                  .description =
                      "steering agents: grid + radix sort neighbour queries, transforms, culling, "
                      "draw-list sort",
                  .objects = {1, 1'000'000},
                  .setup = setup_boids,
                  .params = {kPointsParam}});
  register_scene({.name = "swarm",
                  .description = "colliding agents (10k-200k): spindle::swarm index, bounded "
                                 "neighbour queries, overlap resolution, seeking",
                  .objects = {1, 1'000'000},
                  .setup = setup_swarm,
                  .params = {kPointsParam}});
  register_scene(
      {.name = "imbalanced",
       .description = "independent stages of very different cost (serial, skewed, light)",
       .objects = {1, 500'000},
       .setup = setup_imbalanced});
  register_physics_scenes();
  register_crowd_scene();
  register_cubes_scene();
  register_audio_scenes();
  register_soak_scene();  // made of the scenes above
}

}  // namespace spindle::loadtest
