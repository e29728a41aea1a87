// Triangle setup in fixed point and the tile rasteriser.
//
// Setup snaps vertices to a 1/256-pixel grid (kSubpixelBits), culls, and writes edge functions
// over whole pixels (see raster.h) plus float attribute planes. The rasteriser walks the part of
// the bounding box inside a tile in 8x8 blocks aligned to the screen: a block whose corners are
// outside one edge is skipped, one inside all edges is drawn without edge tests, and the rest
// test each pixel. Pixels go four at a time (one 16-byte row of a block half), or on AVX2 CPUs
// eight (a block's whole row) for the common textured variant (raster_wide.h, to the same bits):
// edge values step by integer adds, depth is tested before anything is shaded, then colour and UV
// are interpolated (perspective-correct unless affine), the texture sampled and the result
// blended.
//
// Determinism: an attribute at pixel (x, y) is always base + dy * (y - min_y) + dx * (x - min_x),
// evaluated from the triangle's origin, never accumulated across pixels or tiles, so a pixel's
// value does not depend on which tile or thread draws it. Mip levels come from the exact screen
// derivatives of the perspective-correct UV at each pixel (one level per pixel, nearest level),
// a pure function of the pixel's coordinates as well.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "raster_deferred.h"
#include "raster_limits.h"
#include "raster_screen.h"
#include "raster_simd.h"
#include "raster_texture.h"
#include "raster_wide.h"
#include "spindle/render/raster.h"

// The 8-pixel path (raster_wide.h): x86 with GCC or Clang, in builds that allow intrinsics.
#if SPINDLE_RASTER_SSE2 && (defined(__x86_64__) || defined(__i386__)) && \
    (defined(__GNUC__) || defined(__clang__))
#define SPINDLE_RASTER_AVX2 1
#include <immintrin.h>
#else
#define SPINDLE_RASTER_AVX2 0
#endif

// No a * b + c fused into one rounding here and not there: the same expression must give the
// same bits in every block and tile.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace spindle::render::raster {
namespace {

using simd::v4f;
using simd::v4i;
using simd::v4u;

thread_local std::uint64_t t_pixels_written = 0;

constexpr int kBlock = 8;  // trivial accept / reject granularity, pixels per side

enum Plane { kZ, kInvW, kU, kV, kR, kG, kB, kA };

// The attribute planes from the three vertices' values (val[i][k]: attribute k of vertex i, over
// w where perspective-correct) and their snapped positions relative to vertex 0, in double so
// that slivers stay sane. Setup and deferred setup both end here, so they give the same bits.
void fill_planes(const double (&val)[3][Triangle::kPlanes], std::int32_t fx0, std::int32_t fy0,
                 std::int32_t dfx1, std::int32_t dfy1, std::int32_t dfx2, std::int32_t dfy2,
                 bool textured, const glm::vec4& colour0, Triangle& out) {
  const double x0 = fx0 / double{kSubpixelScale}, y0 = fy0 / double{kSubpixelScale};
  const double dx1 = dfx1 / double{kSubpixelScale};
  const double dy1 = dfy1 / double{kSubpixelScale};
  const double dx2 = dfx2 / double{kSubpixelScale};
  const double dy2 = dfy2 / double{kSubpixelScale};
  const double inv_det = 1.0 / (dx1 * dy2 - dx2 * dy1);
  const double ox = out.min_x + 0.5 - x0, oy = out.min_y + 0.5 - y0;
  // A one-colour triangle's pixels skip the colour planes, and so does setup; an untextured
  // triangle needs no UV planes.
  const int planes = out.const_colour ? kR : Triangle::kPlanes;
  for (int k = 0; k < planes; ++k) {
    if (!textured && (k == kU || k == kV)) {
      out.plane_base[k] = out.plane_dx[k] = out.plane_dy[k] = 0.0f;
      continue;
    }
    const double d1 = val[1][k] - val[0][k];
    const double d2 = val[2][k] - val[0][k];
    const double gx = (d1 * dy2 - d2 * dy1) * inv_det;
    const double gy = (d2 * dx1 - d1 * dx2) * inv_det;
    out.plane_base[k] = static_cast<float>(val[0][k] + gx * ox + gy * oy);
    out.plane_dx[k] = static_cast<float>(gx);
    out.plane_dy[k] = static_cast<float>(gy);
  }
  if (out.const_colour) {
    for (int k = 0; k < 4; ++k) {
      out.plane_base[kR + k] = colour0[k];
      out.plane_dx[kR + k] = 0.0f;
      out.plane_dy[kR + k] = 0.0f;
    }
  }
}

// One vertex's values as the planes take them: attributes times q (1/w, or 1 when affine).
void vertex_values(float depth, float inv_w, glm::vec2 uv, const glm::vec4& colour, bool persp,
                   double (&val)[Triangle::kPlanes]) {
  const double q = persp ? inv_w : 1.0;
  val[kZ] = depth;
  val[kInvW] = q;
  val[kU] = uv.x * q;
  val[kV] = uv.y * q;
  val[kR] = colour.r * q;
  val[kG] = colour.g * q;
  val[kB] = colour.b * q;
  val[kA] = colour.a * q;
}

bool is_textured(const DrawState& state) {
  return state.texture != nullptr && state.texture->level_count > 0;
}

void finish_setup(const ClipVertex* const (&v)[3], const std::int32_t (&fx)[3],
                  const std::int32_t (&fy)[3], const float (&inv_w)[3], const float (&depth)[3],
                  std::int64_t area, const PixelBox& box, const DrawState& state, bool defer,
                  Triangle& out);

// setup_triangle, or with defer the same up to the planes, whose inputs it keeps instead.
bool setup(const ClipVertex& a, const ClipVertex& b, const ClipVertex& c, const Viewport& viewport,
           const DrawState& state, bool defer, Triangle& out) {
  const ClipVertex* v[3] = {&a, &b, &c};
  std::int32_t fx[3], fy[3];
  float inv_w[3], depth[3];
  const float half_w = 0.5f * static_cast<float>(viewport.width);
  const float half_h = 0.5f * static_cast<float>(viewport.height);
  for (int i = 0; i < 3; ++i) {
    const glm::vec4& p = v[i]->position;
    if (!(p.w > 0.0f)) return false;
    inv_w[i] = 1.0f / p.w;
    const float sx = (p.x * inv_w[i] + 1.0f) * half_w;
    const float sy = (1.0f - p.y * inv_w[i]) * half_h;
    if (!(sx >= -kMaxProjectedPixels && sx <= kMaxProjectedPixels && sy >= -kMaxProjectedPixels &&
          sy <= kMaxProjectedPixels)) {
      return false;
    }
    fx[i] = snap(sx);
    fy[i] = snap(sy);
    depth[i] = p.z * inv_w[i] * 0.5f + 0.5f;
  }

  std::int64_t area = 0;
  PixelBox box{};
  if (!pixel_bounds(fx, fy, viewport, state.cull, area, box)) return false;
  finish_setup(v, fx, fy, inv_w, depth, area, box, state, defer, out);
  return true;
}

// setup() from the projected, snapped and bounded vertices on.
void finish_setup(const ClipVertex* const (&v)[3], const std::int32_t (&fx)[3],
                  const std::int32_t (&fy)[3], const float (&inv_w)[3], const float (&depth)[3],
                  std::int64_t area, const PixelBox& box, const DrawState& state, bool defer,
                  Triangle& out) {
  const ClipVertex &a = *v[0], &b = *v[1], &c = *v[2];
  int order[3] = {0, 1, 2};  // inside is E >= 0 for every edge once the area is positive
  out.vertices_reversed = area < 0;
  if (area < 0) {
    std::swap(order[1], order[2]);
    area = -area;
  }
  const int min_x = box.min_x, min_y = box.min_y, max_x = box.max_x, max_y = box.max_y;
  const std::int32_t half = kSubpixelScale / 2;
  out.min_x = static_cast<std::int16_t>(min_x);
  out.min_y = static_cast<std::int16_t>(min_y);
  out.max_x = static_cast<std::int16_t>(max_x);
  out.max_y = static_cast<std::int16_t>(max_y);

  const std::int64_t origin_x = std::int64_t{min_x} * kSubpixelScale + half;
  const std::int64_t origin_y = std::int64_t{min_y} * kSubpixelScale + half;
  for (int e = 0; e < 3; ++e) {
    const int i = order[e];
    const int j = order[e == 2 ? 0 : e + 1];
    // E(p) = (xj - xi)(py - yi) - (yj - yi)(px - xi), positive towards the third vertex.
    const std::int32_t ea = fy[i] - fy[j];
    const std::int32_t eb = fx[j] - fx[i];
    std::int64_t ec = std::int64_t{ea} * (origin_x - fx[i]) + std::int64_t{eb} * (origin_y - fy[i]);
    // Top-left rule with y down: a left edge has inside to its right (a > 0), a top edge is
    // horizontal with inside below (a == 0, b > 0). Others exclude centres exactly on them.
    if (!(ea > 0 || (ea == 0 && eb > 0))) ec -= 1;
    out.edge_a[e] = ea;
    out.edge_b[e] = eb;
    out.edge_c[e] = ec >> kSubpixelBits;  // floor: E >= 0 <=> a*dx + b*dy + floor(c/256) >= 0
  }

  // One colour over the whole triangle: flat shading, or three equal vertex colours (a face lit
  // through one normal, unlit geometry).
  out.const_colour = state.flat || (a.color == b.color && a.color == c.color);
  out.planes_deferred = defer;
  out.origin_x = fx[0];
  out.origin_y = fy[0];
  if (defer) {  // vertex i's values in base (0), dx (1) and dy (2), not yet over w
    float* keep[3] = {out.plane_base, out.plane_dx, out.plane_dy};
    for (int i = 0; i < 3; ++i) {
      const ClipVertex& p = *v[i];
      keep[i][kZ] = depth[i];
      keep[i][kInvW] = inv_w[i];
      keep[i][kU] = p.uv.x;
      keep[i][kV] = p.uv.y;
      for (int k = 0; k < 4; ++k) keep[i][kR + k] = p.color[k];
    }
  } else {
    double val[3][Triangle::kPlanes];
    for (int i = 0; i < 3; ++i)
      vertex_values(depth[i], inv_w[i], v[i]->uv, v[i]->color, state.perspective, val[i]);
    fill_planes(val, fx[0], fy[0], fx[1] - fx[0], fy[1] - fy[0], fx[2] - fx[0], fy[2] - fy[0],
                is_textured(state), a.color, out);
  }
  out.sort_depth = (depth[0] + depth[1] + depth[2]) * (1.0f / 3.0f);
  out.min_depth = std::min({depth[0], depth[1], depth[2]});
}

// The planes of a triangle set up with defer, into `out` (a copy of it). Vertex 0's position is
// kept; the others come back from the edges, whose order setup reversed for a negative area
// (edge 0 then runs from vertex 0 to vertex 2).
void finish_planes(const Triangle& t, const DrawState& state, Triangle& out) {
  out = t;
  out.planes_deferred = false;
  // Edge e runs from vertex order[e] to order[e + 1]: a = y_i - y_j, b = x_j - x_i.
  const std::int32_t to_first_x = t.edge_b[0], to_first_y = -t.edge_a[0];  // 0 -> order[1]
  const std::int32_t to_last_x = -t.edge_b[2], to_last_y = t.edge_a[2];    // 0 -> order[2]
  std::int32_t dfx1 = to_first_x, dfy1 = to_first_y, dfx2 = to_last_x, dfy2 = to_last_y;
  if (t.vertices_reversed) {
    std::swap(dfx1, dfx2);
    std::swap(dfy1, dfy2);
  }
  const float* kept[3] = {t.plane_base, t.plane_dx, t.plane_dy};
  double val[3][Triangle::kPlanes];
  for (int i = 0; i < 3; ++i) {
    const float* k = kept[i];
    vertex_values(k[kZ], k[kInvW], glm::vec2(k[kU], k[kV]), glm::vec4(k[kR], k[kG], k[kB], k[kA]),
                  state.perspective, val[i]);
  }
  fill_planes(val, t.origin_x, t.origin_y, dfx1, dfy1, dfx2, dfy2, is_textured(state),
              glm::vec4(t.plane_base[kR], t.plane_base[kG], t.plane_base[kB], t.plane_base[kA]),
              out);
}

}  // namespace

