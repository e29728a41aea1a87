// The built-in load-test scenes: `boids` (steering agents with neighbour queries, transforms,
// culling and sorting) and `imbalanced` (independent stages of deliberately different cost).
#include <cmath>
#include <map>
#include <memory>

#include <spindle/core/hash.h>
#include <spindle/core/transform.h>
#include <spindle/render/draw_list.h>
#include <spindle/render/radix_sort.h>

#include "scene.h"

namespace spindle::loadtest {

namespace {
std::map<std::string, SceneDef, std::less<>>& registry() {
  static std::map<std::string, SceneDef, std::less<>> scenes;
  return scenes;
}

// Deterministic per-object randomness from (seed, index, salt), in [0, 1).
std::uint64_t mix(std::uint64_t z) {
  return core::mix64(z + 0x9e3779b97f4a7c15ull);
}
float unit(std::uint64_t seed, std::uint64_t i, std::uint64_t salt) {
  return static_cast<float>(mix(seed ^ mix(i * 8 + salt)) >> 40) / static_cast<float>(1 << 24);
}
}  // namespace

bool register_scene(SceneDef def) {
  std::string name = def.name;
  registry()[name] = std::move(def);
  return true;
}

const SceneDef* find_scene(std::string_view name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> scene_names() {
  std::vector<std::string> out;
  for (const auto& [name, def] : registry()) out.push_back(name);
  return out;
}

// --- boids -------------------------------------------------------------------------------------
//
// Agents on a torus of side sqrt(N) (about one agent per unit area). Each step:
//   grid        key = (cell << 32 | agent) for every agent, parallel radix sort, cell ranges
//   steer       separation / alignment / cohesion from at most kMaxNeighbours agents found in
//               the 3 x 3 cells around each agent (bounded: the worst case stays flat)
//   integrate   position, wrap, Transform (translation and heading rotation)
//   transforms  world matrices (TransformPlugin)
//   flock_stats centroid and mean speed (reads agents; overlaps transforms and render_prep)
//   render_prep culling, 64-bit sort keys and radix sort of the draw list (spindle::render)
namespace {

struct Agent {
  glm::vec2 pos{0.0f};
  glm::vec2 vel{0.0f};
};

// The grid of the current step: written by `grid`, read by `steer` (declared as a type for the
// frame graph's access sets).
struct FlockGrid {
  float side = 1, cell = 2;
  std::uint32_t cells_x = 1;
  std::vector<std::uint64_t> keys, key_scratch;
  std::vector<std::uint32_t> values, value_scratch;
  std::unique_ptr<render::RadixSortScratch> sort_scratch;
  std::vector<std::uint32_t> cell_begin, cell_end;
  std::vector<glm::vec2> pos, vel;  // snapshot in sorted order
  std::vector<glm::vec2> steered;   // new velocity, in sorted order (written by steer)
  std::vector<std::uint32_t> rank;  // by entity index: sorted position
};
struct FlockStats {
  glm::vec2 centroid{0.0f};
  float mean_speed = 0;
  std::vector<glm::vec3> partial;  // per chunk: sum x, sum y, sum speed
};
struct DrawState {
  std::unique_ptr<render::RenderPrep> prep;
  std::vector<render::Renderable> objects;
  render::Camera camera;
};

constexpr std::uint32_t kMaxNeighbours = 24;
constexpr float kRadius = 2.0f;

std::uint32_t cell_of(const FlockGrid& g, glm::vec2 p) {
  const auto cx = std::min<std::uint32_t>(static_cast<std::uint32_t>(p.x / g.cell), g.cells_x - 1);
  const auto cy = std::min<std::uint32_t>(static_cast<std::uint32_t>(p.y / g.cell), g.cells_x - 1);
  return cy * g.cells_x + cx;
}

float wrap(float v, float side) {
  v = v - side * std::floor(v / side);
  return v >= side ? 0.0f : v;
}

// Separation, alignment and cohesion for the agent at sorted position k, from at most
// kMaxNeighbours agents within kRadius in the 3 x 3 cells around it.
glm::vec2 steer(const FlockGrid& g, std::uint32_t k) {
  const glm::vec2 pos = g.pos[k];
  const int cells = static_cast<int>(g.cells_x);
  const int cx = std::min(static_cast<int>(pos.x / g.cell), cells - 1);
  const int cy = std::min(static_cast<int>(pos.y / g.cell), cells - 1);
  const float half = 0.5f * g.side;
  glm::vec2 separation(0.0f), alignment(0.0f), cohesion(0.0f);
  std::uint32_t found = 0;
  // The 3 x 3 cells around the agent; on a grid narrower than 3 cells that would visit cells
  // twice, so there every cell is visited once instead.
  const int lo = cells >= 3 ? -1 : 0, hi = cells >= 3 ? 1 : cells - 1;
  for (int dy = lo; dy <= hi; ++dy) {
    const int y = cells >= 3 ? (cy + dy + cells) % cells : dy;
    for (int dx = lo; dx <= hi; ++dx) {
      const int x = cells >= 3 ? (cx + dx + cells) % cells : dx;
      const auto c = static_cast<std::uint32_t>(y * cells + x);
      for (std::uint32_t j = g.cell_begin[c]; j < g.cell_end[c]; ++j) {
        glm::vec2 d = g.pos[j] - pos;
        // Shortest way around the torus.
        d.x = d.x > half ? d.x - g.side : (d.x < -half ? d.x + g.side : d.x);
        d.y = d.y > half ? d.y - g.side : (d.y < -half ? d.y + g.side : d.y);
        const float dist2 = d.x * d.x + d.y * d.y;
        if (dist2 <= 1e-12f || dist2 > kRadius * kRadius) continue;
        separation -= d / dist2;
        alignment += g.vel[j];
        cohesion += d;
        if (++found == kMaxNeighbours) goto done;
      }
    }
  }
done:
  glm::vec2 v = g.vel[k];
  if (found > 0) {
    const float inv = 1.0f / static_cast<float>(found);
    v += 0.05f * separation + 0.05f * (alignment * inv - v) + 0.01f * cohesion * inv;
  }
  const float speed = std::sqrt(v.x * v.x + v.y * v.y);
  if (speed > 2.0f) v *= 2.0f / speed;
  if (speed < 0.5f) v = speed > 1e-6f ? v * (0.5f / speed) : glm::vec2(0.5f, 0.0f);
  return v;
}

void setup_boids(core::Engine& engine, const SceneParams& p) {
  core::World& world = engine.world();
  world.register_component<Agent>("agent");
  engine.add_plugin<core::TransformPlugin>();
  const std::uint32_t n = p.objects;

  FlockGrid& grid = world.set_resource<FlockGrid>();
  grid.side = std::max(4.0f, std::sqrt(static_cast<float>(n)));
  grid.cells_x = std::max(1u, static_cast<std::uint32_t>(grid.side / kRadius));
  grid.cell = grid.side / static_cast<float>(grid.cells_x);
  grid.keys.resize(n);
  grid.key_scratch.resize(n);
  grid.values.resize(n);
  grid.value_scratch.resize(n);
  grid.sort_scratch = std::make_unique<render::RadixSortScratch>(256);
  grid.cell_begin.resize(std::size_t{grid.cells_x} * grid.cells_x);
  grid.cell_end.resize(grid.cell_begin.size());
  grid.pos.resize(n);
  grid.vel.resize(n);
  grid.steered.resize(n);
  grid.rank.resize(world.capacity());
  FlockStats& stats = world.set_resource<FlockStats>();
  stats.partial.resize(1024);
  DrawState& draw = world.set_resource<DrawState>();
  draw.prep = std::make_unique<render::RenderPrep>(n, 256, 512);
  draw.objects.resize(n);
  draw.camera.position = glm::vec3(grid.side * 0.5f, grid.side * 0.3f, grid.side * 0.9f);
  draw.camera.target = glm::vec3(grid.side * 0.5f, grid.side * 0.5f, 0.0f);
  draw.camera.up = glm::vec3(0, 0, 1);
  draw.camera.fov_y_radians = 1.0f;
  draw.camera.aspect = 4.0f / 3.0f;
  draw.camera.near_plane = 0.1f;
  draw.camera.far_plane = grid.side * 3.0f;

  for (std::uint32_t i = 0; i < n; ++i) {
    const core::Entity e = world.create();
    const float angle = unit(p.seed, i, 2) * 6.2831853f;
    world.add<Agent>(e, Agent{glm::vec2(unit(p.seed, i, 0), unit(p.seed, i, 1)) * grid.side,
                              glm::vec2(std::cos(angle), std::sin(angle))});
    world.add<core::Transform>(e);
    world.add<core::WorldTransform>(e);
  }

  engine.add_stage({.name = "grid",
                    .phase = core::Phase::Gameplay,
                    .access = core::Access{}.read<Agent>().write<FlockGrid>(),
                    .run = [](core::StageContext& ctx) {
                      FlockGrid& g = *ctx.world().resource<FlockGrid>();
                      const auto* agents = ctx.world().storage<Agent>();
                      const std::span<const Agent> a = agents->data();
                      const std::span<const std::uint32_t> entity_of = agents->entities();
                      const auto count = static_cast<std::uint32_t>(a.size());
                      ctx.parallel_for(count, [&](std::uint32_t b, std::uint32_t e) {
                        for (std::uint32_t i = b; i < e; ++i) {
                          g.keys[i] = cell_of(g, a[i].pos);  // the sort is stable: index order
                          g.values[i] = i;                   // within a cell is kept
                        }
                      });
                      const std::span<std::uint64_t> keys(g.keys.data(), count);
                      const std::span<std::uint32_t> values(g.values.data(), count);
                      const bool sorted =
                          render::radix_sort(ctx.jobs(), ctx.split(), *g.sort_scratch, keys, values,
                                             std::span(g.key_scratch.data(), count),
                                             std::span(g.value_scratch.data(), count), ctx.tag());
                      SPINDLE_ASSERT(sorted, "boids: sort buffers sized for every agent");
                      const auto cells = static_cast<std::uint32_t>(g.cell_begin.size());
                      ctx.parallel_for(cells, [&](std::uint32_t b, std::uint32_t e) {
                        for (std::uint32_t c = b; c < e; ++c) g.cell_begin[c] = g.cell_end[c] = 0;
                      });
                      ctx.parallel_for(count, [&](std::uint32_t b, std::uint32_t e) {
                        for (std::uint32_t k = b; k < e; ++k) {
                          const std::uint32_t agent = values[k];
                          const auto cell = static_cast<std::uint32_t>(keys[k]);
                          g.pos[k] = a[agent].pos;
                          g.vel[k] = a[agent].vel;
                          g.rank[entity_of[agent]] = k;
                          if (k == 0 || keys[k - 1] != cell) g.cell_begin[cell] = k;
                          if (k + 1 == count || keys[k + 1] != cell) g.cell_end[cell] = k + 1;
                        }
                      });
                    }});

  // Steering walks the agents in grid order (sorted by cell), so the neighbours it reads are
  // close in memory to the ones the previous agent read, and writes its results in that order
  // too: chunks write disjoint cache lines (writing the agents themselves, scattered in memory,
  // made two workers fight over the same lines and doubled the stage's CPU time).
  engine.add_stage({.name = "steer",
                    .phase = core::Phase::Gameplay,
                    .access = core::Access{}.write<FlockGrid>(),
                    .after = {"grid"},
                    .run = [](core::StageContext& ctx) {
                      FlockGrid& g = *ctx.world().resource<FlockGrid>();
                      const auto count = ctx.world().storage<Agent>()->size();
                      ctx.parallel_for(count, [&](std::uint32_t b, std::uint32_t e) {
                        for (std::uint32_t k = b; k < e; ++k) g.steered[k] = steer(g, k);
                      });
                    }});
  engine.add_system<Agent, core::Transform>(
      "integrate",
      [](core::StageContext& ctx, core::Entity e, Agent& a, core::Transform& t) {
        const FlockGrid& g = *ctx.world().resource<FlockGrid>();
        a.vel = g.steered[g.rank[e.index]];
        a.pos = glm::vec2(wrap(a.pos.x + a.vel.x * ctx.dt() * 4.0f, g.side),
                          wrap(a.pos.y + a.vel.y * ctx.dt() * 4.0f, g.side));
        t.set_translation(glm::vec3(a.pos, 0.0f));
        t.set_rotation(glm::angleAxis(std::atan2(a.vel.y, a.vel.x), glm::vec3(0, 0, 1)));
      },
      core::Phase::Physics, {}, core::Access{}.read<FlockGrid>());  // the steered velocities
  engine.add_stage({.name = "flock_stats",
                    .phase = core::Phase::Animation,
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
  engine.add_stage({.name = "render_prep",
                    .phase = core::Phase::RenderPrep,
                    .access = core::Access{}.read<core::WorldTransform>().write<DrawState>(),
                    .run = [](core::StageContext& ctx) {
                      DrawState& d = *ctx.world().resource<DrawState>();
                      const auto* worlds = ctx.world().storage<core::WorldTransform>();
                      const std::span<const core::WorldTransform> w = worlds->data();
                      const auto count = static_cast<std::uint32_t>(w.size());
                      ctx.parallel_for(count, [&](std::uint32_t b, std::uint32_t e) {
                        for (std::uint32_t i = b; i < e; ++i) {
                          render::Renderable& r = d.objects[i];
                          r.center = glm::vec3(w[i].matrix[3]);
                          r.radius = 0.5f;
                          r.material = i % 7;
                          r.mesh = i % 3;
                          r.layer = 0;
                          r.translucent = (i % 16) == 0;
                        }
                      });
                      d.prep->prepare(ctx.jobs(), d.camera, std::span(d.objects.data(), count),
                                      ctx.split(), ctx.tag());
                    }});
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
    const float v = unit(p.seed, i, 0);
    world.add<WorkA>(e, WorkA{v});
    world.add<WorkB>(e, WorkB{v});
    world.add<WorkC>(e, WorkC{v});
    world.add<WorkD>(e, WorkD{v});
  }
  engine.add_stage({.name = "serial",
                    .phase = core::Phase::Physics,
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
                    .phase = core::Phase::Animation,
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
                    .phase = core::Phase::RenderPrep,
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
  register_scene(
      {"boids",
       "steering agents: grid + radix sort neighbour queries, transforms, culling, draw-list sort",
       setup_boids, nullptr});
  register_scene({"imbalanced", "independent stages of very different cost (serial, skewed, light)",
                  setup_imbalanced, nullptr});
  register_physics_scenes();
}

}  // namespace spindle::loadtest
