#include <spindle/anim/skinning_job.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

// SSE intrinsics where the compiler targets SSE and the build allows them (SPINDLE_SIMD); the
// portable paths otherwise (the no-threads preset builds those, so CI runs both).
#if defined(__SSE__) && (!defined(SPINDLE_SIMD) || SPINDLE_SIMD)
#define SPINDLE_SKIN_SSE 1
#include <xmmintrin.h>
#else
#define SPINDLE_SKIN_SSE 0
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

// Vertices per block. A block's skinned normals are collected in `Block` so that their
// renormalisation runs vectorised over the block before they are copied out.
constexpr std::size_t kBlock = 64;

struct alignas(64) Block {
  float px[kBlock], py[kBlock], pz[kBlock];
  float nx[kBlock], ny[kBlock], nz[kBlock];
#if !SPINDLE_SKIN_SSE
  float m[12][kBlock];  // portable path: rows 0-2 of the 4 blended columns, SoA over the block
#endif
};

// The palette matrices (16 floats, column-major) of one vertex's influences.
struct Influences {
  const float* m[4];
};

// The input streams of vertices [v0, v0 + n); skin_block writes the results into the block.
struct BlockStreams {
  const float* __restrict pal;
  const std::uint16_t* ji;
  const float* jw;
  const float *px, *py, *pz;
  const float *nx, *ny, *nz;  // null without normals

  Influences influences(std::size_t i) const {
    const std::uint16_t* j = ji + kMaxInfluences * i;
    return {{pal + 16 * j[0], pal + 16 * j[1], pal + 16 * j[2], pal + 16 * j[3]}};
  }
};

#if SPINDLE_SKIN_SSE
// SSE: per vertex, the four palette columns are blended as packed vectors (each weight is four
// packed multiply-adds), then p' = c0 x + c1 y + c2 z + c3 and n' = c0 a + c1 b + c2 c with
// broadcast coordinates: no transposition of the blended matrix.
inline void skin_block(const BlockStreams& s, std::size_t n, Block& b) {
  for (std::size_t i = 0; i < n; ++i) {
    const float* w = s.jw + 4 * i;
    const Influences in = s.influences(i);
    const __m128 w0 = _mm_set1_ps(w[0]), w1 = _mm_set1_ps(w[1]);
    const __m128 w2 = _mm_set1_ps(w[2]), w3 = _mm_set1_ps(w[3]);
    __m128 c[4];
    for (int k = 0; k < 4; ++k)
      c[k] = _mm_add_ps(_mm_add_ps(_mm_mul_ps(w0, _mm_loadu_ps(in.m[0] + 4 * k)),
                                   _mm_mul_ps(w1, _mm_loadu_ps(in.m[1] + 4 * k))),
                        _mm_add_ps(_mm_mul_ps(w2, _mm_loadu_ps(in.m[2] + 4 * k)),
                                   _mm_mul_ps(w3, _mm_loadu_ps(in.m[3] + 4 * k))));
    const __m128 p = _mm_add_ps(
        _mm_add_ps(_mm_mul_ps(c[0], _mm_set1_ps(s.px[i])), _mm_mul_ps(c[1], _mm_set1_ps(s.py[i]))),
        _mm_add_ps(_mm_mul_ps(c[2], _mm_set1_ps(s.pz[i])), c[3]));
    alignas(16) float out[4];
    _mm_store_ps(out, p);
    b.px[i] = out[0];
    b.py[i] = out[1];
    b.pz[i] = out[2];
    if (s.nx == nullptr) continue;
    const __m128 r = _mm_add_ps(
        _mm_add_ps(_mm_mul_ps(c[0], _mm_set1_ps(s.nx[i])), _mm_mul_ps(c[1], _mm_set1_ps(s.ny[i]))),
        _mm_mul_ps(c[2], _mm_set1_ps(s.nz[i])));
    _mm_store_ps(out, r);
    b.nx[i] = out[0];
    b.ny[i] = out[1];
    b.nz[i] = out[2];
  }
}
#else
// Portable: blend the block's matrices into SoA rows (16 contiguous floats per palette matrix,
// which compilers vectorise), then transform positions and normals vectorised over vertices.
inline void skin_block(const BlockStreams& s, std::size_t n, Block& b) {
  for (std::size_t i = 0; i < n; ++i) {
    const float* w = s.jw + 4 * i;
    const Influences in = s.influences(i);
    float m[16];
    for (int e = 0; e < 16; ++e)
      m[e] = w[0] * in.m[0][e] + w[1] * in.m[1][e] + w[2] * in.m[2][e] + w[3] * in.m[3][e];
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 3; ++r) b.m[3 * c + r][i] = m[4 * c + r];
  }
  for (std::size_t i = 0; i < n; ++i) {
    const float x = s.px[i], y = s.py[i], z = s.pz[i];
    b.px[i] = b.m[0][i] * x + b.m[3][i] * y + b.m[6][i] * z + b.m[9][i];
    b.py[i] = b.m[1][i] * x + b.m[4][i] * y + b.m[7][i] * z + b.m[10][i];
    b.pz[i] = b.m[2][i] * x + b.m[5][i] * y + b.m[8][i] * z + b.m[11][i];
  }
  if (s.nx == nullptr) return;
  for (std::size_t i = 0; i < n; ++i) {
    const float x = s.nx[i], y = s.ny[i], z = s.nz[i];
    b.nx[i] = b.m[0][i] * x + b.m[3][i] * y + b.m[6][i] * z;
    b.ny[i] = b.m[1][i] * x + b.m[4][i] * y + b.m[7][i] * z;
    b.nz[i] = b.m[2][i] * x + b.m[5][i] * y + b.m[8][i] * z;
  }
}
#endif

