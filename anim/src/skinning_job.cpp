#include <spindle/anim/skinning_job.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

// SSE intrinsics where the compiler targets SSE and the build allows them (SPINDLE_SIMD); the
// portable paths otherwise (the no-threads preset builds those, so CI runs both).
#if defined(__SSE2__) && (!defined(SPINDLE_SIMD) || SPINDLE_SIMD)
#define SPINDLE_SKIN_SSE 1
#include <emmintrin.h>
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

core::Status check_strided(const StridedStream3& s, std::size_t n, const char* name) {
  const std::string field = std::string("SkinningJob: ") + name;
  if (s.stride < 12)
    return core::Status::error(field + ".stride " + std::to_string(s.stride) +
                               " is less than the 12 bytes of x, y, z");
  if (s.stride % 4 != 0 || s.offset % 4 != 0)
    return core::Status::error(field + ".stride " + std::to_string(s.stride) + " and .offset " +
                               std::to_string(s.offset) + " must be multiples of 4 (floats)");
  if (s.offset + 12 > s.stride)
    return core::Status::error(field + ".offset " + std::to_string(s.offset) +
                               " leaves no room for x, y, z in a stride of " +
                               std::to_string(s.stride));
  if (reinterpret_cast<std::uintptr_t>(s.bytes.data()) % alignof(float) != 0)
    return core::Status::error(field + ".bytes is not 4-byte aligned");
  const std::size_t need = n == 0 ? 0 : (n - 1) * s.stride + s.offset + 12;
  if (s.bytes.size() < need)
    return core::Status::error(field + ".bytes has " + std::to_string(s.bytes.size()) + " bytes, " +
                               std::to_string(n) + " vertices need " + std::to_string(need));
  return {};
}

// Whether every index is < limit. SSE2 has no unsigned 16-bit max, and what the compiler makes
// of a scalar max loop cost as much as a third of the skinning itself; saturating j - (limit -
// 1) is non-zero exactly for the indices out of range.
bool indices_below(std::span<const std::uint16_t> indices, std::size_t limit) {
  if (limit > std::numeric_limits<std::uint16_t>::max()) return true;
  if (limit == 0) return indices.empty();
  const auto last = static_cast<std::uint16_t>(limit - 1);
  std::size_t i = 0;
  std::uint16_t over = 0;
#if SPINDLE_SKIN_SSE
  const __m128i top = _mm_set1_epi16(static_cast<short>(last));
  const auto excess = [&](std::size_t at) {  // > 0 in the lanes whose index is above `last`
    return _mm_subs_epu16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(indices.data() + at)),
                          top);
  };
  // Four accumulators: one would make the loop a chain of dependent ORs.
  __m128i any = _mm_setzero_si128(), a1 = any, a2 = any, a3 = any;
  for (; i + 32 <= indices.size(); i += 32) {
    any = _mm_or_si128(any, excess(i));
    a1 = _mm_or_si128(a1, excess(i + 8));
    a2 = _mm_or_si128(a2, excess(i + 16));
    a3 = _mm_or_si128(a3, excess(i + 24));
  }
  for (; i + 8 <= indices.size(); i += 8) any = _mm_or_si128(any, excess(i));
  any = _mm_or_si128(_mm_or_si128(any, a1), _mm_or_si128(a2, a3));
  over = static_cast<std::uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(any, _mm_setzero_si128())) !=
                                    0xFFFF);
#endif
  for (; i < indices.size(); ++i) over |= indices[i] > last ? 1 : 0;
  return over == 0;
}

// Where the skinned x, y, z of vertex i go: x[i * step], y[i * step], z[i * step]. SoA arrays
// have step 1; interleaved vertices have x, y, z adjacent and step = stride / 4.
struct Out3 {
  float* x = nullptr;
  float* y = nullptr;
  float* z = nullptr;
  std::size_t step = 1;
  // SoA with all three arrays 16-byte aligned, and streaming stores asked for.
  bool stream = false;

  void put(std::size_t i, float vx, float vy, float vz) const {
    x[i * step] = vx;
    y[i * step] = vy;
    z[i * step] = vz;
  }
};

