// The `cubes` scene through Spindle's software renderer (render/renderer.h): the same mesh,
// texture, camera and lighting as the GL side, one DrawCommand per cube whose model matrix is
// cubes::model_matrix() (the vertex shader's rotation done on the CPU, filled in parallel).
//
// Usage:
//
//   spindle::jobs::JobSystem jobs({.workers = 0, .mode = spindle::jobs::Mode::Dynamic});
//   std::string error;
//   auto sp = spindle::cubes::SpindleCubes::create(scene, jobs, error);  // null: `error` says why
//   double ms = sp->draw_frame(frame);   // begin_frame + model matrices + render, milliseconds
//   const spindle::render::Image& img = sp->image();
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cubes_scene.h"
#include "spindle/jobs/job_system.h"
#include "spindle/render/image.h"
#include "spindle/render/renderer.h"

namespace spindle::cubes {

class SpindleCubes {
 public:
  static std::unique_ptr<SpindleCubes> create(const Scene& scene, jobs::JobSystem& jobs,
                                              std::string& error);

  // One timed frame (uTime = frame / 60): begin_frame, every cube's model matrix, render().
  double draw_frame(std::uint32_t frame);
  const render::Image& image() const { return renderer_->image(); }
  render::Renderer::Stats stats() const { return renderer_->stats(); }

 private:
  SpindleCubes(const Scene& scene, jobs::JobSystem& jobs) : scene_(scene), jobs_(jobs) {}
  const Scene& scene_;
  jobs::JobSystem& jobs_;
  std::unique_ptr<render::Renderer> renderer_;
  render::MeshId mesh_ = 0;
  render::MaterialId material_ = 0;
};

}  // namespace spindle::cubes
