#include <spindle/anim/sampling_job.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "compressed_view.h"
#include "fit.h"
#include "packed_layout.h"
#include "quantize.h"

// SSE2 where the compiler targets it and the build allows intrinsics (SPINDLE_SIMD); otherwise
// GLM's scalar code. Both give the same bits.
#if defined(__SSE2__) && (!defined(SPINDLE_SIMD) || SPINDLE_SIMD)
#include <emmintrin.h>
#define SPINDLE_ANIM_SAMPLE_SSE2 1
#else
#define SPINDLE_ANIM_SAMPLE_SSE2 0
#endif

namespace spindle::anim {
namespace {

// The per-track helpers below run 3 x joints times per sample; GCC declines to inline them into
// run()'s two loops on its own, which cost the float path ~2x.
#if defined(__GNUC__)
#define SPINDLE_ANIM_INLINE [[gnu::always_inline]] inline
#else
#define SPINDLE_ANIM_INLINE inline
#endif

// Forward steps tried before a binary search is cheaper.
constexpr int kMaxForwardSteps = 4;

// Key times of one track, whatever the key storage: float keys (AoS, Stride floats apart) or a
// quantised clip's packed times (Stride 1).
template <std::size_t Stride>
struct Times {
  const float* first;
  std::uint32_t n;
  float operator[](std::uint32_t k) const { return first[k * Stride]; }
};

template <class Key>
Times<sizeof(Key) / sizeof(float)> times_of(const std::vector<Key>& keys) {
  static_assert(sizeof(Key) % sizeof(float) == 0 && offsetof(Key, time) == 0);
  return {&keys.data()->time, static_cast<std::uint32_t>(keys.size())};
}

// Binary search for the key at or before t (upper_bound - 1); kept out of line so the forward
// path stays small enough to inline.
template <std::size_t Stride>
[[gnu::noinline]] std::uint32_t search(const Times<Stride>& keys, float t,
                                       std::uint64_t& searches) {
  ++searches;
  std::uint32_t lo = 0, count = keys.n;
  while (count > 0) {
    const std::uint32_t half = count / 2;
    if (keys[lo + half] <= t) {
      lo += half + 1;
      count -= half + 1;
    } else {
      count = half;
    }
  }
  return lo == 0 ? 0 : lo - 1;
}

template <std::size_t Stride>
SPINDLE_ANIM_INLINE std::uint32_t seek(const Times<Stride>& keys, float t, std::uint32_t cursor,
                                       bool forward, std::uint64_t& searches) {
  const std::uint32_t n = keys.n;
  if (forward && cursor < n) {
    int steps = 0;
    while (cursor + 1 < n && keys[cursor + 1] <= t && steps < kMaxForwardSteps) {
      ++cursor;
      ++steps;
    }
    if (cursor + 1 >= n || keys[cursor + 1] > t) return cursor;
  }
  return search(keys, t, searches);
}

// 0 when t is at or before key k or k is the last key; otherwise the fraction toward k + 1.
template <std::size_t Stride>
SPINDLE_ANIM_INLINE float alpha(const Times<Stride>& keys, std::uint32_t k, float t) {
  if (k + 1 >= keys.n || t <= keys[k]) return 0.0f;
  return (t - keys[k]) / (keys[k + 1] - keys[k]);
}

SPINDLE_ANIM_INLINE glm::vec3 interpolate(const glm::vec3& v0, const glm::vec3& v1, float a) {
  return v0 + (v1 - v0) * a;
}

SPINDLE_ANIM_INLINE glm::quat interpolate(const glm::quat& q0, glm::quat q1, float a) {
  if (glm::dot(q0, q1) < 0.0f) q1 = -q1;  // shortest path
  return glm::normalize(q0 * (1.0f - a) + q1 * a);
}

// Seeks the track's cursor, then interpolates the (at most two) keys around t; value_at(k) reads
// or decodes key k, so only those keys are decoded.
template <std::size_t Stride, class ValueAt>
SPINDLE_ANIM_INLINE auto sample(const Times<Stride>& keys, ValueAt value_at, float t,
                                std::uint32_t& cursor, bool forward, std::uint64_t& searches) {
  cursor = seek(keys, t, cursor, forward, searches);
  const float a = alpha(keys, cursor, t);
  if (a == 0.0f) return value_at(cursor);
  return interpolate(value_at(cursor), value_at(cursor + 1), a);
}

template <class Key>
SPINDLE_ANIM_INLINE auto sample(const std::vector<Key>& keys, float t, std::uint32_t& cursor,
                                bool forward, std::uint64_t& searches) {
  return sample(
      times_of(keys), [&](std::uint32_t k) { return keys[k].value; }, t, cursor, forward, searches);
}

// Compressed clips: a view of the key stream with its index widths fixed, so that the decoding
// loops are compiled once per width. Templates so that the clip's and cache's private types need
// not be named here.
template <class Compressed, class Track, class Time>
struct Stream {
  const Compressed& c;
  const Track* tracks;
  const Time* times;

