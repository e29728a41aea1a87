// The rasteriser's pieces driven the way the renderer drives them: classify / clip / set up each
// triangle, then draw every triangle into every 64x64 tile of full-screen colour and depth
// buffers. Coverage is checked against hand-computed or analytic expectations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/matrix_transform.hpp>

#include "raster_deferred.h"
#include "raster_screen.h"
#include "raster_wide.h"
#include "spindle/render/image.h"
#include "spindle/render/raster.h"
#include "spindle/render/texture.h"

namespace spindle::render::raster {
namespace {

constexpr std::uint32_t kClear = rgba(0, 0, 0, 0);

// Full-screen buffers, 16-byte aligned rows of `stride` pixels.
class Screen {
 public:
  Screen(int width, int height) : width_(width), height_(height), stride_((width + 3) & ~3) {
    color_store_.resize(static_cast<std::size_t>(stride_) * height_ + 4);
    depth_store_.resize(static_cast<std::size_t>(stride_) * height_ + 4);
    clear();
  }
  int width() const { return width_; }
  int height() const { return height_; }
  Viewport viewport() const { return {width_, height_}; }
  std::uint32_t* color() { return align(color_store_.data()); }
  float* depth() { return align(depth_store_.data()); }
  std::uint32_t at(int x, int y) { return color()[y * stride_ + x]; }
  float depth_at(int x, int y) { return depth()[y * stride_ + x]; }

  // The 64x64 tiles, row by row.
  std::vector<TileTarget> tiles() {
    std::vector<TileTarget> out;
    for (int y = 0; y < height_; y += kTileSize) {
      for (int x = 0; x < width_; x += kTileSize) {
        out.push_back({color(), depth(), stride_, x, y, std::min(x + kTileSize, width_),
                       std::min(y + kTileSize, height_), coarse_.empty() ? nullptr : coarse_.data(),
                       coarse_stride()});
      }
    }
    return out;
  }
  // Gives the tiles a coarse depth buffer (TileTarget::block_max_depth), cleared to 1.
  void use_coarse_depth() {
    coarse_.assign(
        static_cast<std::size_t>(coarse_stride()) * ((height_ + kDepthBlock - 1) / kDepthBlock),
        1.0f);
  }
  // Whether each block's coarse depth is the farthest depth of its pixels, as the rasteriser
  // promises to keep it.
  bool coarse_exact() {
    for (int by = 0; by * kDepthBlock < height_; ++by)
      for (int bx = 0; bx * kDepthBlock < width_; ++bx) {
        float m = 0.0f;
        for (int y = by * kDepthBlock; y < std::min((by + 1) * kDepthBlock, height_); ++y)
          for (int x = bx * kDepthBlock; x < std::min((bx + 1) * kDepthBlock, width_); ++x)
            m = std::max(m, depth_at(x, y));
        if (coarse_[static_cast<std::size_t>(by * coarse_stride() + bx)] != m) return false;
      }
    return true;
  }
  void clear(std::uint32_t c = kClear) {
    for (const TileTarget& t : tiles()) clear_tile(t, c, 1.0f);
  }
  bool same(Screen& o) {
    for (int y = 0; y < height_; ++y)
      for (int x = 0; x < width_; ++x)
        if (at(x, y) != o.at(x, y) || depth_at(x, y) != o.depth_at(x, y)) return false;
    return true;
  }
  int count_not(std::uint32_t c) {
    int n = 0;
    for (int y = 0; y < height_; ++y)
      for (int x = 0; x < width_; ++x) n += at(x, y) != c;
    return n;
  }

