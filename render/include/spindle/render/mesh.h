// Meshes: indexed triangle lists (position, normal, UV, colour per vertex; 3 indices per
// triangle, counter-clockwise front faces), created through a call that validates, and a few
// primitives to start a scene with.
//
// Usage:
//
//   std::vector<spindle::render::Vertex> v = ...;   std::vector<std::uint32_t> idx = ...;
//   auto mesh = spindle::render::Mesh::create({.name = "rock", .vertices = v, .indices = idx});
//   if (!mesh) log(mesh.status().message());   // "mesh 'rock': index 7 (at position 12) is out
//                                              //  of range (5 vertices)"; nothing is kept
//   spindle::render::Mesh cube = spindle::render::make_cube(1.0f);   // the anchor's unit cube
//
// Refused: no vertices or no triangles, an index count not a multiple of 3, an index out of
// range, a non-finite position, normal, UV or colour, more than kMaxMeshVertices vertices.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <glm/glm.hpp>

#include "spindle/base/result.h"

namespace spindle::render {

struct Vertex {
  glm::vec3 position{0.0f};
  glm::vec3 normal{0.0f, 0.0f, 1.0f};
  glm::vec2 uv{0.0f};
  glm::vec4 color{1.0f};  // multiplies the material colour
};

inline constexpr std::uint32_t kMaxMeshVertices = 1u << 24;

struct MeshDesc {
  std::string name = "mesh";  // named in errors
  std::span<const Vertex> vertices{};
  std::span<const std::uint32_t> indices{};
};

class Mesh {
 public:
  static core::Result<Mesh> create(const MeshDesc& desc);

  const std::string& name() const { return name_; }
  std::span<const Vertex> vertices() const { return vertices_; }
  std::span<const std::uint32_t> indices() const { return indices_; }
  std::uint32_t triangle_count() const { return static_cast<std::uint32_t>(indices_.size() / 3); }
  // Bounding sphere in model space (centre of the box, radius to the farthest vertex).
  glm::vec3 bounds_center() const { return center_; }
  float bounds_radius() const { return radius_; }

 private:
  std::string name_;
  std::vector<Vertex> vertices_;
  std::vector<std::uint32_t> indices_;
  glm::vec3 center_{0.0f};
  float radius_ = 0.0f;
};

// Primitives, centred on the origin, white, with outward normals and UVs 0..1.
// The cube: edge `size`, 24 vertices (4 per face, face normals, UV 0..1 per face), 36 indices.
Mesh make_cube(float size = 1.0f);
// UV sphere: `rings` >= 2 latitude bands, `segments` >= 3 longitude ones, smooth normals.
Mesh make_sphere(float radius = 0.5f, int rings = 8, int segments = 12);
// A square in the XZ plane facing +Y, side `size`, UV 0..`uv_repeat`.
Mesh make_plane(float size = 1.0f, float uv_repeat = 1.0f);
// A flat arrow/dart in the XZ plane pointing +X (for agents), 2-sided by winding both ways.
Mesh make_dart(float length = 1.0f);

}  // namespace spindle::render
