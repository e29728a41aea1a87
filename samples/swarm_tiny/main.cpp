// swarm_tiny: the swarm shooter of samples/swarm on the tiny-target profile (docs/handheld.md).
// The same game rules: enemies steer toward the ship through the swarm collision system, pushing
// each other apart; the ship fires at the nearest enemy on its own and sets off a bomb now and
// then; a killed enemy comes back at the edge of the field; touching an enemy costs a life. Here
// everything is Q20.12 fixed point (core::fixed) in units four times the desktop sample's, the
// engine runs single-threaded, and every byte of the engine's and the game's data comes from one
// memory budget set at start-up, split into arenas per subsystem. It draws the PS1 way, through
// the fixed-point ordering-table renderer (render/ot_renderer.h) at 320x240: a stage queues the
// floor, the ship and a textured sprite per enemy, and after each frame rasterize() plays the
// part of the PS1's GPU. A scripted pilot flies; there is no window or sound.
//
//   spindle_sample_swarm_tiny [--frames N] [--enemies N] [--budget-kib K] [--screenshot PNG]
//
// Defaults: 600 frames, 1,000 enemies, a 2,048 KiB budget. It prints each arena's high-water
// mark and panics, what the renderer drew in the last frame with its image hash, then the last
// line:
//   engine_bytes=B heap_after_init=A hash=H
// B: the arenas' high-water marks summed (plus anything that had to come from the heap because
// an arena was full); A: heap allocations after start-up (the first two frames), counted by
// spindle::heap_guard; H: the world hash, the same on every CPU. It exits 1 when A is not 0, an
// arena overflowed, or the game did not play (no kill, or an enemy lost).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include <spindle/base/budget.h>
#include <spindle/base/fixed.h>
#include <spindle/engine/engine.h>
#include <spindle/gameplay/input.h>
#include <spindle/physics/swarm.h>
#include <spindle/render/image.h>
#include <spindle/render/ot_renderer.h>

using namespace spindle;
using core::fixed;

namespace {

// --- components and resources ------------------------------------------------------------------

struct Enemy {
  fixed x, y, vx, vy;
};
struct Ship {
  fixed x{}, y{};
  fixed facing_x = fixed::one(), facing_y{};
  fixed fire_cooldown{}, bomb_cooldown{}, invulnerable{};
  std::int32_t lives = 3;
  std::int32_t score = 0;
  std::int32_t best = 0;
  std::int32_t kills = 0;
  std::int32_t rounds = 1;
  std::uint32_t respawns = 0;
  std::uint32_t shots_fired = 0;
  std::uint32_t bombs = 0;
  std::uint32_t lives_lost = 0;
};
struct Shot {
  fixed x, y, vx, vy;
  fixed life;  // <= 0: free
};

struct SwarmState {
  std::unique_ptr<swarm::Swarm<fixed>> swarm;
  std::vector<fixed> next_x, next_y, next_vx, next_vy;  // in sorted order
};

struct Controls {
  core::ActionId left, right, up, down, bomb;
};

// The arenas whose panic modes the game itself triggers.
struct Panics {
  core::BudgetArena* swarm = nullptr;  // a crowded cell hit max_candidates
  core::BudgetArena* game = nullptr;   // no free shot
};

constexpr fixed F(double v) {
  return fixed::from_double(v);
}

// The desktop sample's sizes times four: squares of distances stay well inside Q20.12's range
// (the field's diagonal squared is about 128,000 of 524,287) and far above its step.
constexpr fixed kEnemyRadius = F(1.4);
constexpr fixed kEnemySpeed = F(14.0);
constexpr fixed kShipRadius = F(2.0);
constexpr fixed kShipSpeed = F(36.0);
constexpr fixed kShotRadius = F(0.6);
constexpr fixed kShotSpeed = F(120.0);
constexpr fixed kShotLife = F(0.6);
constexpr fixed kFireInterval = F(0.07);
constexpr fixed kAimRange = F(64.0);
constexpr fixed kBombRadius = F(24.0);
constexpr fixed kBombInterval = F(2.0);
constexpr fixed kClearRadius = F(20.0);
constexpr fixed kInvulnerable = F(2.0);
constexpr fixed kCell = F(4.0);  // >= twice the enemy radius: every overlap is seen
constexpr std::uint32_t kShots = 32;

fixed len2(fixed x, fixed y) {
  return x * x + y * y;
}

// The field: a square of side 8 sqrt(N), at least 160.
fixed field_side(std::uint32_t enemies) {
  const fixed s =
      fixed::from_int(8) * fixed::sqrt(fixed::from_int(static_cast<std::int32_t>(enemies)));
  return std::max(fixed::from_int(160), s);
}

std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// A deterministic number in [0, 1) from a seed: integer bits only, the same on every CPU.
fixed hash01(std::uint32_t seed) {
  return fixed::from_raw(static_cast<std::int32_t>(mix32(seed) & (fixed::kOneRaw - 1)));
}

void edge_point(fixed side, std::uint32_t seed, fixed& x, fixed& y) {
  const fixed t = hash01(seed) * side;
  const fixed inset = F(2.0);
  switch (mix32(seed ^ 0x9e3779b9u) & 3u) {
    case 0:
      x = t, y = inset;
      break;
    case 1:
      x = t, y = side - inset;
      break;
    case 2:
      x = inset, y = t;
      break;
    default:
      x = side - inset, y = t;
      break;
  }
}

fixed clamp(fixed v, fixed lo, fixed hi) {
  return std::min(std::max(v, lo), hi);
}

// Calls fn(k) for the sorted position k of every enemy in the cells within `reach` cells.
template <class Fn>
void for_each_near(const swarm::Swarm<fixed>& s, fixed px, fixed py, std::int32_t reach,
                   const Fn& fn) {
  const swarm::CellCoord c = s.cell_of(px, py);
  const auto cx = static_cast<std::int32_t>(c.x), cy = static_cast<std::int32_t>(c.y);
  const auto nx = static_cast<std::int32_t>(s.cells_x()),
             ny = static_cast<std::int32_t>(s.cells_y());
  for (std::int32_t y = std::max(cy - reach, 0); y <= std::min(cy + reach, ny - 1); ++y) {
    for (std::int32_t x = std::max(cx - reach, 0); x <= std::min(cx + reach, nx - 1); ++x) {
      const auto [b, e] =
          s.cell_range({static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)});
      for (std::uint32_t k = b; k < e; ++k) fn(k);
    }
  }
}

