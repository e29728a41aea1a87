// swarm: a swarm shooter. The player's ship starts in the middle of a square field; thousands of
// enemies (10,000 unless --enemies says otherwise) steer toward it through the swarm collision
// system (spindle::swarm), pushing each other apart. The ship moves with the arrow keys, WASD or
// a controller's left stick, fires at the nearest enemy on its own, and Space (or the A button)
// sets off a bomb around it. A shot kills the first enemy it touches; a killed enemy comes back
// at the edge of the field, so there are always N. Touching an enemy costs a life; the last life
// lost starts a new round. Escape or closing the window quits. Sounds are tones made at start-up.
//
//   spindle_sample_swarm [--headless] [--frames N] [--enemies N]
//                        [--mode single|static|dynamic|tbb] [--workers N]
//                        [--record FILE | --replay FILE] [--screenshot FILE] [--golden FILE]
//
// With --frames N a scripted pilot flies (unless --replay plays a recording instead) and the
// sample checks that it killed enemies and that the count stayed N; --headless runs on SDL's
// dummy driver (600 frames unless --frames says otherwise) with a fixed 1/60 s frame, so a run is
// the same in every mode and worker count. --record FILE saves the input every step saw; --replay
// FILE plays it back (for as many frames as it holds, unless --frames) to the same hash.
// Last line: frames=N median_ms=X p99_ms=Y hash=H (the world hash, the same in every mode).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spindle/physics/swarm.h>
#include <spindle/spindle.h>

#include "sample_args.h"
#include "sample_golden.h"
#include "sample_replay.h"

using namespace spindle;

namespace {

// --- components and resources: everything the game's outcome depends on is a component ------

struct Enemy {
  glm::vec2 pos{0.0f};
  glm::vec2 vel{0.0f};
};
// The ship and the game's score live in one component, so the state hash covers them.
struct Ship {
  glm::vec2 pos{0.0f};
  glm::vec2 facing{1.0f, 0.0f};  // where the last move went: the aim when nothing is in range
  float fire_cooldown = 0;       // seconds
  float bomb_cooldown = 0;
  float invulnerable = 0;
  std::int32_t lives = 3;
  std::int32_t score = 0;
  std::int32_t best = 0;  // best score of the rounds before
  std::int32_t kills = 0;
  std::int32_t rounds = 1;
  std::uint32_t respawns = 0;  // enemies brought back so far: the seed of where the next goes
  std::uint32_t shots_fired = 0;
  std::uint32_t bombs = 0;
  std::uint32_t lives_lost = 0;
};
// A fixed pool of shots, made at start-up; a free one has life <= 0.
struct Shot {
  glm::vec2 pos{0.0f};
  glm::vec2 vel{0.0f};
  float life = 0;
};

// The swarm of the current step: built by swarm_index from the enemies, queried by swarm_steer
// and the ship, read by swarm_integrate. next_*: the enemies' new state, in sorted order.
struct SwarmState {
  std::unique_ptr<swarm::Swarm<float>> swarm;
  std::vector<glm::vec2> next_pos, next_vel;
};

struct Controls {
  core::ActionId left, right, up, down, bomb, quit;
};

constexpr float kEnemyRadius = 0.35f;
constexpr float kEnemySpeed = 3.5f;  // units per second
constexpr float kShipRadius = 0.5f;
constexpr float kShipSpeed = 9.0f;
constexpr float kShotRadius = 0.15f;
constexpr float kShotSpeed = 30.0f;
constexpr float kShotLife = 0.6f;
constexpr float kFireInterval = 0.07f;
constexpr float kAimRange = 16.0f;  // the auto-aim looks this far for a target
constexpr float kBombRadius = 6.0f;
constexpr float kBombInterval = 2.0f;
constexpr float kClearRadius = 5.0f;  // a lost life clears this much room around the ship
constexpr std::uint32_t kShots = 64;

// The field: a square of side 2 sqrt(N), at least 40 (enemies end up packed around the ship).
float field_side(std::uint32_t enemies) {
  return std::max(40.0f, 2.0f * std::sqrt(static_cast<float>(enemies)));
}

// A deterministic pseudo-random number in [0, 1) from a seed (the same in every mode).
float hash01(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return static_cast<float>(x & 0xffffff) / static_cast<float>(0x1000000);
}

// A point on the field's edge, picked by `seed`.
glm::vec2 edge_point(float side, std::uint32_t seed) {
  const float t = hash01(seed) * side;
  const float inset = 0.5f;
  switch (static_cast<std::uint32_t>(hash01(seed ^ 0x9e3779b9u) * 4.0f)) {
    case 0:
      return {t, inset};
    case 1:
      return {t, side - inset};
    case 2:
      return {inset, t};
    default:
      return {side - inset, t};
  }
}

// Calls fn(k) for the sorted position k of every enemy in the cells within `reach` cells of
// point p, in a fixed order.
template <class F>
void for_each_near(const swarm::Swarm<float>& s, glm::vec2 p, std::int32_t reach, const F& fn) {
  const swarm::CellCoord c = s.cell_of(p.x, p.y);
  const auto cx = static_cast<std::int32_t>(c.x), cy = static_cast<std::int32_t>(c.y);
  const auto nx = static_cast<std::int32_t>(s.cells_x()),
             ny = static_cast<std::int32_t>(s.cells_y());
  for (std::int32_t y = std::max(cy - reach, 0); y <= std::min(cy + reach, ny - 1); ++y) {
    for (std::int32_t x = std::max(cx - reach, 0); x <= std::min(cx + reach, nx - 1); ++x) {
      const auto [begin, end] =
          s.cell_range({static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)});
      for (std::uint32_t k = begin; k < end; ++k) fn(k);
    }
  }
}

