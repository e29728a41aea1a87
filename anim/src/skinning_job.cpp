#include <spindle/anim/skinning_job.h>

#include <cmath>
#include <string>

#include <glm/gtc/type_ptr.hpp>

namespace spindle::anim {
namespace {

bool same_size(const ConstStream3& s, std::size_t n) {
  return s.x.size() == n && s.y.size() == n && s.z.size() == n;
}
bool same_size(const Stream3& s, std::size_t n) {
  return s.x.size() == n && s.y.size() == n && s.z.size() == n;
}

// m = sum_k w[k] * palette[j[k]], all 16 floats: contiguous, so it becomes packed multiply-adds.
inline void blend_matrix(const float* __restrict pal, const std::uint16_t* j, const float* w,
                         float* __restrict m) {
  const float* p0 = pal + 16 * j[0];
  const float* p1 = pal + 16 * j[1];
  const float* p2 = pal + 16 * j[2];
  const float* p3 = pal + 16 * j[3];
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
  for (int e = 0; e < 16; ++e) m[e] = w0 * p0[e] + w1 * p1[e] + w2 * p2[e] + w3 * p3[e];
}

}  // namespace

core::Status SkinningJob::validate() const {
  const std::size_t n = vertex_count();
  if (palette.empty()) return core::Status::error("SkinningJob: empty palette");
  if (!same_size(in_positions, n))
    return core::Status::error("SkinningJob: in_positions x, y, z differ in size");
  if (!same_size(out_positions, n))
    return core::Status::error("SkinningJob: out_positions must have " + std::to_string(n) +
                               " vertices");
  if (joint_indices.size() != n * kMaxInfluences)
    return core::Status::error("SkinningJob: joint_indices has " +
                               std::to_string(joint_indices.size()) + " entries, expected " +
                               std::to_string(n * kMaxInfluences));
  if (joint_weights.size() != n * kMaxInfluences)
    return core::Status::error("SkinningJob: joint_weights has " +
                               std::to_string(joint_weights.size()) + " entries, expected " +
                               std::to_string(n * kMaxInfluences));
  if (in_normals.empty() != out_normals.empty())
    return core::Status::error(
        "SkinningJob: in_normals and out_normals must both be set or both "
        "empty");
  if (!in_normals.empty() && (!same_size(in_normals, n) || !same_size(out_normals, n)))
    return core::Status::error("SkinningJob: normals must have " + std::to_string(n) + " vertices");
  // A branch-free max (vectorised) first; the slow loop only runs to name the bad vertex.
  std::uint16_t largest = 0;
  for (std::uint16_t j : joint_indices) largest = j > largest ? j : largest;
  if (largest >= palette.size()) {
    for (std::size_t i = 0; i < joint_indices.size(); ++i)
      if (joint_indices[i] >= palette.size())
        return core::Status::error("SkinningJob: vertex " + std::to_string(i / kMaxInfluences) +
                                   " joint index " + std::to_string(joint_indices[i]) +
                                   " out of range (palette has " + std::to_string(palette.size()) +
                                   ")");
  }
  return {};
}

core::Status SkinningJob::run() const {
  if (core::Status s = validate(); !s) return s;
  const std::size_t n = vertex_count();
  const float* pal = glm::value_ptr(palette[0]);
  const std::uint16_t* ji = joint_indices.data();
  const float* jw = joint_weights.data();
  const float* px = in_positions.x.data();
  const float* py = in_positions.y.data();
  const float* pz = in_positions.z.data();
  float* ox = out_positions.x.data();
  float* oy = out_positions.y.data();
  float* oz = out_positions.z.data();
  alignas(16) float m[16];
  if (in_normals.empty()) {
    for (std::size_t v = 0; v < n; ++v) {
      blend_matrix(pal, ji + 4 * v, jw + 4 * v, m);
      const float x = px[v], y = py[v], z = pz[v];
      ox[v] = m[0] * x + m[4] * y + m[8] * z + m[12];
      oy[v] = m[1] * x + m[5] * y + m[9] * z + m[13];
      oz[v] = m[2] * x + m[6] * y + m[10] * z + m[14];
    }
    return {};
  }
  const float* nx = in_normals.x.data();
  const float* ny = in_normals.y.data();
  const float* nz = in_normals.z.data();
  float* onx = out_normals.x.data();
  float* ony = out_normals.y.data();
  float* onz = out_normals.z.data();
  const bool renorm = normalize_normals;
  for (std::size_t v = 0; v < n; ++v) {
    blend_matrix(pal, ji + 4 * v, jw + 4 * v, m);
    const float x = px[v], y = py[v], z = pz[v];
    const float a = nx[v], b = ny[v], c = nz[v];
    ox[v] = m[0] * x + m[4] * y + m[8] * z + m[12];
    oy[v] = m[1] * x + m[5] * y + m[9] * z + m[13];
    oz[v] = m[2] * x + m[6] * y + m[10] * z + m[14];
    float rx = m[0] * a + m[4] * b + m[8] * c;
    float ry = m[1] * a + m[5] * b + m[9] * c;
    float rz = m[2] * a + m[6] * b + m[10] * c;
    if (renorm) {
      const float len2 = rx * rx + ry * ry + rz * rz;
      const float inv = len2 > 0.0f ? 1.0f / std::sqrt(len2) : 0.0f;
      rx *= inv;
      ry *= inv;
      rz *= inv;
    }
    onx[v] = rx;
    ony[v] = ry;
    onz[v] = rz;
  }
  return {};
}

}  // namespace spindle::anim
