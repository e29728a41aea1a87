#include <spindle/anim/local_to_model_job.h>

#include <cstddef>
#include <string>

// SSE2 where the compiler targets it and the build allows intrinsics (SPINDLE_SIMD); otherwise
// glm per joint (the no-threads preset builds that, so CI runs both).
#if defined(__SSE2__) && (!defined(SPINDLE_SIMD) || SPINDLE_SIMD)
#define SPINDLE_LTM_SSE 1
#include <emmintrin.h>
#include <xmmintrin.h>
#else
#define SPINDLE_LTM_SSE 0
#endif

namespace spindle::anim {
namespace {

#if SPINDLE_LTM_SSE
// A joint read as 10 floats: translation [0, 3), rotation x, y, z, w [3, 7), scale [7, 10).
static_assert(sizeof(JointTransform) == 10 * sizeof(float));
static_assert(offsetof(JointTransform, rotation) == 3 * sizeof(float));
static_assert(offsetof(JointTransform, scale) == 7 * sizeof(float));
static_assert(sizeof(glm::mat4) == 16 * sizeof(float));

// A 4x4 matrix as four columns.
struct Columns {
  __m128 c[4];
};

Columns load(const glm::mat4& m) {
  const float* f = &m[0][0];
  return {{_mm_loadu_ps(f), _mm_loadu_ps(f + 4), _mm_loadu_ps(f + 8), _mm_loadu_ps(f + 12)}};
}

void store(glm::mat4& m, const Columns& v) {
  float* f = &m[0][0];
  for (int c = 0; c < 4; ++c) _mm_storeu_ps(f + 4 * c, v.c[c]);
}

template <int Lane>
__m128 splat(__m128 v) {
  return _mm_shuffle_ps(v, v, _MM_SHUFFLE(Lane, Lane, Lane, Lane));
}

// a * b, any 4x4 matrices (PaletteJob's inverse binds need not be affine).
Columns multiply(const Columns& a, const glm::mat4& b) {
  Columns r;
  const float* f = &b[0][0];
  for (int c = 0; c < 4; ++c) {
    const __m128 bc = _mm_loadu_ps(f + 4 * c);
    r.c[c] =
        _mm_add_ps(_mm_add_ps(_mm_mul_ps(a.c[0], splat<0>(bc)), _mm_mul_ps(a.c[1], splat<1>(bc))),
                   _mm_add_ps(_mm_mul_ps(a.c[2], splat<2>(bc)), _mm_mul_ps(a.c[3], splat<3>(bc))));
  }
  return r;
}

// a * b with b's elements already in all four lanes (Skeleton's inverse_bind_lanes_, column
// order): the same products and sums as multiply(), so the same bits, without the broadcasts.
Columns multiply_lanes(const Columns& a, const glm::vec4* b) {
  Columns r;
  const float* f = &b[0].x;
  for (int c = 0; c < 4; ++c) {
    const float* bc = f + 16 * c;
    r.c[c] = _mm_add_ps(
        _mm_add_ps(_mm_mul_ps(a.c[0], _mm_loadu_ps(bc)), _mm_mul_ps(a.c[1], _mm_loadu_ps(bc + 4))),
        _mm_add_ps(_mm_mul_ps(a.c[2], _mm_loadu_ps(bc + 8)),
                   _mm_mul_ps(a.c[3], _mm_loadu_ps(bc + 12))));
  }
  return r;
}

// The local matrices translate(t) * rotate(q) * scale(s) of four joints, one register per element
// over the joints: column c of rotate * scale is q's column c times s[c]; row 3 is (0, 0, 0, 1).
struct LocalFour {
  __m128 m[3][3];  // [column][row]
  __m128 t[3];
};

LocalFour local_four(__m128 tx, __m128 ty, __m128 tz, __m128 x, __m128 y, __m128 z, __m128 w,
                     __m128 sx, __m128 sy, __m128 sz) {
  const __m128 one = _mm_set1_ps(1.0f);
  const __m128 x2 = _mm_add_ps(x, x), y2 = _mm_add_ps(y, y), z2 = _mm_add_ps(z, z);
  const __m128 xx = _mm_mul_ps(x, x2), yy = _mm_mul_ps(y, y2), zz = _mm_mul_ps(z, z2);
  const __m128 xy = _mm_mul_ps(x, y2), xz = _mm_mul_ps(x, z2), yz = _mm_mul_ps(y, z2);
  const __m128 wx = _mm_mul_ps(w, x2), wy = _mm_mul_ps(w, y2), wz = _mm_mul_ps(w, z2);
  LocalFour l;
  l.m[0][0] = _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(yy, zz)), sx);
  l.m[0][1] = _mm_mul_ps(_mm_add_ps(xy, wz), sx);
  l.m[0][2] = _mm_mul_ps(_mm_sub_ps(xz, wy), sx);
  l.m[1][0] = _mm_mul_ps(_mm_sub_ps(xy, wz), sy);
  l.m[1][1] = _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(xx, zz)), sy);
  l.m[1][2] = _mm_mul_ps(_mm_add_ps(yz, wx), sy);
  l.m[2][0] = _mm_mul_ps(_mm_add_ps(xz, wy), sz);
  l.m[2][1] = _mm_mul_ps(_mm_sub_ps(yz, wx), sz);
  l.m[2][2] = _mm_mul_ps(_mm_sub_ps(one, _mm_add_ps(xx, yy)), sz);
  l.t[0] = tx;
  l.t[1] = ty;
  l.t[2] = tz;
  return l;
}