float length2(glm::vec2 v) {
  return v.x * v.x + v.y * v.y;
}

// --- the game --------------------------------------------------------------------------------

Controls declare_controls(core::Engine& engine) {
  core::Input& input = core::use_input(engine);
  return Controls{input.add_action("left").value(), input.add_action("right").value(),
                  input.add_action("up").value(),   input.add_action("down").value(),
                  input.add_action("bomb").value(), input.add_action("quit").value()};
}

core::Status bind_controls(platform::Devices& devices, const Controls& c) {
  const std::pair<core::ActionId, const char*> bindings[] = {
      {c.left, "key:Left"},   {c.left, "key:A"},    {c.left, "axis:leftx-"},
      {c.right, "key:Right"}, {c.right, "key:D"},   {c.right, "axis:leftx+"},
      {c.up, "key:Up"},       {c.up, "key:W"},      {c.up, "axis:lefty-"},
      {c.down, "key:Down"},   {c.down, "key:S"},    {c.down, "axis:lefty+"},
      {c.bomb, "key:Space"},  {c.bomb, "button:a"}, {c.quit, "key:Escape"},
  };
  for (const auto& [action, control] : bindings) {
    if (core::Status s = devices.bind(action, control); !s) return s;
  }
  return {};
}

// The direction from `from` to the nearest enemy within kAimRange, or `otherwise`: rings of
// cells outward, stopping once no nearer enemy can be further out; ties go to the first seen.
glm::vec2 nearest_direction(const swarm::Swarm<float>& s, std::span<const Enemy> enemies,
                            glm::vec2 from, glm::vec2 otherwise) {
  glm::vec2 aim = otherwise;
  float best = kAimRange * kAimRange;
  bool found = false;
  const swarm::CellCoord c = s.cell_of(from.x, from.y);
  const auto cx = static_cast<std::int32_t>(c.x), cy = static_cast<std::int32_t>(c.y);
  const auto nx = static_cast<std::int32_t>(s.cells_x()),
             ny = static_cast<std::int32_t>(s.cells_y());
  const auto rings = static_cast<std::int32_t>(std::ceil(kAimRange));
  // Cells of ring r are at least r - 1 cells (units) away.
  for (std::int32_t r = 0; r <= rings && !(found && best < float(r - 1) * float(r - 1)); ++r) {
    for (std::int32_t y = cy - r; y <= cy + r; ++y) {
      for (std::int32_t x = cx - r; x <= cx + r; ++x) {
        const bool ring = y == cy - r || y == cy + r || x == cx - r || x == cx + r;
        if (!ring || x < 0 || y < 0 || x >= nx || y >= ny) continue;
        const auto [b, e] =
            s.cell_range({static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)});
        for (std::uint32_t k = b; k < e; ++k) {
          const glm::vec2 d = enemies[s.order()[k]].pos - from;
          if (length2(d) < best && length2(d) > 1e-6f) {
            best = length2(d);
            aim = d / std::sqrt(length2(d));
            found = true;
          }
        }
      }
    }
  }
  return aim;
}

