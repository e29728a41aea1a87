#include "spindle/render/mesh.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

#include "spindle/base/assert.h"

#include "finite.h"

namespace spindle::render {
namespace {

using detail::finite;

// The first non-finite attribute of a vertex, or null.
const char* non_finite_attribute(const Vertex& v) {
  if (!finite(v.position)) return "position";
  if (!finite(v.normal)) return "normal";
  if (!finite(v.uv)) return "UV";
  if (!finite(v.color)) return "colour";
  return nullptr;
}

// Primitives are built from known-good data: a refusal would be a bug here.
Mesh must_create(const char* name, const std::vector<Vertex>& vertices,
                 const std::vector<std::uint32_t>& indices) {
  core::Result<Mesh> mesh = Mesh::create({.name = name, .vertices = vertices, .indices = indices});
  SPINDLE_ASSERT(mesh.ok(), "a primitive mesh failed validation");
  return std::move(mesh.value());
}

// A quad from its four corners in counter-clockwise order seen from the front.
void add_quad(std::vector<std::uint32_t>& indices, std::uint32_t first) {
  for (std::uint32_t k : {0u, 1u, 2u, 0u, 2u, 3u}) indices.push_back(first + k);
}

}  // namespace

core::Result<Mesh> Mesh::create(const MeshDesc& desc) {
  using core::Status;
  const std::string where = "mesh '" + desc.name + "': ";
  if (desc.vertices.empty()) return Status::error(where + "no vertices");
  if (desc.vertices.size() > kMaxMeshVertices)
    return Status::error(where + std::to_string(desc.vertices.size()) +
                         " vertices exceeds the limit of " + std::to_string(kMaxMeshVertices));
  if (desc.indices.empty()) return Status::error(where + "no triangles (no indices)");
  if (desc.indices.size() % 3 != 0)
    return Status::error(where + std::to_string(desc.indices.size()) +
                         " indices is not a multiple of 3");
  for (std::size_t i = 0; i < desc.indices.size(); ++i)
    if (desc.indices[i] >= desc.vertices.size())
      return Status::error(where + "index " + std::to_string(desc.indices[i]) + " (at position " +
                           std::to_string(i) + ") is out of range (" +
                           std::to_string(desc.vertices.size()) + " vertices)");
  for (std::size_t i = 0; i < desc.vertices.size(); ++i)
    if (const char* what = non_finite_attribute(desc.vertices[i]))
      return Status::error(where + "vertex " + std::to_string(i) + " has a non-finite " + what);

  Mesh mesh;
  mesh.name_ = desc.name;
  mesh.vertices_.assign(desc.vertices.begin(), desc.vertices.end());
  mesh.indices_.assign(desc.indices.begin(), desc.indices.end());
  glm::vec3 lo = mesh.vertices_[0].position, hi = lo;
  for (const Vertex& v : mesh.vertices_) {
    lo = glm::min(lo, v.position);
    hi = glm::max(hi, v.position);
  }
  mesh.center_ = (lo + hi) * 0.5f;
  float radius2 = 0.0f;
  for (const Vertex& v : mesh.vertices_) {
    const glm::vec3 d = v.position - mesh.center_;
    radius2 = std::max(radius2, glm::dot(d, d));
  }
  mesh.radius_ = std::sqrt(radius2);
  return mesh;
}

Mesh make_cube(float size) {
  const float h = size * 0.5f;
  // Per face: outward normal n, and in-face axes u (right) and v (up) with cross(u, v) == n, so
  // the corners -u-v, +u-v, +u+v, -u+v run counter-clockwise seen from outside.
  struct Face {
    glm::vec3 n, u, v;
  };
  static constexpr Face kFaces[6] = {
      {{1, 0, 0}, {0, 0, -1}, {0, 1, 0}}, {{-1, 0, 0}, {0, 0, 1}, {0, 1, 0}},
      {{0, 1, 0}, {1, 0, 0}, {0, 0, -1}}, {{0, -1, 0}, {1, 0, 0}, {0, 0, 1}},
      {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}},  {{0, 0, -1}, {-1, 0, 0}, {0, 1, 0}},
  };
  // Texture row 0 is the top of the image: v = 0 at the face's top edge.
  static constexpr glm::vec2 kCorners[4] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  static constexpr glm::vec2 kUvs[4] = {{0, 1}, {1, 1}, {1, 0}, {0, 0}};
  std::vector<Vertex> vertices;
  std::vector<std::uint32_t> indices;
  vertices.reserve(24);
  indices.reserve(36);
  for (const Face& f : kFaces) {
    add_quad(indices, static_cast<std::uint32_t>(vertices.size()));
    for (int k = 0; k < 4; ++k)
      vertices.push_back({.position = h * (f.n + kCorners[k].x * f.u + kCorners[k].y * f.v),
                          .normal = f.n,
                          .uv = kUvs[k]});
  }
  return must_create("cube", vertices, indices);
}

