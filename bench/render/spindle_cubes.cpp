#include "spindle_cubes.h"

#include <chrono>
#include <vector>

namespace spindle::cubes {

std::unique_ptr<SpindleCubes> SpindleCubes::create(const Scene& scene, jobs::JobSystem& jobs,
                                                   std::string& error) {
  std::unique_ptr<SpindleCubes> out(new SpindleCubes(scene, jobs));
  out->renderer_ = std::make_unique<render::Renderer>(
      render::RendererConfig{.width = scene.width,
                             .height = scene.height,
                             .max_draws = scene.count,
                             .clear_color = glm::vec4(kClearColor, 1.0f)});
  render::Renderer& r = *out->renderer_;

  std::vector<render::Vertex> vertices;
  for (const CubeVertex& v : cube_vertices())
    vertices.push_back(
        {.position = v.position, .normal = v.normal, .uv = v.uv, .color = glm::vec4(1.0f)});
  const std::vector<std::uint32_t> indices(cube_indices().begin(), cube_indices().end());
  auto mesh = render::Mesh::create({.name = "cube", .vertices = vertices, .indices = indices});
  if (!mesh) {
    error = mesh.message();
    return nullptr;
  }
  auto mesh_id = r.add_mesh(std::move(mesh.value()));
  if (!mesh_id) {
    error = mesh_id.message();
    return nullptr;
  }
  out->mesh_ = mesh_id.value();

  const std::vector<std::uint8_t> texels = checker_texture();
  auto texture = render::Texture::create(
      texels, kTextureSize, kTextureSize,
      {.name = "checker", .mipmaps = false, .filter = render::Filter::Bilinear});
  if (!texture) {
    error = texture.message();
    return nullptr;
  }
  auto texture_id = r.add_texture(std::move(texture.value()));
  if (!texture_id) {
    error = texture_id.message();
    return nullptr;
  }
  auto material = r.add_material(
      {.name = "checker", .texture = texture_id.value(), .shading = render::Shading::Gouraud});
  if (!material) {
    error = material.message();
    return nullptr;
  }
  out->material_ = material.value();

  // ambient + directional colour x max(dot(n, L), 0) = 0.15 + 0.85 max(dot(n, L), 0).
  r.lights().ambient = glm::vec3(kAmbient);
  r.lights().directional = {.direction = light_direction(), .color = glm::vec3(kDiffuse)};
  r.lights().point_count = 0;

  const CameraParams& c = scene.camera;
  render::Camera camera;
  camera.position = c.eye;
  camera.target = c.target;
  camera.up = c.up;
  camera.fov_y_radians = c.fov_y_radians;
  camera.aspect = c.aspect;
  camera.near_plane = c.near_plane;
  camera.far_plane = c.far_plane;
  r.set_camera(camera);
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