// One step of the ship: it moves, then its shots fly and hit, the bomb goes off, contact with
// the swarm costs a life, and it fires at the nearest enemy. One job: a few dozen cell lookups,
// and every kill in a fixed order.
void fly_ship(core::StageContext& ctx, const Controls& controls, float side) {
  core::World& w = ctx.world();
  const core::Input& in = *w.resource<core::Input>();
  const swarm::Swarm<float>& s = *w.resource<SwarmState>()->swarm;
  Ship& ship = w.storage<Ship>()->data()[0];
  const std::span<Shot> shots = w.storage<Shot>()->data();
  const std::span<Enemy> enemies = w.storage<Enemy>()->data();
  const float dt = ctx.dt();

  // An enemy killed (or cleared away) comes back at the edge, standing still.
  const auto respawn = [&](std::uint32_t agent) {
    enemies[agent] = Enemy{edge_point(side, ship.respawns++ * 2654435761u), glm::vec2(0.0f)};
  };
  const auto pos_of = [&](std::uint32_t k) { return enemies[s.order()[k]].pos; };
  const auto kill_within = [&](glm::vec2 p, float radius, bool scores) {
    const auto reach = static_cast<std::int32_t>(std::ceil(radius));
    std::int32_t n = 0;
    for_each_near(s, p, reach, [&](std::uint32_t k) {
      if (length2(pos_of(k) - p) >= radius * radius) return;
      respawn(s.order()[k]);
      ++n;
    });
    if (scores) {
      ship.kills += n;
      ship.score += 10 * n;
    }
    return n;
  };

  glm::vec2 move(in.axis(controls.right, controls.left), in.axis(controls.down, controls.up));
  if (length2(move) > 1.0f) move /= std::sqrt(length2(move));
  if (length2(move) > 0.01f) ship.facing = move / std::sqrt(length2(move));
  ship.pos = glm::clamp(ship.pos + move * kShipSpeed * dt, glm::vec2(kShipRadius),
                        glm::vec2(side - kShipRadius));
  ship.fire_cooldown -= dt;
  ship.bomb_cooldown -= dt;
  ship.invulnerable -= dt;

  for (Shot& shot : shots) {
    if (shot.life <= 0) continue;
    shot.pos += shot.vel * dt;
    shot.life -= dt;
    const bool outside =
        shot.pos.x < 0 || shot.pos.y < 0 || shot.pos.x >= side || shot.pos.y >= side;
    if (shot.life <= 0 || outside) {
      shot.life = 0;
      continue;
    }
    // The first enemy in reach, in the swarm's fixed cell order.
    const float reach = kEnemyRadius + kShotRadius;
    std::uint32_t hit = ~0u;
    for_each_near(s, shot.pos, 1, [&](std::uint32_t k) {
      if (hit == ~0u && length2(pos_of(k) - shot.pos) < reach * reach) hit = k;
    });
    if (hit == ~0u) continue;
    respawn(s.order()[hit]);
    ++ship.kills;
    ship.score += 10;
    shot.life = 0;
  }

  if (in.pressed(controls.bomb) && ship.bomb_cooldown <= 0) {
    kill_within(ship.pos, kBombRadius, true);
    ship.bomb_cooldown = kBombInterval;
    ++ship.bombs;
  }

  if (ship.invulnerable <= 0) {
    const float reach = kEnemyRadius + kShipRadius;
    bool touched = false;
    for_each_near(s, ship.pos, 1, [&](std::uint32_t k) {
      touched = touched || length2(pos_of(k) - ship.pos) < reach * reach;
    });
    if (touched) {
      kill_within(ship.pos, kClearRadius, false);
      ship.invulnerable = 2.0f;
      ++ship.lives_lost;
      if (--ship.lives == 0) {  // a new round
        ship.best = std::max(ship.best, ship.score);
        ship.score = 0;
        ship.lives = 3;
        ++ship.rounds;
      }
    }
  }

  if (ship.fire_cooldown <= 0) {
    const glm::vec2 aim = nearest_direction(s, enemies, ship.pos, ship.facing);
    for (Shot& shot : shots) {  // the first free shot
      if (shot.life > 0) continue;
      shot = Shot{ship.pos + aim * kShipRadius, aim * kShotSpeed, kShotLife};
      ship.fire_cooldown = kFireInterval;
      ++ship.shots_fired;
      break;
    }
  }
}

