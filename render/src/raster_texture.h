// Texture sampling for the rasteriser (private): four pixels at a time, repeat wrap, nearest or
// bilinear. Coordinates are computed in vectors; the 16 texels of a bilinear quad are fetched
// one by one (SSE2 has no gather) and blended in 16-bit integer lanes with 7-bit weights:
// a + ((b - a) * f >> 7) per channel, horizontally then vertically. The portable path does the
// same integer arithmetic per lane, so every build gives the same bits.
#pragma once

#include <cstdint>
#include <cstring>

#include "raster_simd.h"
#include "spindle/render/texture.h"

namespace spindle::render::raster {

// Texel coordinates along one axis of `size` texels for four coordinates `u` (repeat wrap).
struct Axis {
  simd::v4i i0;  // first texel, [0, size)
  simd::v4i i1;  // the next one, wrapped
  simd::v4i f;   // weight of i1 in [0, 127]
};

// The fractional part of u in [0, 1); NaN and |u| > 1e6 read as the bound (a pure function of
// u, the same in every lane and build).
SPINDLE_RASTER_INLINE simd::v4f fraction4(simd::v4f u) {
  const simd::v4f c = simd::vmin(simd::vmax(u, simd::splat(-1.0e6f)), simd::splat(1.0e6f));
  simd::v4f fl = simd::to_float(simd::truncate(c));
  fl -= simd::select(fl > c, simd::splat(1.0f), simd::splat(0.0f));
  return simd::vmin(c - fl, simd::splat(0.99999994f));  // 1 - ulp: rounding never reaches 1
}

// Bilinear: texel centres at (i + 0.5) / size.
// A power-of-two size works in fixed point: q = trunc(u * size * 128 - 64) holds the texel in its
// high bits and the weight in its low 7, and wrapping is a mask (u is clamped so q fits).
// Other sizes: x = frac(u) * size - 0.5 + size lies in [size - 0.5, 2 size - 0.5), so
// truncation is a floor and one subtraction wraps it. Either way one formula per size, in every
// path and build.
SPINDLE_RASTER_INLINE Axis bilinear_axis(simd::v4f u, int size) {
  Axis a;
  if ((size & (size - 1)) == 0) {
    const float scale = static_cast<float>(size) * 128.0f;
    const float limit = 1073741824.0f / scale;  // |q| < 2^30
    const simd::v4f c = simd::vmin(simd::vmax(u, simd::splat(-limit)), simd::splat(limit));
    const simd::v4i q = simd::truncate(c * simd::splat(scale) - simd::splat(64.0f));
    const simd::v4i mask = simd::splat_i(size - 1);
    const simd::v4i i = q >> 7;
    a.f = q & simd::splat_i(127);
    a.i0 = i & mask;
    a.i1 = (i + simd::splat_i(1)) & mask;
    return a;
  }
  const simd::v4f n = simd::splat(static_cast<float>(size));
  const simd::v4f x = fraction4(u) * n + (n - simd::splat(0.5f));
  const simd::v4i xi = simd::truncate(x);
  const simd::v4i sz = simd::splat_i(size);
  a.f = simd::truncate((x - simd::to_float(xi)) * simd::splat(128.0f));
  a.f = simd::vmin_i(a.f, simd::splat_i(127));
  a.i0 = simd::select(xi >= sz, xi - sz, xi);
  const simd::v4i next = a.i0 + simd::splat_i(1);
  a.i1 = simd::select(next >= sz, simd::splat_i(0), next);
  return a;
}

// Row starts: y * width, a shift when the width is a power of two (SSE2 has no 32-bit multiply).
SPINDLE_RASTER_INLINE simd::v4i row_start(simd::v4i y, int width) {
  if ((width & (width - 1)) == 0) return y << __builtin_ctz(static_cast<unsigned>(width));
  return y * simd::splat_i(width);
}

// a + ((b - a) * f >> 7) for each 8-bit channel of four texel pairs, f per texel in [0, 127].
SPINDLE_RASTER_INLINE simd::v4u lerp4(simd::v4u a, simd::v4u b, simd::v4i f) {
#if SPINDLE_RASTER_SSE2
  const __m128i zero = _mm_setzero_si128();
  const __m128i va = reinterpret_cast<__m128i>(a), vb = reinterpret_cast<__m128i>(b);
  const __m128i f2 =
      _mm_or_si128(reinterpret_cast<__m128i>(f), _mm_slli_epi32(reinterpret_cast<__m128i>(f), 16));
  const __m128i f_lo = _mm_unpacklo_epi32(f2, f2);  // texels 0, 1: f0 x4, f1 x4
  const __m128i f_hi = _mm_unpackhi_epi32(f2, f2);
  const __m128i a_lo = _mm_unpacklo_epi8(va, zero), a_hi = _mm_unpackhi_epi8(va, zero);
  const __m128i b_lo = _mm_unpacklo_epi8(vb, zero), b_hi = _mm_unpackhi_epi8(vb, zero);
  const __m128i r_lo =
      _mm_add_epi16(a_lo, _mm_srai_epi16(_mm_mullo_epi16(_mm_sub_epi16(b_lo, a_lo), f_lo), 7));
  const __m128i r_hi =
      _mm_add_epi16(a_hi, _mm_srai_epi16(_mm_mullo_epi16(_mm_sub_epi16(b_hi, a_hi), f_hi), 7));
  return reinterpret_cast<simd::v4u>(_mm_packus_epi16(r_lo, r_hi));
#else
  simd::v4u out;
  for (int i = 0; i < 4; ++i) {
    std::uint32_t r = 0;
    for (int c = 0; c < 32; c += 8) {
      const int ca = static_cast<int>((a[i] >> c) & 0xffu),
                cb = static_cast<int>((b[i] >> c) & 0xffu);
      r |= static_cast<std::uint32_t>(ca + (((cb - ca) * f[i]) >> 7)) << c;
    }
    out[i] = r;
  }
  return out;
#endif
}

SPINDLE_RASTER_INLINE simd::v4u fetch4(const MipLevel& l, simd::v4i index) {
  return simd::v4u{l.texels[index[0]], l.texels[index[1]], l.texels[index[2]], l.texels[index[3]]};
}

SPINDLE_RASTER_INLINE simd::v4u sample_bilinear4(const MipLevel& l, simd::v4f u, simd::v4f v) {
  const Axis x = bilinear_axis(u, l.width);
  const Axis y = bilinear_axis(v, l.height);
  const simd::v4i row0 = row_start(y.i0, l.width), row1 = row_start(y.i1, l.width);
#if SPINDLE_RASTER_SSE2
  // No quad wraps around the texture's right or bottom edge (nearly always): each quad's top
  // pair and bottom pair are adjacent texels, one 8-byte load each. Same texels, same result.
  const simd::v4i inner =
      (x.i0 < simd::splat_i(l.width - 1)) & (y.i0 < simd::splat_i(l.height - 1));
  if (simd::mask_bits(inner) == 0xf) {
    alignas(16) std::int32_t at[4];
    const simd::v4i first = row0 + x.i0;
    std::memcpy(at, &first, sizeof at);
    const auto pair = [&](int i, int down) {
      return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(l.texels + at[i] + down));
    };
    const auto split = [](__m128i p01, __m128i p23, simd::v4u& left, simd::v4u& right) {
      const __m128 a = _mm_castsi128_ps(p01), b = _mm_castsi128_ps(p23);
      left = reinterpret_cast<simd::v4u>(
          _mm_castps_si128(_mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0))));
      right = reinterpret_cast<simd::v4u>(
          _mm_castps_si128(_mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1))));
    };
    simd::v4u t00, t10, t01, t11;
    split(_mm_unpacklo_epi64(pair(0, 0), pair(1, 0)), _mm_unpacklo_epi64(pair(2, 0), pair(3, 0)),
          t00, t10);
    split(_mm_unpacklo_epi64(pair(0, l.width), pair(1, l.width)),
          _mm_unpacklo_epi64(pair(2, l.width), pair(3, l.width)), t01, t11);
    return lerp4(lerp4(t00, t10, x.f), lerp4(t01, t11, x.f), y.f);
  }