// The unit direction to the nearest enemy within kAimRange, in rings of cells outward; false
// when none is in range.
bool nearest_direction(const swarm::Swarm<fixed>& s, fixed px, fixed py, fixed& ax, fixed& ay) {
  fixed best = kAimRange * kAimRange;
  bool found = false;
  const swarm::CellCoord c = s.cell_of(px, py);
  const auto cx = static_cast<std::int32_t>(c.x), cy = static_cast<std::int32_t>(c.y);
  const auto nx = static_cast<std::int32_t>(s.cells_x()),
             ny = static_cast<std::int32_t>(s.cells_y());
  const std::int32_t rings = (kAimRange / kCell).floor_to_int() + 1;
  for (std::int32_t r = 0; r <= rings; ++r) {
    // Cells of ring r are at least (r - 1) cells away.
    const fixed near = kCell * fixed::from_int(std::max(r - 1, 0));
    if (found && best < near * near) break;
    for (std::int32_t y = cy - r; y <= cy + r; ++y) {
      for (std::int32_t x = cx - r; x <= cx + r; ++x) {
        const bool ring = y == cy - r || y == cy + r || x == cx - r || x == cx + r;
        if (!ring || x < 0 || y < 0 || x >= nx || y >= ny) continue;
        const auto [b, e] =
            s.cell_range({static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y)});
        for (std::uint32_t k = b; k < e; ++k) {
          const fixed dx = s.x()[k] - px, dy = s.y()[k] - py;
          const fixed d2 = len2(dx, dy);
          if (d2 < best && d2 > fixed::epsilon()) {
            best = d2;
            found = true;
          }
        }
      }
    }
  }
  if (!found) return false;
  // The winner again, for its direction (one sqrt, not one per candidate).
  const fixed d = fixed::sqrt(best);
  bool done = false;
  for_each_near(s, px, py, rings, [&](std::uint32_t k) {
    if (done) return;
    const fixed dx = s.x()[k] - px, dy = s.y()[k] - py;
    if (len2(dx, dy) == best) {
      ax = dx / d;
      ay = dy / d;
      done = true;
    }
  });
  return done;
}