void build_game(core::Engine& engine, const Controls& controls, std::uint32_t enemies) {
  core::World& world = engine.world();
  world.register_component<Enemy>("enemy");
  world.register_component<Ship>("ship");
  world.register_component<Shot>("shot");
  const float side = field_side(enemies);

  SwarmState& state = world.set_resource<SwarmState>();
  swarm::Config<float> cfg;
  cfg.max_agents = enemies;
  cfg.max_x = cfg.max_y = side;
  cfg.cell_size = cfg.radius = 1.0f;  // >= twice the enemy radius: every overlap is seen
  cfg.max_neighbours = 16;
  cfg.max_candidates = 64;  // the crowd around the ship stays bounded in cost
  cfg.max_chunks = 256;
  cfg.boundary = swarm::Boundary::Clamp;
  state.swarm = std::make_unique<swarm::Swarm<float>>(cfg);
  SPINDLE_ASSERTF(state.swarm->valid(), "swarm: config: %s", state.swarm->error());
  state.next_pos.resize(enemies);
  state.next_vel.resize(enemies);

  // The ship in the middle, the enemies scattered over the field but not too near it.
  const glm::vec2 centre(side * 0.5f);
  world.add<Ship>(world.create(), Ship{.pos = centre});
  for (std::uint32_t i = 0; i < kShots; ++i) world.add<Shot>(world.create());
  for (std::uint32_t i = 0; i < enemies; ++i) {
    glm::vec2 pos(0.0f);
    for (std::uint32_t attempt = 0;; ++attempt) {
      const std::uint32_t seed = i * 16 + attempt;
      pos = glm::vec2(hash01(seed * 2 + 1), hash01(seed * 2 + 2)) * side;
      if (length2(pos - centre) > 12.0f * 12.0f || attempt == 15) break;
    }
    world.add<Enemy>(world.create(), Enemy{pos, glm::vec2(0.0f)});
  }

  // swarm_index: Morton keys, parallel radix sort and the cell table, from the enemies.
  engine.add_stage({.name = "swarm_index",
                    .access = core::Access{}.read<Enemy>().write<SwarmState>(),
                    .run = [](core::StageContext& ctx) {
                      SwarmState& st = *ctx.world().resource<SwarmState>();
                      const std::span<const Enemy> a = ctx.world().storage<Enemy>()->data();
                      const bool built = st.swarm->build(
                          ctx.jobs(), ctx.split(), static_cast<std::uint32_t>(a.size()),
                          [a](std::uint32_t i) {
                            return swarm::Agent<float>{a[i].pos.x, a[i].pos.y, a[i].vel.x,
                                                       a[i].vel.y, kEnemyRadius};
                          },
                          ctx.tag());
                      SPINDLE_ASSERT(built, "swarm: sized for every enemy");
                    }});
  // swarm_steer: neighbours, overlap pushes, and each enemy's turn toward the ship; the new
  // state is written in sorted order (chunks write disjoint memory).
  engine.add_stage({.name = "swarm_steer",
                    .access = core::Access{}.read<Ship>().write<SwarmState>(),
                    .after = {"swarm_index"},
                    .run = [side](core::StageContext& ctx) {
                      SwarmState& st = *ctx.world().resource<SwarmState>();
                      const swarm::Swarm<float>& s = *st.swarm;
                      st.swarm->find_neighbours(ctx.jobs(), ctx.split(), ctx.tag());
                      st.swarm->resolve_overlaps(ctx.jobs(), ctx.split(), 0.8f, ctx.tag());
                      const glm::vec2 target = ctx.world().storage<Ship>()->data()[0].pos;
                      const float dt = ctx.dt();
                      const float hi = side - 1e-3f;
                      s.for_each_range(
                          ctx.jobs(), ctx.split(), {"swarm_seek", ctx.tag()},
                          [&](std::uint32_t b, std::uint32_t e) {
                            for (std::uint32_t k = b; k < e; ++k) {
                              const glm::vec2 pos(s.x()[k], s.y()[k]);
                              const glm::vec2 vel(s.vx()[k], s.vy()[k]);
                              const glm::vec2 to = target - pos;
                              const float d = std::sqrt(length2(to));
                              const glm::vec2 want =
                                  d > 1e-4f ? to * (kEnemySpeed / d) : glm::vec2(0.0f);
                              const glm::vec2 v = vel + 0.1f * (want - vel);
                              const glm::vec2 next =
                                  pos + v * dt + glm::vec2(s.push_x()[k], s.push_y()[k]);
                              st.next_pos[k] = glm::clamp(next, glm::vec2(0.0f), glm::vec2(hi));
                              st.next_vel[k] = v;
                            }
                          });
                    }});
  engine.add_system<Enemy>(
      "swarm_integrate",
      [](core::StageContext& ctx, core::Entity e, Enemy& a) {
        const SwarmState& st = *ctx.world().resource<SwarmState>();
        const std::uint32_t k =
            st.swarm->rank()[ctx.world().storage<Enemy>()->dense_index(e.index)];
        a.pos = st.next_pos[k];
        a.vel = st.next_vel[k];
      },
      core::Phase::Gameplay, {"swarm_steer"}, core::Access{}.read<SwarmState>());

  engine.add_stage(
      {.name = "ship",
       .access = core::Access{}.read<SwarmState>().write<Ship, Shot, Enemy>(),
       .after = {"swarm_integrate"},
       .run = [controls, side](core::StageContext& ctx) { fly_ship(ctx, controls, side); }});

  engine.add_stage(
      {.name = "quit", .phase = core::Phase::Input, .run = [controls](core::StageContext& ctx) {
         if (ctx.world().resource<core::Input>()->pressed(controls.quit))
           ctx.engine().request_quit();
       }});
}

