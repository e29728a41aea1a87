#include <spindle/anim/skinning_job.h>

#include <algorithm>
#include <cmath>
#include <string>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <glm/gtc/type_ptr.hpp>

namespace spindle::anim {
namespace {

bool same_size(const ConstStream3& s, std::size_t n) {
  return s.x.size() == n && s.y.size() == n && s.z.size() == n;
}
bool same_size(const Stream3& s, std::size_t n) {
  return s.x.size() == n && s.y.size() == n && s.z.size() == n;
}

// Vertices per block: the blended matrices of a block are stored SoA (element e of vertex i at
// m[e][i]) so the transforms and the normal renormalisation run over the block vectorised.
constexpr std::size_t kBlock = 64;

struct alignas(64) Block {
  float m[12][kBlock];  // rows 0-2 of the 4 columns (the last row of an affine matrix is unused)
  float nx[kBlock], ny[kBlock], nz[kBlock];
};

// m = sum_k w[k] * palette[j[k]] for vertices [v0, v0 + n): four 4-float columns per matrix, so
// each weight is four packed multiply-adds; only the 12 used elements are stored.
inline void blend_block(const float* __restrict pal, const std::uint16_t* ji, const float* jw,
                        std::size_t v0, std::size_t n, Block& b) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint16_t* j = ji + 4 * (v0 + i);
    const float* w = jw + 4 * (v0 + i);
    const float* p0 = pal + 16 * j[0];
    const float* p1 = pal + 16 * j[1];
    const float* p2 = pal + 16 * j[2];
    const float* p3 = pal + 16 * j[3];
    const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];
    alignas(16) float m[16];
    for (int e = 0; e < 16; ++e) m[e] = w0 * p0[e] + w1 * p1[e] + w2 * p2[e] + w3 * p3[e];
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 3; ++r) b.m[3 * c + r][i] = m[4 * c + r];
  }
}

// Scales (x, y, z)[i] to unit length for i < n rounded up to 4 (the block's spare lanes hold
// harmless values). SSE: reciprocal square root estimate refined by one Newton-Raphson step
// (relative error about 1e-7, several times faster than sqrt and divide); elsewhere the exact
// 1 / sqrt. The same arithmetic for every lane, so a vertex's result does not depend on where
// it falls in a batch or block.
inline void normalize_block(float* __restrict x, float* __restrict y, float* __restrict z,
                            std::size_t n) {
#if defined(__SSE__)
  const __m128 tiny = _mm_set1_ps(1e-30f), half = _mm_set1_ps(0.5f), three = _mm_set1_ps(3.0f);
  for (std::size_t i = 0; i < n; i += 4) {
    const __m128 vx = _mm_load_ps(x + i), vy = _mm_load_ps(y + i), vz = _mm_load_ps(z + i);
    const __m128 len2 = _mm_max_ps(
        _mm_add_ps(_mm_add_ps(_mm_mul_ps(vx, vx), _mm_mul_ps(vy, vy)), _mm_mul_ps(vz, vz)), tiny);
    __m128 r = _mm_rsqrt_ps(len2);
    r = _mm_mul_ps(_mm_mul_ps(half, r), _mm_sub_ps(three, _mm_mul_ps(_mm_mul_ps(len2, r), r)));
    _mm_store_ps(x + i, _mm_mul_ps(vx, r));
    _mm_store_ps(y + i, _mm_mul_ps(vy, r));
    _mm_store_ps(z + i, _mm_mul_ps(vz, r));
  }
#else
  for (std::size_t i = 0; i < n; ++i) {
    const float len2 = std::max(x[i] * x[i] + y[i] * y[i] + z[i] * z[i], 1e-30f);
    const float inv = 1.0f / std::sqrt(len2);
    x[i] *= inv;
    y[i] *= inv;
    z[i] *= inv;
  }
#endif
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
  const std::size_t count = vertex_count();
  const float* pal = glm::value_ptr(palette[0]);
  const bool normals = !in_normals.empty();
  Block b;
  // Spare lanes of a partial last block: finite values, so the vector normalisation is harmless.
  for (float* v : {b.nx, b.ny, b.nz}) std::fill(v, v + kBlock, 1.0f);
  for (std::size_t v0 = 0; v0 < count; v0 += kBlock) {
    const std::size_t n = std::min(kBlock, count - v0);
    blend_block(pal, joint_indices.data(), joint_weights.data(), v0, n, b);
    {
      const float* __restrict px = in_positions.x.data() + v0;
      const float* __restrict py = in_positions.y.data() + v0;
      const float* __restrict pz = in_positions.z.data() + v0;
      float* __restrict ox = out_positions.x.data() + v0;
      float* __restrict oy = out_positions.y.data() + v0;
      float* __restrict oz = out_positions.z.data() + v0;
      for (std::size_t i = 0; i < n; ++i) {
        const float x = px[i], y = py[i], z = pz[i];
        ox[i] = b.m[0][i] * x + b.m[3][i] * y + b.m[6][i] * z + b.m[9][i];
        oy[i] = b.m[1][i] * x + b.m[4][i] * y + b.m[7][i] * z + b.m[10][i];
        oz[i] = b.m[2][i] * x + b.m[5][i] * y + b.m[8][i] * z + b.m[11][i];
      }
    }
    if (!normals) continue;
    const float* __restrict nx = in_normals.x.data() + v0;
    const float* __restrict ny = in_normals.y.data() + v0;
    const float* __restrict nz = in_normals.z.data() + v0;
    for (std::size_t i = 0; i < n; ++i) {
      const float x = nx[i], y = ny[i], z = nz[i];
      b.nx[i] = b.m[0][i] * x + b.m[3][i] * y + b.m[6][i] * z;
      b.ny[i] = b.m[1][i] * x + b.m[4][i] * y + b.m[7][i] * z;
      b.nz[i] = b.m[2][i] * x + b.m[5][i] * y + b.m[8][i] * z;
    }
    if (normalize_normals) normalize_block(b.nx, b.ny, b.nz, n);
    std::copy_n(b.nx, n, out_normals.x.data() + v0);
    std::copy_n(b.ny, n, out_normals.y.data() + v0);
    std::copy_n(b.nz, n, out_normals.z.data() + v0);
  }
  return {};
}

}  // namespace spindle::anim
