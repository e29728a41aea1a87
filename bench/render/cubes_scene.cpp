#include "cubes_scene.h"

#include <algorithm>
#include <cmath>

#include <glm/gtc/matrix_transform.hpp>

namespace spindle::cubes {

namespace {

// One face: outward normal n and in-plane axes u (along +U) and v (along +V) with u x v = n, so
// the corners (0,0) (1,0) (1,1) (0,1) run counter-clockwise seen from outside.
struct Face {
  glm::vec3 n, u, v;
};
constexpr Face kFaces[6] = {
    {{1, 0, 0}, {0, 0, -1}, {0, 1, 0}},   // +X
    {{-1, 0, 0}, {0, 0, 1}, {0, 1, 0}},   // -X
    {{0, 1, 0}, {1, 0, 0}, {0, 0, -1}},   // +Y
    {{0, -1, 0}, {1, 0, 0}, {0, 0, 1}},   // -Y
    {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}},    // +Z
    {{0, 0, -1}, {-1, 0, 0}, {0, 1, 0}},  // -Z
};

std::array<CubeVertex, kCubeVertexCount> build_vertices() {
  std::array<CubeVertex, kCubeVertexCount> out{};
  constexpr glm::vec2 kCorners[4] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int f = 0; f < 6; ++f)
    for (int c = 0; c < 4; ++c) {
      const Face& face = kFaces[f];
      const glm::vec2 uv = kCorners[c];
      out[f * 4 + c] = {0.5f * face.n + (uv.x - 0.5f) * face.u + (uv.y - 0.5f) * face.v, face.n,
                        uv};
    }
  return out;
}

std::array<std::uint16_t, kCubeIndexCount> build_indices() {
  std::array<std::uint16_t, kCubeIndexCount> out{};
  for (int f = 0; f < 6; ++f) {
    const auto b = static_cast<std::uint16_t>(f * 4);
    const std::uint16_t quad[6] = {
        b, static_cast<std::uint16_t>(b + 1), static_cast<std::uint16_t>(b + 2),
        b, static_cast<std::uint16_t>(b + 2), static_cast<std::uint16_t>(b + 3)};
    std::copy(quad, quad + 6, out.begin() + f * 6);
  }
  return out;
}

}  // namespace

const std::array<CubeVertex, kCubeVertexCount>& cube_vertices() {
  static const std::array<CubeVertex, kCubeVertexCount> vertices = build_vertices();
  return vertices;
}

const std::array<std::uint16_t, kCubeIndexCount>& cube_indices() {
  static const std::array<std::uint16_t, kCubeIndexCount> indices = build_indices();
  return indices;
}

std::vector<std::uint8_t> checker_texture() {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(kTextureSize) * kTextureSize * 4);
  for (int y = 0; y < kTextureSize; ++y)
    for (int x = 0; x < kTextureSize; ++x) {
      std::uint8_t* p = &out[(static_cast<std::size_t>(y) * kTextureSize + x) * 4];
      const bool even = ((x / kCheckerSquare) + (y / kCheckerSquare)) % 2 == 0;
      p[0] = static_cast<std::uint8_t>(even ? 230 : 40 + x / 4);
      p[1] = static_cast<std::uint8_t>(even ? 180 : 90 + y / 4);
      p[2] = static_cast<std::uint8_t>(even ? 60 : 200);
      p[3] = 255;
    }
  return out;
}

glm::vec3 light_direction() {
  return glm::normalize(glm::vec3(0.4f, 0.7f, 0.6f));
}

glm::mat4 CameraParams::view() const {
  return glm::lookAt(eye, target, up);
}
glm::mat4 CameraParams::projection() const {
  return glm::perspective(fov_y_radians, aspect, near_plane, far_plane);
}
glm::mat4 CameraParams::view_projection() const {
  return projection() * view();
}

Scene make_scene(std::uint32_t count, int width, int height) {
  Scene s;
  s.count = std::max(count, 1u);
  s.width = std::max(width, 1);
  s.height = std::max(height, 1);
  const double n = s.count;
  s.gy = s.gz = std::max(1, static_cast<int>(std::lround(std::cbrt(n / 1.78))));
  s.gx = static_cast<int>(std::ceil(n / (static_cast<double>(s.gy) * s.gz)));

  s.offsets.resize(s.count);
  s.phases.resize(s.count);
  const auto gx = static_cast<std::uint32_t>(s.gx);
  const auto gy = static_cast<std::uint32_t>(s.gy);
  for (std::uint32_t i = 0; i < s.count; ++i) {
    const float x = (static_cast<float>(i % gx) - static_cast<float>(s.gx - 1) / 2.0f) * 2.0f;
    const float y =
        (static_cast<float>((i / gx) % gy) - static_cast<float>(s.gy - 1) / 2.0f) * 2.0f;
    const float z = -static_cast<float>(i / (gx * gy)) * 2.0f;
    s.offsets[i] = {x, y, z};
    s.phases[i] = phase(i);
  }

  CameraParams& c = s.camera;
  c.aspect = static_cast<float>(s.width) / static_cast<float>(s.height);
  c.fov_y_radians = glm::radians(60.0f);
  const float half_h = std::max(static_cast<float>(s.gy - 1) * 2.0f / 2.0f + 0.5f,
                                (static_cast<float>(s.gx - 1) * 2.0f / 2.0f + 0.5f) / c.aspect);
  const float cam_z = half_h / std::tan(glm::radians(30.0f)) + 1.0f;
  c.eye = {0.0f, 0.0f, cam_z};
  c.target = {0.0f, 0.0f, 0.0f};
  c.up = {0.0f, 1.0f, 0.0f};
  c.near_plane = 0.5f;
  c.far_plane = cam_z + static_cast<float>(s.gz) * 2.0f + 10.0f;
  return s;
}

float phase(std::uint32_t i) {
  const std::uint32_t h = i * 2654435761u;  // mod 2^32 by unsigned wrap-around
  return static_cast<float>(h % 6283u) * 0.001f;
}

float time_of_frame(std::uint32_t frame) {
  return static_cast<float>(frame) * (1.0f / kFramesPerSecond);
}

glm::mat3 rotation(float angle) {
  const float c = std::cos(angle), s = std::sin(angle);
  const glm::mat3 ry(c, 0, -s, 0, 1, 0, s, 0, c);
  const glm::mat3 rx(1, 0, 0, 0, c, s, 0, -s, c);
  return rx * ry;
}

glm::mat4 model_matrix(const Scene& scene, std::uint32_t i, std::uint32_t frame) {
  glm::mat4 m(rotation(time_of_frame(frame) + scene.phases[i]));
  m[3] = glm::vec4(scene.offsets[i], 1.0f);  // translate(offset) * R
  return m;
}

}  // namespace spindle::cubes