// The scripted pilot: waits a moment, then flies a square again and again, with a bomb now and
// then.
core::ScriptedInput make_pilot(const Controls& c, std::uint64_t frames) {
  core::ScriptedInput pilot;
  const core::ActionId legs[] = {c.right, c.down, c.left, c.up};
  std::uint32_t leg = 0;
  for (std::uint64_t f = 30; f < frames; f += 90, ++leg) pilot.hold(legs[leg % 4], f, f + 89);
  for (std::uint64_t f = 100; f < frames; f += 150) pilot.hold(c.bomb, f, f);
  return pilot;
}

// --- drawing ---------------------------------------------------------------------------------

struct Look {
  render::MeshId dart = 0, cube = 0, shot = 0, ground = 0;
  render::MaterialId enemy[3] = {}, ship = 0, ship_hit = 0, shot_paint = 0, ground_paint = 0;
  bool fps = true;  // not in a picture compared with a golden: it changes from run to run
};

// A model matrix in the game's plane (x, y) -> the render's (x, height, y), turned to `dir`.
glm::mat4 placed(glm::vec2 pos, float height, glm::vec2 dir) {
  const float d = length2(dir);
  const glm::vec2 f = d > 1e-8f ? dir / std::sqrt(d) : glm::vec2(1.0f, 0.0f);
  return glm::mat4(glm::vec4(f.x, 0, f.y, 0), glm::vec4(0, 1, 0, 0), glm::vec4(-f.y, 0, f.x, 0),
                   glm::vec4(pos.x, height, pos.y, 1));
}