 private:
  template <class T>
  static T* align(T* p) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return reinterpret_cast<T*>((a + 15) & ~std::uintptr_t{15});
  }
  int coarse_stride() const { return (width_ + kDepthBlock - 1) / kDepthBlock; }
  int width_, height_, stride_;
  std::vector<std::uint32_t> color_store_;
  std::vector<float> depth_store_;
  std::vector<float> coarse_;
};

using Tri = std::array<ClipVertex, 3>;

// Clips and sets up like the front end.
std::vector<Triangle> set_up(const std::vector<Tri>& tris, const Viewport& vp,
                             const DrawState& state) {
  std::vector<Triangle> out;
  auto add = [&](const ClipVertex& a, const ClipVertex& b, const ClipVertex& c) {
    Triangle t;
    if (setup_triangle(a, b, c, vp, state, t)) out.push_back(t);
  };
  for (const Tri& t : tris) {
    switch (classify(t[0], t[1], t[2])) {
      case ClipClass::Outside:
        break;
      case ClipClass::Inside:
        add(t[0], t[1], t[2]);
        break;
      case ClipClass::Clip: {
        ClipVertex buf[3 * kMaxClippedTriangles];
        const int n = clip_triangle(t[0], t[1], t[2], buf);
        for (int k = 0; k < n; ++k) add(buf[3 * k], buf[3 * k + 1], buf[3 * k + 2]);
      }
    }
  }
  return out;
}

// Draws every triangle into every tile (tile order given by `order`, default row by row).
void draw(Screen& s, const std::vector<Tri>& tris, const DrawState& state,
          std::vector<int> order = {}) {
  const std::vector<Triangle> set = set_up(tris, s.viewport(), state);
  std::vector<TileTarget> tiles = s.tiles();
  if (order.empty()) {
    order.resize(tiles.size());
    std::iota(order.begin(), order.end(), 0);
  }
  for (int i : order)
    for (const Triangle& t : set) rasterize_triangle(t, state, tiles[i]);
}

// A vertex at pixel position (x, y) with y down, clip w = `w` (same place on screen).
ClipVertex px(const Screen& s, double x, double y, float z = 0.0f, float w = 1.0f,
              glm::vec4 color = glm::vec4(1.0f), glm::vec2 uv = {0, 0}) {
  ClipVertex v;
  const float nx = static_cast<float>(x / s.width() * 2.0 - 1.0);
  const float ny = static_cast<float>(1.0 - y / s.height() * 2.0);
  v.position = {nx * w, ny * w, z * w, w};
  v.color = color;
  v.uv = uv;
  return v;
}

DrawState plain(CullMode cull = CullMode::None) {
  DrawState st;
  st.cull = cull;
  st.depth_test = false;
  st.depth_write = false;
  return st;
}

// Screen-space point-in-triangle with a margin: 1 inside by more than `margin` pixels, 0
// outside by more than it, -1 near an edge (either answer is right).
int inside(double x, double y, const std::array<glm::dvec2, 3>& v, double margin) {
  const double area = (v[1].x - v[0].x) * (v[2].y - v[0].y) - (v[2].x - v[0].x) * (v[1].y - v[0].y);
  bool all_in = true;
  for (int i = 0; i < 3; ++i) {
    const glm::dvec2 a = v[i], b = v[(i + 1) % 3];
    const double len = glm::length(b - a);
    double d = ((b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x)) / len;
    if (area < 0) d = -d;
    if (d < -margin) return 0;
    if (d < margin) all_in = false;
  }
  return all_in ? 1 : -1;
}

// Draws each triangle alone and counts, per pixel, how many drew it.
std::vector<int> coverage_counts(Screen& s, const std::vector<Tri>& tris, const DrawState& st) {
  std::vector<int> count(static_cast<std::size_t>(s.width()) * s.height(), 0);
  for (const Tri& t : tris) {
    s.clear();
    draw(s, {t}, st);
    for (int y = 0; y < s.height(); ++y)
      for (int x = 0; x < s.width(); ++x) count[y * s.width() + x] += s.at(x, y) != kClear;
  }
  return count;
}

// ---------------------------------------------------------------------------------------------

TEST(RasterClassify, InsideOutsideAndClip) {
  Screen s(256, 256);
  const ClipVertex a = px(s, 10, 10), b = px(s, 100, 10), c = px(s, 50, 90);
  EXPECT_EQ(classify(a, b, c), ClipClass::Inside);
  // Off screen but inside the guard band: the edge functions handle it.
  EXPECT_EQ(classify(px(s, -300, 10), b, c), ClipClass::Inside);
  // All right of x = w.
  EXPECT_EQ(classify(px(s, 300, 10), px(s, 400, 10), px(s, 350, 90)), ClipClass::Outside);
  // All above the top, all below the bottom.
  EXPECT_EQ(classify(px(s, 10, -10), px(s, 90, -20), px(s, 50, -90)), ClipClass::Outside);
  EXPECT_EQ(classify(px(s, 10, 300), px(s, 90, 300), px(s, 50, 900)), ClipClass::Outside);
  // All behind the camera or all beyond the far plane.
  EXPECT_EQ(classify(px(s, 10, 10, -2.0f), px(s, 90, 10, -3.0f), px(s, 50, 90, -1.5f)),
            ClipClass::Outside);
  EXPECT_EQ(classify(px(s, 10, 10, 2.0f), px(s, 90, 10, 3.0f), px(s, 50, 90, 1.5f)),
            ClipClass::Outside);
  // Crossing the near plane, the far plane, or leaving the guard band on any side.
  EXPECT_EQ(classify(px(s, 10, 10, -2.0f), b, c), ClipClass::Clip);
  EXPECT_EQ(classify(px(s, 10, 10, 2.0f), b, c), ClipClass::Clip);
  EXPECT_EQ(classify(px(s, -5000, 10), b, c), ClipClass::Clip);
  EXPECT_EQ(classify(px(s, 5000, 10), b, c), ClipClass::Clip);
  EXPECT_EQ(classify(px(s, 10, -5000), b, c), ClipClass::Clip);
  EXPECT_EQ(classify(px(s, 10, 5000), b, c), ClipClass::Clip);
  // w <= 0 never counts as inside.
  ClipVertex behind = a;
  behind.position = {0.0f, 0.0f, 0.0f, -1.0f};
  EXPECT_EQ(classify(behind, b, c), ClipClass::Clip);
}

TEST(RasterClip, KeepsWindingAndInterpolatesAttributes) {
  Screen s(256, 256);
  // Crossing the near plane: z/w = -3 at the first vertex, 0 at the others.
  ClipVertex a = px(s, 0, 0, -3.0f, 1.0f, {1, 0, 0, 1}, {0, 0});
  ClipVertex b = px(s, 200, 0, 0.0f, 1.0f, {0, 1, 0, 1}, {1, 0});
  ClipVertex c = px(s, 0, 200, 0.0f, 1.0f, {0, 0, 1, 1}, {0, 1});
  ClipVertex out[3 * kMaxClippedTriangles];
  const int n = clip_triangle(a, b, c, out);
  ASSERT_EQ(n, 2);  // a quad
  for (int k = 0; k < n; ++k) {
    const glm::vec4 p0 = out[3 * k].position, p1 = out[3 * k + 1].position,
                    p2 = out[3 * k + 2].position;
    // Same orientation as the input (screen y down: positive cross product here).
    const float cross = (p1.x - p0.x) * (p2.y - p0.y) - (p2.x - p0.x) * (p1.y - p0.y);
    const float ref = (b.position.x - a.position.x) * (c.position.y - a.position.y) -
                      (c.position.x - a.position.x) * (b.position.y - a.position.y);
    EXPECT_GT(cross * ref, 0.0f);
    for (int i = 0; i < 3; ++i) {
      const ClipVertex& v = out[3 * k + i];
      EXPECT_GE(v.position.z, -v.position.w - 1e-5f);
      // Attributes stay the linear function of position they were: r + g + b = 1 and u, v
      // follow green and blue.
      EXPECT_NEAR(v.color.r + v.color.g + v.color.b, 1.0f, 1e-5f);
      EXPECT_NEAR(v.uv.x, v.color.g, 1e-5f);
      EXPECT_NEAR(v.uv.y, v.color.b, 1e-5f);
    }
  }
  // Entirely inside every plane: unchanged.
  EXPECT_EQ(clip_triangle(px(s, 1, 1), px(s, 9, 1), px(s, 1, 9), out), 1);
  EXPECT_EQ(out[1].position, px(s, 9, 1).position);
}

TEST(RasterCoverage, FanIsWatertight) {
  Screen s(256, 256);
  const glm::dvec2 centre{128.37, 121.71};
  constexpr int kN = 13;
  std::vector<Tri> tris;
  std::vector<glm::dvec2> rim;
  for (int i = 0; i <= kN; ++i) {
    const double ang = 2.0 * 3.14159265358979 * i / kN + 0.1;
    rim.push_back(centre + glm::dvec2(std::cos(ang), std::sin(ang)) * (90.0 + (i % 3) * 7.3));
  }
  rim.back() = rim.front();
  for (int i = 0; i < kN; ++i) {
    tris.push_back(
        {px(s, centre.x, centre.y), px(s, rim[i].x, rim[i].y), px(s, rim[i + 1].x, rim[i + 1].y)});
  }
  const std::vector<int> count = coverage_counts(s, tris, plain());
  int covered = 0;
  for (int y = 0; y < s.height(); ++y) {
    for (int x = 0; x < s.width(); ++x) {
      const int c = count[y * s.width() + x];
      ASSERT_LE(c, 1) << "pixel " << x << "," << y << " drawn twice";
      covered += c;
      // Inside one of the fan's triangles by a margin: must be drawn (no gaps).
      for (int i = 0; i < kN; ++i) {
        if (inside(x + 0.5, y + 0.5, {centre, rim[i], rim[i + 1]}, 1e-3) == 1) {
          ASSERT_EQ(c, 1) << "gap at " << x << "," << y;
        }
      }
    }
  }
  EXPECT_GT(covered, 20000);
}

TEST(RasterCoverage, GridIsWatertight) {
  Screen s(200, 150);  // partial tiles at the right and bottom
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(-3.0, 3.0);
  constexpr int kCells = 9;
  std::vector<std::vector<glm::dvec2>> p(kCells + 1, std::vector<glm::dvec2>(kCells + 1));
  for (int j = 0; j <= kCells; ++j)
    for (int i = 0; i <= kCells; ++i)
      p[j][i] = {10.0 + i * 20.0 + jitter(rng) + 0.37, 5.0 + j * 15.0 + jitter(rng) + 0.11};
  // Edges at the rim pass exactly through pixel centres too.
  p[0][0] = {10.5, 5.5};
  p[0][1] = {30.5, 5.5};
  std::vector<Tri> tris;
  std::vector<std::array<glm::dvec2, 3>> ref;
  for (int j = 0; j < kCells; ++j) {
    for (int i = 0; i < kCells; ++i) {
      const glm::dvec2 a = p[j][i], b = p[j][i + 1], c = p[j + 1][i + 1], d = p[j + 1][i];
      // Alternate the diagonal and the winding (culling off).
      const bool flip = (i + j) % 2 == 1;
      const std::array<glm::dvec2, 3> t1 = flip ? std::array{a, b, d} : std::array{a, c, b};
      const std::array<glm::dvec2, 3> t2 = flip ? std::array{b, c, d} : std::array{a, d, c};
      for (const auto& t : {t1, t2}) {
        tris.push_back({px(s, t[0].x, t[0].y), px(s, t[1].x, t[1].y), px(s, t[2].x, t[2].y)});
        ref.push_back(t);
      }
    }
  }
  const std::vector<int> count = coverage_counts(s, tris, plain());
  for (int y = 0; y < s.height(); ++y) {
    for (int x = 0; x < s.width(); ++x) {
      const int c = count[y * s.width() + x];
      ASSERT_LE(c, 1) << "pixel " << x << "," << y << " drawn twice";
      for (const auto& t : ref) {
        if (inside(x + 0.5, y + 0.5, t, 1e-3) == 1) {
          ASSERT_EQ(c, 1) << x << "," << y;
        }
      }
    }
  }
  // All triangles together, counted by the rasteriser: the same total.
  take_pixel_count();
  s.clear();
  draw(s, tris, plain());
  const std::uint64_t drawn = take_pixel_count();
  EXPECT_EQ(drawn, static_cast<std::uint64_t>(std::accumulate(count.begin(), count.end(), 0)));
  EXPECT_EQ(drawn, static_cast<std::uint64_t>(s.count_not(kClear)));
}

TEST(RasterCoverage, TopLeftRule) {
  Screen s(256, 256);
  auto drawn = [&](const Tri& t, int x, int y) {
    s.clear();
    draw(s, {t}, plain());
    return s.at(x, y) != kClear;
  };
  // Horizontal edge through the centres of row 10.
  const ClipVertex l = px(s, 0.2, 10.5), r = px(s, 40.2, 10.5);
  EXPECT_TRUE(drawn({l, r, px(s, 20, 30)}, 20, 10));    // top edge of the triangle below
  EXPECT_FALSE(drawn({l, r, px(s, 20, 0.2)}, 20, 10));  // bottom edge of the one above
  EXPECT_TRUE(drawn({l, r, px(s, 20, 0.2)}, 20, 9));
  // Vertical edge through the centres of column 50.
  const ClipVertex t = px(s, 50.5, 5), b = px(s, 50.5, 45);
  EXPECT_TRUE(drawn({t, b, px(s, 80, 25)}, 50, 25));   // left edge of the one to the right
  EXPECT_FALSE(drawn({t, b, px(s, 20, 25)}, 50, 25));  // right edge of the one to the left
  EXPECT_TRUE(drawn({t, b, px(s, 20, 25)}, 49, 25));
  // A diagonal through pixel centres shared by two triangles: each centre on it goes to exactly
  // one, whichever winding.
  for (bool reverse : {false, true}) {
    const ClipVertex a = px(s, 10.5, 60.5), c = px(s, 40.5, 90.5);
    Tri t1 = {a, c, px(s, 40.5, 60.5)}, t2 = {a, px(s, 10.5, 90.5), c};
    if (reverse) {
      std::swap(t1[1], t1[2]);
      std::swap(t2[1], t2[2]);
    }
    const std::vector<int> count = coverage_counts(s, {t1, t2}, plain());
    for (int k = 0; k < 30; ++k) EXPECT_EQ(count[(60 + k) * 256 + 10 + k], 1) << k;
    EXPECT_EQ(*std::max_element(count.begin(), count.end()), 1);
  }
}

// Coverage against the analytic triangle (all w = 1 after the fact: screen-space exact).
void expect_covers(Screen& s, const std::array<glm::dvec2, 3>& v, const char* what) {
  s.clear();
  const glm::vec4 white(1.0f);
  draw(s,
       {{px(s, v[0].x, v[0].y, 0, 1, white), px(s, v[1].x, v[1].y, 0, 1, white),
         px(s, v[2].x, v[2].y, 0, 1, white)}},
       plain());
  int checked = 0;
  for (int y = 0; y < s.height(); ++y) {
    for (int x = 0; x < s.width(); ++x) {
      const int want = inside(x + 0.5, y + 0.5, v, 0.05);
      if (want < 0) continue;
      ASSERT_EQ(s.at(x, y) != kClear, want == 1) << what << " at " << x << "," << y;
      checked += want;
    }
  }
  EXPECT_GT(checked, 100) << what;
}

TEST(RasterClip, GuardBandOnEverySide) {
  Screen s(256, 256);
  // One vertex far beyond each side (beyond the guard band), two on screen.
  expect_covers(s, {glm::dvec2{-20000.0, 100.0}, {200.0, 30.0}, {180.0, 200.0}}, "left");
  expect_covers(s, {glm::dvec2{20000.0, 100.0}, {20.0, 30.0}, {40.0, 200.0}}, "right");
  expect_covers(s, {glm::dvec2{128.0, -20000.0}, {20.0, 200.0}, {230.0, 220.0}}, "top");
  expect_covers(s, {glm::dvec2{128.0, 20000.0}, {20.0, 20.0}, {230.0, 40.0}}, "bottom");
  // Inside the guard band but off screen: no clipping needed, same result.
  expect_covers(s, {glm::dvec2{-300.0, 100.0}, {200.0, 30.0}, {180.0, 200.0}}, "guard");
}

TEST(RasterClip, HugeTriangleCoversScreenWithRightColours) {
  Screen s(200, 150);
  // Red rises linearly with x over the whole huge triangle, so each pixel's red is known.
  auto vert = [&](double x, double y) {
    const float red = static_cast<float>((x + 1.0e5) / 2.0e5);
    return px(s, x, y, 0.0f, 1.0f, {red, 0.5f, 0.0f, 1.0f});
  };
  const Tri huge = {vert(-1.0e5, -1.0e5), vert(1.0e5, -1.0e5), vert(0.0, 1.0e5)};
  EXPECT_EQ(classify(huge[0], huge[1], huge[2]), ClipClass::Clip);
  s.clear();
  draw(s, {huge}, plain());
  for (int y = 0; y < s.height(); ++y) {
    for (int x = 0; x < s.width(); ++x) {
      const std::uint32_t p = s.at(x, y);
      const double red = (x + 0.5 + 1.0e5) / 2.0e5 * 255.0;
      ASSERT_NEAR(static_cast<double>(red_of(p)), red, 1.0) << x << "," << y;
      ASSERT_EQ(green_of(p), 128u);
    }
  }
}

// A camera looking down -z; the floor y = -1 from z = near_z to far_z, 40 wide.
struct FloorScene {
  glm::mat4 proj = glm::perspective(1.0f, 1.0f, 0.5f, 30.0f);
  float tan_half = std::tan(0.5f);
  ClipVertex at(float x, float z, glm::vec2 uv = {0, 0}) const {
    ClipVertex v;
    v.position = proj * glm::vec4(x, -1.0f, z, 1.0f);
    v.uv = uv;
    return v;
  }
  std::vector<Tri> floor(float near_z, float far_z) const {
    const ClipVertex a = at(-20, near_z, {-10, near_z * 0.5f}),
                     b = at(20, near_z, {10, near_z * 0.5f});
    const ClipVertex c = at(20, far_z, {10, far_z * 0.5f}), d = at(-20, far_z, {-10, far_z * 0.5f});
    return {{a, b, c}, {a, c, d}};
  }
  // Distance along -z at which the view ray through pixel row y meets the floor (< 0: none).
  double floor_depth(const Screen& s, int y) const {
    const double ndc_y = 1.0 - (y + 0.5) / s.height() * 2.0;
    return ndc_y < 0.0 ? 1.0 / (-ndc_y * tan_half) : -1.0;
  }
};

TEST(RasterClip, NearPlaneCrossingFloorIsDrawnToTheBottom) {
  Screen s(128, 128);
  FloorScene f;
  // From behind the camera (z = +10) to z = -20: crosses the near plane, w < 0 at one end.
  const std::vector<Tri> tris = f.floor(10.0f, -20.0f);
  EXPECT_EQ(classify(tris[0][0], tris[0][1], tris[0][2]), ClipClass::Clip);
  s.clear();
  draw(s, tris, plain());
  int rows = 0;
  for (int y = 0; y < s.height(); ++y) {
    const double d = f.floor_depth(s, y);
    const bool want = d > 0.5 && d < 20.0;
    if (std::abs(d - 20.0) < 1.0) continue;  // the far edge's row
    for (int x = 0; x < s.width(); ++x) ASSERT_EQ(s.at(x, y) != kClear, want) << x << "," << y;
    rows += want;
  }
  EXPECT_GT(rows, 40);
}

TEST(RasterClip, FarPlaneCutsTheFloor) {
  Screen s(128, 128);
  FloorScene f;  // far plane at 30
  const std::vector<Tri> tris = f.floor(-2.0f, -200.0f);
  s.clear();
  draw(s, tris, plain());
  int drawn_rows = 0, empty_rows = 0;
  for (int y = 0; y < s.height(); ++y) {
    const double d = f.floor_depth(s, y);
    if (d < 0.0 || std::abs(d - 30.0) < 1.5 || std::abs(d - 2.0) < 0.2) continue;
    const bool want = d > 2.0 && d < 30.0;
    for (int x = 0; x < s.width(); ++x) ASSERT_EQ(s.at(x, y) != kClear, want) << x << "," << y;
    (want ? drawn_rows : empty_rows) += 1;
  }
  EXPECT_GT(drawn_rows, 10);
  EXPECT_GT(empty_rows, 0);  // rows between the far plane and the horizon stay empty
}

TEST(RasterDepth, NearestWinsInEitherOrder) {
  const glm::vec4 red{1, 0, 0, 1}, blue{0, 0, 1, 1};
  Screen s1(128, 128), s2(128, 128);
  auto tri = [&](Screen& s, float z, glm::vec4 c, double shift) {
    return Tri{px(s, 10 + shift, 10, z, 1, c), px(s, 110 + shift, 20, z, 1, c),
               px(s, 40 + shift, 110, z, 1, c)};
  };
  DrawState st;
  st.cull = CullMode::None;
  for (Screen* s : {&s1, &s2}) s->clear();
  const Tri near_tri = tri(s1, -0.5f, red, 0), far_tri = tri(s1, 0.5f, blue, 10);
  draw(s1, {near_tri, far_tri}, st);
  draw(s2, {far_tri, near_tri}, st);
  EXPECT_TRUE(s1.same(s2));
  EXPECT_EQ(s1.at(50, 50), rgba(255, 0, 0, 255));   // overlap: the near one
  EXPECT_EQ(s1.at(115, 22), rgba(0, 0, 255, 255));  // only the far one
  EXPECT_NEAR(s1.depth_at(50, 50), 0.25f, 1e-6f);
  // Depth test off: the last drawn wins.
  DrawState no_test = st;
  no_test.depth_test = false;
  s1.clear();
  draw(s1, {near_tri, far_tri}, no_test);
  EXPECT_EQ(s1.at(50, 50), rgba(0, 0, 255, 255));
  // Depth write off: the far one drawn later still passes against the cleared depth.
  DrawState no_write = st;
  no_write.depth_write = false;
  s1.clear();
  draw(s1, {near_tri, far_tri}, no_write);
  EXPECT_EQ(s1.at(50, 50), rgba(0, 0, 255, 255));
  EXPECT_EQ(s1.depth_at(50, 50), 1.0f);
}

// A 2x2 black and white checker, nearest filtering, repeated.
struct Checker {
  std::vector<std::uint32_t> texels = {rgba(0, 0, 0), rgba(255, 255, 255), rgba(255, 255, 255),
                                       rgba(0, 0, 0)};
  TextureView view;
  Checker() {
    view.levels[0] = {texels.data(), 2, 2};
    view.level_count = 1;
    view.filter = Filter::Nearest;
  }
};

// Pixels of the floor whose checker square differs from the analytic one, skipping those within
// `edge` world units of a square's border.
int checker_mismatches(Screen& s, const FloorScene& f, int* checked) {
  int bad = 0;
  *checked = 0;
  const double aspect = 1.0;
  for (int y = 0; y < s.height(); ++y) {
    const double d = f.floor_depth(s, y);
    if (d < 2.5 || d > 19.0) continue;
    for (int x = 0; x < s.width(); ++x) {
      const double ndc_x = (x + 0.5) / s.width() * 2.0 - 1.0;
      const double wx = ndc_x * f.tan_half * aspect * d;  // world x, z = -d
      const double wz = -d;
      // Footprint of a pixel grows with distance: allow that much near borders.
      const double edge = 0.05 * d / 4.0 + 0.02;
      const double fxr = wx - std::floor(wx), fzr = wz - std::floor(wz);
      if (std::min(fxr, 1 - fxr) < edge || std::min(fzr, 1 - fzr) < edge) continue;
      const bool white =
          ((static_cast<long>(std::floor(wx)) + static_cast<long>(std::floor(wz))) & 1) != 0;
      const std::uint32_t p = s.at(x, y);
      if (p == kClear) continue;
      ++*checked;
      bad += (red_of(p) == 255) != white;
    }
  }
  return bad;
}

TEST(RasterTexture, PerspectiveCorrectCheckerboard) {
  Screen s(128, 128);
  FloorScene f;
  Checker tex;
  DrawState st = plain();
  st.texture = &tex.view;
  // u = x / 2, v = z / 2: one texel per world unit.
  s.clear();
  draw(s, f.floor(-2.0f, -20.0f), st);
  int checked = 0;
  EXPECT_EQ(checker_mismatches(s, f, &checked), 0);
  EXPECT_GT(checked, 1000);
  // Affine interpolation on the same slanted floor: wrong squares.
  st.perspective = false;
  s.clear();
  draw(s, f.floor(-2.0f, -20.0f), st);
  EXPECT_GT(checker_mismatches(s, f, &checked), 100);
}

TEST(RasterTexture, AffineAndPerspectiveAgreeWhenScreenParallel) {
  Screen a(128, 128), b(128, 128);
  std::vector<std::uint32_t> texels(16 * 16);
  for (int i = 0; i < 256; ++i) texels[i] = rgba(i * 7 % 256, i % 16 * 16, i / 16 * 16);
  TextureView view;
  view.levels[0] = {texels.data(), 16, 16};
  view.level_count = 1;
  DrawState st = plain();
  st.texture = &view;
  const glm::vec4 c0{1, 0.5f, 0.25f, 1}, c1{0.2f, 1, 1, 1};
  auto quad = [&](Screen& s) {
    const ClipVertex p0 = px(s, 5.3, 7.1, 0.2f, 3.0f, c0, {0, 0});
    const ClipVertex p1 = px(s, 120.6, 9.4, 0.2f, 3.0f, c1, {1.3f, 0});
    const ClipVertex p2 = px(s, 117.2, 122.9, 0.2f, 3.0f, c0, {1.3f, 1.1f});
    const ClipVertex p3 = px(s, 3.1, 119.7, 0.2f, 3.0f, c1, {0, 1.1f});
    return std::vector<Tri>{{p0, p1, p2}, {p0, p2, p3}};
  };
  a.clear();
  b.clear();
  draw(a, quad(a), st);
  st.perspective = false;
  draw(b, quad(b), st);
  int max_diff = 0;
  for (int y = 0; y < 128; ++y) {
    for (int x = 0; x < 128; ++x) {
      const std::uint32_t p = a.at(x, y), q = b.at(x, y);
      for (int sh = 0; sh < 32; sh += 8) {
        max_diff = std::max(max_diff, std::abs(static_cast<int>((p >> sh) & 0xff) -
                                               static_cast<int>((q >> sh) & 0xff)));
      }
    }
  }
  EXPECT_LE(max_diff, 2);
  EXPECT_GT(a.count_not(kClear), 12000);
}

TEST(RasterTexture, MipSelectionFollowsScreenSize) {
  // 64x64 with 7 levels, each a different solid colour.
  const std::uint32_t colours[7] = {rgba(255, 0, 0),    rgba(0, 255, 0),   rgba(0, 0, 255),
                                    rgba(255, 255, 0),  rgba(0, 255, 255), rgba(255, 0, 255),
                                    rgba(255, 255, 255)};
  std::vector<std::vector<std::uint32_t>> levels;
  TextureView view;
  for (int l = 0; l < 7; ++l) {
    const int side = 64 >> l;
    levels.emplace_back(static_cast<std::size_t>(side) * side, colours[l]);
    view.levels[l] = {levels.back().data(), side, side};
  }
  view.level_count = 7;
  view.mipmaps = true;
  Screen s(256, 256);
  DrawState st = plain();
  st.texture = &view;
  // A screen-parallel square `side` pixels wide at depth w, UV 0..1 over it.
  auto colour_of_square = [&](double side, float w) {
    s.clear();
    const double x0 = 100, y0 = 100;
    const ClipVertex a = px(s, x0, y0, 0, w, glm::vec4(1), {0, 0});
    const ClipVertex b = px(s, x0 + side, y0, 0, w, glm::vec4(1), {1, 0});
    const ClipVertex c = px(s, x0 + side, y0 + side, 0, w, glm::vec4(1), {1, 1});
    const ClipVertex d = px(s, x0, y0 + side, 0, w, glm::vec4(1), {0, 1});
    draw(s, {{a, b, c}, {a, c, d}}, st);
    return s.at(static_cast<int>(x0 + side / 2), static_cast<int>(y0 + side / 2));
  };
  EXPECT_EQ(colour_of_square(128, 1.0f), colours[0]);  // magnified: level 0
  EXPECT_EQ(colour_of_square(64, 2.0f), colours[0]);   // one texel per pixel
  EXPECT_EQ(colour_of_square(16, 4.0f), colours[2]);   // four texels per pixel
  EXPECT_EQ(colour_of_square(8, 8.0f), colours[3]);
  EXPECT_EQ(colour_of_square(2, 16.0f), colours[5]);
  // A receding floor: near rows sample fine levels, far rows coarse ones.
  FloorScene f;
  s.clear();
  draw(s, f.floor(-1.0f, -29.0f), st);
  auto level_at = [&](int y) {
    const std::uint32_t p = s.at(128, y);
    for (int l = 0; l < 7; ++l)
      if (p == colours[l]) return l;
    return -1;
  };
  const int near_level = level_at(250), far_level = level_at(140);
  ASSERT_GE(near_level, 0);
  EXPECT_LT(near_level, far_level);
  // Without mipmaps: level 0 everywhere.
  view.mipmaps = false;
  EXPECT_EQ(colour_of_square(8, 8.0f), colours[0]);
}

TEST(RasterBlend, TranslucentLayersFollowDrawOrder) {
  Screen s(128, 128);
  const glm::vec4 c1{1.0f, 0.2f, 0.0f, 0.5f}, c2{0.0f, 0.4f, 1.0f, 0.3f};
  auto tri = [&](glm::vec4 c) {
    return Tri{px(s, 0, 0, 0, 1, c), px(s, 128, 0, 0, 1, c), px(s, 0, 128, 0, 1, c)};
  };
  DrawState st = plain();
  st.blend = BlendMode::Alpha;
  const glm::vec4 bg{0.2f, 0.6f, 0.4f, 1.0f};
  const std::uint32_t bg_px = rgba(51, 153, 102, 255);
  auto expected = [&](glm::vec4 first, glm::vec4 second) {
    glm::vec4 d = glm::vec4(51, 153, 102, 255);
    for (glm::vec4 c : {first, second}) {
      d = glm::round(c * 255.0f * c.a + d * (1.0f - c.a));
    }
    return d;
  };
  (void)bg;
  s.clear(bg_px);
  draw(s, {tri(c1), tri(c2)}, st);
  const std::uint32_t one_two = s.at(20, 20);
  const glm::vec4 want = expected(c1, c2);
  EXPECT_NEAR(red_of(one_two), want.r, 1.0);
  EXPECT_NEAR(green_of(one_two), want.g, 1.0);
  EXPECT_NEAR(blue_of(one_two), want.b, 1.0);
  EXPECT_NEAR(alpha_of(one_two), want.a, 1.0);
  s.clear(bg_px);
  draw(s, {tri(c2), tri(c1)}, st);
  const std::uint32_t two_one = s.at(20, 20);
  const glm::vec4 want2 = expected(c2, c1);
  EXPECT_NEAR(red_of(two_one), want2.r, 1.0);
  EXPECT_NEAR(blue_of(two_one), want2.b, 1.0);
  EXPECT_NE(one_two, two_one);
  EXPECT_EQ(s.at(120, 120), bg_px);  // outside: untouched
}

TEST(RasterCull, BackFacesAndCullNone) {
  Screen s(128, 128);
  // Counter-clockwise on screen with y up = clockwise in y-down pixel coordinates.
  const ClipVertex a = px(s, 10, 100), b = px(s, 100, 100), c = px(s, 50, 10);  // CCW (y up)
  Triangle t;
  DrawState back;
  EXPECT_TRUE(setup_triangle(a, b, c, s.viewport(), back, t));
  EXPECT_FALSE(setup_triangle(a, c, b, s.viewport(), back, t));
  DrawState none;
  none.cull = CullMode::None;
  EXPECT_TRUE(setup_triangle(a, c, b, s.viewport(), none, t));
  Screen s2(128, 128);
  s.clear();
  s2.clear();
  draw(s, {{a, b, c}}, none);
  draw(s2, {{a, c, b}}, none);
  EXPECT_TRUE(s.same(s2));
  EXPECT_GT(s.count_not(kClear), 3000);
  // Zero area and off-viewport triangles are refused.
  EXPECT_FALSE(setup_triangle(a, b, px(s, 55, 100), s.viewport(), none, t));
  EXPECT_FALSE(setup_triangle(px(s, 10.1, 10.1), px(s, 10.3, 10.1), px(s, 10.2, 10.4), s.viewport(),
                              none, t));  // no pixel centre inside its box
}

TEST(RasterShade, FlatUsesFirstVertexAndGouraudInterpolates) {
  Screen s(128, 128);
  const Tri t = {px(s, 0, 0, 0, 1, {1, 0, 0, 1}), px(s, 128, 0, 0, 1, {0, 1, 0, 1}),
                 px(s, 0, 128, 0, 1, {0, 0, 1, 1})};
  DrawState st = plain();
  st.flat = true;
  s.clear();
  draw(s, {t}, st);
  EXPECT_EQ(s.at(60, 5), rgba(255, 0, 0, 255));
  EXPECT_EQ(s.at(5, 60), rgba(255, 0, 0, 255));
  st.flat = false;
  s.clear();
  draw(s, {t}, st);
  const std::uint32_t p = s.at(64, 0);  // halfway along the top edge: (0.5, 0.5, 0)
  EXPECT_NEAR(red_of(p), 127.0, 1.5);
  EXPECT_NEAR(green_of(p), 128.0, 1.5);
  EXPECT_LE(blue_of(p), 1u);
}

TEST(RasterTiles, SameImageInAnyTileOrder) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> xs(-40.0, 240.0), ys(-30.0, 180.0), unit(0.0, 1.0);
  Screen s(200, 150);
  std::vector<std::uint32_t> texels(8 * 8);
  for (std::uint32_t& t : texels) t = static_cast<std::uint32_t>(rng());
  TextureView view;
  view.levels[0] = {texels.data(), 8, 8};
  view.level_count = 1;
  std::vector<Tri> tris;
  for (int i = 0; i < 300; ++i) {
    Tri t;
    const double cx = xs(rng), cy = ys(rng);
    for (ClipVertex& v : t) {
      const float w = static_cast<float>(0.5 + 3.0 * unit(rng));
      v = px(s, cx + (unit(rng) - 0.5) * 60.0, cy + (unit(rng) - 0.5) * 60.0,
             static_cast<float>(unit(rng) * 1.8 - 0.9), w,
             glm::vec4(unit(rng), unit(rng), unit(rng), unit(rng)),
             glm::vec2(unit(rng) * 3.0, unit(rng) * 3.0));
    }
    tris.push_back(t);
  }
  DrawState st;
  st.cull = CullMode::None;
  st.texture = &view;
  st.blend = BlendMode::Alpha;
  Screen ref(200, 150);
  ref.clear(rgba(10, 20, 30, 255));
  draw(ref, tris, st);
  EXPECT_GT(ref.count_not(rgba(10, 20, 30, 255)), 20000);
  std::vector<int> order(ref.tiles().size());
  std::iota(order.begin(), order.end(), 0);
  for (int pass = 0; pass < 3; ++pass) {
    std::shuffle(order.begin(), order.end(), rng);
    s.clear(rgba(10, 20, 30, 255));
    draw(s, tris, st, order);
    EXPECT_TRUE(s.same(ref)) << "pass " << pass;
  }
  // One tile covering the whole screen: the same pixels too.
  s.clear(rgba(10, 20, 30, 255));
  const std::vector<Triangle> set = set_up(tris, s.viewport(), st);
  const TileTarget whole{s.color(), s.depth(), (200 + 3) & ~3, 0, 0, 200, 150};
  for (const Triangle& t : set) rasterize_triangle(t, st, whole);
  EXPECT_TRUE(s.same(ref));
}