Out3 out3(const Stream3& soa, const StridedStream3& strided, bool streaming) {
  if (!strided.empty()) {
    auto* x = reinterpret_cast<float*>(strided.bytes.data() + strided.offset);
    return {x, x + 1, x + 2, strided.stride / sizeof(float), false};
  }
  const auto aligned = [](const float* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  Out3 o{soa.x.data(), soa.y.data(), soa.z.data(), 1, false};
  o.stream = streaming && aligned(o.x) && aligned(o.y) && aligned(o.z);
  return o;
}

// The inputs of a run, as raw pointers (normals null when absent).
struct Inputs {
  const std::uint16_t* ji;
  const float* jw;
  const float *px, *py, *pz;
  const float *nx, *ny, *nz;

  // The inputs from vertex i on.
  Inputs from(std::size_t i) const {
    return {ji + 4 * i,
            jw + 4 * i,
            px + i,
            py + i,
            pz + i,
            nx ? nx + i : nullptr,
            ny ? ny + i : nullptr,
            nz ? nz + i : nullptr};
  }
};

Inputs inputs(const SkinningJob& job) {
  const bool normals = !job.in_normals.empty();
  return {job.joint_indices.data(),
          job.joint_weights.data(),
          job.in_positions.x.data(),
          job.in_positions.y.data(),
          job.in_positions.z.data(),
          normals ? job.in_normals.x.data() : nullptr,
          normals ? job.in_normals.y.data() : nullptr,
          normals ? job.in_normals.z.data() : nullptr};
}

struct Bounds {
  glm::vec3 lo{std::numeric_limits<float>::infinity()};
  glm::vec3 hi{-std::numeric_limits<float>::infinity()};
};

#if SPINDLE_SKIN_SSE
// SSE, four vertices at a time. Each vertex's matrix is blended as packed vectors (per weight,
// one multiply and add per vector), then the four blended matrices are transposed so that each
// element m[r][c] holds the four vertices, and p' = M (p, 1), n' = M n and the renormalisation
// run on SoA registers: inputs are loaded and outputs stored four vertices at a time, with no
// broadcasts. The palette is read as kVecs vectors per joint: 3 rows (a 3x4 row-major copy that
// run() makes on the stack: 12 multiply-adds per influence, the constant last row skipped) or
// glm's 4 columns (16, the last row wasted: for palettes too large for the copy, or batches
// smaller than the palette). Both do the same arithmetic per element, so the same bits.
constexpr std::size_t kRowJoints = 256;

struct Lanes {
  __m128 x, y, z;
};

inline void transpose(__m128& a, __m128& b, __m128& c, __m128& d) {
  const __m128 t0 = _mm_unpacklo_ps(a, b), t1 = _mm_unpacklo_ps(c, d);
  const __m128 t2 = _mm_unpackhi_ps(a, b), t3 = _mm_unpackhi_ps(c, d);
  a = _mm_movelh_ps(t0, t1);
  b = _mm_movehl_ps(t1, t0);
  c = _mm_movelh_ps(t2, t3);
  d = _mm_movehl_ps(t3, t2);
}

template <int kVecs>
inline void blend(const float* pal, const std::uint16_t* j, const float* w, __m128 (&out)[kVecs]) {
  const __m128 wv = _mm_loadu_ps(w);
  const __m128 w0 = _mm_shuffle_ps(wv, wv, _MM_SHUFFLE(0, 0, 0, 0));
  const __m128 w1 = _mm_shuffle_ps(wv, wv, _MM_SHUFFLE(1, 1, 1, 1));
  const __m128 w2 = _mm_shuffle_ps(wv, wv, _MM_SHUFFLE(2, 2, 2, 2));
  const __m128 w3 = _mm_shuffle_ps(wv, wv, _MM_SHUFFLE(3, 3, 3, 3));
  // 16 floats a joint either way (the row copy is padded), so an offset is one shift; unsigned,
  // as int arithmetic cost a sign extension per index.
  constexpr std::size_t kStride = 16;
  const float* m0 = pal + kStride * j[0];
  const float* m1 = pal + kStride * j[1];
  const float* m2 = pal + kStride * j[2];
  const float* m3 = pal + kStride * j[3];
  // The row copy is 16-byte aligned (so loads fold into the multiplies); a caller's glm
  // matrices need not be.
  const auto load = [](const float* f) { return kVecs == 3 ? _mm_load_ps(f) : _mm_loadu_ps(f); };
  for (int k = 0; k < kVecs; ++k)
    out[k] =
        _mm_add_ps(_mm_add_ps(_mm_mul_ps(w0, load(m0 + 4 * k)), _mm_mul_ps(w1, load(m1 + 4 * k))),
                   _mm_add_ps(_mm_mul_ps(w2, load(m2 + 4 * k)), _mm_mul_ps(w3, load(m3 + 4 * k))));
}

// Reciprocal square root estimate refined by one Newton-Raphson step (relative error about
// 1e-7, several times faster than sqrt and divide).
inline void normalize4(Lanes& n) {
  const __m128 len2 = _mm_max_ps(
      _mm_add_ps(_mm_add_ps(_mm_mul_ps(n.x, n.x), _mm_mul_ps(n.y, n.y)), _mm_mul_ps(n.z, n.z)),
      _mm_set1_ps(1e-30f));
  __m128 r = _mm_rsqrt_ps(len2);
  r = _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(0.5f), r),
                 _mm_sub_ps(_mm_set1_ps(3.0f), _mm_mul_ps(_mm_mul_ps(len2, r), r)));
  n.x = _mm_mul_ps(n.x, r);
  n.y = _mm_mul_ps(n.y, r);
  n.z = _mm_mul_ps(n.z, r);
}

