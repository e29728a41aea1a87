// The `cubes` scene's look in a Spindle renderer: the anchor's cube mesh, its checker texture
// (bilinear, no mipmaps), one Gouraud material, its camera and its light (ambient 0.15 plus 0.85
// of a sun along cubes::light_direction(), which is the anchor's shader). Shared by
// spindle_bench_render and the load test's `cubes` scene, so both draw the same thing.
//
// Usage:
//
//   spindle::render::Renderer r({.width = scene.width, .height = scene.height});
//   auto look = spindle::cubes::add_cubes_look(r, scene);   // Result<CubesLook>
//   draws[i] = {.mesh = look.value().mesh, .material = look.value().material,
//               .model = spindle::cubes::model_matrix(scene, i, frame)};
#pragma once

#include "cubes_scene.h"
#include "spindle/base/result.h"
#include "spindle/render/renderer.h"

namespace spindle::cubes {

struct CubesLook {
  render::MeshId mesh = 0;
  render::MaterialId material = 0;
};

// Adds the mesh, texture and material and sets the camera (its aspect from the scene) and the
// lights; an error names what the renderer refused.
core::Result<CubesLook> add_cubes_look(render::Renderer& r, const Scene& scene);

}  // namespace spindle::cubes