// Four joints of a JointTransform array, transposed to one register per component.
LocalFour local_four(const JointTransform* joints) {
  const auto* f = reinterpret_cast<const float*>(joints);
  __m128 tx = _mm_loadu_ps(f), ty = _mm_loadu_ps(f + 10), tz = _mm_loadu_ps(f + 20),
         unused = _mm_loadu_ps(f + 30);
  _MM_TRANSPOSE4_PS(tx, ty, tz, unused);
  __m128 x = _mm_loadu_ps(f + 3), y = _mm_loadu_ps(f + 13), z = _mm_loadu_ps(f + 23),
         w = _mm_loadu_ps(f + 33);
  _MM_TRANSPOSE4_PS(x, y, z, w);
  __m128 sw = _mm_loadu_ps(f + 6), sx = _mm_loadu_ps(f + 16), sy = _mm_loadu_ps(f + 26),
         sz = _mm_loadu_ps(f + 36);
  _MM_TRANSPOSE4_PS(sw, sx, sy, sz);  // sw: the rotations' w again, unused
  return local_four(tx, ty, tz, x, y, z, w, sx, sy, sz);
}

// Four joints of an SoA pose: already one array per component.
LocalFour local_four(const SoaTransform& e) {
  return local_four(_mm_load_ps(e.tx), _mm_load_ps(e.ty), _mm_load_ps(e.tz), _mm_load_ps(e.qx),
                    _mm_load_ps(e.qy), _mm_load_ps(e.qz), _mm_load_ps(e.qw), _mm_load_ps(e.sx),
                    _mm_load_ps(e.sy), _mm_load_ps(e.sz));
}

// parent * local for joint `Lane` of `l` (local's last row is (0, 0, 0, 1)).
template <int Lane>
Columns parent_times_local(const Columns& p, const LocalFour& l) {
  Columns r;
  for (int c = 0; c < 3; ++c)
    r.c[c] = _mm_add_ps(_mm_add_ps(_mm_mul_ps(p.c[0], splat<Lane>(l.m[c][0])),
                                   _mm_mul_ps(p.c[1], splat<Lane>(l.m[c][1]))),
                        _mm_mul_ps(p.c[2], splat<Lane>(l.m[c][2])));
  r.c[3] = _mm_add_ps(
      _mm_add_ps(_mm_mul_ps(p.c[0], splat<Lane>(l.t[0])), _mm_mul_ps(p.c[1], splat<Lane>(l.t[1]))),
      _mm_add_ps(_mm_mul_ps(p.c[2], splat<Lane>(l.t[2])), p.c[3]));
  return r;
}
#endif