// Every enemy, shot and the ship as a draw of its own (no Transform per enemy to keep up to
// date); the camera follows the ship; the score in debug text.
void submit_frame(core::StageContext& ctx, render::Renderer& r, const Look& look, float side) {
  const core::World& w = ctx.world();
  const std::span<const Enemy> enemies = w.storage<Enemy>()->data();
  const std::span<const Shot> shots = w.storage<Shot>()->data();
  const Ship& ship = w.storage<Ship>()->data()[0];
  const auto n = static_cast<std::uint32_t>(enemies.size());
  std::uint32_t live_shots = 0;
  for (const Shot& s : shots) live_shots += s.life > 0 ? 1 : 0;

  const std::span<render::DrawCommand> draws = r.append_draws(n + live_shots + 2);
  ctx.parallel_for(n, [&](std::uint32_t b, std::uint32_t e) {
    for (std::uint32_t i = b; i < e; ++i)
      draws[i] = {.mesh = look.dart,
                  .material = look.enemy[i % 3],
                  .model = placed(enemies[i].pos, 0.3f, enemies[i].vel)};
  });
  std::uint32_t at = n;
  for (const Shot& s : shots) {
    if (s.life > 0)
      draws[at++] = {
          .mesh = look.shot, .material = look.shot_paint, .model = placed(s.pos, 0.4f, s.vel)};
  }
  const bool blink = ship.invulnerable > 0 && (ctx.tick() / 6) % 2 == 0;
  draws[at++] = {.mesh = look.cube,
                 .material = blink ? look.ship_hit : look.ship,
                 .model = placed(ship.pos, 0.5f, ship.facing)};
  draws[at++] = {.mesh = look.ground,
                 .material = look.ground_paint,
                 .model = glm::translate(glm::mat4(1.0f), glm::vec3(side * 0.5f, 0, side * 0.5f))};

  r.set_camera(
      {.position = {ship.pos.x, 40.0f, ship.pos.y + 20.0f},
       .target = {ship.pos.x, 0.0f, ship.pos.y + 1.0f},
       .aspect = static_cast<float>(r.image().width()) / static_cast<float>(r.image().height()),
       .far_plane = 200.0f});
  char text[160];
  std::snprintf(text, sizeof text, "score %d  best %d  kills %d  lives %d  round %d  enemies %u",
                ship.score, ship.best, ship.kills, ship.lives, ship.rounds, n);
  r.debug().text(glm::vec2{6, 6}, text, render::rgba(255, 255, 255));
  if (look.fps) {
    const std::uint64_t ns = ctx.engine().last_frame().frame_ns;
    std::snprintf(text, sizeof text, "fps %.0f", ns > 0 ? 1e9 / static_cast<double>(ns) : 0.0);
    r.debug().text(glm::vec2{6, 18}, text, render::rgba(255, 255, 0));
  }
}

render::Renderer& add_renderer(core::Engine& engine, std::uint32_t enemies, bool fps) {
  auto look = std::make_shared<Look>();
  const float side = field_side(enemies);
  render::RenderPluginConfig config;
  config.renderer.width = 480;
  config.renderer.height = 270;
  config.renderer.max_draws = enemies + kShots + 2;
  config.renderer.clear_color = {0.02f, 0.02f, 0.05f, 1.0f};
  config.submit = [look, side](core::StageContext& ctx, render::Renderer& r) {
    submit_frame(ctx, r, *look, side);
  };
  config.submit_access = core::Access{}.read<Enemy, Shot, Ship>();
  render::Renderer& r = engine.add_plugin<render::RenderPlugin>(std::move(config)).renderer();
  r.lights().ambient = glm::vec3(0.35f);
  r.lights().directional = {.direction = {0.3f, 1.0f, 0.4f}, .color = glm::vec3(0.7f)};
  look->fps = fps;
  look->dart = r.add_mesh(render::make_dart(1.0f)).value();
  look->cube = r.add_mesh(render::make_cube(2.0f * kShipRadius)).value();
  look->shot = r.add_mesh(render::make_cube(2.0f * kShotRadius)).value();
  look->ground = r.add_mesh(render::make_plane(side, 1.0f)).value();
  const glm::vec4 reds[3] = {
      {0.95f, 0.25f, 0.3f, 1}, {0.9f, 0.45f, 0.2f, 1}, {0.8f, 0.2f, 0.6f, 1}};
  for (int i = 0; i < 3; ++i)
    look->enemy[i] =
        r.add_material({.name = "enemy", .color = reds[i], .shading = render::Shading::Flat})
            .value();
  look->ship = r.add_material({.name = "ship", .color = {0.3f, 0.9f, 1.0f, 1}}).value();
  look->ship_hit = r.add_material({.name = "ship hit", .color = {1, 1, 1, 1}}).value();
  look->shot_paint =
      r.add_material(
           {.name = "shot", .color = {1.0f, 0.95f, 0.4f, 1}, .shading = render::Shading::Unlit})
          .value();
  look->ground_paint =
      r.add_material(
           {.name = "ground", .color = {0.12f, 0.14f, 0.18f, 1}, .shading = render::Shading::Flat})
          .value();
  return r;
}

#if SPINDLE_HAS_AUDIO
// --- sound -------------------------------------------------------------------------------------

