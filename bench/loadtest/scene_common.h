// Pieces the load-test scenes share: deterministic per-object randomness and the render-prep
// stage (culling, sort keys and the radix-sorted draw list of every WorldTransform).
//
// Usage (in a scene's setup):
//
//   const float x = scene_unit(p.seed, i, 0) * side;          // same value in every mode
//   add_render_prep_stage(engine, capacity, camera, 0.5f);      // after the TransformPlugin
#pragma once

#include <cstdint>

#include <spindle/engine/engine.h>
#include <spindle/render/camera.h>

namespace spindle::loadtest {

// A value in [0, 1) fixed by (seed, index, salt).
float scene_unit(std::uint64_t seed, std::uint64_t index, std::uint64_t salt);

// A camera looking down at the origin from (0, height * side, distance * side), seeing a square
// field of side `side`.
render::Camera overview_camera(float side, float height, float distance);

// Adds "render_prep" (render::kRenderPrepPhase, reads WorldTransform): every WorldTransform becomes
// a renderable sphere of `radius` at its translation, culled against `camera`, keyed and sorted
// through spindle::render::RenderPrep with the stage's split. At most `capacity` objects.
void add_render_prep_stage(core::Engine& engine, std::uint32_t capacity,
                           const render::Camera& camera, float radius);

}  // namespace spindle::loadtest