// Scales (x, y, z)[i] to unit length for i < n rounded up to 4 (the block's spare lanes hold
// harmless values). SSE: reciprocal square root estimate refined by one Newton-Raphson step
// (relative error about 1e-7, several times faster than sqrt and divide); elsewhere the exact
// 1 / sqrt. The same arithmetic for every lane, so a vertex's result does not depend on where
// it falls in a batch or block.
inline void normalize_block(float* __restrict x, float* __restrict y, float* __restrict z,
                            std::size_t n) {
#if SPINDLE_SKIN_SSE
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

// Copies a finished block stream to the output. With `stream` (SSE, 16-byte aligned output):
// non-temporal stores, which skip reading each cache line before overwriting it. A crowd's
// skinned vertices are written once per frame and far too many to stay in cache (1,000
// characters x 2,000 vertices = 48 MB); on this 2-core VM plain stores from two threads reach
// 7.7 GB/s and streaming ones 47 GB/s, so streaming is what lets two cores skin at once.
inline void write_out(const float* block, float* out, std::size_t n, bool stream) {
#if SPINDLE_SKIN_SSE
  if (stream && reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4) _mm_stream_ps(out + i, _mm_load_ps(block + i));
    std::copy(block + i, block + n, out + i);
    return;
  }
#endif
#if !SPINDLE_SKIN_SSE
  (void)stream;
#endif
  std::copy_n(block, n, out);
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

SkinningJob SkinningJob::batch(std::size_t begin, std::size_t count) const {
  SkinningJob b = *this;
  b.joint_indices = joint_indices.subspan(kMaxInfluences * begin, kMaxInfluences * count);
  b.joint_weights = joint_weights.subspan(kMaxInfluences * begin, kMaxInfluences * count);
  b.in_positions = in_positions.subspan(begin, count);
  b.in_normals = in_normals.subspan(begin, count);
  b.out_positions = out_positions.subspan(begin, count);
  b.out_normals = out_normals.subspan(begin, count);
  return b;
}

core::Status SkinningJob::run() const {
  if (core::Status s = validate(); !s) return s;
  const std::size_t count = vertex_count();
  const bool normals = !in_normals.empty();
  Block b;
  // Spare lanes of a partial last block: finite values, so the vector normalisation is harmless.
  for (float* v : {b.nx, b.ny, b.nz}) std::fill(v, v + kBlock, 1.0f);
  const bool bounds = out_min != nullptr && out_max != nullptr;
  glm::vec3 lo(std::numeric_limits<float>::infinity()), hi(-std::numeric_limits<float>::infinity());
  for (std::size_t v0 = 0; v0 < count; v0 += kBlock) {
    const std::size_t n = std::min(kBlock, count - v0);
    const BlockStreams streams{
        .pal = glm::value_ptr(palette[0]),
        .ji = joint_indices.data() + kMaxInfluences * v0,
        .jw = joint_weights.data() + kMaxInfluences * v0,
        .px = in_positions.x.data() + v0,
        .py = in_positions.y.data() + v0,
        .pz = in_positions.z.data() + v0,
        .nx = normals ? in_normals.x.data() + v0 : nullptr,
        .ny = normals ? in_normals.y.data() + v0 : nullptr,
        .nz = normals ? in_normals.z.data() + v0 : nullptr,
    };
    skin_block(streams, n, b);
    if (bounds) {
      const float* axes[3] = {b.px, b.py, b.pz};
      for (int a = 0; a < 3; ++a) {
        float low = lo[a], high = hi[a];
        for (std::size_t i = 0; i < n; ++i) {
          low = std::min(low, axes[a][i]);
          high = std::max(high, axes[a][i]);
        }
        lo[a] = low;
        hi[a] = high;
      }
    }
    write_out(b.px, out_positions.x.data() + v0, n, streaming_stores);
    write_out(b.py, out_positions.y.data() + v0, n, streaming_stores);
    write_out(b.pz, out_positions.z.data() + v0, n, streaming_stores);
    if (!normals) continue;
    if (normalize_normals) normalize_block(b.nx, b.ny, b.nz, n);
    write_out(b.nx, out_normals.x.data() + v0, n, streaming_stores);
    write_out(b.ny, out_normals.y.data() + v0, n, streaming_stores);
    write_out(b.nz, out_normals.z.data() + v0, n, streaming_stores);
  }
  if (bounds) {
    *out_min = lo;
    *out_max = hi;
  }
#if SPINDLE_SKIN_SSE
  if (streaming_stores)
    _mm_sfence();  // the streaming stores are visible before whoever waits on this job reads them
#endif
  return {};
}

}  // namespace spindle::anim