// The renderer sets its triangles up without planes and rasterize_triangle computes them when a
// triangle is drawn (raster_deferred.h). Both ways must give the same pixels and depths to the
// bit: random triangles of either winding, from slivers to ones crossing the screen, with every
// kind of state (textured or not, mips, bilinear, flat, affine, blended, one colour or varying),
// and again set up from the vertex pass's projection as the renderer does inside the guard band.
TEST(RasterDeferred, SamePixelsAsSetupTriangle) {
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  Screen direct(160, 120), deferred(160, 120), projected(160, 120);
  std::vector<std::uint32_t> texels(32 * 32);
  for (std::uint32_t& t : texels) t = rng();
  std::vector<std::uint32_t> small(16 * 16, rgba(40, 200, 90));
  TextureView tex;
  tex.levels[0] = {texels.data(), 32, 32};
  tex.levels[1] = {small.data(), 16, 16};
  tex.level_count = 2;
  std::vector<Tri> tris;
  for (int i = 0; i < 300; ++i) {
    const float size = std::pow(10.0f, 2.3f * unit(rng) - 0.3f);  // 0.5 to 100 pixels
    const double cx = 200.0 * unit(rng) - 20.0, cy = 160.0 * unit(rng) - 20.0;
    const bool one_colour = i % 3 == 0;
    const glm::vec4 c0(unit(rng), unit(rng), unit(rng), unit(rng));
    Tri t;
    for (int k = 0; k < 3; ++k) {
      const glm::vec4 c = one_colour ? c0 : glm::vec4(unit(rng), unit(rng), unit(rng), unit(rng));
      t[k] = px(direct, cx + size * (unit(rng) - 0.5), cy + size * (unit(rng) - 0.5), unit(rng),
                0.5f + 4.0f * unit(rng), c, {4.0f * unit(rng) - 2.0f, 4.0f * unit(rng) - 2.0f});
    }
    tris.push_back(t);
  }
  for (int variant = 0; variant < 7; ++variant) {
    DrawState st;
    st.cull = CullMode::None;
    st.texture = variant == 0 || variant == 6 ? nullptr : &tex;
    tex.filter = variant == 2 ? Filter::Nearest : Filter::Bilinear;
    tex.mipmaps = variant == 3;
    st.flat = variant == 4;
    st.perspective = variant != 5;
    st.blend = variant == 6 ? BlendMode::Alpha : BlendMode::Opaque;
    st.depth_write = variant != 6;
    direct.clear(rgba(10, 20, 30));
    deferred.clear(rgba(10, 20, 30));
    projected.clear(rgba(10, 20, 30));
    const std::vector<TileTarget> a = direct.tiles(), b = deferred.tiles(), c = projected.tiles();
    int drawn = 0, from_projection = 0;
    for (const Tri& t : tris) {
      Triangle x, y;
      const bool kept = setup_triangle(t[0], t[1], t[2], direct.viewport(), st, x);
      ASSERT_EQ(kept, setup_for_tiles(t[0], t[1], t[2], deferred.viewport(), st, true, y));
      // The renderer's way for a triangle inside the guard band: project() the vertices,
      // pixel_bounds(), then set up from those.
      simd::v4f px, py, pz, pw;
      for (int j = 0; j < 4; ++j) {
        const glm::vec4& p = t[std::min(j, 2)].position;
        px[j] = p.x, py[j] = p.y, pz[j] = p.z, pw[j] = p.w;
      }
      ScreenVertex sv[4];
      project(px, py, pz, pw, projected.viewport(), sv, 4);
      if (classify_codes(sv[0].code, sv[1].code, sv[2].code) == ClipClass::Inside &&
          ((sv[0].code | sv[1].code | sv[2].code) & kUnprojectable) == 0) {
        const std::int32_t fx[3] = {sv[0].x, sv[1].x, sv[2].x}, fy[3] = {sv[0].y, sv[1].y, sv[2].y};
        std::int64_t area = 0;
        PixelBox box{};
        const bool bounded = pixel_bounds(fx, fy, projected.viewport(), st.cull, area, box);
        ASSERT_EQ(bounded, kept);
        if (bounded) {
          Triangle z;
          setup_projected({&t[0], &t[1], &t[2]}, {&sv[0], &sv[1], &sv[2]}, area, box, st, true, z);
          ++from_projection;
          for (const TileTarget& tile : c) rasterize_triangle(z, st, tile);
        }
      } else if (kept) {
        for (const TileTarget& tile : c) rasterize_triangle(y, st, tile);
      }
      if (!kept) continue;
      ++drawn;
      EXPECT_FALSE(x.planes_deferred);
      EXPECT_TRUE(y.planes_deferred);
      EXPECT_EQ(x.min_x, y.min_x);
      EXPECT_EQ(x.max_y, y.max_y);
      EXPECT_EQ(x.min_depth, y.min_depth);
      EXPECT_EQ(x.sort_depth, y.sort_depth);
      for (std::size_t k = 0; k < a.size(); ++k) {
        rasterize_triangle(x, st, a[k]);
        rasterize_triangle(y, st, b[k]);
      }
    }
    EXPECT_GT(drawn, 100) << "variant " << variant;
    EXPECT_GT(direct.count_not(rgba(10, 20, 30)), 5000) << "variant " << variant;
    EXPECT_TRUE(direct.same(deferred)) << "variant " << variant;
    EXPECT_GT(from_projection, 100) << "variant " << variant;
    EXPECT_TRUE(direct.same(projected)) << "variant " << variant;
  }
}

