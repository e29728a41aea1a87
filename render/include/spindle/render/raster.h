// The rasteriser's building blocks: clipping in clip space, triangle setup in fixed point, and
// drawing one set-up triangle into one screen tile. The Renderer (renderer.h) calls these from
// its jobs: batches of draws clip, set up and bin triangles; one job per tile draws its bins in
// draw order. Everything here is a pure function of its arguments, so the image does not depend
// on which thread runs which tile.
//
// Usage (what a tile job does, after the front end set up `tri` from three clip-space vertices):
//
//   using namespace spindle::render::raster;
//   ClipVertex out[3 * kMaxClippedTriangles];
//   switch (classify(a, b, c)) {
//     case ClipClass::Outside: break;                      // nothing visible
//     case ClipClass::Inside: draw(a, b, c); break;        // no clipping needed
//     case ClipClass::Clip:
//       for (int k = 0, n = clip_triangle(a, b, c, out); k < n; ++k)
//         draw(out[3 * k], out[3 * k + 1], out[3 * k + 2]);
//   }
//   // draw(): Triangle t; if (setup_triangle(v0, v1, v2, viewport, state, t)) bin(t);
//   TileTarget tile{color, depth, stride, x0, y0, x1, y1};
//   clear_tile(tile, clear_colour, 1.0f);
//   for (const Triangle& t : tile_bins) rasterize_triangle(t, state_of(t), tile);
//
// Conventions: OpenGL clip space (visible: -w <= x, y, z <= w), counter-clockwise front faces
// as seen on screen with y up, pixel centres at (x + 0.5, y + 0.5) with y = 0 the top row of the
// image, depth z/w mapped to [0, 1] and tested with "less", colours RGBA in [0, 1].
#pragma once

#include <cstdint>

#include <glm/glm.hpp>

#include "spindle/render/texture.h"

