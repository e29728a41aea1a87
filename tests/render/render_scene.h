// A small scene the renderer tests share: textured, flat, unlit and translucent materials on
// cubes and spheres in front of a camera, animated by a frame number, some crossing the near
// plane and some off screen.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <glm/gtc/matrix_transform.hpp>

#include "spindle/render/debug_draw.h"
#include "spindle/render/renderer.h"

namespace spindle::render::test {

// A 64x64 checker of 8-texel squares, orange and blue.
inline Image checker_image(int side = 64, int square = 8) {
  Image img(side, side);
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x)
      img.at(x, y) = ((x / square + y / square) & 1) ? rgba(230, 180, 60) : rgba(40, 90, 200);
  return img;
}

struct SceneIds {
  MeshId cube = 0, sphere = 0;
  MaterialId textured = 0, flat = 0, unlit = 0, glass = 0;
};

inline SceneIds build_scene(Renderer& r) {
  SceneIds ids;
  ids.cube = r.add_mesh(make_cube(1.0f)).value();
  ids.sphere = r.add_mesh(make_sphere(0.6f, 8, 12)).value();
  const TextureId tex =
      r.add_texture(Texture::create(checker_image(), {.name = "checker"}).value()).value();
  ids.textured = r.add_material({.name = "textured", .texture = tex}).value();
  ids.flat =
      r.add_material({.name = "flat", .color = {0.3f, 0.9f, 0.4f, 1.0f}, .shading = Shading::Flat})
          .value();
  ids.unlit = r.add_material(
                   {.name = "unlit", .color = {0.9f, 0.2f, 0.3f, 1.0f}, .shading = Shading::Unlit})
                  .value();
  ids.glass = r.add_material({.name = "glass",
                              .color = {0.6f, 0.8f, 1.0f, 0.5f},
                              .translucent = true,
                              .cull_back = false})
                  .value();
  Camera cam;
  cam.position = {0.0f, 1.0f, 6.0f};
  cam.target = {0.0f, 0.0f, 0.0f};
  cam.aspect = static_cast<float>(r.config().width) / static_cast<float>(r.config().height);
  cam.near_plane = 0.5f;
  cam.far_plane = 60.0f;
  r.set_camera(cam);
  r.lights().point_count = 1;
  r.lights().points[0] = {
      .position = {2.0f, 2.0f, 2.0f}, .color = {1.0f, 0.8f, 0.6f}, .range = 8.0f};
  return ids;
}

// `count` objects on a grid receding from the camera, turning with `frame`; every 7th is
// translucent, one sits across the near plane, one far to the side.
inline void submit_scene(Renderer& r, const SceneIds& ids, std::uint32_t count, int frame) {
  const std::span<DrawCommand> draws = r.begin_frame(count);
  for (std::uint32_t i = 0; i < draws.size(); ++i) {
    const float x = static_cast<float>(i % 7) * 1.3f - 3.9f;
    const float y = static_cast<float>((i / 7) % 4) * 1.3f - 2.0f;
    const float z = -static_cast<float>(i / 28) * 1.6f;
    glm::mat4 m = glm::translate(glm::mat4(1.0f), {x, y, z});
    if (i == 3) m = glm::translate(glm::mat4(1.0f), {0.2f, 0.9f, 5.6f});    // across the near plane
    if (i == 5) m = glm::translate(glm::mat4(1.0f), {400.0f, 0.0f, 0.0f});  // off screen
    m = glm::rotate(m, 0.05f * static_cast<float>(frame) + 0.3f * static_cast<float>(i),
                    glm::normalize(glm::vec3(1.0f, 2.0f, 0.5f)));
    const std::uint32_t kind = i % 7 == 6 ? 3 : i % 3;
    draws[i] = {.mesh = (i % 2) ? ids.sphere : ids.cube,
                .material = kind == 0   ? ids.textured
                            : kind == 1 ? ids.flat
                            : kind == 2 ? ids.unlit
                                        : ids.glass,
                .model = m};
  }
  r.debug().box({0.0f, 0.0f, -2.0f}, {3.0f, 2.0f, 2.0f}, rgba(255, 255, 0));
  r.debug().text({4.0f, 4.0f}, "spindle", rgba(255, 255, 255));
}

}  // namespace spindle::render::test