bool setup_triangle(const ClipVertex& a, const ClipVertex& b, const ClipVertex& c,
                    const Viewport& viewport, const DrawState& state, Triangle& out) {
  return setup(a, b, c, viewport, state, false, out);
}

bool setup_for_tiles(const ClipVertex& a, const ClipVertex& b, const ClipVertex& c,
                     const Viewport& viewport, const DrawState& state, bool defer_planes,
                     Triangle& out) {
  return setup(a, b, c, viewport, state, defer_planes, out);
}

void setup_projected(const ClipVertex* const (&v)[3], const ScreenVertex* const (&s)[3],
                     std::int64_t area, const PixelBox& box, const DrawState& state,
                     bool defer_planes, Triangle& out) {
  const std::int32_t fx[3] = {s[0]->x, s[1]->x, s[2]->x}, fy[3] = {s[0]->y, s[1]->y, s[2]->y};
  const float inv_w[3] = {s[0]->inv_w, s[1]->inv_w, s[2]->inv_w};
  const float depth[3] = {s[0]->depth, s[1]->depth, s[2]->depth};
  finish_setup(v, fx, fy, inv_w, depth, area, box, state, defer_planes, out);
}

namespace {

// What one rasterize_triangle call needs per pixel, gathered once.
struct Shader {
  const Triangle* t;
  const TextureView* tex;  // null: colour only
  bool persp;              // divide attributes by the interpolated 1/w
  bool persp_colour;       // ... colour too (not when flat)
  bool const_colour;       // the same colour at every pixel (flat, or equal vertex colours)
  v4f colour[4];           // that colour, clamped to [0, 1] (alpha 1 when opaque)
  // Opaque and one colour: the pixel without a texture, and the colour in 8.8 fixed point as
  // 16-bit lanes (r, g, b, 0 twice per 4 lanes) to modulate texels with integer multiplies.
  v4u packed_colour;
  v4u colour_fixed;
  bool mips;
  bool bilinear;
  bool blend;
  bool depth_test;
  bool depth_write;
  float tex_w, tex_h;  // level 0 size, for the level of detail
};

// A plane's value at four pixels of one row: base + dy * fy + dx * fx, always in this order.
SPINDLE_RASTER_INLINE v4f plane(const Triangle& t, int k, float fy, v4f fx) {
  return simd::splat(t.plane_base[k] + t.plane_dy[k] * fy) + simd::splat(t.plane_dx[k]) * fx;
}

// The mip level per lane: round(log2(rho)) with rho the larger texel footprint of a pixel step
// in x or y, from the exact derivative of u = U / W: du/dx = (U_x - u * W_x) / W.
SPINDLE_RASTER_INLINE v4i mip_levels(const Shader& s, v4f u, v4f v, v4f inv_w) {
  const Triangle& t = *s.t;
  const v4f wx = simd::splat(t.plane_dx[kInvW]), wy = simd::splat(t.plane_dy[kInvW]);
  const v4f dudx = (simd::splat(t.plane_dx[kU]) - u * wx) * inv_w * s.tex_w;
  const v4f dvdx = (simd::splat(t.plane_dx[kV]) - v * wx) * inv_w * s.tex_h;
  const v4f dudy = (simd::splat(t.plane_dy[kU]) - u * wy) * inv_w * s.tex_w;
  const v4f dvdy = (simd::splat(t.plane_dy[kV]) - v * wy) * inv_w * s.tex_h;
  const v4f rho2 = simd::vmax(dudx * dudx + dvdx * dvdx, dudy * dudy + dvdy * dvdy);
  // rho^2 in [2^(2L-1), 2^(2L+1)) is level L: read the exponent of rho^2.
  const v4i e = ((reinterpret_cast<v4i>(rho2) >> 23) & 0xff) - 127;
  const v4i level = (e + 1) >> 1;
  return simd::vmin_i(simd::vmax_i(level, simd::splat_i(0)), simd::splat_i(s.tex->level_count - 1));
}

// (t * c + 128) >> 8 for the red, green and blue of four texels, c in 8.8 fixed point (at most
// 256) laid out as colour_fixed; alpha comes out 0.
SPINDLE_RASTER_INLINE v4u modulate(v4u texel, v4u c) {
#if SPINDLE_RASTER_SSE2
  const __m128i zero = _mm_setzero_si128(), round = _mm_set1_epi16(128);
  const __m128i tv = reinterpret_cast<__m128i>(texel), cv = reinterpret_cast<__m128i>(c);
  const __m128i lo =
      _mm_srli_epi16(_mm_add_epi16(_mm_mullo_epi16(_mm_unpacklo_epi8(tv, zero), cv), round), 8);
  const __m128i hi =
      _mm_srli_epi16(_mm_add_epi16(_mm_mullo_epi16(_mm_unpackhi_epi8(tv, zero), cv), round), 8);
  return reinterpret_cast<v4u>(_mm_packus_epi16(lo, hi));
#else
  const std::uint32_t m[4] = {c[0] & 0xffffu, c[0] >> 16, c[1] & 0xffffu, 0};
  v4u out;
  for (int i = 0; i < 4; ++i) {
    std::uint32_t p = 0;
    for (int k = 0; k < 4; ++k)
      p |= ((((texel[i] >> (8 * k)) & 0xffu) * m[k] + 128) >> 8) << (8 * k);
    out[i] = p;
  }
  return out;
#endif
}

SPINDLE_RASTER_INLINE v4u sample4(const Shader& s, const MipLevel& l, v4f u, v4f v) {
  return s.bilinear ? sample_bilinear4(l, u, v) : sample_nearest4(l, u, v);
}

// Shader variants compiled as straight-line code (the common cases: one opaque colour over the
// triangle, perspective-correct, no mips), and the general one that reads every flag.
enum Variant { kGeneral, kConstColour, kConstNearest, kConstBilinear };

SPINDLE_RASTER_INLINE void write(const Shader& s, v4i mask, v4u packed, v4f z, std::uint32_t* color,
                                 float* depth) {
  simd::store_u(color, simd::select(mask, packed, simd::load_u(color)));
  if (s.depth_write) simd::store_f(depth, simd::select(mask, z, simd::load_f(depth)));
}

// Shades, blends and writes four pixels whose coverage and depth test passed (mask).
template <int kVariant>
SPINDLE_RASTER_INLINE void shade(const Shader& s, v4i mask, float fy, v4f fx, v4f z,
                                 std::uint32_t* color, float* depth) {
  const Triangle& t = *s.t;
  if constexpr (kVariant == kConstColour) {  // one opaque colour: nothing to compute
    write(s, mask, s.packed_colour, z, color, depth);
    return;
  } else if constexpr (kVariant == kConstNearest || kVariant == kConstBilinear) {
    const v4f inv_w = simd::splat(1.0f) / plane(t, kInvW, fy, fx);
    const v4f u = plane(t, kU, fy, fx) * inv_w;
    const v4f v = plane(t, kV, fy, fx) * inv_w;
    const MipLevel& l = s.tex->levels[0];
    const v4u texel =
        kVariant == kConstBilinear ? sample_bilinear4(l, u, v) : sample_nearest4(l, u, v);
    write(s, mask, modulate(texel, s.colour_fixed) | simd::splat_u(0xff000000u), z, color, depth);
    return;
  }
  v4f inv_w = simd::splat(1.0f);
  if (s.persp) inv_w = simd::splat(1.0f) / plane(t, kInvW, fy, fx);
  const v4f zero = simd::splat(0.0f), one = simd::splat(1.0f);
  v4f r, g, b, a;
  if (s.const_colour) {  // clamped once per triangle
    r = s.colour[0], g = s.colour[1], b = s.colour[2], a = s.colour[3];
  } else {
    const v4f cw = s.persp_colour ? inv_w : simd::splat(1.0f);
    r = simd::vmin(simd::vmax(plane(t, kR, fy, fx) * cw, zero), one);
    g = simd::vmin(simd::vmax(plane(t, kG, fy, fx) * cw, zero), one);
    b = simd::vmin(simd::vmax(plane(t, kB, fy, fx) * cw, zero), one);
    a = s.blend ? simd::vmin(simd::vmax(plane(t, kA, fy, fx) * cw, zero), one) : one;
  }
  if (s.tex != nullptr) {
    const v4f u = plane(t, kU, fy, fx) * inv_w;
    const v4f v = plane(t, kV, fy, fx) * inv_w;
    v4u texel;
    if (!s.mips) {
      texel = sample4(s, s.tex->levels[0], u, v);
    } else {
      const v4i level = mip_levels(s, u, v, inv_w);
      if (level[0] == level[1] && level[0] == level[2] && level[0] == level[3]) {
        texel = sample4(s, s.tex->levels[level[0]], u, v);
      } else {  // lanes on different levels: one at a time, the same arithmetic
        for (int i = 0; i < 4; ++i)
          texel[i] = sample4(s, s.tex->levels[level[i]], simd::splat(u[i]), simd::splat(v[i]))[0];
      }
    }
    if (s.const_colour && !s.blend) {  // texel x colour in integers, alpha 255
      const v4u packed = modulate(texel, s.colour_fixed) | simd::splat_u(0xff000000u);
      simd::store_u(color, simd::select(mask, packed, simd::load_u(color)));
      if (s.depth_write) simd::store_f(depth, simd::select(mask, z, simd::load_f(depth)));
      return;
    }
    r *= simd::to_float(texel & 0xffu);
    g *= simd::to_float((texel >> 8) & 0xffu);
    b *= simd::to_float((texel >> 16) & 0xffu);
    a = s.blend ? a * simd::to_float(texel >> 24) : simd::splat(255.0f);  // opaque: alpha 255
  } else {
    const v4f k = simd::splat(255.0f);
    r *= k;
    g *= k;
    b *= k;
    a *= k;
  }
  const v4u old = simd::load_u(color);
  if (s.blend) {
    const v4f alpha = a * (1.0f / 255.0f);
    const v4f keep = one - alpha;
    r = r * alpha + simd::to_float(old & 0xffu) * keep;
    g = g * alpha + simd::to_float((old >> 8) & 0xffu) * keep;
    b = b * alpha + simd::to_float((old >> 16) & 0xffu) * keep;
    a = a * alpha + simd::to_float(old >> 24) * keep;
  }
  // Channels are in [0, 255]: truncating x + 1/2 rounds to nearest.
  const v4f h = simd::splat(0.5f);
  const v4i max8 = simd::splat_i(255);
  const v4u ri = reinterpret_cast<v4u>(simd::vmin_i(simd::truncate(r + h), max8));
  const v4u gi = reinterpret_cast<v4u>(simd::vmin_i(simd::truncate(g + h), max8));
  const v4u bi = reinterpret_cast<v4u>(simd::vmin_i(simd::truncate(b + h), max8));
  const v4u ai = reinterpret_cast<v4u>(simd::vmin_i(simd::truncate(a + h), max8));
  const v4u packed = ri | (gi << 8) | (bi << 16) | (ai << 24);
  simd::store_u(color, simd::select(mask, packed, old));
  if (s.depth_write) simd::store_f(depth, simd::select(mask, z, simd::load_f(depth)));
}

// One 8x8 block (rows [ry0, ry1], 4-pixel groups g0..g1 of it) with edge values e at the
// block's top-left pixel. kEdges: test the edges per pixel (a partly covered block).
template <bool kEdges, int kVariant>
void draw_block(const Shader& s, const TileTarget& tile, int bx, int by, int ry0, int ry1, int g0,
                int g1, const v4i* lane_x_mask, const std::int32_t* e, const std::int32_t* ea,
                const std::int32_t* eb, std::uint64_t& written) {
  const Triangle& t = *s.t;
  const v4i steps = {0, 1, 2, 3};
  v4i edge[2][3];
  for (int g = 0; g < 2; ++g) {
    for (int i = 0; i < 3; ++i) {
      edge[g][i] = simd::splat_i(e[i] + eb[i] * (ry0 - by) + ea[i] * 4 * g) + steps * ea[i];
    }
  }
  const v4f lane = {0.0f, 1.0f, 2.0f, 3.0f};
  for (int ry = ry0; ry <= ry1; ++ry) {
    const float fy = static_cast<float>(ry - t.min_y);
    std::uint32_t* color_row = tile.color + static_cast<std::ptrdiff_t>(ry) * tile.stride;
    float* depth_row = tile.depth + static_cast<std::ptrdiff_t>(ry) * tile.stride;
    for (int g = g0; g <= g1; ++g) {
      v4i mask = lane_x_mask[g];
      if constexpr (kEdges) {
        mask &= (edge[g][0] >= 0) & (edge[g][1] >= 0) & (edge[g][2] >= 0);
        for (int i = 0; i < 3; ++i) edge[g][i] += eb[i];
      }
      if (simd::mask_bits(mask) == 0) continue;
      const int px = bx + 4 * g;
      const v4f fx = simd::splat(static_cast<float>(px - t.min_x)) + lane;
      const v4f z = plane(t, kZ, fy, fx);
      float* d = depth_row + px;
      if (s.depth_test) {
        mask &= z < simd::load_f(d);
        if (simd::mask_bits(mask) == 0) continue;
      }
      shade<kVariant>(s, mask, fy, fx, z, color_row + px, d);
      written += static_cast<unsigned>(simd::lane_count(simd::mask_bits(mask)));
    }
    if constexpr (kEdges) {
      // Groups outside [g0, g1] were not stepped above.
      for (int g = 0; g < 2; ++g) {
        if (g >= g0 && g <= g1) continue;
        for (int i = 0; i < 3; ++i) edge[g][i] += eb[i];
      }
    }
  }
}

#if SPINDLE_RASTER_AVX2
// --- Eight pixels at a time (raster_wide.h) ----------------------------------------------------
// Each function here is compiled for AVX2 alone, and only called after the CPU was checked. Every
// lane does what the four-pixel path does for that pixel: plane values from the same scalar base
// and the pixel's own offset (exact small integers in float either way), the same divisions and
// products, the same texel loads and integer lerps (and, for textures the eight-quad load does
// not cover, the four-pixel sampler on each half).
#define SPINDLE_AVX2 __attribute__((target("avx2,popcnt")))
#define SPINDLE_AVX2_INLINE inline __attribute__((always_inline, target("avx2,popcnt")))

typedef std::int32_t v8i __attribute__((vector_size(32)));
typedef std::uint32_t v8u __attribute__((vector_size(32)));
typedef float v8f __attribute__((vector_size(32)));

SPINDLE_AVX2_INLINE v8f splat8(float x) {
  return v8f{x, x, x, x, x, x, x, x};
}
SPINDLE_AVX2_INLINE v8i splat8_i(std::int32_t x) {
  return v8i{x, x, x, x, x, x, x, x};
}
SPINDLE_AVX2_INLINE int mask_bits8(v8i m) {
  return _mm256_movemask_ps(_mm256_castsi256_ps(reinterpret_cast<__m256i>(m)));
}
SPINDLE_AVX2_INLINE v8f load8_f(const float* p) {
  return reinterpret_cast<v8f>(_mm256_loadu_ps(p));
}
SPINDLE_AVX2_INLINE v8u load8_u(const std::uint32_t* p) {
  return reinterpret_cast<v8u>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
SPINDLE_AVX2_INLINE void store8_f(float* p, v8f v) {
  _mm256_storeu_ps(p, reinterpret_cast<__m256>(v));
}
SPINDLE_AVX2_INLINE void store8_u(std::uint32_t* p, v8u v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), reinterpret_cast<__m256i>(v));
}
SPINDLE_AVX2_INLINE v8u select8(v8i mask, v8u a, v8u b) {
  const v8u m = reinterpret_cast<v8u>(mask);
  return (a & m) | (b & ~m);
}
SPINDLE_AVX2_INLINE v8f select8(v8i mask, v8f a, v8f b) {
  return reinterpret_cast<v8f>(select8(mask, reinterpret_cast<v8u>(a), reinterpret_cast<v8u>(b)));
}
SPINDLE_AVX2_INLINE v4f low_half(v8f v) {
  return reinterpret_cast<v4f>(_mm256_castps256_ps128(reinterpret_cast<__m256>(v)));
}
SPINDLE_AVX2_INLINE v4f high_half(v8f v) {
  return reinterpret_cast<v4f>(_mm256_extractf128_ps(reinterpret_cast<__m256>(v), 1));
}
SPINDLE_AVX2_INLINE v4u low_half_u(__m256i v) {
  return reinterpret_cast<v4u>(_mm256_castsi256_si128(v));
}
SPINDLE_AVX2_INLINE v8u join(v4u lo, v4u hi) {
  return reinterpret_cast<v8u>(_mm256_inserti128_si256(
      _mm256_castsi128_si256(reinterpret_cast<__m128i>(lo)), reinterpret_cast<__m128i>(hi), 1));
}