// One step of the ship: move, shots fly and hit, the bomb, contact, and firing.
void fly_ship(core::StageContext& ctx, const Controls& controls, fixed side, fixed dt,
              const Panics& panics) {
  core::World& w = ctx.world();
  const core::Input& in = *w.resource<core::Input>();
  const swarm::Swarm<fixed>& s = *w.resource<SwarmState>()->swarm;
  Ship& ship = w.storage<Ship>()->data()[0];
  const std::span<Shot> shots = w.storage<Shot>()->data();
  const std::span<Enemy> enemies = w.storage<Enemy>()->data();

  const auto respawn = [&](std::uint32_t agent) {
    Enemy& e = enemies[agent];
    edge_point(side, ship.respawns++ * 2654435761u, e.x, e.y);
    e.vx = e.vy = fixed{};
  };
  const auto kill_within = [&](fixed px, fixed py, fixed radius, bool scores) {
    const std::int32_t reach = (radius / kCell).floor_to_int() + 1;
    std::int32_t n = 0;
    for_each_near(s, px, py, reach, [&](std::uint32_t k) {
      if (len2(s.x()[k] - px, s.y()[k] - py) >= radius * radius) return;
      respawn(s.order()[k]);
      ++n;
    });
    if (scores) {
      ship.kills += n;
      ship.score += 10 * n;
    }
  };

  fixed mx = fixed::from_int(static_cast<std::int32_t>(in.axis(controls.right, controls.left)));
  fixed my = fixed::from_int(static_cast<std::int32_t>(in.axis(controls.down, controls.up)));
  if (mx != fixed{} && my != fixed{}) {  // diagonal: unit length
    mx = mx * F(0.70710678);
    my = my * F(0.70710678);
  }
  if (mx != fixed{} || my != fixed{}) {
    ship.facing_x = mx;
    ship.facing_y = my;
  }
  ship.x = clamp(ship.x + mx * kShipSpeed * dt, kShipRadius, side - kShipRadius);
  ship.y = clamp(ship.y + my * kShipSpeed * dt, kShipRadius, side - kShipRadius);
  ship.fire_cooldown = ship.fire_cooldown - dt;
  ship.bomb_cooldown = ship.bomb_cooldown - dt;
  ship.invulnerable = ship.invulnerable - dt;

  const fixed shot_reach = kEnemyRadius + kShotRadius;
  for (Shot& shot : shots) {
    if (shot.life <= fixed{}) continue;
    shot.x = shot.x + shot.vx * dt;
    shot.y = shot.y + shot.vy * dt;
    shot.life = shot.life - dt;
    const bool outside = shot.x < fixed{} || shot.y < fixed{} || shot.x >= side || shot.y >= side;
    if (shot.life <= fixed{} || outside) {
      shot.life = fixed{};
      continue;
    }
    std::uint32_t hit = ~0u;
    for_each_near(s, shot.x, shot.y, 1, [&](std::uint32_t k) {
      if (hit == ~0u && len2(s.x()[k] - shot.x, s.y()[k] - shot.y) < shot_reach * shot_reach)
        hit = k;
    });
    if (hit == ~0u) continue;
    respawn(s.order()[hit]);
    ++ship.kills;
    ship.score += 10;
    shot.life = fixed{};
  }

  if (in.pressed(controls.bomb) && ship.bomb_cooldown <= fixed{}) {
    kill_within(ship.x, ship.y, kBombRadius, true);
    ship.bomb_cooldown = kBombInterval;
    ++ship.bombs;
  }

  if (ship.invulnerable <= fixed{}) {
    const fixed reach = kEnemyRadius + kShipRadius;
    bool touched = false;
    for_each_near(s, ship.x, ship.y, 1, [&](std::uint32_t k) {
      touched = touched || len2(s.x()[k] - ship.x, s.y()[k] - ship.y) < reach * reach;
    });
    if (touched) {
      kill_within(ship.x, ship.y, kClearRadius, false);
      ship.invulnerable = kInvulnerable;
      ++ship.lives_lost;
      if (--ship.lives == 0) {
        ship.best = std::max(ship.best, ship.score);
        ship.score = 0;
        ship.lives = 3;
        ++ship.rounds;
      }
    }
  }

  if (ship.fire_cooldown <= fixed{}) {
    fixed ax = ship.facing_x, ay = ship.facing_y;
    nearest_direction(s, ship.x, ship.y, ax, ay);
    bool fired = false;
    for (Shot& shot : shots) {
      if (shot.life > fixed{}) continue;
      shot = Shot{ship.x + ax * kShipRadius, ship.y + ay * kShipRadius, ax * kShotSpeed,
                  ay * kShotSpeed, kShotLife};
      ship.fire_cooldown = kFireInterval;
      ++ship.shots_fired;
      fired = true;
      break;
    }
    if (!fired) panics.game->panic("no free shot");
  }
}

// --- drawing ----------------------------------------------------------------------------------

