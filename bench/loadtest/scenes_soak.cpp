// soak  the other scenes in one world, as a game mixes them: `crowd` (skinned characters),
//       `boids`, `spawn` (Bullet bodies created and destroyed every step), `orchestra` (looping
//       3D voices and streamed music), all drawn by one renderer and mixed by one mixer, plus
//       sparks: short-lived entities with a sound each, spawned every step, more while the
//       `burst` action is held (the soak program replays a recording of it). N objects split
//       N/40 characters, N/2 boids, N/4 bodies and N/10 voices.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <spindle/audio/audio_plugin.h>
#include <spindle/gameplay/input.h>
#include <spindle/gameplay/transform.h>
#include <spindle/render/mesh.h>
#include <spindle/render/render_plugin.h>
#include <glm/gtc/matrix_transform.hpp>

#include "scene_common.h"

namespace spindle::loadtest {

namespace {

// A spark lives kSparkSteps steps: it rises, falls and fades, then is destroyed.
constexpr std::uint32_t kSparkSteps = 90;
constexpr std::uint32_t kSparksPerStep = 2;
constexpr std::uint32_t kBurstSparksPerStep = 10;

struct Spark {
  std::uint64_t born = 0;  // tick
  glm::vec3 position{0.0f};
  glm::vec3 velocity{0.0f};
};

struct SoakState {
  std::uint64_t seed = 1;
  std::uint64_t next_serial = 0;
  core::ActionId burst;
  render::MeshInstance look{};
  audio::SoundId impact = 0;
};

struct Split {
  std::uint32_t crowd, boids, spawn, orchestra;
};
Split split(std::uint32_t n) {
  return {std::clamp(n / 40, 10u, 5000u), std::max(1u, n / 2), std::max(1u, n / 4),
          std::clamp(n / 10, 1u, 20'000u)};
}

// The part scene's parameters at their defaults, with this run's size, seed and --draw.
SceneParams part(const SceneDef& def, const SceneParams& p, std::uint32_t objects,
                 std::uint32_t extra_draws) {
  SceneParams q = p;
  q.objects = objects;
  q.params = def.params;
  for (SceneParam& param : q.params)
    if (param.name == "draw") param.value = p.param("draw");
  q.extra_draws = extra_draws;
  return q;
}

void setup_soak(core::Engine& engine, const SceneParams& p) {
  const Split n = split(p.objects);
  core::World& w = engine.world();
  // The audio first, with room for the orchestra's voices, the sparks', the impacts' and the
  // music stream: the parts' own add_scene_audio() calls then return it.
  add_scene_audio(engine, p, glm::vec3(0.0f), 4,
                  {.max_voices = n.orchestra + 64 + kSparkSteps * kBurstSparksPerStep,
                   .max_mixed = n.orchestra + 64,
                   .block_frames = 1024,
                   .max_streams = 2});
  // The crowd next: its renderer (the one with the characters' submit) is the scene's, with room
  // for everyone's draws.
  const std::uint32_t others =
      n.boids + 2 * n.spawn + 64 + n.orchestra + 16 + kSparkSteps * kBurstSparksPerStep;
  for (const auto& [name, objects] : {std::pair{"crowd", n.crowd},
                                      {"boids", n.boids},
                                      {"spawn", n.spawn},
                                      {"orchestra", n.orchestra}}) {
    const SceneDef* def = find_scene(name);
    SPINDLE_ASSERTF(def != nullptr, "the soak scene needs scene '%s'", name);
    def->setup(engine, part(*def, p, objects, others));
  }
  // The boids and the bodies both write transforms (of different entities) in one phase; their
  // scenes do not know each other, so the soak declares the order registration gave them.
  for (const char* physics : {"physics_sync", "physics_writeback"}) {
    const bool known = engine.run_after(physics, "integrate");
    SPINDLE_ASSERTF(known, "the soak scene orders stage '%s', which the spawn scene no longer has",
                    physics);
  }

  w.register_component<Spark>("spark");
  render::Renderer& r = *w.resource<SceneRendering>()->renderer;
  SoakState& s = w.set_resource<SoakState>();
  s.seed = p.seed;
  s.burst = core::use_input(engine).add_action("burst").value();
  s.look = {.mesh = r.add_mesh(render::make_cube(0.3f)).value(), .material = add_palette(r, 1)[0]};
  s.impact = w.resource<SceneAudio>()->impact;

  engine.add_stage(
      {.name = "spark_spawner",
       .phase = core::Phase::Gameplay,
       .access = core::Access{}.write<SoakState>().read<core::Input>(),
       .run = [](core::StageContext& ctx) {
         SoakState& st = *ctx.world().resource<SoakState>();
         const core::Input& input = *ctx.world().resource<core::Input>();
         const std::uint32_t count =
             kSparksPerStep + (input.held(st.burst) ? kBurstSparksPerStep : 0);
         for (std::uint32_t k = 0; k < count; ++k) {
           const std::uint64_t i = st.next_serial++;
           const float angle = 6.2831853f * scene_unit(st.seed, i, 20);
           const glm::vec3 at(8.0f * std::cos(angle), 0.5f, 8.0f * std::sin(angle));
           const Spark spark{.born = ctx.tick(),
                             .position = at,
                             .velocity = {2.0f * (scene_unit(st.seed, i, 21) - 0.5f),
                                          6.0f + 4.0f * scene_unit(st.seed, i, 22),
                                          2.0f * (scene_unit(st.seed, i, 23) - 0.5f)}};
           ctx.commands().spawn(
               spark, core::WorldTransform{.matrix = glm::translate(glm::mat4(1.0f), at)}, st.look,
               audio::AudioEmitter{.sound = st.impact,
                                   .volume = 0.3f,
                                   .pitch = 0.7f + 0.6f * scene_unit(st.seed, i, 24),
                                   .loop = false});
         }
       }});
  engine.add_system<Spark, core::WorldTransform>(
      "sparks",
      [](core::StageContext& ctx, core::Entity e, Spark& spark, core::WorldTransform& t) {
        if (ctx.tick() >= spark.born + kSparkSteps) {
          ctx.commands().destroy(e);
          return;
        }
        spark.velocity.y -= 9.81f * ctx.dt();
        spark.position += spark.velocity * ctx.dt();
        t.matrix = glm::translate(glm::mat4(1.0f), spark.position);
      },
      // After the orchestra's orbits, which also write transforms.
      core::Phase::Gameplay, {"spark_spawner", "orbit"});
}

}  // namespace

void register_soak_scene() {
  SceneDef def{.name = "soak",
               .description =
                   "crowd, boids, spawn and orchestra in one world, plus sparks with "
                   "sounds spawned every step (the soak program's scene)",
               .objects = {100, 100'000},
               .setup = setup_soak};
  // Bodies and sparks come and go; the entity table holds every part's at once.
  def.capacity = [](std::uint32_t objects) { return 2 * objects + 16'384; };
  def.default_objects = {1000, 2000, 5000};
  register_scene(std::move(def));
}

}  // namespace spindle::loadtest