// plane() for eight pixels of a block's rows: splat(base + dy * fy) + splat(dx) * fx, the
// second term computed once per block.
struct Plane8 {
  float base, dy;
  v8f dx_fx;
  SPINDLE_AVX2_INLINE Plane8(const Triangle& t, int k, v8f fx)
      : base(t.plane_base[k]), dy(t.plane_dy[k]), dx_fx(splat8(t.plane_dx[k]) * fx) {}
  SPINDLE_AVX2_INLINE v8f at(float fy) const { return splat8(base + dy * fy) + dx_fx; }
};

// bilinear_axis() for a power-of-two size, on eight coordinates: the same clamp, fixed point
// and masks per lane. Its constants are computed once per texture (Axis8Size).
struct Axis8 {
  v8i i0, f;
};
struct Axis8Size {
  float scale = 0.0f, limit = 0.0f;
  int mask = 0;
  explicit Axis8Size(int size = 1)
      : scale(static_cast<float>(size) * 128.0f), limit(1073741824.0f / scale), mask(size - 1) {}
};
SPINDLE_AVX2_INLINE Axis8 bilinear_axis8_pow2(v8f u, const Axis8Size& a) {
  const v8f lo = splat8(-a.limit), hi = splat8(a.limit);
  const v8f above = u > lo ? u : lo;
  const v8f c = above < hi ? above : hi;
  const v8i q = __builtin_convertvector(c * splat8(a.scale) - splat8(64.0f), v8i);
  return {(q >> 7) & splat8_i(a.mask), q & splat8_i(127)};
}

