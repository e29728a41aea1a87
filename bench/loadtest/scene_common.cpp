#include "scene_common.h"

#include <array>
#include <cmath>
#include <numbers>

#include <spindle/gameplay/transform.h>
#include <spindle/physics/events.h>
#include <spindle/physics/plugin.h>
#include <glm/gtc/matrix_transform.hpp>

#include <cmath>
#include <utility>
#include <vector>

#include <spindle/base/hash.h>
#include <spindle/base/result.h>

namespace spindle::loadtest {

float scene_unit(std::uint64_t seed, std::uint64_t index, std::uint64_t salt) {
  const auto mix = [](std::uint64_t z) { return core::mix64(z + 0x9e3779b97f4a7c15ull); };
  return static_cast<float>(mix(seed ^ mix(index * 8 + salt)) >> 40) / static_cast<float>(1 << 24);
}

SceneCounts& scene_counts(core::Engine& engine) {
  if (SceneCounts* c = engine.world().resource<SceneCounts>()) return *c;
  return engine.world().set_resource<SceneCounts>();
}

bool has_param(const SceneParams& p, std::string_view name) {
  return std::any_of(p.params.begin(), p.params.end(),
                     [name](const SceneParam& q) { return q.name == name; });
}

render::Camera overview_camera(float side, float height, float distance) {
  render::Camera c;
  c.position = glm::vec3(0.0f, side * height, side * distance);
  c.target = glm::vec3(0.0f);
  c.up = glm::vec3(0, 1, 0);
  c.fov_y_radians = 1.0f;
  c.aspect = 16.0f / 9.0f;
  c.near_plane = 0.1f;
  c.far_plane = side * 3.0f;
  return c;
}

void use_transforms(core::Engine& engine) {
  if (engine.find_plugin("transforms") == nullptr) engine.add_plugin<core::TransformPlugin>();
}

render::Renderer& add_scene_renderer(
    core::Engine& engine, const SceneParams& p, render::Camera camera, std::uint32_t max_draws,
    std::function<void(core::StageContext&, render::Renderer&)> submit, core::Access submit_reads,
    core::Access geometry_reads) {
  if (const SceneRendering* existing = engine.world().resource<SceneRendering>())
    return *existing->renderer;
  render::RenderPluginConfig config;
  config.renderer.width = static_cast<int>(p.width);
  config.renderer.height = static_cast<int>(p.height);
  config.renderer.max_draws = std::max(max_draws, 16u) + p.extra_draws;
  config.submit = std::move(submit);
  config.submit_access = std::move(submit_reads);
  config.geometry_access = std::move(geometry_reads);
  if (has_param(p, "points") && p.param("points") != 0) config.renderer.point_pixels = kPointPixels;
  SceneRendering rendering;
  if (p.param("draw") != 0) {
    rendering.renderer = &engine.add_plugin<render::RenderPlugin>(std::move(config)).renderer();
  } else {
    // Not in the frame: the scene's setup still adds its meshes and materials to it.
    rendering.detached = std::make_shared<render::Renderer>(config.renderer);
    rendering.renderer = rendering.detached.get();
    rendering.drawn = false;
  }
  render::Renderer& r = *rendering.renderer;
  camera.aspect = static_cast<float>(p.width) / static_cast<float>(p.height);
  r.set_camera(camera);
  r.lights().ambient = glm::vec3(0.2f);
  r.lights().directional = {.direction = {0.3f, 0.8f, 0.5f}, .color = glm::vec3(0.8f)};
  engine.world().set_resource<SceneRendering>(std::move(rendering));
  if (engine.world().resource<SceneAudio>() == nullptr)
    add_scene_audio(engine, p, camera.position, 4);
  return r;
}

namespace {

// Deterministic noise in [-1, 1).
float noise(std::uint64_t i) {
  return 2.0f * scene_unit(0x5eed, i, 7) - 1.0f;
}

audio::Sound scene_tone() {
  constexpr std::uint32_t kRate = 44100;
  std::vector<float> s(kRate);
  for (std::uint32_t i = 0; i < kRate; ++i) {
    const double t = static_cast<double>(i) / kRate;
    s[i] = static_cast<float>(0.4 * std::sin(2 * std::numbers::pi * 220 * t) +
                              0.2 * std::sin(2 * std::numbers::pi * 331 * t)) +
           0.02f * noise(i);
  }
  return audio::Sound::create(std::move(s), 1, kRate, "loadtest tone").value();
}

audio::Sound scene_impact() {
  constexpr std::uint32_t kRate = 22050, kFrames = kRate / 5;
  std::vector<float> s(kFrames);
  for (std::uint32_t i = 0; i < kFrames; ++i)
    s[i] = 0.8f * noise(i + 1'000'000) * std::exp(-static_cast<float>(i) / (kRate * 0.03f));
  return audio::Sound::create(std::move(s), 1, kRate, "loadtest impact").value();
}

}  // namespace

SceneAudio& add_scene_audio(core::Engine& engine, const SceneParams& p, glm::vec3 ears,
                            std::uint32_t ambient, audio::MixerConfig mixer) {
  if (SceneAudio* existing = engine.world().resource<SceneAudio>()) return *existing;
  audio::AudioPluginConfig config;
  config.output = audio::Output::None;
  config.mixer = mixer;
  audio::AudioPlugin& plugin = engine.add_plugin<audio::AudioPlugin>(std::move(config));
  SceneAudio a{.plugin = &plugin};
  a.tone = plugin.mixer().add_sound(scene_tone()).value();
  a.impact = plugin.mixer().add_sound(scene_impact()).value();
  core::World& w = engine.world();
  auto place = [&w](core::Entity e, glm::vec3 at) {
    w.add<core::WorldTransform>(e,
                                core::WorldTransform{.matrix = glm::translate(glm::mat4(1), at)});
  };
  const core::Entity listener = w.create();
  place(listener, ears);
  w.add<audio::AudioListener>(listener, audio::AudioListener{});
  for (std::uint32_t i = 0; i < ambient; ++i) {
    const core::Entity e = w.create();
    const float angle = 2.39996f * static_cast<float>(i);
    place(e, ears + glm::vec3(4.0f * std::cos(angle), 0.0f, 4.0f * std::sin(angle)));
    w.add<audio::AudioEmitter>(
        e, audio::AudioEmitter{.sound = a.tone,
                               .volume = 0.2f,
                               .pitch = 0.8f + 0.4f * scene_unit(p.seed, i, 11),
                               .start_frame = static_cast<std::uint64_t>(i) * 4409 % 44100});
  }
  w.set_resource<SceneAudio>(a);
  return *w.resource<SceneAudio>();
}

void add_impact_sounds(core::Engine& engine) {
  engine.add_stage(
      {.name = "impact_sounds",
       .phase = physics::kPhysicsPhase,
       .access =
           core::Access{}.read<physics::CollisionBegan, SceneAudio>().write<audio::AudioAccess>(),
       .after = {"physics_step"},
       .run = [](core::StageContext& ctx) {
         const SceneAudio* a = ctx.world().resource<SceneAudio>();
         if (a == nullptr) return;
         // The strongest hits of this step, in event order among equals.
         struct Hit {
           float impulse;
           glm::vec3 point;
         };
         std::array<Hit, 16> hits{};
         std::uint32_t n = 0;
         for (const physics::CollisionBegan& c :
              ctx.world().read_events<physics::CollisionBegan>()) {
           const Hit h{c.impulse, c.point};
           if (n < hits.size()) {
             hits[n++] = h;
           } else {
             auto weakest =
                 std::min_element(hits.begin(), hits.end(),
                                  [](const Hit& x, const Hit& y) { return x.impulse < y.impulse; });
             if (weakest->impulse < h.impulse) *weakest = h;
           }
         }
         audio::Mixer& m = a->plugin->mixer();
         for (std::uint32_t i = 0; i < n; ++i) {
           m.play(a->impact, {.volume = std::clamp(hits[i].impulse * 0.2f, 0.05f, 1.0f),
                              .priority = 1,
                              .spatial = true,
                              .spatial_params = {.position = hits[i].point, .max_distance = 200},
                              .steal = true});
         }
       }});
}

render::Mesh transformed_mesh(const render::Mesh& mesh, const glm::mat4& to) {
  std::vector<render::Vertex> v(mesh.vertices().begin(), mesh.vertices().end());
  const glm::mat3 normals = glm::transpose(glm::inverse(glm::mat3(to)));
  for (render::Vertex& x : v) {
    x.position = glm::vec3(to * glm::vec4(x.position, 1.0f));
    x.normal = glm::normalize(normals * x.normal);
  }
  core::Result<render::Mesh> m =
      render::Mesh::create({.name = mesh.name(), .vertices = v, .indices = mesh.indices()});
  SPINDLE_ASSERTF(m.ok(), "transformed_mesh: %s", m.status().c_str());
  return std::move(m.value());
}

std::vector<render::MaterialId> add_palette(render::Renderer& r, std::uint32_t count) {
  std::vector<render::MaterialId> ids;
  for (std::uint32_t i = 0; i < count; ++i) {
    // Hues around the wheel at full saturation, softened towards white.
    const float h = 6.0f * static_cast<float>(i) / static_cast<float>(count);
    const auto ch = [h](float offset) {
      const float k = std::fmod(offset + h, 6.0f);
      return 1.0f - std::max(0.0f, std::min({k, 4.0f - k, 1.0f}));
    };
    const glm::vec3 c = 0.35f + 0.65f * glm::vec3(ch(5.0f), ch(3.0f), ch(1.0f));
    ids.push_back(r.add_material({.name = "palette", .color = glm::vec4(c, 1.0f)}).value());
  }
  return ids;
}

}  // namespace spindle::loadtest
