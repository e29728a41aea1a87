// asteroids: the whole game a player sees and hears, in one file. A ship turns, thrusts and
// fires; big rocks split into two medium ones, medium into two small, small ones vanish; a
// cleared field brings a bigger wave; three lives. Scenes go title (waits for Enter / Start) ->
// play -> over (shows the score; Enter / Start goes back to the title). Rocks, ship and bullets
// are meshes drawn by the RenderPlugin, the score and the scene's words are the renderer's debug
// text, the shot, explosion and thrust sounds are made here from generated samples and played by
// the AudioPlugin, and the window, keys and controller come from the platform layer.
//
//   spindle_sample_asteroids [--headless] [--frames N] [--mode single|static|dynamic|tbb]
//                            [--workers N] [--record FILE | --replay FILE]
//                            [--screenshot FILE] [--golden FILE]
//
// Keys: Left / Right turn, Up thrusts, Space fires, Enter confirms, Escape quits; a controller's
// left stick, A (fire), B or the right trigger (thrust) and Start do the same. With --frames N a
// scripted pilot plays instead (or the recording given to --replay) for N frames of 1/60 s, and
// the sample checks that the pilot started a game, shot and split rocks, scored and lost its
// lives; --headless runs on SDL's dummy driver with silent audio. --record FILE saves the input
// every simulation step saw; a replay ends with the same hash in every mode and worker count.
//
// Last line: frames=N median_ms=X p99_ms=Y hash=H (the world hash, the same in every mode).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <spindle/render/font.h>  // the debug text's glyph size, to centre words
#include <spindle/spindle.h>

#include "sample_args.h"
#include "sample_golden.h"
#include "sample_replay.h"

using namespace spindle;
using core::Entity;
using core::StageContext;