// The 8-byte texel pairs at texels + at[k], k = a, b, c, d, in the four 64-bit lanes: broadcast
// loads and blends, which need no shuffle.
// (A function, not a lambda: lambdas do not take the enclosing function's target.)
SPINDLE_AVX2_INLINE __m256i texel_pair(const std::uint32_t* texels, std::int32_t at) {
  return _mm256_broadcastq_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(texels + at)));
}
SPINDLE_AVX2_INLINE __m256i pairs4(const std::uint32_t* texels, const std::int32_t* at, int a,
                                   int b, int c, int d) {
  const __m256i low =
      _mm256_blend_epi32(texel_pair(texels, at[a]), texel_pair(texels, at[b]), 0x0c);
  const __m256i high =
      _mm256_blend_epi32(texel_pair(texels, at[c]), texel_pair(texels, at[d]), 0xc0);
  return _mm256_blend_epi32(low, high, 0xf0);
}

// The horizontal lerp of four texel pairs (one per 64-bit lane), as 16-bit channels minus 128.
// lerp4() computes a + ((b - a) * f >> 7); that is ((128 - f) * a + f * b) >> 7 exactly, since
// 128 * a is a multiple of 128. One multiply-add of bytes does the sum: the weights
// (128 - f, f) as unsigned bytes, each channel's left and right texels, minus 128, as signed
// ones. The sum is 16384 less and fits 16 bits (|sum| <= 128 * 128), so the shift gives the
// lerp minus 128.
SPINDLE_AVX2_INLINE __m256i lerp_pairs(__m256i pairs, __m256i weights) {
  // Per 64-bit lane: left.r, right.r, left.g, right.g, ...
  const __m256i order = _mm256_setr_epi8(0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15, 0, 4,
                                         1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15);
  const __m256i texels =
      _mm256_shuffle_epi8(_mm256_xor_si256(pairs, _mm256_set1_epi8(-128)), order);
  return _mm256_srai_epi16(_mm256_maddubs_epi16(weights, texels), 7);
}

// lerp4()'s vertical step on channels kept minus 128: t + ((b - t) * f >> 7), minus 128 too.
SPINDLE_AVX2_INLINE __m256i lerp_words(__m256i t, __m256i b, __m256i f) {
  return _mm256_add_epi16(t, _mm256_srai_epi16(_mm256_mullo_epi16(_mm256_sub_epi16(b, t), f), 7));
}

// modulate() of channels kept minus 128 (v - 128): (v * c + 128) >> 8 = ((v - 128) * c + k) >> 8
// with k = 128 * c + 128. v * c + 128 is at most 65408, so 16-bit wrap-around gives its bits.
SPINDLE_AVX2_INLINE __m256i modulate_words(__m256i v, __m256i c, __m256i k) {
  return _mm256_srli_epi16(_mm256_add_epi16(_mm256_mullo_epi16(v, c), k), 8);
}

// Per texel colour factors for modulate_words(): c as 16-bit words (red, green, blue, 0 in each
// 64-bit lane, as colour_fixed) and k = 128 * c + 128.
struct Modulate8 {
  __m256i c, k;
};
SPINDLE_AVX2_INLINE Modulate8 modulate_factors(v4u colour_fixed) {
  const __m256i c = reinterpret_cast<__m256i>(join(colour_fixed, colour_fixed));
  return {c, _mm256_add_epi16(_mm256_slli_epi16(c, 7), _mm256_set1_epi16(128))};
}