// What the renderer reads from (registered sources stay in this memory, as on a console's ROM):
// the floor, the ship's dart and the enemy sprite.
struct Art {
  std::vector<render::FixedVec3> floor;
  std::vector<std::uint16_t> floor_indices, floor_colors;
  std::vector<std::uint8_t> floor_uvs;
  render::OtMeshId floor_mesh = 0, ship_mesh = 0;
  render::OtTextureId enemy_texture = 0, floor_texture = 0;
};

// The field lies in the world's xz plane (field y is world z), y up; the camera looks down on it
// from beyond its y = side edge, so field x runs to the right as on the desktop sample's screen.
// A side: drawn as a backdrop, the floor needs no more to sort; its texture warps as the PS1's
// affine mapping did (more tiles would warp less and cost more).
constexpr int kFloorTiles = 4;

// A dart pointing along model +x, 6 units long (twice the ship's reach, so the player stands out
// from the swarm), faces counter-clockwise seen from outside.
constexpr render::FixedVec3 kDart[] = {{F(4.0), F(1.0), F(0.0)},
                                       {F(-2.0), F(1.0), F(-2.8)},
                                       {F(-2.0), F(1.0), F(2.8)},
                                       {F(-0.8), F(3.6), F(0.0)}};
constexpr std::uint16_t kDartIndices[] = {0, 1, 3, 0, 3, 2, 1, 2, 3, 0, 2, 1};
constexpr std::uint16_t kDartColors[] = {render::rgb555(90, 230, 255), render::rgb555(60, 180, 220),
                                         render::rgb555(40, 120, 160), render::rgb555(20, 60, 80)};

// An 8 x 8 enemy: a red beetle with yellow eyes; 0 is transparent. Built at compile time, as
// a console's ROM holds it.
constexpr std::array<std::uint16_t, 64> kEnemyTexels = [] {
  const char* const rows[] = {"..r..r..", ".rrrrrr.", "rryrryrr", "rrrrrrrr",
                              "RrrrrrrR", ".RrrrrR.", "..RRRR..", ".R....R."};
  std::array<std::uint16_t, 64> t{};
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x) {
      const char c = rows[y][x];
      t[y * 8 + x] = c == 'r'   ? render::rgb555(230, 50, 40)
                     : c == 'R' ? render::rgb555(140, 24, 20)
                     : c == 'y' ? render::rgb555(255, 230, 60)
                                : std::uint16_t{0};
    }
  }
  return t;
}();

// A 16 x 16 deck plate: blue-grey steel, a darker seam along two edges, a rivet in each corner.
constexpr std::array<std::uint16_t, 256> kDeckTexels = [] {
  std::array<std::uint16_t, 256> t{};
  for (int y = 0; y < 16; ++y) {
    for (int x = 0; x < 16; ++x) {
      const bool seam = x == 0 || y == 0;
      const bool rivet = (x == 2 || x == 13) && (y == 2 || y == 13);
      const bool scuff = ((x * 7 + y * 13) % 11) == 0;
      t[y * 16 + x] = seam    ? render::rgb555(24, 28, 40)
                      : rivet ? render::rgb555(120, 130, 150)
                      : scuff ? render::rgb555(62, 70, 92)
                              : render::rgb555(52, 60, 82);
    }
  }
  return t;
}();

