// hello: a small Asteroids-style game in one file, written only against Spindle's public API.
//
// A ship turns, thrusts and fires; rocks drift and split when shot; a timer brings in new rocks;
// scenes go title -> play -> over. Input comes from a script, so the game runs headless and can
// check its own outcome: it exits 0 when the scripted pilot scored, lost no more than its lives
// allowed and every scene was visited, and prints the world's state hash (identical in every
// job mode).
//
//   spindle_hello [--frames N] [--mode single|static|dynamic|tbb] [--workers N]
//                 [--record FILE | --replay FILE]
//
// --record writes the input every step saw (the pilot's) to FILE; --replay plays FILE instead of
// the pilot, and ends with the same hash as the recorded run in every mode and worker count.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include <spindle/spindle.h>

using namespace spindle;
using core::Entity;
using core::StageContext;

// --- components: plain structs ---------------------------------------------------------------

// Motion and collisions run after the game logic that steers (core's Phase::Gameplay, 200).
constexpr core::Phase kMotionPhase{"motion", 300};

struct Body {  // position and velocity on a wrapping 200 x 200 field
  glm::vec2 pos{0.0f};
  glm::vec2 vel{0.0f};
  float radius = 1.0f;
};
struct Ship {
  float heading = 0.0f;  // radians
  float cooldown = 0.0f;
  float invulnerable = 0.0f;
};
struct Rock {
  std::int32_t size = 3;  // 3 big, 2 medium, 1 small
};
struct Bullet {
  float life = 1.2f;
};

// Events and resources.
struct RockShot {
  Entity rock;
  glm::vec2 pos;
  std::int32_t size;
};
struct ShipHit {
  Entity ship;
};
struct Game {
  std::int32_t score = 0;
  std::int32_t lives = 3;
  std::int32_t rocks_shot = 0;
  std::int32_t scenes_seen = 0;
};

// The game's input actions, declared once at start-up; systems capture the ids.
struct Controls {
  core::ActionId left, right, thrust, fire, confirm;
};

constexpr float kField = 200.0f;
constexpr std::uint32_t kRockTimer = 1;

float wrap(float v) {
  return v - kField * std::floor(v / kField);
}

// A deterministic pseudo-random number from a seed (same in every mode).
float hash01(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return static_cast<float>(x & 0xffffff) / static_cast<float>(0x1000000);
}

void spawn_rock(core::CommandBuffer& cmd, glm::vec2 pos, std::int32_t size, std::uint32_t seed) {
  const float angle = hash01(seed) * 6.2831853f;
  const float speed = 6.0f + 10.0f * hash01(seed * 7 + 1) / static_cast<float>(size);
  cmd.spawn(Body{pos, speed * glm::vec2(std::cos(angle), std::sin(angle)),
                 4.0f * static_cast<float>(size)},
            Rock{size});
}

// --- the game --------------------------------------------------------------------------------

Controls declare_controls(core::Engine& engine) {
  core::Input& input = core::use_input(engine);
  // A refused name (empty, declared twice, no room) is logged with the reason; value() stops.
  return Controls{input.add_action("left").value(), input.add_action("right").value(),
                  input.add_action("thrust").value(), input.add_action("fire").value(),
                  input.add_action("confirm").value()};
}