// A texture level's fields, read once per block.
struct Texture8 {
  const std::uint32_t* texels;
  int width, height, width_shift;
  bool pow2;
  Axis8Size across, down;
  Texture8() = default;
  SPINDLE_AVX2_INLINE explicit Texture8(const MipLevel& l)
      : texels(l.texels),
        width(l.width),
        height(l.height),
        width_shift(__builtin_ctz(static_cast<unsigned>(l.width))),
        pow2((l.width & (l.width - 1)) == 0 && (l.height & (l.height - 1)) == 0),
        across(l.width),
        down(l.height) {}
};

// sample_bilinear4() and modulate() on eight pixels, in two steps. A power-of-two texture whose
// eight quads all lie inside it (nearly always) takes each quad's top and bottom pairs as one
// 8-byte load each, as the four-pixel path does, and keeps channels in 16 bits until the end.
// Anything else is the four-pixel path on each half.
//
// First step: the eight quads' top-left texels (at) and their lerp fractions, when all are
// inside a power-of-two texture; false otherwise.
SPINDLE_AVX2_INLINE bool find_quads8(const Texture8& tex, v8f u, v8f v, std::int32_t* at,
                                     std::int32_t* fx, std::int32_t* fy) {
  if (!tex.pow2) return false;
  const Axis8 x = bilinear_axis8_pow2(u, tex.across), y = bilinear_axis8_pow2(v, tex.down);
  const v8i inner = (x.i0 < splat8_i(tex.width - 1)) & (y.i0 < splat8_i(tex.height - 1));
  if (mask_bits8(inner) != 0xff) return false;
  _mm256_store_si256(reinterpret_cast<__m256i*>(at),
                     reinterpret_cast<__m256i>((y.i0 << tex.width_shift) + x.i0));
  _mm256_store_si256(reinterpret_cast<__m256i*>(fx), reinterpret_cast<__m256i>(x.f));
  _mm256_store_si256(reinterpret_cast<__m256i*>(fy), reinterpret_cast<__m256i>(y.f));
  return true;
}

// Second step: the filtered, modulated texels of the quads find_quads8() found.
SPINDLE_AVX2_INLINE v8u filter_quads8(const Texture8& tex, const std::int32_t* at,
                                      const std::int32_t* fx_at, const std::int32_t* fy_at,
                                      const Modulate8& m) {
  // Quads 0, 1, 4, 5 in the 64-bit lanes of the "a" vectors, 2, 3, 6, 7 in the "b" ones: the
  // final pack, which works within 128-bit halves, puts them in pixel order.
  const std::uint32_t* top = tex.texels;
  const std::uint32_t* bottom = tex.texels + tex.width;
  const __m256i fx = _mm256_load_si256(reinterpret_cast<const __m256i*>(fx_at));
  const __m256i wx = _mm256_or_si256(_mm256_sub_epi32(_mm256_set1_epi32(128), fx),
                                     _mm256_slli_epi32(fx, 8));  // bytes 128 - f, f
  const __m256i wx2 = _mm256_or_si256(wx, _mm256_slli_epi32(wx, 16));
  const __m256i wa = _mm256_unpacklo_epi32(wx2, wx2), wb = _mm256_unpackhi_epi32(wx2, wx2);
  const __m256i ta = lerp_pairs(pairs4(top, at, 0, 1, 4, 5), wa);
  const __m256i tb = lerp_pairs(pairs4(top, at, 2, 3, 6, 7), wb);
  const __m256i ba = lerp_pairs(pairs4(bottom, at, 0, 1, 4, 5), wa);
  const __m256i bb = lerp_pairs(pairs4(bottom, at, 2, 3, 6, 7), wb);
  const __m256i fy = _mm256_load_si256(reinterpret_cast<const __m256i*>(fy_at));
  const __m256i fy2 = _mm256_or_si256(fy, _mm256_slli_epi32(fy, 16));
  const __m256i ya = _mm256_unpacklo_epi32(fy2, fy2), yb = _mm256_unpackhi_epi32(fy2, fy2);
  const __m256i ca = modulate_words(lerp_words(ta, ba, ya), m.c, m.k);
  const __m256i cb = modulate_words(lerp_words(tb, bb, yb), m.c, m.k);
  return reinterpret_cast<v8u>(_mm256_packus_epi16(ca, cb));
}

// The four-pixel path on each half, for what find_quads8() does not take.
SPINDLE_AVX2_INLINE v8u sample_modulate4x2(const MipLevel& l, v8f u, v8f v, const Modulate8& m) {
  return join(modulate(sample_bilinear4(l, low_half(u), low_half(v)), low_half_u(m.c)),
              modulate(sample_bilinear4(l, high_half(u), high_half(v)), low_half_u(m.c)));
}

float block_max_depth(const TileTarget& tile, int bx, int by);

// The bilinear one-colour variant on eight pixels at a time, with every lane used. Rows of
// partly covered blocks average about half their lanes covered, so shading them a row at a time
// wastes half the work. Instead the rows of a triangle's blocks in the tile pack their covered,
// depth-tested pixels' positions into a queue (queue_block8()); when the triangle is done, or the
// queue full, the queue is shaded eight pixels at a time and each row takes its colours back out
// of it (flush_queue8()). Every lane computes what the four-pixel path does for its pixel: plane
// values per lane are (base + dy * fy) + dx * fx, the row-wise path's operations in its order.

// Lane permutations for an 8-bit row mask, one byte per lane: compress[m] moves the set lanes of
// m to the front, in order; expand[m] moves lane k of a packed vector to the k-th set lane.
struct LanePermutations {
  alignas(8) std::uint8_t compress[256][8], expand[256][8];
  constexpr LanePermutations() : compress(), expand() {
    for (int m = 0; m < 256; ++m) {
      int k = 0;
      for (int lane = 0; lane < 8; ++lane) {
        if ((m >> lane & 1) == 0) continue;
        compress[m][k] = static_cast<std::uint8_t>(lane);
        expand[m][lane] = static_cast<std::uint8_t>(k);
        ++k;
      }
    }
  }
};
constexpr LanePermutations kLanePermutations;

SPINDLE_AVX2_INLINE __m256i lane_indices(const std::uint8_t (&lanes)[8]) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(lanes)));
}
SPINDLE_AVX2_INLINE v8i mask_of(int bits) {
  const v8i lane_bit = {1, 2, 4, 8, 16, 32, 64, 128};
  return (splat8_i(bits) & lane_bit) == lane_bit;
}
SPINDLE_AVX2_INLINE v8u permute8(v8u v, __m256i index) {
  return reinterpret_cast<v8u>(_mm256_permutevar8x32_epi32(reinterpret_cast<__m256i>(v), index));
}

// A plane's values at eight pixels anywhere in the triangle's box.
struct LanePlane {
  v8f base, dy, dx;
  LanePlane() = default;
  SPINDLE_AVX2_INLINE LanePlane(const Triangle& t, int k)
      : base(splat8(t.plane_base[k])), dy(splat8(t.plane_dy[k])), dx(splat8(t.plane_dx[k])) {}
  SPINDLE_AVX2_INLINE v8f at(v8f fx, v8f fy) const { return (base + dy * fy) + dx * fx; }
};

// One triangle's pixels in one tile: the batch being filled, the shaded colours in pixel order,
// and the rows to write them to. Written out when full, so any triangle fits.
struct PixelQueue {
  static constexpr int kPixels = 1024;
  static constexpr int kRows = 192;
  static constexpr int kBlocks = 32;
  alignas(32) std::int32_t position[kPixels + 8];  // x | y << 16 from the box corner
  alignas(32) std::uint32_t color[kPixels + 8];
  // Per pixel, between the two steps of shading: its quad's top-left texel and lerp fractions.
  alignas(32) std::int32_t quad[kPixels + 8];
  alignas(32) std::int32_t quad_fx[kPixels + 8];
  alignas(32) std::int32_t quad_fy[kPixels + 8];
  std::uint8_t quads_found[kPixels / 8 + 1];  // per batch: find_quads8() took it
  struct Row {
    std::uint16_t x, y;   // the row's left pixel, in the tile's buffers
    std::uint16_t first;  // its first pixel in color
    std::uint16_t bits;   // its covered, depth-tested lanes
  };
  Row rows[kRows];
  std::uint16_t blocks[kBlocks][2];  // x, y of each block with pixels (for block_max_depth)
  int pixels = 0, row_count = 0, block_count = 0;
};
thread_local PixelQueue t_queue;