// Skins the four vertices whose inputs start at `in` (each pointer already at the first one).
template <int kVecs>
inline void skin4(const float* pal, const Inputs& in, bool normalize, Lanes& p, Lanes& n) {
  __m128 v[4][kVecs];
#pragma GCC unroll 4
  for (int l = 0; l < 4; ++l) blend<kVecs>(pal, in.ji + 4 * l, in.jw + 4 * l, v[l]);
  __m128 m[3][4];  // m[r][c]: row r, column c of the four matrices
  if constexpr (kVecs == 3) {
    for (int r = 0; r < 3; ++r) {
      transpose(v[0][r], v[1][r], v[2][r], v[3][r]);
      for (int c = 0; c < 4; ++c) m[r][c] = v[c][r];
    }
  } else {
    for (int c = 0; c < 4; ++c) {
      transpose(v[0][c], v[1][c], v[2][c], v[3][c]);
      for (int r = 0; r < 3; ++r) m[r][c] = v[r][c];  // v[3][c]: the constant last row
    }
  }
  const __m128 x = _mm_loadu_ps(in.px), y = _mm_loadu_ps(in.py), z = _mm_loadu_ps(in.pz);
  __m128* out[3] = {&p.x, &p.y, &p.z};
  for (int r = 0; r < 3; ++r)
    *out[r] = _mm_add_ps(_mm_add_ps(_mm_mul_ps(m[r][0], x), _mm_mul_ps(m[r][1], y)),
                         _mm_add_ps(_mm_mul_ps(m[r][2], z), m[r][3]));
  if (in.nx == nullptr) return;
  const __m128 a = _mm_loadu_ps(in.nx), b = _mm_loadu_ps(in.ny), c = _mm_loadu_ps(in.nz);
  __m128* nout[3] = {&n.x, &n.y, &n.z};
  for (int r = 0; r < 3; ++r)
    *nout[r] = _mm_add_ps(_mm_add_ps(_mm_mul_ps(m[r][0], a), _mm_mul_ps(m[r][1], b)),
                          _mm_mul_ps(m[r][2], c));
  if (normalize) normalize4(n);
}

// Writes lanes [0, count) to vertices [i, i + count).
inline void put(const Out3& o, std::size_t i, const Lanes& v, std::size_t count) {
  if (o.step == 1 && count == 4) {
    if (o.stream) {
      _mm_stream_ps(o.x + i, v.x);
      _mm_stream_ps(o.y + i, v.y);
      _mm_stream_ps(o.z + i, v.z);
    } else {
      _mm_storeu_ps(o.x + i, v.x);
      _mm_storeu_ps(o.y + i, v.y);
      _mm_storeu_ps(o.z + i, v.z);
    }
    return;
  }
  if (o.step != 1) {
    // Interleaved: back to one (x, y, z, -) vector per vertex, each stored as 8 + 4 bytes so
    // nothing past z is touched.
    __m128 a = v.x, b = v.y, c = v.z, d = v.z;
    transpose(a, b, c, d);
    const __m128 lanes[4] = {a, b, c, d};
    for (std::size_t l = 0; l < count; ++l) {
      float* x = o.x + (i + l) * o.step;
      _mm_storel_pi(reinterpret_cast<__m64*>(x), lanes[l]);
      _mm_store_ss(x + 2, _mm_movehl_ps(lanes[l], lanes[l]));
    }
    return;
  }
  alignas(16) float t[3][4];
  _mm_store_ps(t[0], v.x);
  _mm_store_ps(t[1], v.y);
  _mm_store_ps(t[2], v.z);
  for (std::size_t l = 0; l < count; ++l) o.put(i + l, t[0][l], t[1][l], t[2][l]);
}