Mesh make_sphere(float radius, int rings, int segments) {
  rings = std::max(rings, 2);
  segments = std::max(segments, 3);
  constexpr float kPi = std::numbers::pi_v<float>;
  std::vector<Vertex> vertices;
  std::vector<std::uint32_t> indices;
  // A (rings + 1) x (segments + 1) grid: the seam column is doubled so UVs run 0..1.
  for (int i = 0; i <= rings; ++i) {
    const float theta = kPi * static_cast<float>(i) / static_cast<float>(rings);  // 0 at +Y
    for (int j = 0; j <= segments; ++j) {
      const float phi = 2.0f * kPi * static_cast<float>(j) / static_cast<float>(segments);
      // Longitude runs towards -z from +x, so ring-down then segment-along turns
      // counter-clockwise seen from outside.
      const glm::vec3 n{std::sin(theta) * std::cos(phi), std::cos(theta),
                        -std::sin(theta) * std::sin(phi)};
      vertices.push_back({.position = radius * n,
                          .normal = n,
                          .uv = {static_cast<float>(j) / static_cast<float>(segments),
                                 static_cast<float>(i) / static_cast<float>(rings)}});
    }
  }
  const auto at = [segments](int i, int j) {
    return static_cast<std::uint32_t>(i * (segments + 1) + j);
  };
  for (int i = 0; i < rings; ++i)
    for (int j = 0; j < segments; ++j) {
      const std::uint32_t a = at(i, j), b = at(i + 1, j), c = at(i + 1, j + 1), d = at(i, j + 1);
      if (i != rings - 1) indices.insert(indices.end(), {a, b, c});  // b, c: the south pole
      if (i != 0) indices.insert(indices.end(), {a, c, d});          // a, d: the north pole
    }
  return must_create("sphere", vertices, indices);
}

Mesh make_plane(float size, float uv_repeat) {
  const float h = size * 0.5f;
  const float r = uv_repeat;
  const glm::vec3 up{0, 1, 0};
  // Counter-clockwise seen from above: +x is right, -z is up.
  const std::vector<Vertex> vertices = {
      {.position = {-h, 0, h}, .normal = up, .uv = {0, r}},
      {.position = {h, 0, h}, .normal = up, .uv = {r, r}},
      {.position = {h, 0, -h}, .normal = up, .uv = {r, 0}},
      {.position = {-h, 0, -h}, .normal = up, .uv = {0, 0}},
  };
  std::vector<std::uint32_t> indices;
  add_quad(indices, 0);
  return must_create("plane", vertices, indices);
}

Mesh make_dart(float length) {
  const float l = length * 0.5f;
  const float w = length * 0.25f;  // half the width
  // Tip, back corners and the notch between them, in XZ.
  const glm::vec3 points[4] = {{l, 0, 0}, {-l, 0, -w}, {-0.5f * l, 0, 0}, {-l, 0, w}};
  std::vector<Vertex> vertices;
  for (float side : {1.0f, -1.0f})
    for (const glm::vec3& p : points)
      vertices.push_back({.position = p,
                          .normal = {0, side, 0},
                          .uv = {(p.x + l) / (2 * l), (p.z + w) / (2 * w)}});
  // Top (+Y) counter-clockwise seen from above; the bottom copy winds the other way.
  std::vector<std::uint32_t> indices = {0, 1, 2, 0, 2, 3, 4, 6, 5, 4, 7, 6};
  return must_create("dart", vertices, indices);
}

}  // namespace spindle::render