Controls build_game(core::Engine& engine) {
  core::World& world = engine.world();
  const Controls controls = declare_controls(engine);
  world.register_component<Body>("body");
  world.register_component<Ship>("ship");
  world.register_component<Rock>("rock");
  world.register_component<Bullet>("bullet");
  world.events<RockShot>();
  world.events<ShipHit>();
  world.set_resource<Game>();
  world.hash_resource<Game>();  // the score and lives are state a replay must reproduce
  engine.add_plugin<core::TimerPlugin>();

  // Steering and firing read the input resource; the ship is the only writer of Ship.
  engine.add_system<Ship, Body>(
      "pilot", [controls](StageContext& ctx, Entity, Ship& ship, Body& body) {
        const core::Input& in = *ctx.world().resource<core::Input>();
        const float dt = ctx.dt();
        ship.heading += 3.0f * dt * in.axis(controls.left, controls.right);
        const glm::vec2 facing(std::cos(ship.heading), std::sin(ship.heading));
        if (in.held(controls.thrust)) body.vel += 40.0f * dt * facing;
        body.vel *= 0.995f;
        ship.cooldown -= dt;
        ship.invulnerable -= dt;
        if (in.held(controls.fire) && ship.cooldown <= 0.0f) {
          ship.cooldown = 0.15f;
          ctx.commands().spawn(Body{body.pos + facing * 3.0f, body.vel + 90.0f * facing, 0.5f},
                               Bullet{});
        }
      });

  // Everything moves and wraps around the field; runs in parallel over all bodies.
  engine.add_system<Body>(
      "move",
      [](StageContext& ctx, Entity, Body& body) {
        body.pos += body.vel * ctx.dt();
        body.pos = glm::vec2(wrap(body.pos.x), wrap(body.pos.y));
      },
      kMotionPhase);

  engine.add_system<Bullet>("bullet_life", [](StageContext& ctx, Entity e, Bullet& b) {
    b.life -= ctx.dt();
    if (b.life <= 0.0f) ctx.commands().destroy(e);
  });

  // Collisions after movement: every rock against bullets and the ship (small counts: direct).
  engine.add_stage({.name = "collide",
                    .phase = kMotionPhase,
                    .access = core::Access{}.read<Body, Rock, Bullet, Ship>(),
                    .after = {"move"},
                    .run = [](StageContext& ctx) {
                      core::World& w = ctx.world();
                      auto rocks = w.query<const Rock, const Body>();
                      auto bullets = w.query<const Bullet, const Body>();
                      auto ships = w.query<const Ship, const Body>();
                      ctx.parallel_for(rocks.size(), [&](std::uint32_t b, std::uint32_t e) {
                        rocks.each_range(b, e, [&](Entity rock, const Rock& r, const Body& rb) {
                          bool shot = false;
                          bullets.each([&](Entity bullet, const Bullet&, const Body& bb) {
                            if (shot || glm::distance(rb.pos, bb.pos) > rb.radius + bb.radius)
                              return;
                            shot = true;
                            ctx.commands().destroy(bullet);
                            ctx.commands().destroy(rock);
                            ctx.commands().emit(RockShot{rock, rb.pos, r.size});
                          });
                          ships.each([&](Entity ship, const Ship& s, const Body& sb) {
                            if (!shot && s.invulnerable <= 0.0f &&
                                glm::distance(rb.pos, sb.pos) < rb.radius + sb.radius)
                              ctx.commands().emit(ShipHit{ship});
                          });
                        });
                      });
                    }});

  // Reactions to last step's events: score, splitting rocks, lives, new rocks on a timer.
  engine.add_stage({.name = "rules",
                    .phase = core::Phase::Gameplay,
                    .access = core::Access{}.write<Ship, Game>(),
                    .after = {"pilot"},
                    .run = [](StageContext& ctx) {
                      core::World& w = ctx.world();
                      Game& game = *w.resource<Game>();
                      core::CommandBuffer& cmd = ctx.commands();
                      for (const RockShot& hit : w.read_events<RockShot>()) {
                        game.score += 10 * (4 - hit.size);
                        ++game.rocks_shot;
                        if (hit.size > 1) {
                          for (std::uint32_t k = 0; k < 2; ++k)
                            spawn_rock(cmd, hit.pos, hit.size - 1,
                                       hit.rock.index * 31 + k + ctx.tick());
                        }
                      }
                      for (const ShipHit& hit : w.read_events<ShipHit>()) {
                        Ship* ship = w.get<Ship>(hit.ship);
                        if (ship == nullptr || ship->invulnerable > 0.0f) continue;
                        ship->invulnerable = 2.0f;
                        if (--game.lives <= 0) ctx.engine().switch_scene("over");
                      }
                      for (const core::TimerFired& t : w.read_events<core::TimerFired>()) {
                        if (t.id == kRockTimer)
                          spawn_rock(cmd, glm::vec2(0.0f, hash01(t.count) * kField), 3, t.count);
                      }
                    }});

  // Scenes: the title waits for Fire; play sets up the field; over waits for Confirm to quit.
  engine.add_scene("title", [](core::Engine& e) { ++e.world().resource<Game>()->scenes_seen; });
  engine.add_scene("play", [](core::Engine& e) {
    core::World& w = e.world();
    ++w.resource<Game>()->scenes_seen;
    const Entity ship = w.create();
    w.add<Body>(ship, Body{glm::vec2(kField / 2), glm::vec2(0.0f), 2.0f});
    w.add<Ship>(ship, Ship{0.0f, 0.0f, 3.0f});
    for (std::uint32_t i = 0; i < 6; ++i) {
      const Entity rock = w.create();
      w.add<Body>(rock, Body{glm::vec2(hash01(i) * kField, hash01(i + 100) * 40.0f),
                             glm::vec2(hash01(i + 200) * 8.0f - 4.0f, 5.0f), 12.0f});
      w.add<Rock>(rock, Rock{3});
    }
    const Entity spawner = w.create();
    w.add<core::Timer>(spawner, core::Timer::every(4.0, kRockTimer));
  });
  engine.add_scene("over", [](core::Engine& e) { ++e.world().resource<Game>()->scenes_seen; });
  engine.add_stage(
      {.name = "flow", .phase = core::Phase::Input, .run = [controls](StageContext& ctx) {
         const core::Input& in = *ctx.world().resource<core::Input>();
         core::Engine& e = ctx.engine();
         if (e.scene() == "title" && in.pressed(controls.fire)) e.switch_scene("play");
         if (e.scene() == "over" && in.pressed(controls.confirm)) e.request_quit();
       }});
  engine.switch_scene("title");
  return controls;
}