#endif
  const simd::v4u top = lerp4(fetch4(l, row0 + x.i0), fetch4(l, row0 + x.i1), x.f);
  const simd::v4u bottom = lerp4(fetch4(l, row1 + x.i0), fetch4(l, row1 + x.i1), x.f);
  return lerp4(top, bottom, y.f);
}

// Nearest: the texel containing the coordinate; a power-of-two size masks the truncated
// fixed-point coordinate (as bilinear does), others take frac(u) * size.
SPINDLE_RASTER_INLINE simd::v4i nearest_axis(simd::v4f u, int size) {
  if ((size & (size - 1)) == 0) {
    const float scale = static_cast<float>(size) * 128.0f;
    const float limit = 1073741824.0f / scale;
    const simd::v4f c = simd::vmin(simd::vmax(u, simd::splat(-limit)), simd::splat(limit));
    return (simd::truncate(c * simd::splat(scale)) >> 7) & simd::splat_i(size - 1);
  }
  return simd::vmin_i(simd::truncate(fraction4(u) * simd::splat(static_cast<float>(size))),
                      simd::splat_i(size - 1));
}

SPINDLE_RASTER_INLINE simd::v4u sample_nearest4(const MipLevel& l, simd::v4f u, simd::v4f v) {
  return fetch4(l, row_start(nearest_axis(v, l.height), l.width) + nearest_axis(u, l.width));
}

}  // namespace spindle::render::raster
