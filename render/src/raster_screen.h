// What classify and setup_triangle decide from a vertex alone (private), shared with the
// renderer's per-draw vertex pass so that it can reject a triangle with a few integer
// operations, exactly as the full setup would:
//
//   ScreenVertex s[4];
//   project(x, y, z, w, viewport, s, 4);  // four clip-space vertices: outcode, snapped position
//   if (classify_codes(s0.code, s1.code, s2.code) == ClipClass::Inside &&
//       !pixel_bounds(fx, fy, viewport, cull, area, box)) { /* setup would reject it */ }
//
// setup_triangle and classify use these same functions, so the two cannot disagree.
#pragma once

#include <algorithm>
#include <cstdint>

#include "raster_limits.h"
#include "raster_simd.h"
#include "spindle/render/raster.h"

// No a * b + c fused into one rounding: these must round as raster.cpp does.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

namespace spindle::render::raster {

// Outcode bits. The first six are the visible frustum (for the Outside test); the next four the
// guard band in x and y. Near also flags w <= 0, which no visible point has.
enum : std::uint32_t {
  kLeft = 1u << 0,
  kRight = 1u << 1,
  kBottom = 1u << 2,
  kTop = 1u << 3,
  kNear = 1u << 4,
  kFar = 1u << 5,
  kGuardLeft = 1u << 6,
  kGuardRight = 1u << 7,
  kGuardBottom = 1u << 8,
  kGuardTop = 1u << 9,
  kOutsideBits = kLeft | kRight | kBottom | kTop | kNear | kFar,
  kNeedsClip = kNear | kFar | kGuardLeft | kGuardRight | kGuardBottom | kGuardTop,
  // Not an outcode bit (classify ignores it): project() found no usable position inside the
  // guard band (NaN or infinite coordinates), which setup_triangle rejects.
  kUnprojectable = 1u << 10,
};

inline std::uint32_t outcode(const glm::vec4& p) {
  const float gw = kGuardBand * p.w;
  return (p.x < -p.w ? kLeft : 0u) | (p.x > p.w ? kRight : 0u) | (p.y < -p.w ? kBottom : 0u) |
         (p.y > p.w ? kTop : 0u) | (p.z < -p.w || !(p.w > 0.0f) ? kNear : 0u) |
         (p.z > p.w ? kFar : 0u) | (p.x < -gw ? kGuardLeft : 0u) | (p.x > gw ? kGuardRight : 0u) |
         (p.y < -gw ? kGuardBottom : 0u) | (p.y > gw ? kGuardTop : 0u);
}

// classify() from the three vertices' outcodes.
inline ClipClass classify_codes(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  if ((a & b & c & kOutsideBits) != 0) return ClipClass::Outside;
  return ((a | b | c) & kNeedsClip) != 0 ? ClipClass::Clip : ClipClass::Inside;
}

// Rounds to the nearest grid point, halves away from zero (the same on every machine).
inline std::int32_t snap(float pixels) {
  const double d = static_cast<double>(pixels) * kSubpixelScale;
  return static_cast<std::int32_t>(d >= 0.0 ? d + 0.5 : d - 0.5);
}

// floor(n / 2^kSubpixelBits) for the bounding box.
inline std::int32_t floor_div(std::int32_t n) {
  return n >> kSubpixelBits;
}

struct PixelBox {
  int min_x, min_y, max_x, max_y;
};

// Twice the signed area of the snapped triangle, y down (counter-clockwise with y up is
// negative), then the pixels whose centres (p + 1/2) lie in its bounding box, clamped to the
// viewport. False when setup would reject the triangle from these alone: no area, a front face
// culled as a back one (area > 0 with CullMode::Back), or no pixel centre in the box.
inline bool pixel_bounds(const std::int32_t fx[3], const std::int32_t fy[3],
                         const Viewport& viewport, CullMode cull, std::int64_t& area,
                         PixelBox& box) {
  area =
      std::int64_t{fx[1] - fx[0]} * (fy[2] - fy[0]) - std::int64_t{fx[2] - fx[0]} * (fy[1] - fy[0]);
  if (area == 0) return false;
  if (area > 0 && cull == CullMode::Back) return false;
  const std::int32_t half = kSubpixelScale / 2;
  const std::int32_t lo_x = std::min({fx[0], fx[1], fx[2]});
  const std::int32_t hi_x = std::max({fx[0], fx[1], fx[2]});
  const std::int32_t lo_y = std::min({fy[0], fy[1], fy[2]});
  const std::int32_t hi_y = std::max({fy[0], fy[1], fy[2]});
  box.min_x = std::max(0, floor_div(lo_x - half + kSubpixelScale - 1));
  box.min_y = std::max(0, floor_div(lo_y - half + kSubpixelScale - 1));
  box.max_x = std::min(viewport.width - 1, floor_div(hi_x - half));
  box.max_y = std::min(viewport.height - 1, floor_div(hi_y - half));
  return box.min_x <= box.max_x && box.min_y <= box.max_y;
}

// What classify and setup_triangle decide from one vertex: its outcode and, inside the guard
// band, its snapped pixel position (raster_screen.h).
struct ScreenVertex {
  std::int32_t x = 0;
  std::int32_t y = 0;
  std::uint32_t code = 0;
  float inv_w = 0.0f;  // 1 / w and setup's depth, z / w * 0.5 + 0.5 (inside the guard band only)
  float depth = 0.0f;
};

// snap() four at a time, exactly: v = pixels x 256 is exact in float, v - trunc(v) too,
// so rounding half away from zero needs no double.
inline simd::v4i snap4(simd::v4f pixels) {
  const simd::v4f v = pixels * simd::splat(static_cast<float>(kSubpixelScale));
  const simd::v4i t = simd::truncate(v);
  const simd::v4f frac = v - simd::to_float(t);
  const simd::v4i one = simd::splat_i(1);
  return t + ((frac >= simd::splat(0.5f)) & one) - ((frac <= simd::splat(-0.5f)) & one);
}

// outcode() and setup_triangle's snapped position for four clip-space vertices, in setup's
// order of operations; lanes outside the guard band keep only their outcode (their triangles are
// clipped or dropped), and lanes inside it with no finite position are flagged kUnprojectable.
inline void project(simd::v4f x, simd::v4f y, simd::v4f z, simd::v4f w, const Viewport& viewport,
                    ScreenVertex* out, std::size_t lanes) {
  using simd::splat;
  using simd::v4f;
  using simd::v4i;
  const auto bit = [](v4i m, std::uint32_t b) { return m & simd::splat_i(static_cast<int>(b)); };
  const v4f gw = splat(kGuardBand) * w;
  const v4i code = bit(x < -w, kLeft) | bit(x > w, kRight) | bit(y < -w, kBottom) |
                   bit(y > w, kTop) | bit((z < -w) | ~(w > splat(0.0f)), kNear) | bit(z > w, kFar) |
                   bit(x < -gw, kGuardLeft) | bit(x > gw, kGuardRight) |
                   bit(y < -gw, kGuardBottom) | bit(y > gw, kGuardTop);
  const v4i in_band = (code & simd::splat_i(static_cast<int>(kNeedsClip))) == 0;
  const v4f inv_w = splat(1.0f) / simd::select(in_band, w, splat(1.0f));
  const float half_w = 0.5f * static_cast<float>(viewport.width);
  const float half_h = 0.5f * static_cast<float>(viewport.height);
  const v4f px = (x * inv_w + splat(1.0f)) * splat(half_w);
  const v4f py = (splat(1.0f) - y * inv_w) * splat(half_h);
  // setup_triangle's range test: false for NaN, which must not reach the integer code.
  const v4f lim = splat(kMaxProjectedPixels);
  const v4i usable = in_band & (px >= -lim) & (px <= lim) & (py >= -lim) & (py <= lim);
  const v4i flags = code | (in_band & ~usable & simd::splat_i(static_cast<int>(kUnprojectable)));
  const v4i fx = snap4(simd::select(usable, px, splat(0.0f)));
  const v4i fy = snap4(simd::select(usable, py, splat(0.0f)));
  const v4f depth = z * inv_w * splat(0.5f) + splat(0.5f);
  for (std::size_t j = 0; j < lanes; ++j)
    out[j] = {fx[j], fy[j], static_cast<std::uint32_t>(flags[j]), inv_w[j], depth[j]};
}

}  // namespace spindle::render::raster

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
