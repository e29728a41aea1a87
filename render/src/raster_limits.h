// Fixed-point and clipping constants shared by clip.cpp and raster.cpp (private).
#pragma once

namespace spindle::render::raster {

// Guard band: clip_triangle clips x and y only against |x|, |y| <= kGuardBand * w, so projected
// vertices lie within [-3.5, 4.5] viewport sides of the origin: at most 36864 pixels, 2^23.2
// sub-pixel units for kMaxViewportSide = 8192. Edge coefficients (vertex differences) then stay
// below 2^24, their products with pixel offsets below 2^51 (int64), and an edge function's
// change across an 8x8 block below 2^28 (int32 for the per-pixel SIMD tests).
inline constexpr float kGuardBand = 8.0f;

// Vertices snap to 1/256 pixel.
inline constexpr int kSubpixelBits = 8;
inline constexpr int kSubpixelScale = 1 << kSubpixelBits;

// Setup refuses projected coordinates beyond this many pixels from the origin (only reachable by
// skipping classify/clip_triangle): keeps every fixed-point value inside its integer type, with
// edge coefficients below 2^25 and an edge's change across a block below 2^30.
inline constexpr float kMaxProjectedPixels = 65536.0f;  // 2^16

}  // namespace spindle::render::raster