// On a CPU with AVX2 the common textured variant (one opaque colour, bilinear, perspective,
// depth-tested, no mips) draws eight pixels at a time (raster_wide.h). It must give the four-pixel
// path's pixels and depths to the bit: random triangles from slivers to ones crossing the screen,
// UVs that wrap, power-of-two textures (eight quads in one go) and others (each half on the
// four-pixel sampler), screens whose width is not a multiple of 8, with and without depth writes.
// Either path, given a coarse depth buffer, must draw the same and keep that buffer exact (each
// block's farthest depth): the eight-pixel path writes a triangle's pixels, and updates its
// blocks, only when the triangle is done or its queue is full.
TEST(RasterWide, EightPixelsGiveTheFourPixelPathsBits) {
  if (!wide_pixels_available()) GTEST_SKIP() << "this CPU has no AVX2: one path only";
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  struct Size {
    int w, h;
  };
  const Size texture_sizes[] = {{32, 32}, {16, 8}, {24, 20}, {1, 1}};
  const Size screen_sizes[] = {{160, 120}, {157, 93}, {154, 70}};
  int wide_blocks_seen = 0;
  for (const Size& ts : texture_sizes) {
    std::vector<std::uint32_t> texels(static_cast<std::size_t>(ts.w) * ts.h);
    for (std::uint32_t& t : texels) t = rng();
    TextureView tex;
    tex.levels[0] = {texels.data(), ts.w, ts.h};
    tex.level_count = 1;
    tex.filter = Filter::Bilinear;
    tex.mipmaps = false;
    for (const Size& ss : screen_sizes) {
      for (const bool depth_write : {true, false}) {
        Screen four(ss.w, ss.h), eight(ss.w, ss.h), coarse(ss.w, ss.h), coarse_four(ss.w, ss.h);
        coarse.use_coarse_depth();
        coarse_four.use_coarse_depth();
        DrawState st;
        st.cull = CullMode::None;
        st.texture = &tex;
        st.depth_write = depth_write;
        std::vector<Triangle> set;
        for (int i = 0; i < 400; ++i) {
          const float size = std::pow(10.0f, 2.3f * unit(rng) - 0.3f);  // 0.5 to 100 pixels
          const double cx = (ss.w + 40.0) * unit(rng) - 20.0;
          const double cy = (ss.h + 40.0) * unit(rng) - 20.0;
          const glm::vec4 c(unit(rng), unit(rng), unit(rng), 1.0f);
          Tri t;
          for (int k = 0; k < 3; ++k)
            t[k] =
                px(four, cx + size * (unit(rng) - 0.5), cy + size * (unit(rng) - 0.5), unit(rng),
                   0.5f + 4.0f * unit(rng), c, {6.0f * unit(rng) - 3.0f, 6.0f * unit(rng) - 3.0f});
          Triangle tri;
          if (setup_triangle(t[0], t[1], t[2], four.viewport(), st, tri)) set.push_back(tri);
        }
        ASSERT_GT(set.size(), 100u);
        for (Screen* s : {&four, &eight, &coarse, &coarse_four}) {
          const bool wide = s == &eight || s == &coarse;
          set_wide_pixels(wide);
          ASSERT_EQ(wide_pixels(), wide);
          for (const Triangle& t : set)
            for (const TileTarget& tile : s->tiles()) rasterize_triangle(t, st, tile);
        }
        set_wide_pixels(true);
        wide_blocks_seen += four.count_not(kClear) > 1000;
        EXPECT_TRUE(four.same(eight)) << "texture " << ts.w << "x" << ts.h << ", screen " << ss.w
                                      << "x" << ss.h << ", depth_write " << depth_write;
        // The coarse depth buffer only skips what is hidden, and stays exact.
        EXPECT_TRUE(four.same(coarse)) << "with a coarse depth buffer: texture " << ts.w << "x"
                                       << ts.h << ", screen " << ss.w << "x" << ss.h;
        EXPECT_TRUE(four.same(coarse_four)) << "four pixels, with a coarse depth buffer";
        EXPECT_TRUE(coarse.coarse_exact())
            << "texture " << ts.w << "x" << ts.h << ", screen " << ss.w << "x" << ss.h;
        EXPECT_TRUE(coarse_four.coarse_exact()) << "four pixels";
      }
    }
  }
  EXPECT_EQ(wide_blocks_seen, 4 * 3 * 2) << "every case drew a screenful";
}

