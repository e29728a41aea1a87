// Texture sampling for the rasteriser (private): repeat wrap, nearest or bilinear, one texel
// fetch path per pixel (SSE2 has no gather). Bilinear blends in 8-bit fixed point, two channels
// per 32-bit multiply, so the result is exact for flat colour and the same on every machine.
#pragma once

#include <cstdint>

#include "spindle/render/texture.h"

namespace spindle::render::raster {

// The fractional part of u, in [0, 1]; NaN and absurd values read as 0.
inline float fraction(float u) {
  if (!(u > -1.0e9f && u < 1.0e9f)) return 0.0f;
  float f = static_cast<float>(static_cast<std::int64_t>(u));
  if (f > u) f -= 1.0f;
  return u - f;
}

// i mod n for any i, n > 0 (a mask for powers of two).
inline int wrap(int i, int n) {
  if ((n & (n - 1)) == 0) return i & (n - 1);
  const int r = i % n;
  return r < 0 ? r + n : r;
}

// a * (256 - f) + b * f, per 8-bit channel, f in [0, 256).
inline std::uint32_t lerp_texel(std::uint32_t a, std::uint32_t b, std::uint32_t f) {
  const std::uint32_t g = 256 - f;
  const std::uint32_t rb = (((a & 0xff00ffu) * g + (b & 0xff00ffu) * f) >> 8) & 0xff00ffu;
  const std::uint32_t ga = (((a >> 8) & 0xff00ffu) * g + ((b >> 8) & 0xff00ffu) * f) & 0xff00ff00u;
  return rb | ga;
}

inline std::uint32_t sample_nearest(const MipLevel& l, float u, float v) {
  const int x = wrap(static_cast<int>(fraction(u) * static_cast<float>(l.width)), l.width);
  const int y = wrap(static_cast<int>(fraction(v) * static_cast<float>(l.height)), l.height);
  return l.texels[y * l.width + x];
}

inline std::uint32_t sample_bilinear(const MipLevel& l, float u, float v) {
  // Texel centres at (i + 0.5) / size; the +1 / -1 keeps the truncation a floor.
  const float x = fraction(u) * static_cast<float>(l.width) + 0.5f;
  const float y = fraction(v) * static_cast<float>(l.height) + 0.5f;
  const int xi = static_cast<int>(x) - 1;
  const int yi = static_cast<int>(y) - 1;
  const auto fx = static_cast<std::uint32_t>((x - static_cast<float>(xi + 1)) * 256.0f);
  const auto fy = static_cast<std::uint32_t>((y - static_cast<float>(yi + 1)) * 256.0f);
  const int x0 = wrap(xi, l.width), x1 = wrap(xi + 1, l.width);
  const std::uint32_t* r0 = l.texels + wrap(yi, l.height) * l.width;
  const std::uint32_t* r1 = l.texels + wrap(yi + 1, l.height) * l.width;
  return lerp_texel(lerp_texel(r0[x0], r0[x1], fx), lerp_texel(r1[x0], r1[x1], fx), fy);
}

}  // namespace spindle::render::raster