void build_art(render::OtRenderer& ot, Art& art, fixed side) {
  const fixed step = side / fixed::from_int(kFloorTiles);
  for (int z = 0; z <= kFloorTiles; ++z) {
    for (int x = 0; x <= kFloorTiles; ++x) {
      art.floor.push_back({step * fixed::from_int(x), fixed{}, step * fixed::from_int(z)});
      art.floor_uvs.push_back(static_cast<std::uint8_t>(32 * x));  // two plates a tile
      art.floor_uvs.push_back(static_cast<std::uint8_t>(32 * z));
    }
  }
  for (int z = 0; z < kFloorTiles; ++z) {
    for (int x = 0; x < kFloorTiles; ++x) {
      const auto i = static_cast<std::uint16_t>(z * (kFloorTiles + 1) + x);
      const auto right = static_cast<std::uint16_t>(i + 1);
      const auto below = static_cast<std::uint16_t>(i + kFloorTiles + 1);
      const auto diagonal = static_cast<std::uint16_t>(below + 1);
      for (const std::uint16_t v : {i, below, diagonal, i, diagonal, right})
        art.floor_indices.push_back(v);
      const std::uint16_t c = (x + z) % 2 ? render::rgb555(52, 60, 84) : render::rgb555(40, 46, 66);
      art.floor_colors.push_back(c);
      art.floor_colors.push_back(c);
    }
  }
  const auto enemy = ot.add_texture({8, 8, kEnemyTexels});
  const auto deck = ot.add_texture({16, 16, kDeckTexels});
  if (!enemy || !deck) {
    std::fprintf(stderr, "swarm_tiny: art: %s%s\n", enemy.message().c_str(),
                 deck.message().c_str());
    std::exit(2);
  }
  const auto floor = ot.add_mesh(
      {art.floor, art.floor_indices, art.floor_colors, true, deck.value(), art.floor_uvs});
  const auto dart = ot.add_mesh({kDart, kDartIndices, kDartColors});
  if (!floor || !dart) {
    std::fprintf(stderr, "swarm_tiny: art: %s%s\n", floor.message().c_str(),
                 dart.message().c_str());
    std::exit(2);
  }
  art.floor_texture = deck.value();
  art.floor_mesh = floor.value();
  art.ship_mesh = dart.value();
  art.enemy_texture = enemy.value();
  const fixed half = side / fixed::from_int(2);
  ot.set_camera(render::look_at({half, side * F(0.9), side * F(1.45)},
                                {half, fixed{}, side * F(0.52)}, {fixed{}, fixed::one(), fixed{}}));
}

// The render stage: the CPU's half of a PS1 frame (transform, cull, ordering table).
void queue_frame(core::StageContext& ctx, render::OtRenderer& ot, const Art& art) {
  const core::World& w = ctx.world();
  const Ship& ship = w.storage<Ship>()->data()[0];
  ot.begin_frame();
  ot.draw(art.floor_mesh, render::FixedTransform{}, render::OtRenderer::Order::Backdrop);
  const bool blink = ship.invulnerable > fixed{} && (ot.stats().frames / 4) % 2 == 1;
  if (!blink) {
    ot.draw(art.ship_mesh, render::FixedTransform::translation({ship.x, F(2.0), ship.y}) *
                               render::FixedTransform::rotation_y(ship.facing_x, ship.facing_y));
  }
  const std::span<const Enemy> enemies = w.storage<Enemy>()->data();
  ot.draw_sprites(static_cast<std::uint32_t>(enemies.size()), kEnemyRadius * F(2.5),
                  art.enemy_texture, 0, [enemies](std::uint32_t i) {
                    return render::FixedVec3{enemies[i].x, kEnemyRadius, enemies[i].y};
                  });
  for (const Shot& shot : w.storage<Shot>()->data()) {
    if (shot.life > fixed{})
      ot.draw_sprite({shot.x, F(1.0), shot.y}, F(1.2), render::kNoOtTexture,
                     render::rgb555(255, 250, 140));
  }
}