namespace {

// --- the field and the rules' numbers --------------------------------------------------------

// The field wraps at its edges; x runs right and y down the screen (the world's X and Z: the
// camera looks straight down).
constexpr float kFieldW = 160.0f;
constexpr float kFieldH = 90.0f;
constexpr float kPi = 3.14159265f;
constexpr int kLives = 3;
constexpr float kRespawnGrace = 2.0f;    // seconds a new or respawned ship cannot be hit
constexpr std::uint64_t kOverWait = 45;  // steps the over scene ignores Confirm (a held key)
// Radius and points of a rock by size (1 small, 2 medium, 3 big).
constexpr float kRockRadius[4] = {0.0f, 2.2f, 4.0f, 6.5f};
constexpr std::int32_t kRockPoints[4] = {0, 100, 50, 20};

// Motion and collisions run after the game logic that steers (core's Phase::Gameplay, 200) and
// before the transforms (400) that the renderer and audio read.
constexpr core::Phase kMotionPhase{"motion", 300};

// --- components, events and resources: plain structs -----------------------------------------

struct Body {
  glm::vec2 pos{0.0f};
  glm::vec2 vel{0.0f};
  float radius = 1.0f;
};
struct Ship {
  float heading = -kPi / 2;  // radians; -pi/2 points up the screen
  float cooldown = 0.0f;     // seconds until the gun fires again
  float invulnerable = kRespawnGrace;
};
struct Rock {
  std::int32_t size = 3;
  float spin = 1.0f;  // radians per second, also picks the tumbling axis
  float angle = 0.0f;
};
struct Bullet {
  float life = 0.9f;  // seconds
};

// Emitted by collide (applied at the end of the step), read by rules and sounds in the next.
struct RockBroken {
  glm::vec2 pos;
  std::int32_t size;
  std::int32_t points;  // 0 when the ship rammed it
  std::uint32_t seed;   // for the pieces' directions
};
struct ShipHit {
  Entity ship;
};
struct ShotFired {
  glm::vec2 pos;
};

struct Game {
  std::int32_t score = 0;
  std::int32_t lives = 0;
  std::int32_t wave = 0;
  std::int32_t rocks_left = 0;   // rocks of this wave not yet destroyed (pieces count)
  std::uint64_t scene_tick = 0;  // the step the scene began
  // Totals over the whole run: what the scripted run checks.
  std::int32_t games = 0;
  std::int32_t games_over = 0;
  std::int32_t rocks_shot = 0;
  std::int32_t rocks_split = 0;
  std::int32_t lives_lost = 0;
  std::int32_t best_score = 0;
  std::int32_t shots = 0;
};
// Its fields, not its bytes (it has tail padding): with this the world hash covers the score,
// lives and wave, so a replay that diverged only there is caught.
std::uint64_t spindle_hash(const Game& g) {
  core::Hasher h;
  for (const std::int64_t v :
       {std::int64_t{g.score}, std::int64_t{g.lives}, std::int64_t{g.wave},
        std::int64_t{g.rocks_left}, static_cast<std::int64_t>(g.scene_tick), std::int64_t{g.games},
        std::int64_t{g.games_over}, std::int64_t{g.rocks_shot}, std::int64_t{g.rocks_split},
        std::int64_t{g.lives_lost}, std::int64_t{g.best_score}, std::int64_t{g.shots}})
    h.add(static_cast<std::uint64_t>(v));
  return h.value();
}

// The game's input actions, declared once at start-up; systems capture the ids.
struct Controls {
  core::ActionId left, right, thrust, fire, confirm, quit;
};

// Meshes, materials and sounds, made at start-up; the per-frame code only reads the ids.
struct Art {
  render::MeshId ship_mesh = 0, rock_mesh = 0, bullet_mesh = 0;
  render::MaterialId ship_paint = 0, bullet_paint = 0, rock_paint[4] = {};
  audio::SoundId shot = 0, boom = 0, thrust = 0;
};

// --- helpers ---------------------------------------------------------------------------------

glm::vec2 wrap(glm::vec2 p) {
  return {p.x - kFieldW * std::floor(p.x / kFieldW), p.y - kFieldH * std::floor(p.y / kFieldH)};
}
glm::vec3 on_field(glm::vec2 p) {
  return {p.x, 0.0f, p.y};
}
// A rotation by `heading` (field radians, y down the screen) about the world's up axis.
glm::quat facing(float heading) {
  return glm::angleAxis(-heading, glm::vec3(0.0f, 1.0f, 0.0f));
}

// A deterministic pseudo-random number in [0, 1) from a seed: the same in every mode.
float hash01(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return static_cast<float>(x & 0xffffff) / static_cast<float>(0x1000000);
}

// Every rock, wherever it comes from (a wave, a split, the title's decoration), is made here.
void spawn_rock(core::CommandBuffer& cmd, const Art& art, glm::vec2 pos, std::int32_t size,
                std::uint32_t seed) {
  const float angle = hash01(seed) * 2.0f * kPi;
  const float speed = 5.0f + (4.0f - static_cast<float>(size)) * 4.0f * (0.5f + hash01(seed + 1));
  const float radius = kRockRadius[size];
  const Rock rock{size, (hash01(seed + 2) - 0.5f) * 3.0f, hash01(seed + 3) * 2.0f * kPi};
  cmd.spawn(Body{pos, speed * glm::vec2(std::cos(angle), std::sin(angle)), radius}, rock,
            core::Transform::from(on_field(pos), glm::quat(1, 0, 0, 0), glm::vec3(radius)),
            core::WorldTransform{},
            render::MeshInstance{.mesh = art.rock_mesh, .material = art.rock_paint[size]});
}

// A wave: big rocks on a ring around the centre, clear of a ship starting there.
std::int32_t spawn_wave(core::CommandBuffer& cmd, const Art& art, std::int32_t wave,
                        std::uint32_t seed) {
  const std::int32_t count = 3 + wave;
  for (std::int32_t i = 0; i < count; ++i) {
    const float a =
        (static_cast<float>(i) + hash01(seed + 17 * i)) * 2.0f * kPi / static_cast<float>(count);
    const glm::vec2 at = glm::vec2(kFieldW, kFieldH) * 0.5f +
                         glm::vec2(std::cos(a) * kFieldW * 0.4f, std::sin(a) * kFieldH * 0.4f);
    spawn_rock(cmd, art, wrap(at), 3, seed * 131 + static_cast<std::uint32_t>(i) * 7);
  }
  return count;
}

void spawn_ship(core::CommandBuffer& cmd, const Art& art) {
  const glm::vec2 centre = glm::vec2(kFieldW, kFieldH) * 0.5f;
  const Ship ship{};
  cmd.spawn(Body{centre, glm::vec2(0.0f), 2.0f}, ship,
            core::Transform::from(on_field(centre), facing(ship.heading)), core::WorldTransform{},
            render::MeshInstance{.mesh = art.ship_mesh, .material = art.ship_paint},
            audio::AudioEmitter{.sound = art.thrust,
                                .volume = 0.35f,
                                .playing = false,
                                .model = audio::Attenuation::None});
}

// Scene setups run between frames: they record into the main thread's command buffer and apply
// it at once, so the scene's first step already sees its entities.
template <class F>
void setup_now(core::Engine& engine, F&& fill) {
  fill(engine.world().commands().local(engine.jobs()));
  engine.world().apply_commands();
}

// --- generated sounds ------------------------------------------------------------------------

constexpr std::uint32_t kRate = 48000;

// A mono sound of `seconds`, sample i given by fn(t seconds, noise -1..1).
template <class F>
audio::Sound synth(const char* name, float seconds, F fn) {
  std::vector<float> samples(static_cast<std::size_t>(seconds * kRate));
  std::uint32_t noise = 0x12345678u;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    noise = noise * 1664525u + 1013904223u;
    const float n = static_cast<float>(noise >> 8) / static_cast<float>(1 << 23) - 1.0f;
    samples[i] = fn(static_cast<float>(i) / kRate, n);
  }
  return audio::Sound::create(std::move(samples), 1, kRate, name).value();
}

