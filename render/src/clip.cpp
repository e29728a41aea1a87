// Clip-space clipping: outcodes to classify each triangle cheaply, then Sutherland-Hodgman
// against the near and far planes and a guard band in x and y. Everything inside the guard band
// is left to the rasteriser's edge functions (which clip to the viewport for free), so only
// triangles that reach far off screen or cross the near/far planes pay for clipping.
#include <cstdint>

#include "raster_limits.h"
#include "raster_screen.h"
#include "spindle/render/raster.h"

namespace spindle::render::raster {
namespace {

// Signed distance to one clipping plane (>= 0 inside).
float plane_distance(int plane, const glm::vec4& p) {
  switch (plane) {
    case 0:
      return p.z + p.w;  // near
    case 1:
      return p.w - p.z;  // far
    case 2:
      return p.x + kGuardBand * p.w;
    case 3:
      return kGuardBand * p.w - p.x;
    case 4:
      return p.y + kGuardBand * p.w;
    default:
      return kGuardBand * p.w - p.y;
  }
}
constexpr std::uint32_t kPlaneBits[6] = {kNear,       kFar,         kGuardLeft,
                                         kGuardRight, kGuardBottom, kGuardTop};

// The point where the edge from `in` (inside) to `out` crosses the plane. Always interpolated
// from the inside end, so an edge shared by two triangles gets the same point either way round.
ClipVertex intersect(const ClipVertex& in, float d_in, const ClipVertex& out, float d_out) {
  const float t = d_in / (d_in - d_out);
  ClipVertex r;
  r.position = in.position + t * (out.position - in.position);
  r.color = in.color + t * (out.color - in.color);
  r.uv = in.uv + t * (out.uv - in.uv);
  return r;
}

// A convex polygon grows by at most one vertex per plane: 3 + 6.
constexpr int kMaxPolygon = 9;
static_assert(kMaxPolygon - 2 <= kMaxClippedTriangles);

}  // namespace

ClipClass classify(const ClipVertex& a, const ClipVertex& b, const ClipVertex& c) {
  return classify_codes(outcode(a.position), outcode(b.position), outcode(c.position));
}

int clip_triangle(const ClipVertex& a, const ClipVertex& b, const ClipVertex& c, ClipVertex* out) {
  ClipVertex buf[2][kMaxPolygon];
  buf[0][0] = a;
  buf[0][1] = b;
  buf[0][2] = c;
  int n = 3;
  int cur = 0;
  const std::uint32_t any = outcode(a.position) | outcode(b.position) | outcode(c.position);
  for (int plane = 0; plane < 6; ++plane) {
    if ((any & kPlaneBits[plane]) == 0) continue;
    const ClipVertex* src = buf[cur];
    ClipVertex* dst = buf[cur ^ 1];
    int m = 0;
    for (int i = 0; i < n; ++i) {
      const ClipVertex& p = src[i];
      const ClipVertex& q = src[i + 1 == n ? 0 : i + 1];
      const float dp = plane_distance(plane, p.position);
      const float dq = plane_distance(plane, q.position);
      const bool p_in = dp >= 0.0f;
      const bool q_in = dq >= 0.0f;
      if (p_in && m < kMaxPolygon) dst[m++] = p;
      if (p_in != q_in && m < kMaxPolygon) {
        dst[m++] = p_in ? intersect(p, dp, q, dq) : intersect(q, dq, p, dp);
      }
    }
    n = m;
    cur ^= 1;
    if (n < 3) return 0;
  }
  const ClipVertex* poly = buf[cur];
  int count = 0;
  for (int k = 0; k + 2 < n; ++k) {
    out[3 * count] = poly[0];
    out[3 * count + 1] = poly[k + 1];
    out[3 * count + 2] = poly[k + 2];
    ++count;
  }
  return count;
}

}  // namespace spindle::render::raster