  std::size_t track(std::uint32_t k) const { return tracks[k]; }
  // The time and value of key k (a rotation as x, y, z, w).
  SPINDLE_ANIM_INLINE std::pair<float, glm::vec4> decode(std::uint32_t k) const {
    const std::size_t part = tracks[k] % 3u;
    if (part == 1) {
      const glm::quat q = detail::decode_quat(c.values[k]);
      return {c.times[times[k]], glm::vec4(q.x, q.y, q.z, q.w)};
    }
    const std::size_t r = 2 * (tracks[k] / 3u) + part / 2;
    return {c.times[times[k]],
            glm::vec4(detail::decode_vec3(c.values[k], c.origin[r], c.step[r]), 0.0f)};
  }
};

// 1 / (t1 - t0), so sampling multiplies rather than divides (~10% of a compressed sample); 0 for
// a one-key track's pair, whose two keys are the same.
template <class Pair>
SPINDLE_ANIM_INLINE void set_span(Pair& pair) {
  pair.inv_span = pair.t1 > pair.t0 ? 1.0f / (pair.t1 - pair.t0) : 0.0f;
}

// Brings the cache's decoded pairs (`pairs`, `found` per track; `next` stream keys decoded) to
// `target` stream keys: forward by decoding the keys between, else by reseeking.
template <class S, class Pair>
void advance(const S& s, std::size_t tracks, std::uint32_t target, bool forward, Pair* pairs,
             std::uint8_t* found, std::uint32_t& next, std::uint64_t& searches,
             std::uint64_t& decoded) {
  if (forward && target - next <= tracks) {
    decoded += target - next;
    for (; next < target; ++next) {
      Pair& pair = pairs[s.track(next)];
      pair.t0 = pair.t1;
      pair.v0 = pair.v1;
      std::tie(pair.t1, pair.v1) = s.decode(next);
      set_span(pair);
    }
    return;
  }
  // Reseek: the last two keys of every track before `target`, found scanning back; reads only
  // track indices on the way and decodes two keys per track.
  ++searches;
  std::fill(found, found + tracks, std::uint8_t{0});
  std::size_t missing = 2 * tracks;
  for (std::uint32_t k = target; k-- > 0 && missing > 0;) {
    const std::size_t track = s.track(k);
    if (found[track] == 2) continue;
    Pair& pair = pairs[track];
    if (found[track]++ == 0) {
      std::tie(pair.t1, pair.v1) = s.decode(k);
    } else {
      std::tie(pair.t0, pair.v0) = s.decode(k);
      set_span(pair);
    }
    --missing;
  }
  decoded += 2 * tracks;
  next = target;
}

// The value of a track's decoded pair at t: the same keys the quantised path uses; the fraction
// may differ from its division in the last bit.
template <class Value, class Pair, class FromVec4>
SPINDLE_ANIM_INLINE Value sample_pair(const Pair& d, float t, FromVec4 from) {
  if (t <= d.t0) return from(d.v0);
  if (t >= d.t1) return from(d.v1);  // only past a track's last key: else it would have advanced
  const float a = (t - d.t0) * d.inv_span;
  if (a == 0.0f) return from(d.v0);
  return interpolate(from(d.v0), from(d.v1), a);
}

#if SPINDLE_ANIM_SAMPLE_SSE2
// One decoded value (x, y, z, w) in a register.
struct Lanes4 {
  __m128 v;
  glm::vec3 vec3() const {
    alignas(16) float f[4];
    _mm_store_ps(f, v);
    return {f[0], f[1], f[2]};
  }
  glm::quat quat() const {
    alignas(16) float f[4];
    _mm_store_ps(f, v);
    return {f[3], f[0], f[1], f[2]};
  }
};

// GLM's quaternion dot, (w w' + x x') + (y y' + z z'), in every lane.
SPINDLE_ANIM_INLINE __m128 quat_dot(__m128 a, __m128 b) {
  const __m128 p = _mm_mul_ps(a, b);                                              // x y z w
  const __m128 s = _mm_add_ps(p, _mm_shuffle_ps(p, p, _MM_SHUFFLE(0, 1, 2, 3)));  // x+w, y+z
  const __m128 d = _mm_add_ps(_mm_shuffle_ps(s, s, _MM_SHUFFLE(0, 0, 0, 0)),
                              _mm_shuffle_ps(s, s, _MM_SHUFFLE(1, 1, 1, 1)));
  return d;
}

// sample_pair with the value's four lanes in one register: the same operations in the same
// order as interpolate() and glm::normalize, so the same bits.
template <class Pair>
SPINDLE_ANIM_INLINE Lanes4 sample_pair_sse(const Pair& d, float t, bool rotation) {
  const __m128 v0 = _mm_loadu_ps(&d.v0.x);
  if (t <= d.t0) return {v0};
  __m128 v1 = _mm_loadu_ps(&d.v1.x);
  if (t >= d.t1) return {v1};
  const float a = (t - d.t0) * d.inv_span;
  if (a == 0.0f) return {v0};
  const __m128 av = _mm_set1_ps(a);
  if (!rotation) return {_mm_add_ps(v0, _mm_mul_ps(_mm_sub_ps(v1, v0), av))};
  if (_mm_cvtss_f32(quat_dot(v0, v1)) < 0.0f) v1 = _mm_xor_ps(v1, _mm_set1_ps(-0.0f));
  const __m128 q = _mm_add_ps(_mm_mul_ps(v0, _mm_set1_ps(1.0f - a)), _mm_mul_ps(v1, av));
  const float len = std::sqrt(_mm_cvtss_f32(quat_dot(q, q)));
  if (len <= 0.0f) return {_mm_setr_ps(0.0f, 0.0f, 0.0f, 1.0f)};
  return {_mm_mul_ps(q, _mm_set1_ps(1.0f / len))};
}

// Where nlerp4 puts the four rotations: four JointTransforms, or one SoaTransform's lanes.
struct AosRotations {
  JointTransform* out;
  void put(__m128 qx, __m128 qy, __m128 qz, __m128 qw) const {
    _MM_TRANSPOSE4_PS(qx, qy, qz, qw);
    _mm_storeu_ps(&out[0].rotation.x, qx);
    _mm_storeu_ps(&out[1].rotation.x, qy);
    _mm_storeu_ps(&out[2].rotation.x, qz);
    _mm_storeu_ps(&out[3].rotation.x, qw);
  }
  // Lane k's rotation from four floats x, y, z, w.
  void put(int k, const float* q) const { _mm_storeu_ps(&out[k].rotation.x, _mm_loadu_ps(q)); }
};
struct SoaRotations {
  SoaTransform* out;
  void put(__m128 qx, __m128 qy, __m128 qz, __m128 qw) const {
    _mm_store_ps(out->qx, qx);
    _mm_store_ps(out->qy, qy);
    _mm_store_ps(out->qz, qz);
    _mm_store_ps(out->qw, qw);
  }
  void put(int k, const float* q) const {
    out->qx[k] = q[0], out->qy[k] = q[1], out->qz[k] = q[2], out->qw[k] = q[3];
  }
};

// The rotations of four joints into `out`, one register per component: lane k nlerps from
// q0[k] toward q1[k] (x, y, z, w) by lane k of `av` with the same operations as
// sample_pair_sse and interpolate(), so the same bits, and one square root and one division for
// the four. Lanes in `raw` take *as_is[k] as it is instead (a key at or outside the pair, or a
// zero fraction); their q0 and q1 are still read.
template <class Out>
SPINDLE_ANIM_INLINE void nlerp4(const float* const q0[4], const float* const q1[4], __m128 av,
                                int raw, const float* const as_is[4], const Out& out) {
  static_assert(offsetof(glm::quat, x) == 0 && offsetof(glm::quat, w) == 3 * sizeof(float));
  if (raw != 0xF) {
    __m128 x0 = _mm_loadu_ps(q0[0]), y0 = _mm_loadu_ps(q0[1]), z0 = _mm_loadu_ps(q0[2]),
           w0 = _mm_loadu_ps(q0[3]);
    _MM_TRANSPOSE4_PS(x0, y0, z0, w0);
    __m128 x1 = _mm_loadu_ps(q1[0]), y1 = _mm_loadu_ps(q1[1]), z1 = _mm_loadu_ps(q1[2]),
           w1 = _mm_loadu_ps(q1[3]);
    _MM_TRANSPOSE4_PS(x1, y1, z1, w1);
    // GLM's quaternion dot, (w w' + x x') + (y y' + z z'), per lane.
    const auto dot = [](__m128 ax, __m128 ay, __m128 az, __m128 aw, __m128 bx, __m128 by, __m128 bz,
                        __m128 bw) {
      return _mm_add_ps(_mm_add_ps(_mm_mul_ps(aw, bw), _mm_mul_ps(ax, bx)),
                        _mm_add_ps(_mm_mul_ps(ay, by), _mm_mul_ps(az, bz)));
    };
    const __m128 flip = _mm_and_ps(
        _mm_cmplt_ps(dot(x0, y0, z0, w0, x1, y1, z1, w1), _mm_setzero_ps()), _mm_set1_ps(-0.0f));
    x1 = _mm_xor_ps(x1, flip);
    y1 = _mm_xor_ps(y1, flip);
    z1 = _mm_xor_ps(z1, flip);
    w1 = _mm_xor_ps(w1, flip);
    const __m128 bv = _mm_sub_ps(_mm_set1_ps(1.0f), av);
    __m128 qx = _mm_add_ps(_mm_mul_ps(x0, bv), _mm_mul_ps(x1, av)),
           qy = _mm_add_ps(_mm_mul_ps(y0, bv), _mm_mul_ps(y1, av)),
           qz = _mm_add_ps(_mm_mul_ps(z0, bv), _mm_mul_ps(z1, av)),
           qw = _mm_add_ps(_mm_mul_ps(w0, bv), _mm_mul_ps(w1, av));
    const __m128 len = _mm_sqrt_ps(dot(qx, qy, qz, qw, qx, qy, qz, qw));
    const __m128 inv = _mm_div_ps(_mm_set1_ps(1.0f), len);
    qx = _mm_mul_ps(qx, inv);
    qy = _mm_mul_ps(qy, inv);
    qz = _mm_mul_ps(qz, inv);
    qw = _mm_mul_ps(qw, inv);
    out.put(qx, qy, qz, qw);
    // A zero-length sum (opposite keys half way) gives the identity, as glm::normalize does.
    const int zero = _mm_movemask_ps(_mm_cmple_ps(len, _mm_setzero_ps())) & ~raw;
    if (zero != 0) [[unlikely]] {
      static constexpr float kIdentity[4] = {0.0f, 0.0f, 0.0f, 1.0f};
      for (int k = 0; k < 4; ++k)
        if ((zero >> k) & 1) out.put(k, kIdentity);
    }
  }
  for (int k = 0; k < 4; ++k)
    if ((raw >> k) & 1) out.put(k, as_is[k]);
}

// The rotations of four joints from their decoded pairs (`d[1]`, `d[4]`, `d[7]`, `d[10]`), as
// sample_pair_sse would give them.
template <class Pair, class Out>
SPINDLE_ANIM_INLINE void sample_rotations4(const Pair* d, float t, const Out& out) {
  float a[4];
  const float *q0[4], *q1[4], *as_is[4] = {};
  int raw = 0;
  for (int k = 0; k < 4; ++k) {
    const Pair& p = d[3 * k + 1];
    q0[k] = &p.v0.x;
    q1[k] = &p.v1.x;
    const float ak = (t - p.t0) * p.inv_span;
    a[k] = ak;
    if (t <= p.t0 || ak == 0.0f) {
      as_is[k] = q0[k];
      raw |= 1 << k;
    } else if (t >= p.t1) {
      as_is[k] = q1[k];
      raw |= 1 << k;
    }
  }
  nlerp4(q0, q1, _mm_setr_ps(a[0], a[1], a[2], a[3]), raw, as_is, out);
}

// Float clips, joints [0, 4) of `tracks` into out[0..4): seeks the twelve tracks' cursors (`cur`:
// the first joint's three), then takes the twelve fractions with three divisions, one per part
// for the four joints, where sample() takes one per track. Lane for lane the same operations as
// sample(), so the same bits.
// Writes into `out` (JointTransform[4]) or, with SoaTransform, into one entry's lanes.
template <class Out>
SPINDLE_ANIM_INLINE void sample_float4(const JointTrack* tracks, float t, std::uint32_t* cur,
                                       bool forward, std::uint64_t& searches, Out* out) {
  std::uint32_t key[3][4];
  float num[3][4], den[3][4];
  int raw[3] = {0, 0, 0};  // bit k: joint k takes its cursor's key as it is
  const auto seek_part = [&](const auto& keys, int part, int k) {
    const auto times = times_of(keys);
    std::uint32_t& c = cur[3 * k + part];
    c = seek(times, t, c, forward, searches);
    key[part][k] = c;
    // alpha(): 0 at or before the key, or on the last key.
    if (c + 1 >= times.n || t <= times[c]) {
      raw[part] |= 1 << k;
      num[part][k] = 0.0f;
      den[part][k] = 1.0f;
    } else {
      num[part][k] = t - times[c];
      den[part][k] = times[c + 1] - times[c];
    }
  };
  for (int k = 0; k < 4; ++k) {
    seek_part(tracks[k].translations, 0, k);
    seek_part(tracks[k].rotations, 1, k);
    seek_part(tracks[k].scales, 2, k);
  }
  __m128 a[3];
  alignas(16) float af[3][4];
  for (int p = 0; p < 3; ++p) {
    a[p] = _mm_div_ps(_mm_setr_ps(num[p][0], num[p][1], num[p][2], num[p][3]),
                      _mm_setr_ps(den[p][0], den[p][1], den[p][2], den[p][3]));
    raw[p] |= _mm_movemask_ps(_mm_cmpeq_ps(a[p], _mm_setzero_ps()));  // a zero fraction
    _mm_store_ps(af[p], a[p]);
  }
  for (int k = 0; k < 4; ++k) {
    const JointTrack& tr = tracks[k];
    const std::uint32_t kt = key[0][k], ks = key[2][k];
    const glm::vec3 translation =
        (raw[0] >> k) & 1
            ? tr.translations[kt].value
            : interpolate(tr.translations[kt].value, tr.translations[kt + 1].value, af[0][k]);
    const glm::vec3 scale =
        (raw[2] >> k) & 1 ? tr.scales[ks].value
                          : interpolate(tr.scales[ks].value, tr.scales[ks + 1].value, af[2][k]);
    if constexpr (std::is_same_v<Out, SoaTransform>) {
      out->tx[k] = translation.x, out->ty[k] = translation.y, out->tz[k] = translation.z;
      out->sx[k] = scale.x, out->sy[k] = scale.y, out->sz[k] = scale.z;
    } else {
      out[k].translation = translation;
      out[k].scale = scale;
    }
  }
  const float *q0[4], *q1[4];
  for (int k = 0; k < 4; ++k) {
    const std::vector<QuatKey>& r = tracks[k].rotations;
    const std::uint32_t kr = key[1][k];
    q0[k] = &r[kr].value.x;
    q1[k] = (raw[1] >> k) & 1 ? q0[k] : &r[kr + 1].value.x;
  }
  if constexpr (std::is_same_v<Out, SoaTransform>)
    nlerp4(q0, q1, a[1], raw[1], q0, SoaRotations{out});
  else
    nlerp4(q0, q1, a[1], raw[1], q0, AosRotations{out});
}
#endif
}  // namespace

void SamplingCache::resize(int joint_count, CacheFor clips) {
  const auto tracks = static_cast<std::size_t>(std::max(joint_count, 0)) * 3;
  const std::size_t decoded = clips == CacheFor::AnyClip ? tracks : 0;
  cursors_.assign(tracks, 0);
  decoded_.assign(decoded, {});
  detail::fit(decoded_);
  found_.assign(decoded, 0);
  detail::fit(found_);
  next_ = 0;
  time_index_ = 0;
  source_ = nullptr;
  source_id_ = 0;
}

void SamplingJob::sample_compressed(const detail::CompressedView& c, bool forward) const {
  SamplingCache& cache = *this->cache;
  const std::size_t tracks = 3 * joints();
  SamplingCache::DecodedKeys* d = cache.decoded_.data();

  // f: distinct key times at or before `time`. Forward playback moves it on by a key time or two
  // a frame: step from the last sample's, and search only the rest after a few steps (a binary
  // search's branches mispredict: the search was ~2.5% of a shipped sample).
  const std::size_t distinct = c.times.size();
  std::size_t f = forward ? cache.time_index_ : 0;
  for (int step = 0; f < distinct && c.times[f] <= time; ++f, ++step) {
    if (step == kMaxForwardSteps) {
      f = static_cast<std::size_t>(
          std::upper_bound(c.times.begin() + static_cast<std::ptrdiff_t>(f), c.times.end(), time) -
          c.times.begin());
      break;
    }
  }
  cache.time_index_ = static_cast<std::uint32_t>(f);
  // Stream keys needed by `time`: the initial two per track, then the seek table's count.
  const std::uint32_t target = f == 0 ? static_cast<std::uint32_t>(2 * tracks) : c.consumed[f - 1];
  std::uint32_t next = cache.next_;
  const auto run = [&](const auto& stream) {
    advance(stream, tracks, target, forward, d, cache.found_.data(), next, cache.searches_,
            cache.decoded_keys_);
  };
  using C = detail::CompressedView;
  const bool narrow_tracks = !c.tracks8.empty(), narrow_times = !c.times8.empty();
  if (narrow_tracks && narrow_times)
    run(Stream<C, std::uint8_t, std::uint8_t>{c, c.tracks8.data(), c.times8.data()});
  else if (narrow_tracks)
    run(Stream<C, std::uint8_t, std::uint16_t>{c, c.tracks8.data(), c.times16.data()});
  else if (narrow_times)
    run(Stream<C, std::uint16_t, std::uint8_t>{c, c.tracks16.data(), c.times8.data()});
  else
    run(Stream<C, std::uint16_t, std::uint16_t>{c, c.tracks16.data(), c.times16.data()});
  cache.next_ = next;

#if SPINDLE_ANIM_SAMPLE_SSE2
  const std::size_t n = joints();
  if (!soa_output.empty()) {
    // Whole entries four joints at a time, straight into their lanes; the last entry's joints
    // one by one.
    SoaTransform* soa = soa_output.data();
    std::size_t j = 0;
    for (; j + 4 <= n; j += 4) {
      const SamplingCache::DecodedKeys* g = d + 3 * j;
      SoaTransform& e = soa[j / 4];
      const auto part = [&](int which, float* x, float* y, float* z) {
        __m128 r0 = sample_pair_sse(g[which], time, false).v,
               r1 = sample_pair_sse(g[3 + which], time, false).v,
               r2 = sample_pair_sse(g[6 + which], time, false).v,
               r3 = sample_pair_sse(g[9 + which], time, false).v;
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        _mm_store_ps(x, r0);
        _mm_store_ps(y, r1);
        _mm_store_ps(z, r2);
      };
      part(0, e.tx, e.ty, e.tz);
      part(2, e.sx, e.sy, e.sz);
      sample_rotations4(g, time, SoaRotations{&e});
    }
    for (; j < n; ++j) {
      const SamplingCache::DecodedKeys* g = d + 3 * j;
      soa[j / 4].set(static_cast<int>(j % 4), {sample_pair_sse(g[0], time, false).vec3(),
                                               sample_pair_sse(g[1], time, true).quat(),
                                               sample_pair_sse(g[2], time, false).vec3()});
    }
    return;
  }
  JointTransform* out = output.data();
  if (n < 4) {
    for (std::size_t j = 0; j < n; ++j, d += 3) {
      out[j].translation = sample_pair_sse(d[0], time, false).vec3();
      out[j].rotation = sample_pair_sse(d[1], time, true).quat();
      out[j].scale = sample_pair_sse(d[2], time, false).vec3();
    }
    return;
  }
  // Four joints at a time; the last n % 4 as the group ending at the last joint (its first
  // joints again, to the same bits).
  const auto four = [&](std::size_t j) {
    const SamplingCache::DecodedKeys* g = d + 3 * j;
    for (int k = 0; k < 4; ++k) {
      out[j + k].translation = sample_pair_sse(g[3 * k], time, false).vec3();
      out[j + k].scale = sample_pair_sse(g[3 * k + 2], time, false).vec3();
    }
    sample_rotations4(g, time, AosRotations{out + j});
  };
  for (std::size_t j = 0; j + 4 <= n; j += 4) four(j);
  if (n % 4 != 0) four(n - 4);
#else
  const auto to_vec3 = [](const glm::vec4& v) { return glm::vec3(v); };
  const auto to_quat = [](const glm::vec4& v) { return glm::quat(v.w, v.x, v.y, v.z); };
  for (std::size_t j = 0; j < joints(); ++j, d += 3) {
    put(j,
        {sample_pair<glm::vec3>(d[0], time, to_vec3), sample_pair<glm::quat>(d[1], time, to_quat),
         sample_pair<glm::vec3>(d[2], time, to_vec3)});
  }
#endif
}

core::Status SamplingJob::validate() const {
  if (clip == nullptr && packed == nullptr) return core::Status::error("SamplingJob: no clip");
  if (clip != nullptr && packed != nullptr)
    return core::Status::error("SamplingJob: both a clip and a packed clip (set one)");
  if (packed != nullptr && !packed->valid())
    return core::Status::error("SamplingJob: the packed clip is empty (PackedClip::open() it)");
  if (cache == nullptr) return core::Status::error("SamplingJob: no cache");
  if (!std::isfinite(time)) return core::Status::error("SamplingJob: time is not finite");
  const int n = clip != nullptr ? clip->joint_count() : packed->joint_count();
  if (cache->joint_capacity() < n)
    return core::Status::error("SamplingJob: cache holds " +
                               std::to_string(cache->joint_capacity()) + " joints, clip has " +
                               std::to_string(n));
  if ((packed != nullptr || clip->is_compressed()) && !cache->holds_compressed())
    return core::Status::error("SamplingJob: clip '" +
                               (clip != nullptr ? clip->name() : std::string(packed->name())) +
                               "' is compressed, the cache was sized for "
                               "CacheFor::UncompressedClips");
  if (output.empty() == soa_output.empty() && n > 0)
    return core::Status::error(output.empty()
                                   ? "SamplingJob: no output (set output or soa_output)"
                                   : "SamplingJob: both output and soa_output (set one)");
  if (!soa_output.empty()) {
    if (soa_output.size() != soa_count(static_cast<std::size_t>(n)))
      return core::Status::error("SamplingJob: soa_output has " +
                                 std::to_string(soa_output.size()) + " entries, a clip of " +
                                 std::to_string(n) + " joints needs " +
                                 std::to_string(soa_count(static_cast<std::size_t>(n))));
    return {};
  }
  if (output.size() != static_cast<std::size_t>(n))
    return core::Status::error("SamplingJob: output has " + std::to_string(output.size()) +
                               " joints, clip has " + std::to_string(n));
  return {};
}

std::size_t SamplingJob::joints() const {
  return static_cast<std::size_t>(clip != nullptr ? clip->joint_count() : packed->joint_count());
}

void SamplingJob::put(std::size_t j, const JointTransform& t) const {
  if (soa_output.empty())
    output[j] = t;
  else
    soa_output[j / 4].set(static_cast<int>(j % 4), t);
}

core::Status SamplingJob::run() const {
  if (core::Status s = validate(); !s) return s;
  SamplingCache& c = *cache;
  // A packed clip is the same clip at the same address with the same content (a cache slot may
  // have been reloaded with another).
  const void* source = clip != nullptr ? static_cast<const void*>(clip) : packed->base_;
  const std::uint64_t id = clip != nullptr ? 0 : packed->id();
  const bool forward = c.source_ == source && c.source_id_ == id && time >= c.time_;
  std::uint32_t* cur = c.cursors_.data();
  if (packed != nullptr) {
    sample_compressed(detail::view_of(packed->base_), forward);
  } else if (clip->is_compressed()) {
    sample_compressed(clip->compressed_view(), forward);
  } else if (!clip->is_quantized()) {
    std::span<const JointTrack> tracks = clip->tracks();
    std::size_t j = 0;
#if SPINDLE_ANIM_SAMPLE_SSE2
    for (; j + 4 <= tracks.size(); j += 4, cur += 12) {
      if (soa_output.empty()) {
        sample_float4(&tracks[j], time, cur, forward, c.searches_, &output[j]);
        continue;
      }
      sample_float4(&tracks[j], time, cur, forward, c.searches_, &soa_output[j / 4]);
    }
#endif
    for (; j < tracks.size(); ++j, cur += 3) {
      const JointTrack& tr = tracks[j];
      put(j, {sample(tr.translations, time, cur[0], forward, c.searches_),
              sample(tr.rotations, time, cur[1], forward, c.searches_),
              sample(tr.scales, time, cur[2], forward, c.searches_)});
    }
  } else {
    // Track 3 * j + i owns keys [first[i], first[i + 1]) once `first` points at joint j.
    const Clip::QuantizedKeys& q = clip->quantized_;
    const std::uint32_t* first = q.first.data();
    const auto keys = [&](int i) {
      return Times<1>{q.times.data() + first[i], first[i + 1] - first[i]};
    };
    const auto* values = q.values.data();
    for (std::size_t j = 0; j < joints(); ++j, cur += 3, first += 3) {
      const glm::vec3 *origin = &q.origin[2 * j], *step = &q.step[2 * j];
      const auto translation_at = [&](std::uint32_t k) {
        return detail::decode_vec3(values[first[0] + k], origin[0], step[0]);
      };
      const auto rotation_at = [&](std::uint32_t k) {
        return detail::decode_quat(values[first[1] + k]);
      };
      const auto scale_at = [&](std::uint32_t k) {
        return detail::decode_vec3(values[first[2] + k], origin[1], step[1]);
      };
      put(j, {sample(keys(0), translation_at, time, cur[0], forward, c.searches_),
              sample(keys(1), rotation_at, time, cur[1], forward, c.searches_),
              sample(keys(2), scale_at, time, cur[2], forward, c.searches_)});
    }
  }
  // The last entry's lanes past the last joint: the identity.
  for (std::size_t j = joints(); j < 4 * soa_output.size(); ++j)
    soa_output[j / 4].set(static_cast<int>(j % 4), JointTransform{});
  c.source_ = source;
  c.source_id_ = id;
  c.time_ = time;
  return {};
}

#undef SPINDLE_ANIM_INLINE

}  // namespace spindle::anim