Art make_art(render::Renderer& r, audio::Mixer& mixer) {
  Art art;
  art.ship_mesh = r.add_mesh(render::make_dart(6.0f)).value();
  art.rock_mesh = r.add_mesh(render::make_sphere(1.0f, 3, 5)).value();  // low-poly
  art.bullet_mesh = r.add_mesh(render::make_cube(0.8f)).value();
  art.ship_paint = r.add_material({.name = "ship",
                                   .color = {0.45f, 0.9f, 1.0f, 1},
                                   .shading = render::Shading::Unlit,
                                   .cull_back = false})
                       .value();
  art.bullet_paint =
      r.add_material(
           {.name = "bullet", .color = {1.0f, 0.9f, 0.3f, 1}, .shading = render::Shading::Unlit})
          .value();
  const glm::vec4 stone[4] = {
      {}, {0.85f, 0.7f, 0.55f, 1}, {0.7f, 0.62f, 0.55f, 1}, {0.6f, 0.56f, 0.52f, 1}};
  for (int size = 1; size <= 3; ++size)
    art.rock_paint[size] =
        r.add_material({.name = "rock", .color = stone[size], .shading = render::Shading::Flat})
            .value();

  // A falling square-ish chirp; filtered noise that decays; a low rumble that loops.
  art.shot = mixer
                 .add_sound(synth(
                     "shot", 0.12f,
                     [](float t, float) {
                       const float phase = 2.0f * kPi * (1400.0f * t - 3500.0f * t * t);
                       return 0.35f * std::exp(-t * 25.0f) * std::tanh(4.0f * std::sin(phase));
                     }))
                 .value();
  float low = 0.0f;
  art.boom = mixer
                 .add_sound(synth("boom", 0.7f,
                                  [&low](float t, float n) {
                                    low += 0.08f * (n - low);
                                    return 2.5f * low * std::exp(-t * 6.0f);
                                  }))
                 .value();
  float rumble = 0.0f;
  art.thrust = mixer
                   .add_sound(synth("thrust", 0.5f,
                                    [&rumble](float, float n) {
                                      rumble += 0.03f * (n - rumble);
                                      return 3.0f * rumble;
                                    }))
                   .value();
  return art;
}

// --- the game --------------------------------------------------------------------------------

Controls declare_controls(core::Engine& engine) {
  core::Input& input = core::use_input(engine);
  // A refused name (empty, declared twice, no room) is logged with the reason; value() stops.
  return Controls{input.add_action("left").value(),    input.add_action("right").value(),
                  input.add_action("thrust").value(),  input.add_action("fire").value(),
                  input.add_action("confirm").value(), input.add_action("quit").value()};
}

