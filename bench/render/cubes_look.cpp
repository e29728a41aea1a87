#include "cubes_look.h"

#include <cstdint>
#include <vector>

namespace spindle::cubes {

core::Result<CubesLook> add_cubes_look(render::Renderer& r, const Scene& scene) {
  std::vector<render::Vertex> vertices;
  for (const CubeVertex& v : cube_vertices())
    vertices.push_back({.position = v.position, .normal = v.normal, .uv = v.uv});
  const std::vector<std::uint32_t> indices(cube_indices().begin(), cube_indices().end());
  const core::Result<render::MeshId> mesh =
      r.add_mesh({.name = "cube", .vertices = vertices, .indices = indices});
  if (!mesh) return mesh.status();

  const std::vector<std::uint8_t> texels = checker_texture();
  core::Result<render::Texture> texture = render::Texture::create(
      texels, kTextureSize, kTextureSize,
      {.name = "checker", .mipmaps = false, .filter = render::Filter::Bilinear});
  if (!texture) return texture.status();
  const core::Result<render::TextureId> texture_id = r.add_texture(std::move(texture.value()));
  if (!texture_id) return texture_id.status();
  const core::Result<render::MaterialId> material = r.add_material(
      {.name = "checker", .texture = texture_id.value(), .shading = render::Shading::Gouraud});
  if (!material) return material.status();

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
  return CubesLook{mesh.value(), material.value()};
}

}  // namespace spindle::cubes
