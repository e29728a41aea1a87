// The `cubes` scene through OpenGL 3.3 core: SDL2's offscreen video driver with EGL, which on a
// machine without a GPU is Mesa's llvmpipe. One instanced draw per frame (the anchor's `inst`
// mode: a per-instance vec4 of offset.xyz and phase, divisor 1); the shaders rotate, light
// (Gouraud) and texture each cube exactly as cubes_scene.h describes.
//
// Usage:
//
//   std::string error;
//   auto gl = spindle::cubes::GlCubes::create(scene, error);  // null: `error` says why
//   double ms = gl->draw_frame(frame);                          // glClear + draw + glFinish
//   spindle::cubes::GlImage img = gl->read_frame(frame);        // RGBA8, row 0 at the top
//
// Create it before anything pins the calling thread to a CPU: llvmpipe starts its raster threads
// (LP_NUM_THREADS) with the context, and they inherit the thread's CPU mask.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cubes_scene.h"

namespace spindle::cubes {

struct GlImage {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> rgba;    // R, G, B, A per pixel, row 0 at the top
  std::uint64_t samples_passed = 0;  // GL_SAMPLES_PASSED for the frame
};

class GlCubes {
 public:
  // Sets SDL_VIDEODRIVER=offscreen, and LP_NUM_THREADS to `lp_threads` unless it is set already;
  // then creates the window, context and scene resources. Null (and `error` set) on any failure.
  static std::unique_ptr<GlCubes> create(const Scene& scene, unsigned lp_threads,
                                         std::string& error);
  ~GlCubes();
  GlCubes(const GlCubes&) = delete;
  GlCubes& operator=(const GlCubes&) = delete;

  // GL_RENDERER / GL_VERSION, and the LP_NUM_THREADS in effect when the context was made.
  const std::string& renderer() const { return renderer_; }
  const std::string& version() const { return version_; }
  const std::string& lp_num_threads() const { return lp_threads_; }

  // One timed frame (uTime = frame / 60): glClear + draw, then glFinish. Milliseconds.
  double draw_frame(std::uint32_t frame);
  // Draws `frame` once more with a GL_SAMPLES_PASSED query and reads it back. `error` is set
  // when glGetError reports anything.
  GlImage read_frame(std::uint32_t frame, std::string& error);

  struct Impl;

 private:
  explicit GlCubes(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::string renderer_, version_, lp_threads_;
};

}  // namespace spindle::cubes