inline void finish_normals(const Out3& o, std::size_t i, Lanes& n, bool normalize) {
  if (normalize) normalize4(n);
  put(o, i, n, 4);
}

struct BoundsLanes {
  __m128 lo[3], hi[3];
  void add(const Lanes& p) {
    lo[0] = _mm_min_ps(lo[0], p.x);
    lo[1] = _mm_min_ps(lo[1], p.y);
    lo[2] = _mm_min_ps(lo[2], p.z);
    hi[0] = _mm_max_ps(hi[0], p.x);
    hi[1] = _mm_max_ps(hi[1], p.y);
    hi[2] = _mm_max_ps(hi[2], p.z);
  }
};

template <int kVecs>
void skin(const SkinningJob& job, const float* pal, const Out3& op, const Out3& on,
          Bounds* bounds) {
  const std::size_t count = job.vertex_count();
  const bool normalize = job.normalize_normals;
  const Inputs all = inputs(job);
  BoundsLanes b;
  for (int a = 0; a < 3; ++a) {
    b.lo[a] = _mm_set1_ps(std::numeric_limits<float>::infinity());
    b.hi[a] = _mm_set1_ps(-std::numeric_limits<float>::infinity());
  }
  Lanes p, n;
  Lanes pending{_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
  std::size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const Inputs in = all.from(i);
    // Each group's normals are normalised and stored one iteration later: the normalisation is
    // a chain of dependent operations at the end of a long loop body, and this way the next
    // group's independent blending hides it (+6% vertices per second).
    skin4<kVecs>(pal, in, false, p, n);
    if (bounds != nullptr) b.add(p);
    put(op, i, p, 4);
    if (all.nx != nullptr) {
      if (i > 0) finish_normals(on, i - 4, pending, normalize);
      pending = n;
    }
  }
  if (all.nx != nullptr && i > 0) finish_normals(on, i - 4, pending, normalize);
  if (i < count) {
    // The last 1-3 vertices as a full group, the last one repeated in the spare lanes (so the
    // bounds are unaffected); lanes are independent, so each vertex gets the same bits.
    alignas(16) std::uint16_t ji[16];
    alignas(16) float jw[16], v[6][4];
    for (std::size_t l = 0; l < 4; ++l) {
      const std::size_t s = std::min(i + l, count - 1);
      std::copy_n(all.ji + 4 * s, 4, ji + 4 * l);
      std::copy_n(all.jw + 4 * s, 4, jw + 4 * l);
      v[0][l] = all.px[s];
      v[1][l] = all.py[s];
      v[2][l] = all.pz[s];
      if (all.nx == nullptr) continue;
      v[3][l] = all.nx[s];
      v[4][l] = all.ny[s];
      v[5][l] = all.nz[s];
    }
    const bool normals = all.nx != nullptr;
    const Inputs in{ji,   jw,  v[0], v[1], v[2], normals ? v[3] : nullptr,
                    v[4], v[5]};  // skin4 reads no normal when nx is null
    skin4<kVecs>(pal, in, normalize, p, n);
    if (bounds != nullptr) b.add(p);
    put(op, i, p, count - i);
    if (normals) put(on, i, n, count - i);
  }
  if (bounds == nullptr) return;
  for (int a = 0; a < 3; ++a) {
    alignas(16) float lo[4], hi[4];
    _mm_store_ps(lo, b.lo[a]);
    _mm_store_ps(hi, b.hi[a]);
    bounds->lo[a] = std::min(std::min(lo[0], lo[1]), std::min(lo[2], lo[3]));
    bounds->hi[a] = std::max(std::max(hi[0], hi[1]), std::max(hi[2], hi[3]));
  }
}

