#include "spindle_cubes.h"

#include "cubes_look.h"

#include <chrono>

namespace spindle::cubes {

std::unique_ptr<SpindleCubes> SpindleCubes::create(const Scene& scene, jobs::JobSystem& jobs,
                                                   std::string& error) {
  std::unique_ptr<SpindleCubes> out(new SpindleCubes(scene, jobs));
  out->renderer_ = std::make_unique<render::Renderer>(
      render::RendererConfig{.width = scene.width,
                             .height = scene.height,
                             .max_draws = scene.count,
                             .clear_color = glm::vec4(kClearColor, 1.0f)});
  const core::Result<CubesLook> look = add_cubes_look(*out->renderer_, scene);
  if (!look) {
    error = look.status().message();
    return nullptr;
  }
  out->mesh_ = look.value().mesh;
  out->material_ = look.value().material;
  return out;
}

double SpindleCubes::draw_frame(std::uint32_t frame) {
  const auto t0 = std::chrono::steady_clock::now();
  std::span<render::DrawCommand> draws = renderer_->begin_frame(scene_.count);
  jobs_.parallel_for_range(0, draws.size(), 1024, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i)
      draws[i] = {.mesh = mesh_,
                  .material = material_,
                  .model = model_matrix(scene_, static_cast<std::uint32_t>(i), frame)};
  });
  renderer_->render(jobs_);
  const auto t2 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(t2 - t0).count();
}

}  // namespace spindle::cubes
