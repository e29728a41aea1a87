// Setup for the renderer's own batches (private), with or without the attribute planes.
//
// In a deep scene most set-up triangles are hidden: the coarse depth buffer rejects them before
// any pixel. With defer_planes, setup keeps the planes' inputs in the Triangle instead
// (Triangle::planes_deferred), and rasterize_triangle computes the planes, with the same code
// and so to the same bits, only for a triangle it draws in a tile. Where most triangles show,
// that costs more than it saves (each tile and strip drawing one computes its planes again), so
// the renderer defers only while a third or more of them were hidden the frame before.
#pragma once

#include <algorithm>
#include <cstdint>

#include "raster_screen.h"
#include "spindle/render/raster.h"

namespace spindle::render::raster {

// What the coarse depth test needs of a triangle: its pixel box and nearest depth, 12 bytes. The
// renderer keeps these beside its triangles, so that a tile tests the many hidden ones without
// reading a whole Triangle each.
struct CoarseBounds {
  std::int16_t min_x, min_y, max_x, max_y;
  float min_depth;
};

// True when nothing of the triangle can show in the tile: its box misses the tile, or the tile's
// coarse depth buffer (TileTarget::block_max_depth, when there is one) holds only nearer pixels
// in every 8x8 block the box touches. For depth-tested triangles only.
inline bool hidden_in_tile(const CoarseBounds& c, const TileTarget& tile) {
  const int x0 = std::max<int>(c.min_x, tile.x0), x1 = std::min<int>(c.max_x, tile.x1 - 1);
  const int y0 = std::max<int>(c.min_y, tile.y0), y1 = std::min<int>(c.max_y, tile.y1 - 1);
  if (x0 > x1 || y0 > y1) return true;
  if (tile.block_max_depth == nullptr) return false;
  for (int by = y0 / kDepthBlock; by <= y1 / kDepthBlock; ++by) {
    const float* row = tile.block_max_depth + by * tile.block_stride;
    for (int bx = x0 / kDepthBlock; bx <= x1 / kDepthBlock; ++bx)
      if (c.min_depth < row[bx]) return false;
  }
  return true;
}

// setup_triangle, or with defer_planes the same without the planes.
bool setup_for_tiles(const ClipVertex& a, const ClipVertex& b, const ClipVertex& c,
                     const Viewport& viewport, const DrawState& state, bool defer_planes,
                     Triangle& out);

// The same for a triangle inside the guard band whose vertices project() has projected and
// pixel_bounds() has accepted (its area and box): nothing is projected or bounded again.
void setup_projected(const ClipVertex* const (&v)[3], const ScreenVertex* const (&s)[3],
                     std::int64_t area, const PixelBox& box, const DrawState& state,
                     bool defer_planes, Triangle& out);

// rasterize_triangle for a triangle already tested against the tile: hidden_in_tile() was false
// (or it is not depth-tested); it draws without testing again.
void rasterize_shown(const Triangle& t, const DrawState& state, const TileTarget& tile);

}  // namespace spindle::render::raster