void build_game(core::Engine& engine, core::MemoryBudget& budget, const Controls& controls,
                std::uint32_t enemies, const Panics& panics, render::OtRenderer& ot,
                const Art& art) {
  core::World& world = engine.world();
  const fixed side = field_side(enemies);
  // One step in fixed point, from the engine's step in nanoseconds (integers only).
  const fixed dt = fixed::from_raw(static_cast<std::int32_t>(
      (engine.config().fixed_step_ns * fixed::kOneRaw + core::kNsPerSecond / 2) /
      core::kNsPerSecond));
  {
    core::BudgetScope scope(budget.arena("ecs"));
    world.register_component<Enemy>("enemy", enemies);
    world.register_component<Ship>("ship", 1);
    world.register_component<Shot>("shot", kShots);
  }
  {
    core::BudgetScope scope(budget.arena("swarm"));
    SwarmState& state = world.set_resource<SwarmState>();
    swarm::Config<fixed> cfg;
    cfg.max_agents = enemies;
    cfg.max_x = cfg.max_y = side;
    cfg.cell_size = cfg.radius = kCell;
    // The stable worst case: a crowded cell costs at most this many candidates an enemy.
    cfg.max_neighbours = 6;
    cfg.max_candidates = 16;
    cfg.max_chunks = 1;  // one participant: one chunk, one radix scratch
    cfg.min_chunk_agents = 1u << 30;
    cfg.boundary = swarm::Boundary::Clamp;
    cfg.cell_order = swarm::CellOrder::Rows;  // 3 lookups a candidate list, not 9
    state.swarm = std::make_unique<swarm::Swarm<fixed>>(cfg);
    if (!state.swarm->valid()) {
      std::fprintf(stderr, "swarm_tiny: swarm config: %s\n", state.swarm->error());
      std::exit(2);
    }
    state.next_x.resize(enemies);
    state.next_y.resize(enemies);
    state.next_vx.resize(enemies);
    state.next_vy.resize(enemies);
  }
  {
    core::BudgetScope scope(budget.arena("ecs"));
    const fixed centre = side / fixed::from_int(2);
    world.add<Ship>(world.create(), Ship{.x = centre, .y = centre});
    for (std::uint32_t i = 0; i < kShots; ++i) world.add<Shot>(world.create());
    for (std::uint32_t i = 0; i < enemies; ++i) {
      fixed x, y;
      for (std::uint32_t attempt = 0;; ++attempt) {
        const std::uint32_t seed = i * 16 + attempt;
        x = hash01(seed * 2 + 1) * side;
        y = hash01(seed * 2 + 2) * side;
        if (len2(x - centre, y - centre) > fixed::from_int(48 * 48) || attempt == 15) break;
      }
      world.add<Enemy>(world.create(), Enemy{x, y, fixed{}, fixed{}});
    }
  }

  core::BudgetScope scope(budget.arena("engine"));  // the stages and their closures
  engine.add_stage(
      {.name = "swarm_index",
       .access = core::Access{}.read<Enemy>().write<SwarmState>(),
       .run = [](core::StageContext& ctx) {
         SwarmState& st = *ctx.world().resource<SwarmState>();
         const std::span<const Enemy> a = ctx.world().storage<Enemy>()->data();
         const bool built = st.swarm->build(
             ctx.jobs(), ctx.split(), static_cast<std::uint32_t>(a.size()),
             [a](std::uint32_t i) {
               return swarm::Agent<fixed>{a[i].x, a[i].y, a[i].vx, a[i].vy, kEnemyRadius};
             },
             ctx.tag());
         SPINDLE_ASSERT(built, "swarm: sized for every enemy");
       }});
  engine.add_stage({.name = "swarm_steer",
                    .access = core::Access{}.read<Ship>().write<SwarmState>(),
                    .after = {"swarm_index"},
                    .run = [side, dt, panics](core::StageContext& ctx) {
                      SwarmState& st = *ctx.world().resource<SwarmState>();
                      swarm::Swarm<fixed>& s = *st.swarm;
                      s.find_neighbours(ctx.jobs(), ctx.split(), ctx.tag());
                      if (s.stats().candidate_capped > 0) panics.swarm->panic();
                      s.resolve_overlaps(ctx.jobs(), ctx.split(), F(0.8), ctx.tag());
                      const Ship& ship = ctx.world().storage<Ship>()->data()[0];
                      const fixed hi = side - fixed::epsilon();
                      const fixed lo{};
                      for (std::uint32_t k = 0; k < s.count(); ++k) {
                        const fixed tx = ship.x - s.x()[k], ty = ship.y - s.y()[k];
                        const fixed d = fixed::sqrt(len2(tx, ty));
                        fixed wx{}, wy{};
                        if (d > F(0.01)) {
                          const fixed scale = kEnemySpeed / d;
                          wx = tx * scale;
                          wy = ty * scale;
                        }
                        const fixed vx = s.vx()[k] + (wx - s.vx()[k]) * F(0.1);
                        const fixed vy = s.vy()[k] + (wy - s.vy()[k]) * F(0.1);
                        st.next_x[k] = clamp(s.x()[k] + vx * dt + s.push_x()[k], lo, hi);
                        st.next_y[k] = clamp(s.y()[k] + vy * dt + s.push_y()[k], lo, hi);
                        st.next_vx[k] = vx;
                        st.next_vy[k] = vy;
                      }
                    }});
  // One loop over the dense array (an enemy's dense index is its agent index): a system's
  // per-entity callback and index lookups cost 42 instructions an enemy here, this 10.
  engine.add_stage(
      {.name = "swarm_integrate",
       .access = core::Access{}.read<SwarmState>().write<Enemy>(),
       .after = {"swarm_steer"},
       .run = [](core::StageContext& ctx) {
         const SwarmState& st = *ctx.world().resource<SwarmState>();
         const std::span<Enemy> enemies = ctx.world().storage<Enemy>()->data();
         const std::uint32_t* rank = st.swarm->rank().data();
         for (std::size_t i = 0; i < enemies.size(); ++i) {
           const std::uint32_t k = rank[i];
           enemies[i] = Enemy{st.next_x[k], st.next_y[k], st.next_vx[k], st.next_vy[k]};
         }
       }});
  engine.add_stage({.name = "ship",
                    .access = core::Access{}.read<SwarmState>().write<Ship, Shot, Enemy>(),
                    .after = {"swarm_integrate"},
                    .run = [controls, side, dt, panics](core::StageContext& ctx) {
                      fly_ship(ctx, controls, side, dt, panics);
                    }});
  engine.add_stage({.name = "render",
                    .access = core::Access{}.read<Ship, Shot, Enemy>(),
                    .after = {"ship"},
                    .run = [&ot, &art](core::StageContext& ctx) { queue_frame(ctx, ot, art); }});
}