// Keys and a controller, in text as a config file would hold them: action, control.
constexpr const char* kBindings[][2] = {{"left", "key:Left"},
                                        {"left", "axis:leftx-"},
                                        {"right", "key:Right"},
                                        {"right", "axis:leftx+"},
                                        {"thrust", "key:Up"},
                                        {"thrust", "button:b"},
                                        {"thrust", "axis:righttrigger+"},
                                        {"fire", "key:Space"},
                                        {"fire", "button:a"},
                                        {"confirm", "key:Return"},
                                        {"confirm", "button:start"},
                                        {"quit", "key:Escape"},
                                        {"quit", "button:back"}};

core::Status bind_controls(platform::Devices& devices, const core::Input& input) {
  for (const auto& [action, control] : kBindings)
    if (core::Status s = devices.bind(input.find_action(action), control); !s) return s;
  return {};
}

void build_game(core::Engine& engine, const Controls& controls, const Art& art,
                audio::Mixer& mixer) {
  core::World& world = engine.world();
  world.register_component<Body>("body");
  world.register_component<Ship>("ship");
  world.register_component<Rock>("rock");
  world.register_component<Bullet>("bullet");
  world.events<RockBroken>();
  world.events<ShipHit>();
  world.events<ShotFired>();
  world.set_resource<Game>();

  // Scenes and quitting, before the step's game logic.
  engine.add_stage({.name = "flow",
                    .phase = core::Phase::Input,
                    .access = core::Access{}.read<Game>(),
                    .run = [controls](StageContext& ctx) {
                      const core::Input& in = *ctx.world().resource<core::Input>();
                      const Game& game = *ctx.world().resource<Game>();
                      core::Engine& e = ctx.engine();
                      if (in.pressed(controls.quit)) e.request_quit();
                      if (!in.pressed(controls.confirm)) return;
                      if (e.scene() == "title") e.switch_scene("play");
                      if (e.scene() == "over" && ctx.tick() >= game.scene_tick + kOverWait)
                        e.switch_scene("title");
                    }});

  // The pilot's controls; the thrust sound plays while the engine burns.
  engine.add_system<Ship, Body, audio::AudioEmitter>(
      "steer", [controls, art](StageContext& ctx, Entity, Ship& ship, Body& body,
                               audio::AudioEmitter& engine_sound) {
        const core::Input& in = *ctx.world().resource<core::Input>();
        const float dt = ctx.dt();
        ship.heading += 4.0f * dt * in.axis(controls.right, controls.left);
        const glm::vec2 ahead(std::cos(ship.heading), std::sin(ship.heading));
        const bool thrust = in.held(controls.thrust);
        if (thrust) body.vel += 60.0f * dt * ahead;
        body.vel *= 0.99f;
        if (glm::length(body.vel) > 70.0f) body.vel = glm::normalize(body.vel) * 70.0f;
        engine_sound.playing = thrust;
        ship.cooldown -= dt;
        ship.invulnerable -= dt;
        if (in.held(controls.fire) && ship.cooldown <= 0.0f) {
          ship.cooldown = 0.2f;
          const glm::vec2 muzzle = wrap(body.pos + ahead * 3.0f);
          ctx.commands().spawn(
              Body{muzzle, body.vel + 100.0f * ahead, 0.6f}, Bullet{},
              core::Transform::from(on_field(muzzle)), core::WorldTransform{},
              render::MeshInstance{.mesh = art.bullet_mesh, .material = art.bullet_paint});
          ctx.commands().emit(ShotFired{muzzle});
        }
      });

  engine.add_system<Bullet>("bullet_life", [](StageContext& ctx, Entity e, Bullet& b) {
    b.life -= ctx.dt();
    if (b.life <= 0.0f) ctx.commands().destroy(e);
  });

  // Reactions to the last step's collisions: score, pieces, lives, the next wave, game over.
  engine.add_stage(
      {.name = "rules",
       .phase = core::Phase::Gameplay,
       .access = core::Access{}.write<Ship, Body, Game>(),
       .after = {"steer"},
       .run = [art](StageContext& ctx) {
         core::World& w = ctx.world();
         if (ctx.engine().scene() != "play") return;  // a scene's last events reach the next
         Game& game = *w.resource<Game>();
         core::CommandBuffer& cmd = ctx.commands();
         game.shots += static_cast<std::int32_t>(w.read_events<ShotFired>().size());
         for (const RockBroken& hit : w.read_events<RockBroken>()) {
           game.score += hit.points;
           game.rocks_shot += hit.points > 0 ? 1 : 0;
           --game.rocks_left;
           if (hit.size > 1) {
             ++game.rocks_split;
             game.rocks_left += 2;
             for (std::uint32_t k = 0; k < 2; ++k)
               spawn_rock(cmd, art, hit.pos, hit.size - 1, hit.seed * 2 + k);
           }
         }
         game.best_score = std::max(game.best_score, game.score);
         for (const ShipHit& hit : w.read_events<ShipHit>()) {
           Ship* ship = w.get<Ship>(hit.ship);
           Body* body = w.get<Body>(hit.ship);
           if (ship == nullptr || body == nullptr || ship->invulnerable > 0.0f) continue;
           ++game.lives_lost;
           if (--game.lives <= 0) {
             ctx.engine().switch_scene("over");
             return;
           }
           *ship = Ship{};  // back in the middle, safe for a while
           *body = Body{glm::vec2(kFieldW, kFieldH) * 0.5f, glm::vec2(0.0f), body->radius};
         }
         if (game.rocks_left <= 0) {
           ++game.wave;
           game.rocks_left =
               spawn_wave(cmd, art, game.wave, static_cast<std::uint32_t>(ctx.tick()));
         }
       }});

  // One-shot sounds for last step's shots and explosions, panned by where they happened.
  engine.add_stage({.name = "sounds",
                    .phase = core::Phase::Gameplay,
                    .access = core::Access{}.write<audio::AudioAccess>(),
                    .run = [art, mixer = &mixer](StageContext& ctx) {
                      core::World& w = ctx.world();
                      const auto pan = [](glm::vec2 p) {
                        return 0.7f * (2.0f * p.x / kFieldW - 1.0f);
                      };
                      for (const ShotFired& s : w.read_events<ShotFired>())
                        mixer->play(art.shot, {.volume = 0.5f, .pan = pan(s.pos)});
                      for (const RockBroken& b : w.read_events<RockBroken>())
                        mixer->play(art.boom, {.volume = 0.25f * static_cast<float>(b.size + 1),
                                               .pan = pan(b.pos),
                                               .pitch = 1.6f - 0.25f * static_cast<float>(b.size)});
                      if (!w.read_events<ShipHit>().empty())
                        mixer->play(art.boom, {.volume = 1.0f, .pitch = 0.5f, .priority = 1});
                    }});

  // Everything moves and wraps around the field; in parallel over all bodies.
  engine.add_system<Body>(
      "move",
      [](StageContext& ctx, Entity, Body& body) {
        body.pos = wrap(body.pos + body.vel * ctx.dt());
      },
      kMotionPhase);

  // Every rock against the bullets and the ship, in parallel over the rocks. A rock breaks at
  // most once a step; a bullet that touches two rocks at once breaks both.
  engine.add_stage(
      {.name = "collide",
       .phase = kMotionPhase,
       .access = core::Access{}.read<Body, Rock, Bullet, Ship>(),
       .after = {"move"},
       .run = [](StageContext& ctx) {
         core::World& w = ctx.world();
         const auto rocks = w.query<const Rock, const Body>();
         const auto bullets = w.query<const Bullet, const Body>();
         const auto ships = w.query<const Ship, const Body>();
         const auto touch = [](const Body& a, const Body& b) {
           const glm::vec2 d = a.pos - b.pos;
           return glm::dot(d, d) < (a.radius + b.radius) * (a.radius + b.radius);
         };
         ctx.parallel_for(rocks.size(), [&](std::uint32_t begin, std::uint32_t end) {
           rocks.each_range(begin, end, [&](Entity rock, const Rock& r, const Body& rb) {
             core::CommandBuffer& cmd = ctx.commands();
             const std::uint32_t seed = rock.index * 977u + static_cast<std::uint32_t>(ctx.tick());
             bool broken = false;
             bullets.each([&](Entity bullet, const Bullet&, const Body& bb) {
               if (broken || !touch(rb, bb)) return;
               broken = true;
               cmd.destroy(bullet);
               cmd.destroy(rock);
               cmd.emit(RockBroken{rb.pos, r.size, kRockPoints[r.size], seed});
             });
             ships.each([&](Entity ship, const Ship& s, const Body& sb) {
               if (broken || s.invulnerable > 0.0f || !touch(rb, sb)) return;
               broken = true;
               cmd.destroy(rock);
               cmd.emit(RockBroken{rb.pos, r.size, 0, seed});
               cmd.emit(ShipHit{ship});
             });
           });
         });
       }});

  // Bodies to transforms for the renderer and audio: position, the ship's heading (blinking
  // while it cannot be hit), the rocks' tumbling.
  engine.add_system<const Body, core::Transform>(
      "place",
      [](StageContext&, Entity, const Body& body, core::Transform& t) {
        t.set_translation(on_field(body.pos));
      },
      kMotionPhase, {"move"});
  engine.add_system<const Ship, core::Transform, render::MeshInstance>(
      "aim",
      [](StageContext& ctx, Entity, const Ship& ship, core::Transform& t,
         render::MeshInstance& mesh) {
        t.set_rotation(facing(ship.heading));
        mesh.visible = ship.invulnerable <= 0.0f || (ctx.tick() / 6) % 2 == 0;
      },
      kMotionPhase, {"place"});
  engine.add_system<Rock, core::Transform>(
      "tumble",
      [](StageContext& ctx, Entity, Rock& rock, core::Transform& t) {
        rock.angle += rock.spin * ctx.dt();
        const glm::vec3 axis = glm::normalize(glm::vec3(1.0f, rock.spin, 0.5f));
        t.set_rotation(glm::angleAxis(rock.angle, axis));
      },
      kMotionPhase, {"collide", "aim"});

  // Scenes: switching destroys every entity but the Persistent ones, then runs the setup.
  const auto drifting_rocks = [art](core::Engine& e) {
    setup_now(e, [&](core::CommandBuffer& cmd) {
      for (std::uint32_t i = 0; i < 5; ++i)
        spawn_rock(cmd, art, glm::vec2(hash01(i * 3 + 50) * kFieldW, hash01(i * 3 + 51) * kFieldH),
                   3 - static_cast<std::int32_t>(i % 3), i + 1000);
    });
  };
  engine.add_scene("title", [drifting_rocks](core::Engine& e) {
    e.world().resource<Game>()->scene_tick = e.tick();
    drifting_rocks(e);
  });
  engine.add_scene("play", [art](core::Engine& e) {
    Game& game = *e.world().resource<Game>();
    game.score = 0;
    game.lives = kLives;
    game.wave = 1;
    game.scene_tick = e.tick();
    ++game.games;
    setup_now(e, [&](core::CommandBuffer& cmd) {
      spawn_ship(cmd, art);
      game.rocks_left = spawn_wave(cmd, art, game.wave, static_cast<std::uint32_t>(e.tick()));
    });
  });
  engine.add_scene("over", [drifting_rocks](core::Engine& e) {
    Game& game = *e.world().resource<Game>();
    game.scene_tick = e.tick();
    ++game.games_over;
    drifting_rocks(e);
  });
  engine.switch_scene("title");
}