// palette = model * inverse_bind; PaletteJob and LocalToModelJob's fused palette both use it, so
// they give the same bits.
void palette_product(const glm::mat4& model, const glm::mat4& inverse_bind, glm::mat4& palette) {
#if SPINDLE_LTM_SSE
  store(palette, multiply(load(model), inverse_bind));
#else
  palette = model * inverse_bind;
#endif
}

}  // namespace

core::Status LocalToModelJob::validate() const {
  if (skeleton == nullptr) return core::Status::error("LocalToModelJob: no skeleton");
  const auto n = static_cast<std::size_t>(skeleton->joint_count());
  if (!soa_local.empty()) {
    if (!local.empty())
      return core::Status::error("LocalToModelJob: both local and soa_local (set one)");
    if (soa_local.size() != soa_count(n))
      return core::Status::error(
          "LocalToModelJob: soa_local has " + std::to_string(soa_local.size()) + " entries, " +
          std::to_string(n) + " joints need " + std::to_string(soa_count(n)));
  } else if (local.size() != n) {
    return core::Status::error("LocalToModelJob: local pose has " + std::to_string(local.size()) +
                               " joints, skeleton has " + std::to_string(n));
  }
  if (model.size() != n)
    return core::Status::error("LocalToModelJob: model has " + std::to_string(model.size()) +
                               " matrices, skeleton has " + std::to_string(n));
  if (!palette.empty() && palette.size() != n)
    return core::Status::error("LocalToModelJob: palette has " + std::to_string(palette.size()) +
                               " matrices, skeleton has " + std::to_string(n));
  return {};
}

core::Status LocalToModelJob::run() const {
  if (core::Status s = validate(); !s) return s;
  std::span<const int> parents = skeleton->parents();
  std::span<const glm::mat4> inverse_binds = skeleton->inverse_binds();
  const std::size_t n = parents.size();
  std::size_t i = 0;
#if SPINDLE_LTM_SSE
  // Four local matrices at once; the parent products stay one joint at a time (a child may be in
  // the same four as its parent).
  const Columns root_columns = load(root);
  const bool with_palette = !palette.empty();
  const glm::vec4* bind_lanes = skeleton->inverse_bind_lanes_.data();
  const auto finish = [&](std::size_t j, const Columns& m) {
    store(model[j], m);
    if (with_palette) store(palette[j], multiply_lanes(m, bind_lanes + 16 * j));
  };
  const auto parent_of = [&](std::size_t j) {
    const int p = parents[j];
    return p < 0 ? root_columns : load(model[static_cast<std::size_t>(p)]);
  };
  const bool soa = !soa_local.empty();
  for (; i + 4 <= n; i += 4) {
    const LocalFour l = soa ? local_four(soa_local[i / 4]) : local_four(local.data() + i);
    finish(i + 0, parent_times_local<0>(parent_of(i + 0), l));
    finish(i + 1, parent_times_local<1>(parent_of(i + 1), l));
    finish(i + 2, parent_times_local<2>(parent_of(i + 2), l));
    finish(i + 3, parent_times_local<3>(parent_of(i + 3), l));
  }
#endif
  for (; i < n; ++i) {
    const int p = parents[i];
    const JointTransform t =
        soa_local.empty() ? local[i] : soa_local[i / 4].get(static_cast<int>(i % 4));
    model[i] = (p < 0 ? root : model[static_cast<std::size_t>(p)]) * t.to_matrix();
    if (!palette.empty()) palette_product(model[i], inverse_binds[i], palette[i]);
  }
  return {};
}

core::Status PaletteJob::validate() const {
  if (inverse_binds.size() != model.size())
    return core::Status::error("PaletteJob: " + std::to_string(model.size()) +
                               " model matrices but " + std::to_string(inverse_binds.size()) +
                               " inverse binds");
  if (palette.size() != model.size())
    return core::Status::error("PaletteJob: palette has " + std::to_string(palette.size()) +
                               " matrices, expected " + std::to_string(model.size()));
  return {};
}

core::Status PaletteJob::run() const {
  if (core::Status s = validate(); !s) return s;
  for (std::size_t i = 0; i < model.size(); ++i)
    palette_product(model[i], inverse_binds[i], palette[i]);
  return {};
}

}  // namespace spindle::anim
