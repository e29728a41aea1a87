// RenderPlugin: the Renderer as a world resource and its steps as stages of the frame, so the job
// system (and dynamic mode's allocator) sees rendering like any other work. Entities with a
// WorldTransform and a MeshInstance are drawn; a game can also submit its own draws.
//
// Usage:
//
//   auto& render = engine.add_plugin<spindle::render::RenderPlugin>(
//       spindle::render::RenderPluginConfig{.renderer = {.width = 640, .height = 360}});
//   spindle::render::Renderer& r = render.renderer();
//   const auto cube = r.add_mesh(spindle::render::make_cube()).value();
//   const auto red = r.add_material({.name = "red", .color = {1, 0, 0, 1}}).value();
//   world.add<spindle::render::MeshInstance>(entity, {.mesh = cube, .material = red});
//   r.set_camera(camera);
//   engine.step();                                      // ... the frame is drawn
//   spindle::render::write_png(r.image(), "frame.png");
//
// Stages (presentation: once per frame, after the simulation steps):
//   render_submit    kRenderPrepPhase: one draw per entity with WorldTransform + MeshInstance
//                    (parallel over them), after the draws a `submit` hook adds (if any)
//   render_prep      cull and sort (Renderer::prepare), split as the mode decides
//   render_geometry  kRenderPhase: transform, clip, set up, bin (Renderer::geometry), after
//                    whatever writes `geometry_access` (the vertices draws point at)
//   render_raster    one job per tile (Renderer::raster)
// With `overlay`, a frame overlay (FPS, each stage's time, each worker's busy time, from the
// previous frame) is drawn through the renderer's debug text.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "spindle/base/hash.h"
#include "spindle/engine/engine.h"
#include "spindle/render/draw_list.h"
#include "spindle/render/renderer.h"

namespace spindle::render {

// Draws its entity's mesh with its WorldTransform.
struct MeshInstance {
  MeshId mesh = 0;
  MaterialId material = 0;
  std::uint8_t layer = 0;
  bool visible = true;
};
// The world's state hash reads its fields, not its bytes (two of them are padding).
inline std::uint64_t spindle_hash(const MeshInstance& m) {
  core::Hasher h;
  h.add(m.mesh);
  h.add(m.material);
  h.add(std::uint64_t{m.layer} << 1 | (m.visible ? 1u : 0u));
  return h.value();
}

struct RenderPluginConfig {
  RendererConfig renderer{};
  bool overlay = false;
  // Draws a game adds itself each frame: called in render_submit (on the stage's thread) with
  // the renderer after the instances were written; use Renderer::submit().
  std::function<void(core::StageContext&, Renderer&)> submit{};
  // What `submit` reads besides the instances (e.g. read<anim::Animation>() for skinned
  // vertices), so the frame graph runs render_submit after the stages that write it.
  core::Access submit_access{};
  // What render_geometry reads through the draws: the vertices a DrawCommand::vertices points
  // at. Culling and sorting (render_prep) read only the draws' meshes and matrices, so a game
  // whose draws point at skinned vertices may let render_submit take the addresses beside the
  // skinning (submit_access read<anim::SkinTargets>()) and order only the geometry after it
  // (geometry_access read<anim::Animation>()). Without it, submit_access must cover the vertices.
  core::Access geometry_access{};
};

// Writes the overlay's text for `stats` (the previous frame) into `r.debug()`: FPS and frame time,
// one line per stage with its wall time, one bar per worker with its busy share.
void draw_frame_overlay(Renderer& r, const core::Engine& engine, const core::FrameStats& stats);

class RenderPlugin final : public core::Plugin {
 public:
  explicit RenderPlugin(RenderPluginConfig config = {});
  ~RenderPlugin() override;
  const char* name() const override { return "render"; }
  void build(core::Engine& engine) override;
  Renderer& renderer() { return *renderer_; }

 private:
  RenderPluginConfig config_;
  std::unique_ptr<Renderer> renderer_;
};

}  // namespace spindle::render