// --- what the player sees besides the meshes: stars, score, lives, the scenes' words ---------

void text_centred(render::DebugDraw& dd, int width, float y, const char* s, std::uint32_t colour,
                  int scale) {
  const int w = static_cast<int>(std::strlen(s)) * render::kFontAdvance * scale;
  dd.text(glm::vec2(static_cast<float>((width - w) / 2), y), s, colour, scale);
}

void draw_hud(const std::string& scene, const Game& game, render::Renderer& r) {
  render::DebugDraw& dd = r.debug();
  const int width = r.config().width;
  const int height = r.config().height;
  for (std::uint32_t i = 0; i < 70; ++i) {
    const glm::vec2 at(std::floor(hash01(i * 2 + 7) * static_cast<float>(width)),
                       std::floor(hash01(i * 2 + 8) * static_cast<float>(height)));
    const std::uint32_t v = 80 + static_cast<std::uint32_t>(hash01(i + 300) * 120.0f);
    dd.screen_rect(at, at + glm::vec2(1.0f), render::rgba(v, v, std::min(v + 30, 255u)), true);
  }
  const std::uint32_t white = render::rgba(240, 240, 240);
  const std::uint32_t gold = render::rgba(255, 210, 90);
  char line[64];
  if (scene == "title") {
    text_centred(dd, width, 70, "ASTEROIDS", gold, 4);
    text_centred(dd, width, 140, "PRESS ENTER OR START", white, 2);
    text_centred(dd, width, 180, "LEFT/RIGHT TURN   UP THRUST   SPACE FIRE   ESC QUIT", white, 1);
  } else if (scene == "play") {
    std::snprintf(line, sizeof line, "SCORE %d", game.score);
    dd.text(glm::vec2(8, 8), line, white, 2);
    std::snprintf(line, sizeof line, "LIVES %d", game.lives);
    dd.text(glm::vec2(static_cast<float>(width - 8 - 7 * render::kFontAdvance * 2), 8), line, white,
            2);
    std::snprintf(line, sizeof line, "WAVE %d", game.wave);
    text_centred(dd, width, 10, line, gold, 1);
  } else if (scene == "over") {
    text_centred(dd, width, 80, "GAME OVER", gold, 4);
    std::snprintf(line, sizeof line, "SCORE %d   BEST %d", game.score, game.best_score);
    text_centred(dd, width, 140, line, white, 2);
    text_centred(dd, width, 180, "PRESS ENTER OR START", white, 1);
  }
}