TEST(RasterTiles, ClearTileTouchesOnlyItsRect) {
  Screen s(200, 150);
  s.clear(rgba(1, 2, 3, 4));
  const TileTarget t = s.tiles()[5];  // second row, second column
  clear_tile(t, rgba(9, 9, 9, 9), 0.5f);
  EXPECT_EQ(s.at(t.x0, t.y0), rgba(9, 9, 9, 9));
  EXPECT_EQ(s.at(t.x1 - 1, t.y1 - 1), rgba(9, 9, 9, 9));
  EXPECT_EQ(s.depth_at(t.x0, t.y0), 0.5f);
  EXPECT_EQ(s.at(t.x0 - 1, t.y0), rgba(1, 2, 3, 4));
  EXPECT_EQ(s.at(t.x1, t.y1 - 1), rgba(1, 2, 3, 4));
  EXPECT_EQ(s.at(t.x0, t.y1), rgba(1, 2, 3, 4));
}

// The renderer's per-vertex pass (raster_screen.h) against the scalar functions setup_triangle
// and classify use: the same snapped position for every float, halves included, and the same
// outcode for points inside, on and beyond every plane and the guard band.
TEST(RasterScreen, SnapFourAtATimeRoundsAsSnap) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> pixels(-40000.0f, 40000.0f);
  std::uniform_int_distribution<int> grid(-9000000, 9000000);
  std::vector<float> values = {0.0f,       -0.0f,       0.5f / 256,         -0.5f / 256,
                               1.5f / 256, -1.5f / 256, 1.0f / 512 - 1e-9f, 36864.0f,
                               -36864.0f};
  for (int i = 0; i < 20000; ++i) {
    values.push_back(pixels(rng));
    values.push_back((static_cast<float>(grid(rng)) + 0.5f) / 256.0f);  // exactly halfway
  }
  for (std::size_t i = 0; i + 4 <= values.size(); i += 4) {
    const simd::v4i got = snap4(simd::v4f{values[i], values[i + 1], values[i + 2], values[i + 3]});
    for (int j = 0; j < 4; ++j) ASSERT_EQ(got[j], snap(values[i + j])) << values[i + j];
  }
}