void skin(const SkinningJob& job, const Out3& op, const Out3& on, Bounds* bounds) {
  const std::span<const glm::mat4> palette = job.palette;
  if (palette.size() > kRowJoints || job.vertex_count() < palette.size()) {
    skin<4>(job, glm::value_ptr(palette[0]), op, on, bounds);
    return;
  }
  alignas(16) float rows[kRowJoints * 16];  // rows 0-2 of each matrix, 4 floats of padding
  for (std::size_t j = 0; j < palette.size(); ++j) {
    const float* m = glm::value_ptr(palette[j]);
    __m128 c0 = _mm_loadu_ps(m), c1 = _mm_loadu_ps(m + 4);
    __m128 c2 = _mm_loadu_ps(m + 8), c3 = _mm_loadu_ps(m + 12);
    transpose(c0, c1, c2, c3);
    _mm_store_ps(rows + 16 * j, c0);
    _mm_store_ps(rows + 16 * j + 4, c1);
    _mm_store_ps(rows + 16 * j + 8, c2);
  }
  skin<3>(job, rows, op, on, bounds);
}
#else
// Portable: blocks of kBlock vertices. Blend the block's matrices into SoA rows (16 contiguous
// floats per palette matrix, which compilers vectorise), then transform positions and normals
// vectorised over vertices, renormalise, and copy the block out.
constexpr std::size_t kBlock = 64;

struct Block {
  float px[kBlock], py[kBlock], pz[kBlock];
  float nx[kBlock], ny[kBlock], nz[kBlock];
  float m[12][kBlock];  // rows 0-2 of the 4 blended columns, SoA over the block
};