// The desktop sample's pilot: waits a moment, then flies a square again and again, with a bomb
// now and then.
void script_pilot(core::ScriptedInput& pilot, const Controls& c, std::uint64_t frames) {
  const core::ActionId legs[] = {c.right, c.down, c.left, c.up};
  std::uint32_t leg = 0;
  for (std::uint64_t f = 30; f < frames; f += 90, ++leg) pilot.hold(legs[leg % 4], f, f + 89);
  for (std::uint64_t f = 100; f < frames; f += 150) pilot.hold(c.bomb, f, f);
}

bool parse_count(const char* text, std::uint64_t lo, std::uint64_t hi, std::uint64_t& out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || text[0] == '-' || v < lo || v > hi) return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // stdout's buffer comes from here, not from the heap at the first printf after start-up.
  static char out_buffer[1024];
  std::setvbuf(stdout, out_buffer, _IOLBF, sizeof out_buffer);

  std::uint64_t frames = 600, enemies = 1000, budget_kib = 2048;
  const char* screenshot = nullptr;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    bool ok = has_value;
    if (std::strcmp(argv[i], "--screenshot") == 0 && has_value) {
      screenshot = argv[++i];
    } else if (std::strcmp(argv[i], "--frames") == 0 && has_value) {
      ok = parse_count(argv[++i], 3, 1u << 30, frames);
    } else if (std::strcmp(argv[i], "--enemies") == 0 && has_value) {
      ok = parse_count(argv[++i], 1, 100000, enemies);
    } else if (std::strcmp(argv[i], "--budget-kib") == 0 && has_value) {
      ok = parse_count(argv[++i], 64, 1u << 20, budget_kib);
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "swarm_tiny: bad argument '%s'\nusage: spindle_sample_swarm_tiny [--frames "
                   "3..] [--enemies 1..100000] [--budget-kib 64..] [--screenshot PNG]\n",
                   argv[i]);
      return 2;
    }
  }
  const auto n = static_cast<std::uint32_t>(enemies);

  // The budget: declared first, so it outlives everything allocated in it. The shares are for
  // 1,000 enemies in 2 MiB; what is left over stays free (high-water marks show what is used).
  // The desktop profile's job system and command buffers reserve more (threads, tbb).
  core::MemoryBudget budget(budget_kib * 1024);
  const std::size_t kib = 1024;
  const bool handheld = SPINDLE_HANDHELD != 0;
  budget.add_arena("jobs", (handheld ? 32 : 64) * kib, "jobs over the pool run inline");
  budget.add_arena("ecs", (handheld ? 96 : 384) * kib,
                   "a spawn past the world's capacity is refused");
  budget.add_arena("engine", 48 * kib, "none: only start-up allocates here");
  budget.add_arena("swarm", 192 * kib, "a crowded cell: an enemy weighs only 16 candidates");
  budget.add_arena("game", 16 * kib, "no free shot: the ship holds fire");
  budget.add_arena("render", 256 * kib,
                   "the farthest primitives are dropped; without a texture slot, drawn flat");
  const Panics panics{budget.arena("swarm"), budget.arena("game")};

  // The renderer: a 320x240 RGB555 framebuffer, room for every enemy's sprite, the floor and the
  // ship, and caches of 4 meshes and 4 textures.
  Art art;
  const render::OtConfig ot_config{.width = 320,
                                   .height = 240,
                                   .focal = 277,  // 60 degrees across
                                   .ot_buckets = 256,
                                   .max_primitives = n + 256,
                                   .near_z = fixed::one(),
                                   .far_z = fixed::from_int(1024),
                                   .fog_start = field_side(n) * F(0.7),
                                   .fog_color = render::rgb555(12, 12, 20),
                                   .clear_color = render::rgb555(12, 12, 20),
                                   .max_meshes = 4,
                                   .max_textures = 4,
                                   .max_mesh_vertices = 96,
                                   .mesh_slots = 4,
                                   .mesh_slot_bytes = 2048,
                                   .texture_slots = 4,
                                   .texture_slot_bytes = 528};  // a 16 x 16 texture
  render::OtRenderer ot(ot_config, budget.arena("render"));
  if (!ot.valid()) {
    std::fprintf(stderr, "swarm_tiny: renderer: %s\n", ot.error());
    return 2;
  }
  {
    core::BudgetScope scope(budget.arena("render"));
    build_art(ot, art, field_side(n));
  }

  std::unique_ptr<core::Engine> engine;
  {
    core::BudgetScope scope(budget.arena("engine"));
    engine = std::make_unique<core::Engine>(core::EngineConfig{.mode = jobs::Mode::Single,
                                                               .workers = 1,
                                                               .pin_workers = false,
                                                               .jobs_per_worker = 64,
                                                               .entity_capacity = n + kShots + 8,
                                                               .adapt_workers = false,
                                                               .memory = &budget});
  }
  Controls controls;
  core::ScriptedInput pilot;
  {
    core::BudgetScope scope(budget.arena("game"));
    core::Input& input = core::use_input(*engine, 8);
    controls = Controls{input.add_action("left").value(), input.add_action("right").value(),
                        input.add_action("up").value(), input.add_action("down").value(),
                        input.add_action("bomb").value()};
    script_pilot(pilot, controls, frames);
    core::set_input_source(*engine, &pilot);
  }
  build_game(*engine, budget, controls, n, panics, ot, art);

  // Start-up ends after two frames (the first builds the stage graph).
  core::BudgetArena& jobs_arena = *budget.arena("jobs");
  for (std::uint64_t f = 0; f < frames; ++f) {
    if (f == 2) budget.seal();
    engine->frame(engine->config().fixed_step_ns);
    if (engine->last_frame().job_overflows > 0) jobs_arena.panic();  // ran inline instead
    ot.rasterize();  // the GPU's half: the ordering table the frame queued, far to near
  }

  const core::World& world = engine->world();
  const Ship& ship = world.storage<Ship>()->data()[0];
  const std::size_t placed = world.storage<Enemy>()->data().size();
  for (const core::BudgetArena& a : budget.arenas()) {
    std::printf("arena %-7s %7zu of %7zu bytes, %u refusals, %u panics (%s)\n", a.name(),
                a.high_water(), a.capacity(), a.refusals(), a.panics(), a.panic_mode());
  }
  std::printf("budget %zu bytes, %zu used; kills=%d shots=%u bombs=%u lives_lost=%u rounds=%d\n",
              budget.capacity(), budget.high_water(), ship.kills, ship.shots_fired, ship.bombs,
              ship.lives_lost, ship.rounds);
  const render::OtRenderer::Stats& drawn = ot.stats();
  std::printf(
      "render: %u primitives (%u dropped), %u objects culled, %llu pixels; mesh cache %llu "
      "hits %llu misses; image=%016llx\n",
      drawn.primitives, drawn.dropped_far, drawn.culled_objects,
      static_cast<unsigned long long>(drawn.pixels),
      static_cast<unsigned long long>(ot.mesh_cache().hits),
      static_cast<unsigned long long>(ot.mesh_cache().misses),
      static_cast<unsigned long long>(ot.framebuffer_hash()));
  const core::HeapCount heap = core::heap_after_seal();
  const std::size_t engine_bytes = budget.high_water() + budget.overflow_bytes();
  std::printf("engine_bytes=%zu heap_after_init=%zu hash=%016llx\n", engine_bytes, heap.allocations,
              static_cast<unsigned long long>(world.state_hash()));
  if (screenshot != nullptr) {  // after the count: the PNG's buffers are the heap's
    render::Image image;
    ot.to_image(image);
    if (const core::Status st = render::write_png(image, screenshot); !st)
      std::fprintf(stderr, "swarm_tiny: %s\n", st.c_str());
  }
  const bool played = ship.kills > 0 && placed == n;
  if (!played)
    std::fprintf(stderr, "swarm_tiny: the game did not play (%d kills, %zu enemies)\n", ship.kills,
                 placed);
  if (budget.overflow_bytes() > 0)
    std::fprintf(stderr, "swarm_tiny: over budget by %zu bytes\n", budget.overflow_bytes());
  if (heap.allocations > 0)
    std::fprintf(stderr, "swarm_tiny: %zu heap allocations after start-up\n", heap.allocations);
  return played && budget.overflow_bytes() == 0 && heap.allocations == 0 ? 0 : 1;
}