// A non-finite coordinate that no outcode bit catches (NaN compares false with everything) is
// flagged, as setup_triangle rejects it, and never reaches the integer snapping.
TEST(RasterScreen, ProjectFlagsPositionsSetupCannotUse) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const simd::v4f x{nan, 0.5f, 0.0f, 0.25f}, y{0.0f, nan, 0.0f, 0.0f}, z{0.0f, 0.0f, 0.0f, 0.0f},
      w{1.0f, 1.0f, 1.0f, 1.0f};
  ScreenVertex out[4];
  project(x, y, z, w, Viewport{64, 64}, out, 4);
  EXPECT_NE(out[0].code & kUnprojectable, 0u);
  EXPECT_NE(out[1].code & kUnprojectable, 0u);
  EXPECT_EQ(out[2].code, 0u);
  EXPECT_EQ(out[3].code, 0u);
  EXPECT_EQ(out[2].x, snap(32.0f));
  // setup_triangle agrees: a triangle with that vertex is not drawn.
  ClipVertex a, b, c;
  a.position = {nan, 0.0f, 0.0f, 1.0f};
  b.position = {0.5f, 0.0f, 0.0f, 1.0f};
  c.position = {0.0f, 0.5f, 0.0f, 1.0f};
  Triangle t;
  EXPECT_FALSE(setup_triangle(a, b, c, Viewport{64, 64}, DrawState{.cull = CullMode::None}, t));
}