// The triangle's shading planes, and the texture, for a batch.
struct BatchShader {
  LanePlane w, u, v;
  const MipLevel* level;
  Texture8 tex;
  Modulate8 factors;
  BatchShader() = default;
  SPINDLE_AVX2_INLINE void init(const Shader& s) {
    w = LanePlane(*s.t, kInvW);
    u = LanePlane(*s.t, kU);
    v = LanePlane(*s.t, kV);
    level = &s.tex->levels[0];
    tex = Texture8(*level);
    factors = modulate_factors(s.colour_fixed);
  }
  // The batch's texture coordinates.
  SPINDLE_AVX2_INLINE void uv(v8f fx, v8f fy, v8f& u_out, v8f& v_out) const {
    const v8f inv_w = splat8(1.0f) / w.at(fx, fy);
    u_out = u.at(fx, fy) * inv_w;
    v_out = v.at(fx, fy) * inv_w;
  }
};

// Packs the positions of the covered, depth-tested pixels of one block whose eight columns are
// in the tile into the queue, with a row record to write them back by.
template <bool kEdges>
SPINDLE_AVX2 void queue_block8(const Shader& s, const TileTarget& tile, int bx, int by, int ry0,
                               int ry1, int x0, int x1, const std::int32_t* e,
                               const std::int32_t* ea, const std::int32_t* eb, PixelQueue& q) {
  const Triangle& t = *s.t;
  const v8i steps = {0, 1, 2, 3, 4, 5, 6, 7};
  const v8i x = splat8_i(bx) + steps;
  const v8i outside_columns = (x < splat8_i(x0)) | (x > splat8_i(x1));
  v8i edge[3], edge_step[3];
  for (int i = 0; i < 3; ++i) {
    edge[i] = splat8_i(e[i] + eb[i] * (ry0 - by)) + steps * ea[i];
    edge_step[i] = splat8_i(eb[i]);
  }
  const v8f fx = splat8(static_cast<float>(bx - t.min_x)) + v8f{0, 1, 2, 3, 4, 5, 6, 7};
  const Plane8 pz(t, kZ, fx);
  const int min_y = t.min_y;
  const v8i position_x = splat8_i(bx - t.min_x) + steps;
  const std::ptrdiff_t stride = tile.stride;
  const float* depth = tile.depth + static_cast<std::ptrdiff_t>(ry0) * stride + bx;
  int n = q.pixels, rows = q.row_count;
  const int first = n;
  // No branch per row: a row with no pixel stores nothing that is kept.
  for (int ry = ry0; ry <= ry1; ++ry, depth += stride) {
    // A lane is out when a sign bit is set: an edge's value, or the failed depth test's mask.
    v8i out = outside_columns;
    if constexpr (kEdges) {
      out |= edge[0] | edge[1] | edge[2];
      for (int i = 0; i < 3; ++i) edge[i] += edge_step[i];
    }
    const float fy = static_cast<float>(ry - min_y);
    const v8f z = pz.at(fy);
    out |= reinterpret_cast<v8i>(_mm256_cmp_ps(reinterpret_cast<__m256>(z),
                                               reinterpret_cast<__m256>(load8_f(depth)),
                                               _CMP_NLT_UQ));  // not z < depth
    const int bits = mask_bits8(out) ^ 0xff;
    const v8i position = position_x | splat8_i((ry - min_y) << 16);
    _mm256_storeu_si256(
        reinterpret_cast<__m256i*>(q.position + n),
        _mm256_permutevar8x32_epi32(reinterpret_cast<__m256i>(position),
                                    lane_indices(kLanePermutations.compress[bits])));
    q.rows[rows] = {static_cast<std::uint16_t>(bx), static_cast<std::uint16_t>(ry),
                    static_cast<std::uint16_t>(n), static_cast<std::uint16_t>(bits)};
    rows += bits != 0;
    n += __builtin_popcount(static_cast<unsigned>(bits));
  }
  q.pixels = n;
  q.row_count = rows;
  q.blocks[q.block_count][0] = static_cast<std::uint16_t>(bx);
  q.blocks[q.block_count][1] = static_cast<std::uint16_t>(by);
  q.block_count += n != first;  // only blocks with pixels get their coarse depth updated
}

// Shades the queued pixels, writes each row's pixels and depths, and brings the queued blocks'
// coarse depths up to date. Returns the pixels written.
SPINDLE_AVX2 std::uint64_t flush_queue8(const Shader& s, const BatchShader& shader,
                                        const TileTarget& tile, PixelQueue& q) {
  const int n = q.pixels;
  // The lanes past the last pixel shade the box corner (finite values), not stale ones.
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q.position + n), _mm256_setzero_si256());
  // Shading in groups of batches: each batch's texture coordinates and quads for the whole group
  // first, then each batch's filter. Two short chains of dependent work in place of one long one
  // (division, texel index, texel loads, lerps): 4% faster than one pass at 1280x720. Prefetching
  // the texels between the two was not faster.
  constexpr int kGroup = 16 * 8;
  for (int g = 0; g < n; g += kGroup) {
    const int end = std::min(n, g + kGroup);
    for (int i = g; i < end; i += 8) {
      const v8i p = reinterpret_cast<v8i>(
          _mm256_load_si256(reinterpret_cast<const __m256i*>(q.position + i)));
      v8f u, v;
      shader.uv(__builtin_convertvector(p & 0xffff, v8f), __builtin_convertvector(p >> 16, v8f), u,
                v);
      const bool found = find_quads8(shader.tex, u, v, q.quad + i, q.quad_fx + i, q.quad_fy + i);
      q.quads_found[i / 8] = found;
      if (!found)
        store8_u(q.color + i,
                 sample_modulate4x2(*shader.level, u, v, shader.factors) | 0xff000000u);
    }
    for (int i = g; i < end; i += 8) {
      if (q.quads_found[i / 8] == 0) continue;
      store8_u(q.color + i,
               filter_quads8(shader.tex, q.quad + i, q.quad_fx + i, q.quad_fy + i, shader.factors) |
                   0xff000000u);
    }
  }
  const Triangle& t = *s.t;
  const float z_base = t.plane_base[kZ], z_dy = t.plane_dy[kZ];
  const v8f z_dx = splat8(t.plane_dx[kZ]);
  const v8f steps = {0, 1, 2, 3, 4, 5, 6, 7};
  const bool depth_write = s.depth_write;
  const std::ptrdiff_t stride = tile.stride;
  for (int r = 0; r < q.row_count; ++r) {
    const PixelQueue::Row& row = q.rows[r];
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(row.y) * stride + row.x;
    std::uint32_t* color = tile.color + at;
    float* depth = tile.depth + at;
    const __m256i unpack = lane_indices(kLanePermutations.expand[row.bits]);
    const v8i mask = mask_of(row.bits);
    // Depth read before colour is written: the two buffers' rows can lie 4 KiB apart (the same
    // low address bits), and a load after such a store waits for it.
    const v8f old_z = load8_f(depth);
    store8_u(color, select8(mask, permute8(load8_u(q.color + row.first), unpack), load8_u(color)));
    if (depth_write) {
      // plane8()'s value: splat(base + dy * fy) + splat(dx) * fx.
      const float fx = static_cast<float>(row.x - t.min_x),
                  fy = static_cast<float>(row.y - t.min_y);
      const v8f z = splat8(z_base + z_dy * fy) + z_dx * (splat8(fx) + steps);
      store8_f(depth, select8(mask, z, old_z));
    }
  }
  if (tile.block_max_depth != nullptr && depth_write) {
    for (int b = 0; b < q.block_count; ++b) {
      const int bx = q.blocks[b][0], by = q.blocks[b][1];
      tile.block_max_depth[(by / kDepthBlock) * tile.block_stride + bx / kDepthBlock] =
          block_max_depth(tile, bx, by);
    }
  }
  q.pixels = q.row_count = q.block_count = 0;
  return static_cast<std::uint64_t>(n);
}

bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("popcnt") != 0;
}
#else
bool cpu_has_avx2() {
  return false;
}
#endif

const bool g_wide_available = cpu_has_avx2();
bool g_wide = g_wide_available;