namespace spindle::render::raster {

// A vertex after transform and lighting.
struct ClipVertex {
  glm::vec4 position{0.0f, 0.0f, 0.0f, 1.0f};  // clip space
  glm::vec4 color{1.0f};                       // lit colour, multiplied with the texture
  glm::vec2 uv{0.0f};
};

// A screen tile is kTileSize x kTileSize pixels (tile_bounds()). The Renderer uses tiles of
// kTileSize or 2 kTileSize a side (the larger where a frame has enough of them for its workers);
// rasterize_triangle() draws into any TileTarget rectangle, and the image does not depend on it.
inline constexpr int kTileSize = 64;

enum class CullMode : std::uint8_t { None, Back };
enum class BlendMode : std::uint8_t { Opaque, Alpha };  // Alpha: src * a + dst * (1 - a)

// How a triangle is drawn (a material, resolved).
struct DrawState {
  const TextureView* texture = nullptr;  // null or no levels: colour only
  CullMode cull = CullMode::Back;
  BlendMode blend = BlendMode::Opaque;
  bool flat = false;       // the first vertex's colour over the whole triangle
  bool depth_test = true;  // less
  bool depth_write = true;
  bool perspective = true;  // false: affine attributes (the ordering-table path)
};

// Where clip_triangle needs to act.
enum class ClipClass : std::uint8_t {
  Outside,  // wholly outside one plane: nothing to draw
  Inside,   // in front of the near plane, behind the far one and inside the guard band
  Clip,     // crosses the near or far plane or leaves the guard band
};
ClipClass classify(const ClipVertex& a, const ClipVertex& b, const ClipVertex& c);

// Clips against the near and far planes and the guard band; writes up to kMaxClippedTriangles
// triangles (3 vertices each, a fan in the original winding) and returns how many.
inline constexpr int kMaxClippedTriangles = 8;
int clip_triangle(const ClipVertex& a, const ClipVertex& b, const ClipVertex& c, ClipVertex* out);

// Screen size in pixels; at most kMaxViewportSide per side.
struct Viewport {
  int width = 0;
  int height = 0;
};
inline constexpr int kMaxViewportSide = 8192;

// A triangle ready for the tiles: fixed-point edge functions (sub-pixel precision, top-left
// rule), its pixel bounding box, and attribute planes. Produced by setup_triangle only.
struct Triangle {
  // Edge functions over pixel indices: pixel (x, y) is inside when, for every edge i,
  // edge_a[i] * (x - min_x) + edge_b[i] * (y - min_y) + edge_c[i] >= 0. a and b are vertex
  // differences in the sub-pixel grid; c is the sub-pixel edge function at the bounding box's
  // top-left pixel centre with the top-left bias, divided by the grid scale and rounded down
  // (exact: a pixel step is a whole number of grid units). Filled in by setup_triangle only.
  std::int32_t edge_a[3];
  std::int32_t edge_b[3];
  std::int64_t edge_c[3];
  // Pixel bounding box, inclusive, clamped to the viewport.
  std::int16_t min_x, min_y, max_x, max_y;
  // Attribute planes: value(x, y) = base + dx * (x - min_x) + dy * (y - min_y) at pixel centres,
  // for depth, 1/w and each attribute over w (or the attribute itself when affine).
  static constexpr int kPlanes = 8;  // z, 1/w, u, v, r, g, b, a
  float plane_base[kPlanes];
  float plane_dx[kPlanes];
  float plane_dy[kPlanes];
  float sort_depth;   // mean z/w of the vertices in [0, 1], for the ordering table
  float min_depth;    // the nearest vertex's z/w in [0, 1]: no pixel of it is nearer
  bool const_colour;  // one colour everywhere (flat, or equal vertex colours): plane_base
  // False from setup_triangle. The renderer's own setup leaves the planes to rasterize_triangle,
  // which computes them (to the same bits) only for a triangle not hidden in the tile: most of a
  // deep scene's are. Until then the plane arrays hold its vertices' values, and origin_x/y
  // vertex 0's sub-pixel position.
  bool planes_deferred = false;
  bool vertices_reversed = false;  // the edges run 0, 2, 1 (the vertices were clockwise on screen)
  std::int32_t origin_x = 0, origin_y = 0;
  std::uint32_t state;  // the caller's index of this triangle's DrawState (not used here)
};

// Projects, snaps to the sub-pixel grid and sets up. Returns false (nothing to draw) for a
// back face when state.cull is Back, a zero-area triangle, or one covering no pixel centre's
// bounding box inside the viewport. The vertices must have passed classify/clip (w > 0).
bool setup_triangle(const ClipVertex& a, const ClipVertex& b, const ClipVertex& c,
                    const Viewport& viewport, const DrawState& state, Triangle& out);

// Tiles the triangle's bounding box touches, inclusive.
struct TileRect {
  int x0, y0, x1, y1;
};
inline TileRect tile_bounds(const Triangle& t) {
  return {t.min_x / kTileSize, t.min_y / kTileSize, t.max_x / kTileSize, t.max_y / kTileSize};
}

// One tile of the colour and depth buffers: pixel (x, y) of the screen is color[y * stride + x]
// and depth[y * stride + x]; the tile is [x0, x1) x [y0, y1). `color` and `depth` are 16-byte
// aligned and stride is a multiple of 4.
//
// `block_max_depth` (optional) is a coarse depth buffer: per 8x8 block of the screen (row-major,
// `block_stride` blocks a row) the farthest depth in it. With it, a block the triangle cannot be
// nearer than (min_depth >= that value) is skipped before any pixel is looked at, which is most
// of the work of triangles hidden behind others; rasterize_triangle keeps it exact.
inline constexpr int kDepthBlock = 8;
struct TileTarget {
  std::uint32_t* color = nullptr;  // bytes R, G, B, A (render::rgba)
  float* depth = nullptr;
  int stride = 0;
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  float* block_max_depth = nullptr;
  int block_stride = 0;
};

void clear_tile(const TileTarget& tile, std::uint32_t color, float depth);

// Draws the part of `t` inside the tile: coverage by the edge functions over blocks of pixels
// (whole blocks accepted or rejected at once), depth test before shading, perspective-correct
// (or affine) colour and UV, texture sampling with mip selection (the nearest level to the
// exact UV footprint at each pixel), blending. The same triangle, state and tile contents always
// give the same pixels.
void rasterize_triangle(const Triangle& t, const DrawState& state, const TileTarget& tile);

// A point: one colour at one depth over an axis-aligned square of pixels, what the renderer
// draws instead of a mesh that covers a pixel or two (RendererConfig::point_pixels).
struct Point {
  std::int16_t x0, y0, x1, y1;  // pixels, inclusive, inside the viewport
  float depth;                  // z/w in [0, 1]: the nearest point of the draw's bounds
  std::uint32_t color;          // opaque, as the colour buffer holds it (render::rgba)
};

// Writes the point's pixels inside the tile: where it is nearer than the depth buffer when
// depth_test (and then its depth too, keeping block_max_depth exact), everywhere otherwise.
void fill_point(const Point& p, bool depth_test, const TileTarget& tile);

// Pixels written by rasterize_triangle and fill_point on this thread since the last call (for
// throughput figures; counted per thread, no shared counter).
std::uint64_t take_pixel_count();

}  // namespace spindle::render::raster