TEST(RasterScreen, ProjectGivesTheOutcodesAndPositionsSetupUses) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> c(-12.0f, 12.0f);
  const Viewport viewport{640, 360};
  const float half_w = 320.0f, half_h = 180.0f;
  std::vector<glm::vec4> points = {{0, 0, 0, 1},  {1, 1, 1, 1},    {-1, -1, -1, 1}, {8, 0, 0, 1},
                                   {-8, 8, 0, 1}, {0, 0, 0, 0},    {0, 0, 0, -1},   {1, 0, 2, 1},
                                   {0, 9, 0, 1},  {0, 0, -1.5f, 1}};
  std::uniform_real_distribution<float> depth(-1.2f, 1.2f);  // of w: mostly between near and far
  for (int i = 0; i < 4000; ++i) {
    const float w = 0.25f * c(rng) + 1.0f;
    points.push_back({c(rng), c(rng), depth(rng) * w, w});
  }
  int in_band = 0;
  for (std::size_t i = 0; i + 4 <= points.size(); i += 4) {
    simd::v4f x, y, z, w;
    for (int j = 0; j < 4; ++j) {
      x[j] = points[i + j].x, y[j] = points[i + j].y;
      z[j] = points[i + j].z, w[j] = points[i + j].w;
    }
    ScreenVertex out[4];
    project(x, y, z, w, viewport, out, 4);
    for (int j = 0; j < 4; ++j) {
      const glm::vec4& p = points[i + j];
      ASSERT_EQ(out[j].code & ~kUnprojectable, outcode(p))
          << p.x << " " << p.y << " " << p.z << " " << p.w;
      ASSERT_EQ(out[j].code & kUnprojectable, 0u);
      if ((out[j].code & kNeedsClip) != 0) continue;
      ++in_band;
      const float inv_w = 1.0f / p.w;
      EXPECT_EQ(out[j].x, snap((p.x * inv_w + 1.0f) * half_w));
      EXPECT_EQ(out[j].y, snap((1.0f - p.y * inv_w) * half_h));
    }
  }
  EXPECT_GT(in_band, 1000);
}

}  // namespace
}  // namespace spindle::render::raster