// The scripted pilot: start, then circle and fire in bursts; confirm at the end.
core::ScriptedInput make_pilot(const Controls& controls, std::uint64_t frames) {
  core::ScriptedInput pilot;
  pilot.hold(controls.fire, 5, 6);  // leave the title
  for (std::uint64_t f = 30; f + 40 < frames; f += 50) {
    pilot.hold(controls.left, f, f + 12);
    pilot.hold(controls.fire, f + 10, f + 40);
    pilot.hold(controls.thrust, f + 20, f + 24);
  }
  pilot.hold(controls.confirm, frames - 3, frames - 2);
  return pilot;
}

int main(int argc, char** argv) {
  std::uint64_t frames = 1200;
  core::EngineConfig config;
  std::string record, replay_path;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--frames") == 0 && has_value) {
      frames = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--record") == 0 && has_value) {
      record = argv[++i];
    } else if (std::strcmp(argv[i], "--replay") == 0 && has_value) {
      replay_path = argv[++i];
    } else if (std::strcmp(argv[i], "--workers") == 0 && has_value) {
      config.workers = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (std::strcmp(argv[i], "--mode") == 0 && has_value) {
      if (!jobs::parse_mode(argv[++i], config.mode) || !jobs::mode_available(config.mode)) {
        std::fprintf(stderr, "hello: --mode: '%s' is not a mode of this build\n", argv[i]);
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--frames N] [--mode single|static|dynamic|tbb] [--workers N] "
                   "[--record FILE | --replay FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  if (frames < 100) {
    std::fprintf(stderr, "hello: --frames must be at least 100 for the pilot's script\n");
    return 2;
  }

  core::Engine engine(config);
  const Controls controls = build_game(engine);
  core::ScriptedInput pilot = make_pilot(controls, frames);
  core::InputRecorder recorder(engine, &pilot);
  std::optional<core::InputReplay> replay;
  if (!replay_path.empty()) {
    auto loaded = core::InputReplay::load(replay_path, engine);
    if (!loaded) {
      std::fprintf(stderr, "hello: --replay: %s\n", loaded.status().c_str());
      return 2;
    }
    replay.emplace(std::move(loaded).value());
    core::set_input_source(engine, &*replay);
  } else {
    core::set_input_source(engine, &recorder);
  }
  std::uint64_t frame = 0;
  bool over_seen = false;
  while (!engine.quit_requested() && frame < frames) {
    engine.step();  // one fixed step per frame: the same run in every mode
    over_seen = over_seen || engine.scene() == "over";
    ++frame;
  }
  if (!record.empty()) {
    if (core::Status s = recorder.save(record); !s) {
      std::fprintf(stderr, "hello: --record: %s\n", s.c_str());
      return 1;
    }
  }
  const Game& game = *engine.world().resource<Game>();
  std::printf(
      "hello: %s mode, %llu frames, scene %s, score %d, rocks shot %d, lives %d, %u entities, hash "
      "%016llx\n",
      jobs::to_string(engine.mode()), static_cast<unsigned long long>(frame),
      engine.scene().c_str(), game.score, game.rocks_shot, game.lives,
      engine.world().entity_count(), static_cast<unsigned long long>(engine.world().state_hash()));
  // The outcome the script is built to reach.
  const bool ok =
      game.scenes_seen >= 2 && game.rocks_shot >= 3 && game.score > 0 && game.lives >= 0;
  if (!ok) std::fprintf(stderr, "hello: the scripted game did not reach its expected outcome\n");
  return ok ? 0 : 1;
}