// The farthest depth of the 8x8 block at (bx, by), over its pixels inside the tile.
float block_max_depth(const TileTarget& tile, int bx, int by) {
  const int x_end = std::min(bx + kDepthBlock, tile.x1);
  const int y_end = std::min(by + kDepthBlock, tile.y1);
  if (x_end == bx + kDepthBlock) {
    v4f m = simd::splat(0.0f);
    for (int y = by; y < y_end; ++y) {
      const float* d = tile.depth + static_cast<std::ptrdiff_t>(y) * tile.stride + bx;
      m = simd::vmax(m, simd::vmax(simd::load_f(d), simd::load_f(d + 4)));
    }
    return std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
  }
  float m = 0.0f;
  for (int y = by; y < y_end; ++y)
    for (int x = bx; x < x_end; ++x)
      m = std::max(m, tile.depth[static_cast<std::ptrdiff_t>(y) * tile.stride + x]);
  return m;
}

// One block on the four-pixel path (4-pixel groups of the block that meet [x0, x1]; each stays
// inside its row's stride), and its coarse depth brought up to date.
template <int kVariant>
void draw_block_four(const Shader& s, const TileTarget& tile, int bx, int by, int ry0, int ry1,
                     int x0, int x1, bool partial, const std::int32_t* e, const std::int32_t* ea,
                     const std::int32_t* eb, float* block_max, std::uint64_t& written) {
  const std::uint64_t before = written;
  const int g0 = bx + 3 < x0 ? 1 : 0;
  const int g1 = bx + 4 > x1 ? 0 : 1;
  const v4i lane = {0, 1, 2, 3};
  v4i lane_x_mask[2];
  for (int g = 0; g < 2; ++g) {
    const v4i x = simd::splat_i(bx + 4 * g) + lane;
    lane_x_mask[g] = (x >= x0) & (x <= x1);
  }
  if (partial)
    draw_block<true, kVariant>(s, tile, bx, by, ry0, ry1, g0, g1, lane_x_mask, e, ea, eb, written);
  else
    draw_block<false, kVariant>(s, tile, bx, by, ry0, ry1, g0, g1, lane_x_mask, e, ea, eb, written);
  if (block_max != nullptr && s.depth_write && written != before)
    *block_max = block_max_depth(tile, bx, by);
}

// The triangle's part of the tile, block by block, with shader variant kVariant. (Small
// triangles of the general variants are most of what comes here: a branch per block that ends
// early is cheaper for them than sorting a row of blocks out first, as walk_wide() does.)
template <int kVariant>
void walk_four(const Shader& s, const TileTarget& tile, int x0, int x1, int y0, int y1) {
  const Triangle& t = *s.t;
  std::uint64_t written = 0;
  for (int by = y0 & ~(kBlock - 1); by <= y1; by += kBlock) {
    const int ry0 = std::max(by, y0), ry1 = std::min(by + kBlock - 1, y1);
    for (int bx = x0 & ~(kBlock - 1); bx <= x1; bx += kBlock) {
      // Hidden behind everything already in the block: nothing to look at (the cheapest test
      // first; it is what most triangles of a deep scene fail).
      float* block_max = nullptr;
      if (tile.block_max_depth != nullptr) {
        block_max =
            tile.block_max_depth + (by / kDepthBlock) * tile.block_stride + bx / kDepthBlock;
        if (s.depth_test && !(t.min_depth < *block_max)) continue;  // hidden behind the block
      }
      std::int32_t e[3], ea[3], eb[3];
      bool partial = false, rejected = false;
      for (int i = 0; i < 3; ++i) {
        const std::int64_t a = t.edge_a[i], b = t.edge_b[i];
        const std::int64_t v = t.edge_c[i] + a * (bx - t.min_x) + b * (by - t.min_y);
        const std::int64_t lo =
            v + (std::min<std::int64_t>(a, 0) + std::min<std::int64_t>(b, 0)) * (kBlock - 1);
        const std::int64_t hi =
            v + (std::max<std::int64_t>(a, 0) + std::max<std::int64_t>(b, 0)) * (kBlock - 1);
        if (hi < 0) {
          rejected = true;
          break;
        }
        if (lo >= 0) {  // the whole block is inside this edge
          e[i] = ea[i] = eb[i] = 0;
        } else {  // |v| is below the edge's change across the block: fits int32
          e[i] = static_cast<std::int32_t>(v);
          ea[i] = t.edge_a[i];
          eb[i] = t.edge_b[i];
          partial = true;
        }
      }
      if (rejected) continue;
      draw_block_four<kVariant>(s, tile, bx, by, ry0, ry1, x0, x1, partial, e, ea, eb, block_max,
                                written);
    }
  }
  t_pixels_written += written;
}

#if SPINDLE_RASTER_AVX2
// The eight-pixel path's queue for one triangle in one tile.
struct WideQueue {
  BatchShader shader;
  PixelQueue& q = t_queue;
  std::uint64_t written = 0;
  SPINDLE_AVX2 explicit WideQueue(const Shader& s) { shader.init(s); }
  // Queues the block if its eight columns are all in the tile (a column outside [x0, x1] is read
  // and written back unchanged, which only this tile's job may do).
  SPINDLE_AVX2 bool queue(const Shader& s, const TileTarget& tile, int bx, int by, int ry0, int ry1,
                          int x0, int x1, bool partial, const std::int32_t* e,
                          const std::int32_t* ea, const std::int32_t* eb) {
    if (bx < tile.x0 || bx + kBlock > tile.x1) return false;
    if (q.pixels + kBlock * kBlock > PixelQueue::kPixels ||
        q.row_count + kBlock > PixelQueue::kRows || q.block_count == PixelQueue::kBlocks)
      written += flush_queue8(s, shader, tile, q);
    if (partial)
      queue_block8<true>(s, tile, bx, by, ry0, ry1, x0, x1, e, ea, eb, q);
    else
      queue_block8<false>(s, tile, bx, by, ry0, ry1, x0, x1, e, ea, eb, q);
    return true;
  }
  SPINDLE_AVX2 void flush(const Shader& s, const TileTarget& tile) {
    written += flush_queue8(s, shader, tile, q);
  }
};

// walk_four() on the eight-pixel path (the bilinear one-colour variant on an AVX2 CPU). A row of
// blocks is sorted out first, without a branch per block (which way each goes is as good as
// random for triangles that span several blocks): hidden behind everything already in the block,
// outside an edge (both nothing to draw), or cut by an edge (its pixels tested). Blocks whose
// columns are all in the tile go into the queue, others to the four-pixel path. Compiled as a
// whole for AVX2 (flatten), so that the queue's code is inlined into the walk.
SPINDLE_AVX2 __attribute__((flatten)) void walk_wide(const Shader& s, const TileTarget& tile,
                                                     int x0, int x1, int y0, int y1) {
  const Triangle& t = *s.t;
  WideQueue wide(s);
  std::uint64_t written = 0;
  // Per edge, over the walk: the change of its value from one block to the next, and the offsets
  // from a block's top-left value to its least and greatest over the 8x8 block.
  std::int64_t step[3], least[3], greatest[3];
  for (int i = 0; i < 3; ++i) {
    const std::int64_t a = t.edge_a[i], b = t.edge_b[i];
    step[i] = a * kBlock;
    least[i] = (std::min<std::int64_t>(a, 0) + std::min<std::int64_t>(b, 0)) * (kBlock - 1);
    greatest[i] = (std::max<std::int64_t>(a, 0) + std::max<std::int64_t>(b, 0)) * (kBlock - 1);
  }
  const std::int32_t edge_a[3] = {t.edge_a[0], t.edge_a[1], t.edge_a[2]};
  const std::int32_t edge_b[3] = {t.edge_b[0], t.edge_b[1], t.edge_b[2]};
  const float min_depth = t.min_depth;
  const int bx_first = x0 & ~(kBlock - 1);
  const int blocks = (x1 - bx_first) / kBlock + 1;
  const bool coarse_test = s.depth_test && tile.block_max_depth != nullptr;
  for (int by = y0 & ~(kBlock - 1); by <= y1; by += kBlock) {
    const int ry0 = std::max(by, y0), ry1 = std::min(by + kBlock - 1, y1);
    std::int64_t first[3];  // each edge's value at the row's first block
    for (int i = 0; i < 3; ++i)
      first[i] = t.edge_c[i] + std::int64_t{edge_a[i]} * (bx_first - t.min_x) +
                 std::int64_t{edge_b[i]} * (by - t.min_y);
    float* block_row = tile.block_max_depth == nullptr
                           ? nullptr
                           : tile.block_max_depth + (by / kDepthBlock) * tile.block_stride +
                                 bx_first / kDepthBlock;
    for (int k0 = 0; k0 < blocks; k0 += 32) {
      const int count = std::min(32, blocks - k0);
      std::uint32_t shown = 0, cut = 0;
      for (int j = 0; j < count; ++j) {
        const int k = k0 + j;
        bool out = coarse_test && !(min_depth < block_row[k]);
        bool edge_cut = false;
        for (int i = 0; i < 3; ++i) {
          const std::int64_t v = first[i] + step[i] * k;
          out |= v + greatest[i] < 0;
          edge_cut |= v + least[i] < 0;
        }
        shown |= static_cast<std::uint32_t>(!out) << j;
        cut |= static_cast<std::uint32_t>(edge_cut) << j;
      }
      for (std::uint32_t left = shown; left != 0; left &= left - 1) {
        const int j = __builtin_ctz(left), k = k0 + j;
        const int bx = bx_first + k * kBlock;
        const bool partial = (cut >> j & 1) != 0;
        std::int32_t e[3], ea[3], eb[3];
        for (int i = 0; i < 3; ++i) {
          const std::int64_t v = first[i] + step[i] * k;
          // An edge the whole block is inside is left out; otherwise |v| is below the edge's
          // change across the block, and fits int32.
          const bool inside = v + least[i] >= 0;
          e[i] = inside ? 0 : static_cast<std::int32_t>(v);
          ea[i] = inside ? 0 : edge_a[i];
          eb[i] = inside ? 0 : edge_b[i];
        }
        // A queued block's coarse depth is updated when the queue is flushed.
        if (!wide.queue(s, tile, bx, by, ry0, ry1, x0, x1, partial, e, ea, eb))
          draw_block_four<kConstBilinear>(s, tile, bx, by, ry0, ry1, x0, x1, partial, e, ea, eb,
                                          block_row == nullptr ? nullptr : block_row + k, written);
      }
    }
  }
  wide.flush(s, tile);
  t_pixels_written += written + wide.written;
}
#endif

