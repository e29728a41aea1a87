// SkinnedMesh: a mesh in the layout SkinningJob reads (SoA positions and normals, kMaxInfluences
// joint index / weight slots per vertex), made by the procedural generator or the importer.
//
// Usage:
//
//   spindle::anim::SkinnedMesh mesh = ...;
//   if (spindle::core::Status s = spindle::anim::check_mesh(mesh, skeleton.joint_count()); !s)
//     report(s.message());   // e.g. "mesh: vertex 12: weights sum to 0.5, not 1"
//   spindle::anim::SkinningJob job{.joint_indices = mesh.joint_indices,
//                                  .joint_weights = mesh.joint_weights,
//                                  .in_positions = mesh.positions(),
//                                  .in_normals = mesh.normals(), ...};
#pragma once

#include <cstdint>
#include <vector>

#include <spindle/anim/skinning_job.h>
#include <spindle/base/result.h>

namespace spindle::anim {

// How far a vertex's weights may sum from 1 and still count as summing to 1.
inline constexpr float kWeightSumTolerance = 1e-3f;

struct SkinnedMesh {
  std::vector<float> px, py, pz;
  std::vector<float> nx, ny, nz;
  // kMaxInfluences per vertex, each < the skeleton's joint count.
  std::vector<std::uint16_t> joint_indices;
  // kMaxInfluences per vertex, each in [0, 1], summing to 1 per vertex; unused slots weigh 0.
  std::vector<float> joint_weights;

  std::size_t vertex_count() const { return px.size(); }
  ConstStream3 positions() const { return {px, py, pz}; }
  ConstStream3 normals() const { return {nx, ny, nz}; }
};

// Rejects: no vertices, streams of different lengths (normals may be empty, all three), influence
// arrays that are not kMaxInfluences per vertex, non-finite positions or normals, joint indices
// >= joint_count, weights outside [0, 1] or not finite, weights not summing to 1 within
// kWeightSumTolerance. The message names the first bad vertex.
core::Status check_mesh(const SkinnedMesh& mesh, int joint_count);

}  // namespace spindle::anim