// --- the scripted pilot: a game played blind, the same every run ----------------------------

core::ScriptedInput make_pilot(const Controls& c, std::uint64_t frames) {
  core::ScriptedInput pilot;
  pilot.hold(c.confirm, 10, 11);  // title -> play
  // Turn a little, then fire a burst, again and again; then fly about until the rocks win (the
  // script was tuned against this game, which plays the same in every run).
  std::uint64_t f = 30;
  for (; f < 240; f += 45) {
    pilot.hold(c.left, f, f + 9);
    pilot.hold(c.fire, f + 10, f + 40);
    pilot.hold(c.thrust, f + 38, f + 42);
  }
  for (; f + 45 < frames; f += 45) {
    pilot.hold(c.thrust, f, f + 30);
    pilot.hold(c.right, f + 31, f + 39);
  }
  // Over -> title -> play, so a run of 900 frames ends in a fresh game (the golden image).
  for (std::uint64_t at = 600; at + 20 < frames; at += 20) pilot.hold(c.confirm, at, at + 1);
  return pilot;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t frames = 0;  // 0: until quit, played by a person
  bool headless = false;
  samples::ReplayArgs replay_args;
  argc = samples::take_replay_args(argc, argv, replay_args);
  samples::GoldenArgs golden;
  argc = samples::take_golden_args(argc, argv, golden);
  // This sample's own flags; the rest are every sample's.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--frames") == 0 && has_value) {
      frames = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--headless") == 0) {
      headless = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  samples::SampleArgs args;
  if (!samples::parse_sample_args(kept, argv, args)) return 2;
  const bool pilot_plays = frames > 0 && replay_args.replay.empty();
  if (pilot_plays && frames < 900) {
    std::fprintf(stderr, "asteroids: --frames must be at least 900 for the pilot's script\n");
    return 2;
  }

  core::Engine engine(core::EngineConfig{.mode = args.mode, .workers = args.workers});
  // The picture is drawn at 480 x 270 and stretched to the window. Headless, nothing is shown:
  // a window of the picture's size spares SDL's software stretch (most of a frame's time there).
  constexpr int kWidth = 480, kHeight = 270;
  auto opened = platform::Window::open({.title = "Spindle asteroids",
                                        .width = headless ? kWidth : 2 * kWidth,
                                        .height = headless ? kHeight : 2 * kHeight,
                                        .vsync = frames == 0,
                                        .driver = headless ? "dummy" : ""});
  if (!opened) {
    std::fprintf(stderr, "asteroids: %s\n", opened.status().c_str());
    return 1;
  }
  std::unique_ptr<platform::Window> window = std::move(opened).value();
  auto devices = platform::Devices::open().value();
  const Controls controls = declare_controls(engine);
  if (core::Status s = bind_controls(*devices, *engine.world().resource<core::Input>()); !s) {
    std::fprintf(stderr, "asteroids: %s\n", s.c_str());
    return 1;
  }

  engine.add_plugin<core::TransformPlugin>();
  render::Renderer& r =
      engine
          .add_plugin<render::RenderPlugin>(render::RenderPluginConfig{
              .renderer = {.width = kWidth,
                           .height = kHeight,
                           .max_draws = 1024,
                           .clear_color = {0.02f, 0.02f, 0.06f, 1.0f}},
              .submit =
                  [](StageContext& ctx, render::Renderer& renderer) {
                    draw_hud(ctx.engine().scene(), *ctx.world().resource<Game>(), renderer);
                  },
              .submit_access = core::Access{}.read<Game>()})
          .renderer();
  // Straight down on the field from far away with a narrow lens: nearly flat, as the arcade was.
  const float fov = 0.35f;
  const float distance = 0.5f * kFieldH / std::tan(0.5f * fov);
  const glm::vec3 centre = on_field(glm::vec2(kFieldW, kFieldH) * 0.5f);
  r.set_camera({.position = centre + glm::vec3(0, distance, 0),
                .target = centre,
                .up = {0, 0, -1},
                .fov_y_radians = fov,
                .aspect = static_cast<float>(kWidth) / kHeight,
                .near_plane = distance * 0.5f,
                .far_plane = distance * 1.5f});
  r.lights().ambient = glm::vec3(0.35f);
  r.lights().directional = {.direction = {0.3f, 1.0f, -0.5f}, .color = glm::vec3(0.9f)};

  // Silent when headless, so tests never need a sound card; a failing device falls back to it.
  auto& sound = engine.add_plugin<audio::AudioPlugin>(
      audio::AudioPluginConfig{.mixer = {.max_voices = 64, .max_mixed = 32},
                               .output = headless ? audio::Output::Null : audio::Output::Sdl});
  const Art art = make_art(r, sound.mixer());

  // The ears sit with the camera and survive scene switches.
  core::World& world = engine.world();
  const Entity ears = world.create();
  world.add<core::Transform>(ears, core::Transform::from(centre + glm::vec3(0, distance, 0)));
  world.add<core::WorldTransform>(ears);
  world.add<audio::AudioListener>(ears);
  world.add<core::Persistent>(ears);

  build_game(engine, controls, art, sound.mixer());

  // Who plays: the pilot, a replay, or the person at the keys; a recorder notes what each step
  // saw (kept only with --record).
  devices->attach(engine);  // events are pumped every frame whoever plays
  devices->watch(*window);
  core::ScriptedInput pilot = make_pilot(controls, frames == 0 ? 600 : frames);
  samples::InputSession session;
  if (!session.start(engine, pilot_plays ? static_cast<core::InputSource*>(&pilot) : devices.get(),
                     replay_args, "asteroids"))
    return 2;

  const render::Image& image = r.image();
  const platform::RunStats stats =
      platform::run(engine, window.get(), image,
                    {.max_frames = frames,
                     .target_fps = frames == 0 ? 60.0 : 0.0,
                     .fixed_delta_ns = frames == 0 ? 0 : core::kNsPerSecond / 60});

  if (!session.finish("asteroids")) return 1;
  const Game& game = *world.resource<Game>();
  std::printf(
      "asteroids: driver %s, %s mode, scene %s, games %d (%d over), score %d (best %d), shots %d, "
      "rocks shot %d, split %d, lives lost %d, %u entities\n",
      window->driver(), jobs::to_string(engine.mode()), engine.scene().c_str(), game.games,
      game.games_over, game.score, game.best_score, game.shots, game.rocks_shot, game.rocks_split,
      game.lives_lost, world.entity_count());
  bool ok = stats.frames > 0 && samples::check_golden(image, golden, "asteroids");
  // The outcome the pilot's script is built to reach.
  if (pilot_plays) {
    const struct {
      bool met;
      const char* what;
    } checks[] = {{game.games >= 1, "started a game from the title"},
                  {game.rocks_shot >= 3 && game.best_score > 0, "shot rocks and scored"},
                  {game.rocks_split >= 1, "split a rock"},
                  {game.lives_lost >= kLives && game.games_over >= 1, "lost its lives: game over"}};
    for (const auto& c : checks) {
      if (!c.met) {
        std::fprintf(stderr, "asteroids: the scripted pilot should have %s\n", c.what);
        ok = false;
      }
    }
  }
  std::printf("frames=%llu median_ms=%.3f p99_ms=%.3f hash=%016llx\n",
              static_cast<unsigned long long>(stats.frames), stats.median_ms, stats.p99_ms,
              static_cast<unsigned long long>(world.state_hash()));
  return ok ? 0 : 1;
}
