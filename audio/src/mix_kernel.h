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
// Mono, linear, no filter, every tap inside the sound: four frames per step. Each frame's two
// taps come in one 8-byte load (SSE2 has no gather); the positions' low 32 bits (the fractions)
// advance in a vector, exactly as the scalar 64-bit positions' low halves do. The arithmetic is
// the scalar path's, lane by lane.
inline void mix_run_mono_linear_sse2(const float* d, std::uint64_t& pos, std::uint64_t step,
                                     std::uint32_t first, std::uint32_t n, float* out,
                                     const Ramp& g) {
  std::uint64_t p = pos;
  std::uint32_t i = first;
  const std::uint32_t end = first + n;
  if (n >= 4) {
    const __m128 scale = _mm_set1_ps(0x1p-24f);
    const __m128 l0 = _mm_set1_ps(g.l), r0 = _mm_set1_ps(g.r);
    const __m128 dl = _mm_set1_ps(g.dl), dr = _mm_set1_ps(g.dr);
    const __m128 four = _mm_set1_ps(4.0f);
    const auto s32 = static_cast<std::uint32_t>(step);
    const auto p32 = static_cast<std::uint32_t>(p);
    __m128i frac = _mm_set_epi32(static_cast<int>(p32 + 3 * s32), static_cast<int>(p32 + 2 * s32),
                                 static_cast<int>(p32 + s32), static_cast<int>(p32));
    const __m128i frac_step = _mm_set1_epi32(static_cast<int>(4 * s32));
    const auto fi0 = static_cast<float>(i);
    __m128 fi = _mm_set_ps(fi0 + 3, fi0 + 2, fi0 + 1, fi0);
    auto pair = [d](std::uint64_t at) {  // (d[at], d[at + 1], 0, 0)
      return _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(d + (at >> 32))));
    };
    for (; i + 4 <= end; i += 4) {
      const std::uint64_t p1 = p + step, p2 = p1 + step, p3 = p2 + step;
      const __m128 q01 = _mm_unpacklo_ps(pair(p), pair(p1));   // a0 a1 b0 b1
      const __m128 q23 = _mm_unpacklo_ps(pair(p2), pair(p3));  // a2 a3 b2 b3
      const __m128 a = _mm_movelh_ps(q01, q23);
      const __m128 b = _mm_movehl_ps(q23, q01);
      p = p3 + step;
      const __m128 t = _mm_mul_ps(_mm_cvtepi32_ps(_mm_srli_epi32(frac, 8)), scale);
      frac = _mm_add_epi32(frac, frac_step);
      const __m128 s = _mm_add_ps(a, _mm_mul_ps(_mm_sub_ps(b, a), t));
      const __m128 vl = _mm_mul_ps(s, _mm_add_ps(l0, _mm_mul_ps(dl, fi)));
      const __m128 vr = _mm_mul_ps(s, _mm_add_ps(r0, _mm_mul_ps(dr, fi)));
      fi = _mm_add_ps(fi, four);
      float* o = out + 2 * std::size_t{i};
      _mm_storeu_ps(o, _mm_add_ps(_mm_loadu_ps(o), _mm_unpacklo_ps(vl, vr)));
      _mm_storeu_ps(o + 4, _mm_add_ps(_mm_loadu_ps(o + 4), _mm_unpackhi_ps(vl, vr)));
    }
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