void skin_block(const float* pal, const Inputs& s, std::size_t n, Block& b) {
  for (std::size_t i = 0; i < n; ++i) {
    const float* w = s.jw + 4 * i;
    const std::uint16_t* j = s.ji + 4 * i;
    const float* in[4] = {pal + 16 * j[0], pal + 16 * j[1], pal + 16 * j[2], pal + 16 * j[3]};
    float m[16];
    for (int e = 0; e < 16; ++e)
      m[e] = w[0] * in[0][e] + w[1] * in[1][e] + w[2] * in[2][e] + w[3] * in[3][e];
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

void skin(const SkinningJob& job, const Out3& op, const Out3& on, Bounds* bounds) {
  const std::size_t count = job.vertex_count();
  const float* pal = glm::value_ptr(job.palette[0]);
  const Inputs all = inputs(job);
  Block b;
  for (std::size_t v0 = 0; v0 < count; v0 += kBlock) {
    const std::size_t n = std::min(kBlock, count - v0);
    const Inputs in = all.from(v0);
    skin_block(pal, in, n, b);
    for (std::size_t i = 0; i < n; ++i) {
      if (bounds != nullptr) {
        bounds->lo = glm::min(bounds->lo, glm::vec3(b.px[i], b.py[i], b.pz[i]));
        bounds->hi = glm::max(bounds->hi, glm::vec3(b.px[i], b.py[i], b.pz[i]));
      }
      op.put(v0 + i, b.px[i], b.py[i], b.pz[i]);
    }
    if (in.nx == nullptr) continue;
    for (std::size_t i = 0; i < n; ++i) {
      float x = b.nx[i], y = b.ny[i], z = b.nz[i];
      if (job.normalize_normals) {
        const float inv = 1.0f / std::sqrt(std::max(x * x + y * y + z * z, 1e-30f));
        x *= inv;
        y *= inv;
        z *= inv;
      }
      on.put(v0 + i, x, y, z);
    }
  }
}
#endif

}  // namespace

core::Status SkinningJob::validate() const {
  const std::size_t n = vertex_count();
  if (palette.empty()) return core::Status::error("SkinningJob: empty palette");
  if (!same_size(in_positions, n))
    return core::Status::error("SkinningJob: in_positions x, y, z differ in size");
  if (!out_positions_strided.empty()) {
    if (!out_positions.empty())
      return core::Status::error(
          "SkinningJob: set out_positions or out_positions_strided, not both");
    if (core::Status s = check_strided(out_positions_strided, n, "out_positions_strided"); !s)
      return s;
  } else if (!same_size(out_positions, n)) {
    return core::Status::error("SkinningJob: out_positions must have " + std::to_string(n) +
                               " vertices");
  }
  if (joint_indices.size() != n * kMaxInfluences)
    return core::Status::error("SkinningJob: joint_indices has " +
                               std::to_string(joint_indices.size()) + " entries, expected " +
                               std::to_string(n * kMaxInfluences));
  if (joint_weights.size() != n * kMaxInfluences)
    return core::Status::error("SkinningJob: joint_weights has " +
                               std::to_string(joint_weights.size()) + " entries, expected " +
                               std::to_string(n * kMaxInfluences));
  if (!out_normals.empty() && !out_normals_strided.empty())
    return core::Status::error("SkinningJob: set out_normals or out_normals_strided, not both");
  const bool normals_out = !out_normals.empty() || !out_normals_strided.empty();
  // (With no vertices, empty in_normals cannot say whether normals were meant.)
  if (n > 0 && in_normals.empty() == normals_out)
    return core::Status::error(
        "SkinningJob: in_normals and out_normals must both be set or both "
        "empty");
  if (!in_normals.empty() && !same_size(in_normals, n))
    return core::Status::error("SkinningJob: normals must have " + std::to_string(n) + " vertices");
  if (!out_normals_strided.empty()) {
    if (core::Status s = check_strided(out_normals_strided, n, "out_normals_strided"); !s) return s;
    // Positions and normals in one vertex buffer: the same vertices, disjoint x, y, z.
    const StridedStream3& p = out_positions_strided;
    const StridedStream3& q = out_normals_strided;
    const auto begin = [](const StridedStream3& s) {
      return reinterpret_cast<std::uintptr_t>(s.bytes.data());
    };
    const bool overlap =
        !p.empty() && begin(p) < begin(q) + q.bytes.size() && begin(q) < begin(p) + p.bytes.size();
    const bool disjoint_fields = begin(p) == begin(q) && p.stride == q.stride &&
                                 (p.offset >= q.offset + 12 || q.offset >= p.offset + 12);
    if (overlap && !disjoint_fields)
      return core::Status::error(
          "SkinningJob: out_positions_strided and out_normals_strided overlap");
  } else if (!in_normals.empty() && !same_size(out_normals, n)) {
    return core::Status::error("SkinningJob: normals must have " + std::to_string(n) + " vertices");
  }
  // A fast pass first; the slow loop only runs to name the bad vertex.
  if (!indices_below(joint_indices, palette.size())) {
    for (std::size_t i = 0; i < joint_indices.size(); ++i)
      if (joint_indices[i] >= palette.size())
        return core::Status::error("SkinningJob: vertex " + std::to_string(i / kMaxInfluences) +
                                   " joint index " + std::to_string(joint_indices[i]) +
                                   " out of range (palette has " + std::to_string(palette.size()) +
                                   ")");
  }
  return {};
}

StridedStream3 StridedStream3::subspan(std::size_t begin, std::size_t count) const {
  if (empty()) return {};
  const std::size_t first = std::min(begin * stride, bytes.size());
  const std::size_t size = std::min(count * stride, bytes.size() - first);
  return {bytes.subspan(first, size), stride, offset};
}

SkinningJob SkinningJob::batch(std::size_t begin, std::size_t count) const {
  SkinningJob b = *this;
  b.joint_indices = joint_indices.subspan(kMaxInfluences * begin, kMaxInfluences * count);
  b.joint_weights = joint_weights.subspan(kMaxInfluences * begin, kMaxInfluences * count);
  b.in_positions = in_positions.subspan(begin, count);
  b.in_normals = in_normals.subspan(begin, count);
  b.out_positions = out_positions.subspan(begin, count);
  b.out_normals = out_normals.subspan(begin, count);
  b.out_positions_strided = out_positions_strided.subspan(begin, count);
  b.out_normals_strided = out_normals_strided.subspan(begin, count);
  return b;
}

core::Status SkinningJob::run() const {
  if (core::Status s = validate(); !s) return s;
  const bool want_bounds = out_min != nullptr && out_max != nullptr;
  Bounds bounds;
  if (vertex_count() > 0) {
    const Out3 op = out3(out_positions, out_positions_strided, streaming_stores);
    const Out3 on =
        in_normals.empty() ? Out3{} : out3(out_normals, out_normals_strided, streaming_stores);
    skin(*this, op, on, want_bounds ? &bounds : nullptr);
  }
  if (want_bounds) {
    *out_min = bounds.lo;
    *out_max = bounds.hi;
  }
#if SPINDLE_SKIN_SSE
  if (streaming_stores)
    _mm_sfence();  // the streaming stores are visible before whoever waits on this job reads them
#endif
  return {};
}

}  // namespace spindle::anim