// A mono sound of `seconds`, sample(t, i) for each frame: tones made here, no files needed.
template <class F>
audio::SoundId make_sound(audio::Mixer& mixer, float seconds, const char* name, const F& sample) {
  constexpr std::uint32_t kRate = 22050;
  std::vector<float> s(static_cast<std::size_t>(seconds * kRate));
  for (std::size_t i = 0; i < s.size(); ++i) {
    const float t = static_cast<float>(i) / kRate;
    s[i] = sample(t, static_cast<std::uint32_t>(i)) * std::exp(-t * 6.0f / seconds);
  }
  return mixer.add_sound(audio::Sound::create(std::move(s), 1, kRate, name).value()).value();
}

// One-shots for what the last frame's steps did (read from the ship's counters, so sound never
// feeds back into the game): a blip per frame that fired, a pop per kill, a boom per bomb and a
// low tone per life lost. Headless runs mix into the null device.
void add_sounds(core::Engine& engine, bool headless) {
  audio::AudioPlugin& plugin = engine.add_plugin<audio::AudioPlugin>(
      audio::AudioPluginConfig{.output = headless ? audio::Output::Null : audio::Output::Sdl});
  audio::Mixer& mixer = plugin.mixer();
  constexpr float kTwoPi = 6.2831853f;
  const audio::SoundId blip = make_sound(mixer, 0.06f, "blip", [&](float t, std::uint32_t) {
    return 0.25f * std::sin(kTwoPi * (900.0f - 4000.0f * t) * t);
  });
  const audio::SoundId pop = make_sound(
      mixer, 0.12f, "pop", [](float, std::uint32_t i) { return 0.4f * (2.0f * hash01(i) - 1.0f); });
  const audio::SoundId boom = make_sound(mixer, 0.6f, "boom", [&](float t, std::uint32_t i) {
    return 0.5f * std::sin(kTwoPi * 55.0f * t) + 0.3f * (2.0f * hash01(i + 99) - 1.0f);
  });
  const audio::SoundId ouch = make_sound(mixer, 0.4f, "ouch", [&](float t, std::uint32_t) {
    return 0.5f * std::sin(kTwoPi * 140.0f * t) * (std::sin(kTwoPi * 12.0f * t) > 0 ? 1.0f : 0.6f);
  });
  struct Heard {
    std::uint32_t shots = 0, bombs = 0, lives_lost = 0;
    std::int32_t kills = 0;
  };
  auto heard = std::make_shared<Heard>();
  engine.add_stage(
      {.name = "sounds",
       .phase = core::Phase{"sounds", 750},  // after drawing, before audio_mix
       .access = core::Access{}.read<Ship>().write<audio::AudioAccess>(),
       .run =
           [&plugin, heard, blip, pop, boom, ouch](core::StageContext& ctx) {
             const Ship& ship = ctx.world().storage<Ship>()->data()[0];
             audio::Mixer& m = plugin.mixer();
             if (ship.shots_fired != heard->shots) m.play(blip, {.volume = 0.3f});
             const std::int32_t kills = std::min(ship.kills - heard->kills, 4);
             for (std::int32_t k = 0; k < kills; ++k)
               m.play(pop,
                      {.volume = 0.5f,
                       .pan = 2.0f * hash01(static_cast<std::uint32_t>(ship.kills + k)) - 1.0f,
                       .pitch = 0.8f + 0.5f * hash01(static_cast<std::uint32_t>(ship.kills - k))});
             if (ship.bombs != heard->bombs) m.play(boom);
             if (ship.lives_lost != heard->lives_lost) m.play(ouch);
             *heard = {ship.shots_fired, ship.bombs, ship.lives_lost, ship.kills};
           },
       .simulation = false});
}
#endif

}  // namespace

