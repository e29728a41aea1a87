// Pieces the load-test scenes share: deterministic per-object randomness, and rendering: a
// RenderPlugin at the harness's resolution (--width/--height) with a scene's camera, meshes and a
// palette of materials, so every scene draws what it simulates through the same render stages.
//
// Usage (in a scene's setup):
//
//   const float x = scene_unit(p.seed, i, 0) * side;               // same value in every mode
//   render::Renderer& r = add_scene_renderer(engine, p, overview_camera(side, 0.6f, 0.9f), n);
//   const render::MeshId dart = r.add_mesh(render::make_dart(1.0f)).value();
//   const auto colours = add_palette(r, 7);
//   world.add<render::MeshInstance>(e, {.mesh = dart, .material = colours[i % 7]});
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <spindle/audio/audio_plugin.h>
#include <spindle/engine/engine.h>
#include <spindle/render/camera.h>
#include <spindle/render/render_plugin.h>

#include "scene.h"

namespace spindle::loadtest {

// A value in [0, 1) fixed by (seed, index, salt).
float scene_unit(std::uint64_t seed, std::uint64_t index, std::uint64_t salt);

// A camera looking down at the origin from (0, height * side, distance * side), seeing a square
// field of side `side`.
render::Camera overview_camera(float side, float height, float distance);

// Adds the TransformPlugin unless the engine has one (a scene set up inside another, `soak`).
void use_transforms(core::Engine& engine);

// The scene's renderer, as a world resource so the harness can read its image (and hash it).
// With --draw 0 the renderer holds the scene's meshes and materials but is not in the frame:
// `drawn` is false, `detached` owns it, and the harness reads no image.
struct SceneRendering {
  render::Renderer* renderer = nullptr;
  bool drawn = true;
  std::shared_ptr<render::Renderer> detached{};
};

// Adds the RenderPlugin (entities with WorldTransform + MeshInstance are drawn; `submit` adds
// draws of things that are not entities; `submit_reads` is what it reads; `geometry_reads` what
// the draws' vertices point into, RenderPluginConfig::geometry_access) at p.width x p.height,
// with `camera` (its aspect set to the image's), a sun and a little ambient light, for up to
// `max_draws` draws a frame. When the engine has a scene renderer already (a scene set up inside
// another), returns that one as it is: its camera, its draws, its submit.
// With `--draw 0` (p.param("draw"), which every scene has) no render stage joins the frame: the
// renderer returned takes the scene's meshes, materials and MeshInstances as usual and never
// draws, so the frame is the simulation alone (and its audio).
// What a scene counts in each frame for the report (characters at each level of detail...): a
// world resource the scene's stages set; the harness copies the values after every measured
// frame, beside the renderer's own counts ("draws drawn as points" ...). Names are fixed at setup.
//
//   SceneCounts& c = scene_counts(engine);             // in the setup
//   const std::size_t near = c.add("characters near");
//   ...in a stage: ctx.world().resource<SceneCounts>()->values[near] = n;
struct SceneCounts {
  std::vector<std::string> names;
  std::vector<double> values;
  std::size_t add(std::string name) {
    names.push_back(std::move(name));
    values.push_back(0.0);
    return names.size() - 1;
  }
};
SceneCounts& scene_counts(core::Engine& engine);

// A scene that declares "points" (kPointsParam) has its small draws drawn as points
// (RendererConfig::point_pixels = kPointPixels) unless run with --points 0.
render::Renderer& add_scene_renderer(
    core::Engine& engine, const SceneParams& p, render::Camera camera, std::uint32_t max_draws,
    std::function<void(core::StageContext&, render::Renderer&)> submit = {},
    core::Access submit_reads = {}, core::Access geometry_reads = {});
inline constexpr float kPointPixels = 1.5f;
inline const SceneParam kPointsParam{
    .name = "points",
    .description =
        "1: what is under 1.5 pixels in radius on screen is drawn as a point; 0: every "
        "agent is drawn as its mesh",
    .value = 1,
    .min = 0,
    .max = 1};
// Whether p declares a parameter.
bool has_param(const SceneParams& p, std::string_view name);

// The scene's audio, as a world resource so the harness can read the mixed output's hash.
struct SceneAudio {
  audio::AudioPlugin* plugin = nullptr;
  audio::SoundId tone = 0;    // the comparison's test sound: 220 + 331 Hz and a little noise, 1 s
  audio::SoundId impact = 0;  // a short decaying noise burst
};
// Adds the AudioPlugin (no output device: the load test measures the mixing, not a sound card)
// with the two sounds above, a listener at `ears` and `ambient` looping emitters spread around
// it; `mixer` sets the voice capacities. add_scene_renderer() calls it with the defaults, so
// every scene mixes audio; a scene that wants more (orchestra) calls it first. When the engine
// has scene audio already (a scene set up inside another), returns that as it is.
SceneAudio& add_scene_audio(core::Engine& engine, const SceneParams& p, glm::vec3 ears,
                            std::uint32_t ambient, audio::MixerConfig mixer = {});
// A stage that plays `impact` at the contact point of each new physics collision (the strongest
// 16 per step, stealing the quietest voices when all are busy).
void add_impact_sounds(core::Engine& engine);

// `mesh` with its positions transformed by `m` (normals by its inverse transpose, renormalised).
render::Mesh transformed_mesh(const render::Mesh& mesh, const glm::mat4& m);

// `count` Gouraud materials of distinct, evenly spread hues.
std::vector<render::MaterialId> add_palette(render::Renderer& r, std::uint32_t count);

}  // namespace spindle::loadtest
