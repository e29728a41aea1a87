// The mixer's inner loop: resample one voice (linear or 4-point Hermite), optionally low-pass it
// (occlusion), and add it into a stereo buffer under a linear gain ramp. Positions are 32.32
// fixed point and every value a frame uses is a function of its position and its index in the
// block (the gain is start + delta x index, the fraction the position's top 24 fraction bits), so
// the SIMD path, the scalar path and any split between them give the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__SSE2__) && (!defined(SPINDLE_SIMD) || SPINDLE_SIMD)
#include <emmintrin.h>
#define SPINDLE_MIX_SSE2 1
#endif

namespace spindle::audio::detail {

// Gain of frame i of the block: l + dl * i (and r + dr * i).
struct Ramp {
  float l, r;
  float dl, dr;
};

template <int Ch>
struct DirectSource {
  const float* d;
  float operator()(std::int64_t i, int c) const { return d[i * Ch + c]; }
};

inline float fraction(std::uint64_t pos) {
  return static_cast<float>(static_cast<std::uint32_t>(pos) >> 8) * 0x1p-24f;  // exact
}

inline float hermite(float xm1, float x0, float x1, float x2, float t) {
  const float c1 = 0.5f * (x1 - xm1);
  const float c2 = xm1 - 2.5f * x0 + 2.0f * x1 - 0.5f * x2;
  const float c3 = 0.5f * (x2 - xm1) + 1.5f * (x0 - x1);
  return ((c3 * t + c2) * t + c1) * t + x0;
}

// Frames [first, first + n) of the block, reading the source from `pos` (advanced).
template <int Ch, bool Cubic, bool Filter, class Source>
inline void mix_run_scalar(const Source& src, std::uint64_t& pos, std::uint64_t step,
                           std::uint32_t first, std::uint32_t n, float* out, const Ramp& g,
                           float (&lp)[2], float lp_a) {
  std::uint64_t p = pos;
  for (std::uint32_t i = first; i < first + n; ++i) {
    const auto idx = static_cast<std::int64_t>(p >> 32);
    const float t = fraction(p);
    float s[Ch];
    for (int c = 0; c < Ch; ++c) {
      if constexpr (Cubic) {
        s[c] = hermite(src(idx - 1, c), src(idx, c), src(idx + 1, c), src(idx + 2, c), t);
      } else {
        const float a = src(idx, c);
        s[c] = a + (src(idx + 1, c) - a) * t;
      }
      if constexpr (Filter) {
        lp[c] += lp_a * (s[c] - lp[c]);
        s[c] = lp[c];
      }
    }
    const auto fi = static_cast<float>(i);
    out[2 * i] += s[0] * (g.l + g.dl * fi);
    out[2 * i + 1] += s[Ch - 1] * (g.r + g.dr * fi);
    p += step;
  }
  pos = p;
}

#if SPINDLE_MIX_SSE2
// Mono, linear, no filter, every tap inside the sound: four frames per step. The taps are
// loaded one by one (SSE2 has no gather); the arithmetic is the scalar path's, lane by lane.
inline void mix_run_mono_linear_sse2(const float* d, std::uint64_t& pos, std::uint64_t step,
                                     std::uint32_t first, std::uint32_t n, float* out,
                                     const Ramp& g) {
  std::uint64_t p = pos;
  std::uint32_t i = first;
  const std::uint32_t end = first + n;
  const __m128 scale = _mm_set1_ps(0x1p-24f);
  const __m128 l0 = _mm_set1_ps(g.l), r0 = _mm_set1_ps(g.r);
  const __m128 dl = _mm_set1_ps(g.dl), dr = _mm_set1_ps(g.dr);
  const __m128 lanes = _mm_set_ps(3, 2, 1, 0);
  for (; i + 4 <= end; i += 4) {
    const std::uint64_t p0 = p, p1 = p + step, p2 = p + 2 * step, p3 = p + 3 * step;
    p += 4 * step;
    const float* s0 = d + (p0 >> 32);
    const float* s1 = d + (p1 >> 32);
    const float* s2 = d + (p2 >> 32);
    const float* s3 = d + (p3 >> 32);
    const __m128 a = _mm_set_ps(s3[0], s2[0], s1[0], s0[0]);
    const __m128 b = _mm_set_ps(s3[1], s2[1], s1[1], s0[1]);
    const __m128i f = _mm_set_epi32(static_cast<int>(static_cast<std::uint32_t>(p3) >> 8),
                                    static_cast<int>(static_cast<std::uint32_t>(p2) >> 8),
                                    static_cast<int>(static_cast<std::uint32_t>(p1) >> 8),
                                    static_cast<int>(static_cast<std::uint32_t>(p0) >> 8));
    const __m128 t = _mm_mul_ps(_mm_cvtepi32_ps(f), scale);
    const __m128 s = _mm_add_ps(a, _mm_mul_ps(_mm_sub_ps(b, a), t));
    const __m128 fi = _mm_add_ps(_mm_set1_ps(static_cast<float>(i)), lanes);
    const __m128 vl = _mm_mul_ps(s, _mm_add_ps(l0, _mm_mul_ps(dl, fi)));
    const __m128 vr = _mm_mul_ps(s, _mm_add_ps(r0, _mm_mul_ps(dr, fi)));
    float* o = out + 2 * std::size_t{i};
    _mm_storeu_ps(o, _mm_add_ps(_mm_loadu_ps(o), _mm_unpacklo_ps(vl, vr)));
    _mm_storeu_ps(o + 4, _mm_add_ps(_mm_loadu_ps(o + 4), _mm_unpackhi_ps(vl, vr)));
  }
  pos = p;
  if (i < end) {
    float lp[2] = {0, 0};
    mix_run_scalar<1, false, false>(DirectSource<1>{d}, pos, step, i, end - i, out, g, lp, 1.0f);
  }
}
#endif

template <int Ch, bool Cubic, bool Filter, class Source>
inline void mix_run(const Source& src, std::uint64_t& pos, std::uint64_t step, std::uint32_t first,
                    std::uint32_t n, float* out, const Ramp& g, float (&lp)[2], float lp_a) {
#if SPINDLE_MIX_SSE2
  if constexpr (Ch == 1 && !Cubic && !Filter && std::is_same_v<Source, DirectSource<1>>) {
    mix_run_mono_linear_sse2(src.d, pos, step, first, n, out, g);
    return;
  }
#endif
  mix_run_scalar<Ch, Cubic, Filter>(src, pos, step, first, n, out, g, lp, lp_a);
}

}  // namespace spindle::audio::detail
