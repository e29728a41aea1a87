#include "scene_common.h"

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

render::Renderer& add_scene_renderer(
    core::Engine& engine, const SceneParams& p, render::Camera camera, std::uint32_t max_draws,
    std::function<void(core::StageContext&, render::Renderer&)> submit, core::Access submit_reads) {
  render::RenderPluginConfig config;
  config.renderer.width = static_cast<int>(p.width);
  config.renderer.height = static_cast<int>(p.height);
  config.renderer.max_draws = std::max(max_draws, 16u);
  config.submit = std::move(submit);
  config.submit_access = std::move(submit_reads);
  render::Renderer& r = engine.add_plugin<render::RenderPlugin>(std::move(config)).renderer();
  camera.aspect = static_cast<float>(p.width) / static_cast<float>(p.height);
  r.set_camera(camera);
  r.lights().ambient = glm::vec3(0.2f);
  r.lights().directional = {.direction = {0.3f, 0.8f, 0.5f}, .color = glm::vec3(0.8f)};
  engine.world().set_resource<SceneRendering>(SceneRendering{&r});
  return r;
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