int main(int argc, char** argv) {
  samples::GoldenArgs golden;
  argc = samples::take_golden_args(argc, argv, golden);
  std::uint64_t frames = 0;  // 0: until quit (600 headless)
  std::uint32_t enemies = 10'000;
  bool headless = false;
  samples::ReplayArgs replay_args;
  argc = samples::take_replay_args(argc, argv, replay_args);
  // This sample's own flags; the rest are every sample's.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--frames") == 0 && has_value) {
      frames = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--enemies") == 0 && has_value) {
      enemies = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (std::strcmp(argv[i], "--headless") == 0) {
      headless = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  samples::SampleArgs args;
  if (!samples::parse_sample_args(kept, argv, args)) return 2;
  if (enemies < 1 || enemies > 1'000'000) {
    std::fprintf(stderr, "swarm: --enemies must be in [1, 1000000]\n");
    return 2;
  }
  if (headless && frames == 0 && replay_args.replay.empty()) frames = 600;

  core::Engine engine(core::EngineConfig{
      .mode = args.mode, .workers = args.workers, .entity_capacity = enemies + kShots + 16});
  auto opened = platform::Window::open({.title = "Spindle swarm",
                                        .width = 960,
                                        .height = 540,
                                        .vsync = frames == 0,
                                        .driver = headless ? "dummy" : ""});
  if (!opened) {
    std::fprintf(stderr, "swarm: %s\n", opened.status().c_str());
    return 1;
  }
  std::unique_ptr<platform::Window> window = std::move(opened).value();

  const Controls controls = declare_controls(engine);
  auto devices = platform::Devices::open().value();
  if (core::Status s = bind_controls(*devices, controls); !s) {
    std::fprintf(stderr, "swarm: %s\n", s.c_str());
    return 1;
  }
  devices->attach(engine);  // pumps the window's events every frame, whatever feeds the input
  devices->watch(*window);

  build_game(engine, controls, enemies);
  const bool scripted = frames > 0 && replay_args.replay.empty();
  const render::Renderer& r =
      add_renderer(engine, enemies, golden.golden.empty() && golden.screenshot.empty());
#if SPINDLE_HAS_AUDIO
  add_sounds(engine, headless);
#endif

  // Input: the pilot (with --frames) or the devices, recorded; or a recording played back.
  core::ScriptedInput pilot = make_pilot(controls, frames);
  samples::InputSession session;
  if (!session.start(engine,
                     scripted ? static_cast<core::InputSource*>(&pilot)
                              : static_cast<core::InputSource*>(devices.get()),
                     replay_args, "swarm"))
    return 2;
  if (frames == 0) frames = session.replay_steps();

  const render::Image& image = r.image();
  const platform::RunStats stats =
      platform::run(engine, window.get(), image,
                    {.max_frames = frames,
                     .target_fps = frames == 0 ? 60.0 : 0.0,
                     .fixed_delta_ns = frames == 0 ? 0 : core::kNsPerSecond / 60});

  if (!session.finish("swarm")) return 1;
  const core::World& world = engine.world();
  const Ship& ship = world.storage<Ship>()->data()[0];
  const std::span<const Enemy> enemy_list = world.storage<Enemy>()->data();
  const float side = field_side(enemies);
  const bool inside = std::all_of(enemy_list.begin(), enemy_list.end(), [side](const Enemy& e) {
    return e.pos.x >= 0 && e.pos.y >= 0 && e.pos.x < side && e.pos.y < side;
  });
  std::printf("swarm: %s mode, %u enemies, score %d, best %d, kills %d, lives %d, round %d\n",
              jobs::to_string(engine.mode()), static_cast<std::uint32_t>(enemy_list.size()),
              ship.score, ship.best, ship.kills, ship.lives, ship.rounds);
  const bool golden_ok = samples::check_golden(image, golden, "swarm");
  std::printf("frames=%llu median_ms=%.3f p99_ms=%.3f hash=%016llx\n",
              static_cast<unsigned long long>(stats.frames), stats.median_ms, stats.p99_ms,
              static_cast<unsigned long long>(world.state_hash()));
  if (!golden_ok) return 1;
  // What any run must keep: N enemies, all on the field.
  if (enemy_list.size() != enemies || !inside) {
    std::fprintf(stderr, "swarm: expected %u enemies on the field, found %zu (%s)\n", enemies,
                 enemy_list.size(), inside ? "all inside" : "some outside");
    return 1;
  }
  // What a scripted or replayed run of a few seconds reaches: kills.
  if (frames >= 120 && stats.frames == frames && ship.kills <= 0) {
    std::fprintf(stderr, "swarm: the pilot killed no enemy in %llu frames\n",
                 static_cast<unsigned long long>(frames));
    return 1;
  }
  return stats.frames > 0 ? 0 : 1;
}
