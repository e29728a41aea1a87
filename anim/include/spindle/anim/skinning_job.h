// SkinningJob: linear blend skinning of positions and (optionally) normals, up to 4 joints per
// vertex, over any range of vertices (split a mesh into batches and run one job per batch).
//
// Usage:
//
//   spindle::anim::SkinningJob job;
//   job.palette = palette;                            // PaletteJob output
//   job.joint_indices = mesh.joints;                  // 4 per vertex
//   job.joint_weights = mesh.weights;                 // 4 per vertex, summing to 1
//   job.in_positions = {mesh.px, mesh.py, mesh.pz};
//   job.in_normals = {mesh.nx, mesh.ny, mesh.nz};     // leave empty to skip normals
//   job.out_positions = {out.px, out.py, out.pz};
//   job.out_normals = {out.nx, out.ny, out.nz};
//   if (spindle::core::Status s = job.run(); !s) report(s.message());
//
// Or straight into a renderer's interleaved vertex buffer instead of out_positions/out_normals:
//
//   struct Vertex { float px, py, pz, nx, ny, nz, u, v; };  // u, v are left untouched
//   std::span<std::byte> vb = std::as_writable_bytes(std::span(vertices));
//   job.out_positions_strided = {vb, sizeof(Vertex), offsetof(Vertex, px)};
//   job.out_normals_strided = {vb, sizeof(Vertex), offsetof(Vertex, nx)};
//
// Formula: M = sum_k w_k * palette[j_k]; p' = M * (p, 1); n' = upper 3x3 of M * n, then
// normalised if normalize_normals. Using the 3x3 for normals assumes the palette is rigid or
// uniformly scaled (no inverse transpose); unused influences have weight 0 (any valid index).
//
// Layout: inputs are SoA (separate x, y, z float arrays) so four vertices' coordinates are one
// 16-byte load each and a batch is just a sub-span of each array. Influences are 4-wide groups
// per vertex (indices uint16_t, weights float). Outputs are SoA arrays or interleaved (strided)
// vertices. anim/src/skinning_job.cpp says how the work is vectorised (SSE, four vertices at a
// time, or a portable block-SoA path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <glm/glm.hpp>

#include <spindle/base/result.h>

namespace spindle::anim {

inline constexpr int kMaxInfluences = 4;

// Three equally long arrays of one component each.
struct ConstStream3 {
  std::span<const float> x{}, y{}, z{};
  std::size_t size() const { return x.size(); }
  bool empty() const { return x.empty() && y.empty() && z.empty(); }
  // Elements [begin, begin + count) of each array (an empty stream stays empty).
  ConstStream3 subspan(std::size_t begin, std::size_t count) const {
    if (empty()) return {};
    return {x.subspan(begin, count), y.subspan(begin, count), z.subspan(begin, count)};
  }
};

struct Stream3 {
  std::span<float> x{}, y{}, z{};
  std::size_t size() const { return x.size(); }
  bool empty() const { return x.empty() && y.empty() && z.empty(); }
  // Elements [begin, begin + count) of each array (an empty stream stays empty).
  Stream3 subspan(std::size_t begin, std::size_t count) const {
    if (empty()) return {};
    return {x.subspan(begin, count), y.subspan(begin, count), z.subspan(begin, count)};
  }
};

// Interleaved (strided) output, such as a mapped vertex buffer: three consecutive floats x, y, z
// at byte `offset` of every `stride`-byte vertex; the other bytes of each vertex are not written.
struct StridedStream3 {
  // The vertices' bytes from the first vertex on: vertex i's x is at data() + i * stride + offset.
  // At least (n - 1) * stride + offset + 12 bytes for n vertices; 4-byte aligned at the offset.
  std::span<std::byte> bytes{};
  // Bytes from one vertex to the next: a multiple of 4, at least offset + 12.
  std::size_t stride = 0;
  // Bytes from the start of a vertex to its x: a multiple of 4.
  std::size_t offset = 0;
  bool empty() const { return bytes.empty() && stride == 0; }
  // Vertices [begin, begin + count): the bytes from vertex begin on, at most count strides (an
  // empty stream stays empty).
  StridedStream3 subspan(std::size_t begin, std::size_t count) const;
};

struct SkinningJob {
  // Joint matrices (model x inverse bind).
  std::span<const glm::mat4> palette{};
  // kMaxInfluences per vertex, each < palette.size().
  std::span<const std::uint16_t> joint_indices{};
  // kMaxInfluences per vertex; expected to sum to 1 (the offline builder's job).
  std::span<const float> joint_weights{};
  // Bind-pose positions, n vertices.
  ConstStream3 in_positions{};
  // Bind-pose normals, n vertices, or empty.
  ConstStream3 in_normals{};
  // Skinned positions, n vertices; written by run(). Must not overlap any input (no in-place
  // skinning: the job reads its inputs through restrict pointers).
  Stream3 out_positions{};
  // Skinned normals, n vertices when in_normals is set, otherwise empty.
  Stream3 out_normals{};
  // Instead of out_positions: skinned positions written into interleaved vertices (n of them).
  StridedStream3 out_positions_strided{};
  // Instead of out_normals: skinned normals written into interleaved vertices; may share
  // out_positions_strided's bytes and stride at an offset that does not overlap the positions.
  StridedStream3 out_normals_strided{};
  // Renormalise the skinned normals (blending matrices shortens them).
  bool normalize_normals = true;
  // Write the outputs with streaming (non-temporal) stores where the target supports them: for
  // outputs too large to stay in cache (a whole crowd's vertices), where they spare the memory
  // bus a read of every line before it is overwritten. Slower for outputs that fit in cache.
  // SoA outputs that are 16-byte aligned only; strided outputs are written with plain stores.
  bool streaming_stores = false;
  // Optional: set both to receive the bounds (per-axis min and max) of the skinned positions,
  // computed while skinning (not read back from the outputs).
  glm::vec3* out_min = nullptr;
  glm::vec3* out_max = nullptr;

  std::size_t vertex_count() const { return in_positions.size(); }
  // The same job over vertices [begin, begin + count) only: every stream and influence array cut
  // to that range (begin + count <= vertex_count()). How a mesh is split into batches.
  SkinningJob batch(std::size_t begin, std::size_t count) const;

  // Checks every size, stride and offset and every joint index (one pass over the indices).
  core::Status validate() const;
  core::Status run() const;
};

}  // namespace spindle::anim