template <int kVariant>
void walk(const Shader& s, const TileTarget& tile, int x0, int x1, int y0, int y1) {
#if SPINDLE_RASTER_AVX2
  if constexpr (kVariant == kConstBilinear) {
    if (g_wide) {
      walk_wide(s, tile, x0, x1, y0, y1);
      return;
    }
  }
#endif
  walk_four<kVariant>(s, tile, x0, x1, y0, y1);
}

}  // namespace

void rasterize_triangle(const Triangle& t, const DrawState& state, const TileTarget& tile) {
  // Hidden behind every block it touches: done before anything else is prepared (in a deep
  // scene most triangles end here).
  if (state.depth_test && hidden_in_tile({t.min_x, t.min_y, t.max_x, t.max_y, t.min_depth}, tile))
    return;
  rasterize_shown(t, state, tile);
}

void rasterize_shown(const Triangle& t, const DrawState& state, const TileTarget& tile) {
  const int x0 = std::max<int>(t.min_x, tile.x0);
  const int x1 = std::min<int>(t.max_x, tile.x1 - 1);
  const int y0 = std::max<int>(t.min_y, tile.y0);
  const int y1 = std::min<int>(t.max_y, tile.y1 - 1);
  if (x0 > x1 || y0 > y1) return;

  Triangle planes;  // for a triangle set up with its planes deferred: with them
  const Triangle& tri = t.planes_deferred ? (finish_planes(t, state, planes), planes) : t;
  Shader s{};
  s.t = &tri;
  s.tex = is_textured(state) ? state.texture : nullptr;
  s.persp = state.perspective;
  s.persp_colour = state.perspective && !state.flat;
  s.const_colour = tri.const_colour;
  if (s.const_colour) {
    for (int k = 0; k < 4; ++k)
      s.colour[k] = simd::splat(std::min(std::max(tri.plane_base[kR + k], 0.0f), 1.0f));
    if (state.blend != BlendMode::Alpha) s.colour[3] = simd::splat(1.0f);
    std::uint32_t c8[3], c16[3];
    for (int k = 0; k < 3; ++k) {
      c8[k] = static_cast<std::uint32_t>(s.colour[k][0] * 255.0f + 0.5f);
      c16[k] = static_cast<std::uint32_t>(s.colour[k][0] * 256.0f + 0.5f);
    }
    const std::uint32_t p = c8[0] | c8[1] << 8 | c8[2] << 16 | 0xff000000u;
    s.packed_colour = v4u{p, p, p, p};
    const std::uint32_t rg = c16[0] | c16[1] << 16, b0 = c16[2];
    s.colour_fixed = v4u{rg, b0, rg, b0};
  }
  s.mips = s.tex != nullptr && s.tex->mipmaps && s.tex->level_count > 1;
  s.bilinear = s.tex != nullptr && s.tex->filter == Filter::Bilinear;
  s.blend = state.blend == BlendMode::Alpha;
  s.depth_test = state.depth_test;
  s.depth_write = state.depth_write;
  if (s.tex != nullptr) {
    s.tex_w = static_cast<float>(s.tex->levels[0].width);
    s.tex_h = static_cast<float>(s.tex->levels[0].height);
  }

  // The fast variants: one opaque colour, perspective-correct, depth-tested, no mips.
  const bool fast = s.const_colour && !s.blend && s.persp && !s.mips && s.depth_test;
  if (fast && s.tex == nullptr) {
    walk<kConstColour>(s, tile, x0, x1, y0, y1);
  } else if (fast && s.bilinear) {
    walk<kConstBilinear>(s, tile, x0, x1, y0, y1);
  } else if (fast) {
    walk<kConstNearest>(s, tile, x0, x1, y0, y1);
  } else {
    walk<kGeneral>(s, tile, x0, x1, y0, y1);
  }
}

void fill_point(const Point& p, bool depth_test, const TileTarget& tile) {
  const int x0 = std::max<int>(p.x0, tile.x0), x1 = std::min<int>(p.x1, tile.x1 - 1);
  const int y0 = std::max<int>(p.y0, tile.y0), y1 = std::min<int>(p.y1, tile.y1 - 1);
  if (x0 > x1 || y0 > y1) return;
  std::uint64_t written = 0;
  bool farthest_replaced = false;  // a block's farthest pixel may have come nearer
  for (int y = y0; y <= y1; ++y) {
    std::uint32_t* c = tile.color + static_cast<std::ptrdiff_t>(y) * tile.stride;
    float* d = tile.depth + static_cast<std::ptrdiff_t>(y) * tile.stride;
    const float* block_row = tile.block_max_depth != nullptr
                                 ? tile.block_max_depth + (y / kDepthBlock) * tile.block_stride
                                 : nullptr;
    for (int x = x0; x <= x1; ++x) {
      if (!depth_test) {
        c[x] = p.color;
        ++written;
        continue;
      }
      if (!(p.depth < d[x])) continue;
      if (block_row != nullptr && !(d[x] < block_row[x / kDepthBlock])) farthest_replaced = true;
      c[x] = p.color;
      d[x] = p.depth;
      ++written;
    }
  }
  if (farthest_replaced) {
    for (int by = y0 / kDepthBlock; by <= y1 / kDepthBlock; ++by)
      for (int bx = x0 / kDepthBlock; bx <= x1 / kDepthBlock; ++bx)
        tile.block_max_depth[by * tile.block_stride + bx] =
            block_max_depth(tile, bx * kDepthBlock, by * kDepthBlock);
  }
  t_pixels_written += written;
}

void clear_tile(const TileTarget& tile, std::uint32_t color, float depth) {
  for (int y = tile.y0; y < tile.y1; ++y) {
    std::uint32_t* c = tile.color + static_cast<std::ptrdiff_t>(y) * tile.stride;
    float* d = tile.depth + static_cast<std::ptrdiff_t>(y) * tile.stride;
    std::fill(c + tile.x0, c + tile.x1, color);
    std::fill(d + tile.x0, d + tile.x1, depth);
  }
  if (tile.block_max_depth != nullptr) {
    for (int by = tile.y0 / kDepthBlock; by * kDepthBlock < tile.y1; ++by) {
      float* row = tile.block_max_depth + by * tile.block_stride;
      std::fill(row + tile.x0 / kDepthBlock, row + (tile.x1 + kDepthBlock - 1) / kDepthBlock,
                depth);
    }
  }
}

bool wide_pixels_available() {
  return g_wide_available;
}
bool wide_pixels() {
  return g_wide;
}
void set_wide_pixels(bool on) {
  g_wide = on && g_wide_available;
}

std::uint64_t take_pixel_count() {
  const std::uint64_t n = t_pixels_written;
  t_pixels_written = 0;
  return n;
}

}  // namespace spindle::render::raster
