// Eight pixels at a time where the CPU has AVX2 (private). The rasteriser's common textured
// variant (one opaque colour, bilinear, perspective-correct, depth-tested, no mips) draws a whole
// 8-pixel row of a block in one 256-bit register on such CPUs: the same operations on each lane as
// the four-pixel path, without fused multiply-adds, so the same bits. The build's baseline stays
// SSE2 (these functions alone are compiled for AVX2, chosen at run time).
#pragma once

namespace spindle::render::raster {

// Whether this CPU runs the 8-pixel path.
bool wide_pixels_available();
// Whether the rasteriser uses it (default: where available). Tests turn it off to compare the
// two paths; not for use while a frame draws.
bool wide_pixels();
void set_wide_pixels(bool on);

}  // namespace spindle::render::raster
