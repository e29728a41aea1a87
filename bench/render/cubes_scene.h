// The `cubes` scene of the rendering anchor (/work/shared/render-anchor-scene.md, kept in
// docs when it moves): N textured, lit, rotating unit cubes on a grid in front of a fixed camera.
// Everything both renderers need and nothing of either: spindle_bench_render draws it through
// OpenGL (llvmpipe) and through Spindle's software renderer, and the load test can draw it too.
// GLM only (no GL, no Spindle).
//
// Usage:
//
//   spindle::cubes::Scene scene = spindle::cubes::make_scene(10000, 640, 360);
//   // scene.gx/gy/gz = 31x18x18; scene.offsets[i], scene.phases[i]; scene.camera.eye ...
//   glm::mat4 m = spindle::cubes::model_matrix(scene, i, frame);  // what the vertex shader does
//   const auto& verts = spindle::cubes::cube_vertices();           // 24, CCW front faces
//   std::vector<std::uint8_t> tex = spindle::cubes::checker_texture();  // 256x256 RGBA8
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <glm/glm.hpp>

namespace spindle::cubes {

// One cube vertex as the GL vertex buffer holds it (interleaved pos3, nrm3, uv2 floats).
struct CubeVertex {
  glm::vec3 position;
  glm::vec3 normal;
  glm::vec2 uv;
};
static_assert(sizeof(CubeVertex) == 8 * sizeof(float));

inline constexpr int kCubeVertexCount = 24;  // 4 per face, face normals, UV 0..1 per face
inline constexpr int kCubeIndexCount = 36;   // 12 triangles, counter-clockwise front faces
inline constexpr int kTrianglesPerCube = 12;
inline constexpr int kTextureSize = 256;   // checker texture side, RGBA8
inline constexpr int kCheckerSquare = 32;  // pixels per checker square
inline constexpr float kAmbient = 0.15f;   // colour = kAmbient + kDiffuse * max(dot(n, L), 0)
inline constexpr float kDiffuse = 0.85f;
inline constexpr float kFramesPerSecond = 60.0f;  // uTime = frame / 60
inline constexpr glm::vec3 kClearColor{0.1f, 0.1f, 0.12f};

// The unit cube (edge 1, centred on the origin).
const std::array<CubeVertex, kCubeVertexCount>& cube_vertices();
const std::array<std::uint16_t, kCubeIndexCount>& cube_indices();

// 256x256 RGBA8, bytes R, G, B, A, row 0 first (the row GL uploads first, v = 0): 32-pixel
// squares, even squares ((x/32 + y/32) even) (230,180,60), odd ones (40 + x/4, 90 + y/4, 200).
std::vector<std::uint8_t> checker_texture();

// Light direction L (towards the light), normalised: normalize(0.4, 0.7, 0.6).
glm::vec3 light_direction();

struct CameraParams {
  glm::vec3 eye{0.0f};     // (0, 0, camZ)
  glm::vec3 target{0.0f};  // origin
  glm::vec3 up{0.0f, 1.0f, 0.0f};
  float fov_y_radians = 0.0f;  // 60 degrees
  float aspect = 1.0f;         // width / height
  float near_plane = 0.5f;
  float far_plane = 0.0f;  // camZ + gz*2 + 10
  glm::mat4 view() const;
  glm::mat4 projection() const;       // GL clip space (z in [-w, w])
  glm::mat4 view_projection() const;  // projection() * view()
};

struct Scene {
  std::uint32_t count = 0;  // N cubes
  int gx = 0, gy = 0, gz = 0;
  int width = 0, height = 0;
  std::vector<glm::vec3> offsets;  // instance positions (spacing 2, layer 0 nearest the camera)
  std::vector<float> phases;       // w_i in [0, 6.282]
  CameraParams camera;
};

// Grid dims: gy = gz = round(cbrt(N / 1.78)), gx = ceil(N / (gy * gz)) (1k: 16x8x8, 10k:
// 31x18x18, 50k: 56x30x30). count >= 1, width and height >= 1.
Scene make_scene(std::uint32_t count, int width, int height);

// w_i = ((i * 2654435761 mod 2^32) mod 6283) * 0.001.
float phase(std::uint32_t i);
// uTime = frame / 60.
float time_of_frame(std::uint32_t frame);

// R(a) = Rx(a) * Ry(a), as the anchor's vertex shader builds it: GLSL's column-major
// mat3 ry = (c,0,-s, 0,1,0, s,0,c) and rx = (1,0,0, 0,c,s, 0,-s,c), i.e. the usual right-handed
// rotations about Y and X (glm::mat3 takes its arguments in the same column-major order).
glm::mat3 rotation(float angle);
// translate(offset_i) * R(uTime + w_i): the model matrix of instance i at `frame`.
glm::mat4 model_matrix(const Scene& scene, std::uint32_t i, std::uint32_t frame);

}  // namespace spindle::cubes
