// The built-in font (every printable character drawn, inside its cell, all different) and
// DebugDraw: capacities and drops, emitted triangle counts, counter-clockwise winding, screen
// quads landing on the expected pixels with texel-exact UVs, and near-plane clipping and culling.
#include <spindle/render/camera.h>
#include <spindle/render/debug_draw.h>
#include <spindle/render/font.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

namespace spindle::render {
namespace {

using raster::ClipVertex;

std::vector<std::uint32_t> glyph_pixels(char c) {
  const Image& atlas = font_atlas();
  const FontGlyph g = font_glyph(c);
  std::vector<std::uint32_t> px;
  for (int y = g.y; y < g.y + g.height; ++y)
    for (int x = g.x; x < g.x + g.width; ++x) px.push_back(atlas.at(x, y));
  return px;
}

TEST(Font, EveryPrintableCharacterHasItsOwnGlyph) {
  const Image& atlas = font_atlas();
  ASSERT_FALSE(atlas.empty());
  std::set<std::vector<std::uint32_t>> seen;
  for (int c = kFontFirstChar; c <= kFontLastChar; ++c) {
    const FontGlyph g = font_glyph(static_cast<char>(c));
    EXPECT_EQ(g.width, kFontAdvance);
    EXPECT_EQ(g.height, kFontGlyphHeight);
    ASSERT_GE(g.x, 0);
    ASSERT_GE(g.y, 0);
    ASSERT_LE(g.x + g.width, atlas.width());
    ASSERT_LE(g.y + g.height, atlas.height());
    EXPECT_EQ(g.x % kFontCellSize, 0);
    EXPECT_EQ(g.y % kFontCellSize, 0);
    const std::vector<std::uint32_t> px = glyph_pixels(static_cast<char>(c));
    const auto set = std::count(px.begin(), px.end(), rgba(255, 255, 255));
    const auto clear = std::count(px.begin(), px.end(), rgba(0, 0, 0, 0));
    EXPECT_EQ(set + clear, static_cast<long>(px.size())) << "char " << c << ": white or clear";
    if (c == ' ') {
      EXPECT_EQ(set, 0);
    } else {
      EXPECT_GT(set, 0) << "char '" << static_cast<char>(c) << "' is blank";
    }
    // The last column is the gap between characters.
    for (int y = 0; y < g.height; ++y)
      EXPECT_EQ(alpha_of(atlas.at(g.x + g.width - 1, g.y + y)), 0u) << "char " << c;
    EXPECT_TRUE(seen.insert(px).second) << "char '" << static_cast<char>(c) << "' repeats one";
  }
}

TEST(Font, AtlasHasNothingOutsideGlyphs) {
  const Image& atlas = font_atlas();
  std::vector<bool> inside(static_cast<std::size_t>(atlas.width() * atlas.height()), false);
  for (int c = kFontFirstChar; c <= kFontLastChar; ++c) {
    const FontGlyph g = font_glyph(static_cast<char>(c));
    for (int y = g.y; y < g.y + g.height; ++y)
      for (int x = g.x; x < g.x + g.width; ++x)
        inside[static_cast<std::size_t>(y * atlas.width() + x)] = true;
  }
  for (int y = 0; y < atlas.height(); ++y)
    for (int x = 0; x < atlas.width(); ++x)
      if (!inside[static_cast<std::size_t>(y * atlas.width() + x)]) {
        ASSERT_EQ(atlas.at(x, y), rgba(0, 0, 0, 0)) << x << "," << y;
      }
}

TEST(Font, UnknownCharactersAreQuestionMarks) {
  const FontGlyph q = font_glyph('?');
  for (char c : {'\0', '\n', '\x7f', static_cast<char>(0xe9)}) {
    const FontGlyph g = font_glyph(c);
    EXPECT_EQ(g.x, q.x);
    EXPECT_EQ(g.y, q.y);
  }
  EXPECT_TRUE(font_has_glyph('~'));
  EXPECT_FALSE(font_has_glyph('\t'));
}

// A camera at the origin looking down -z, 200 x 100 pixels.
struct Scene {
  raster::Viewport vp{200, 100};
  glm::mat4 view_proj;
  Scene() {
    Camera cam;
    cam.aspect = 2.0f;
    cam.near_plane = 0.5f;
    cam.far_plane = 100.0f;
    view_proj = cam.view_projection();
  }
};

struct Emitted {
  std::vector<ClipVertex> world, screen, text;
  DebugTriangles n;
};

Emitted emit(const DebugDraw& dd, const Scene& s) {
  Emitted e;
  const std::size_t n = 3 * static_cast<std::size_t>(dd.max_triangles());
  e.world.resize(n);
  e.screen.resize(n);
  e.text.resize(n);
  e.n = dd.emit(s.view_proj, s.vp, e.world, e.screen, e.text);
  e.world.resize(3 * e.n.world);
  e.screen.resize(3 * e.n.screen);
  e.text.resize(3 * e.n.text);
  return e;
}

glm::vec2 to_pixel(const ClipVertex& v, const raster::Viewport& vp) {
  const glm::vec2 ndc = glm::vec2(v.position) / v.position.w;
  return {(ndc.x + 1.0f) * 0.5f * static_cast<float>(vp.width),
          (1.0f - ndc.y) * 0.5f * static_cast<float>(vp.height)};
}

// Counter-clockwise on screen with y up: positive area in NDC.
void expect_ccw(const std::vector<ClipVertex>& v) {
  for (std::size_t i = 0; i < v.size(); i += 3) {
    const glm::vec2 a = glm::vec2(v[i].position) / v[i].position.w;
    const glm::vec2 b = glm::vec2(v[i + 1].position) / v[i + 1].position.w;
    const glm::vec2 c = glm::vec2(v[i + 2].position) / v[i + 2].position.w;
    EXPECT_GT((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x), 0.0f) << "triangle " << i / 3;
  }
}

TEST(DebugDraw, CapacityRefusesWholePrimitivesAndCountsThem) {
  DebugDraw dd(12, 5);
  dd.box({0, 0, -5}, {1, 1, 1}, rgba(255, 0, 0));
  EXPECT_EQ(dd.line_count(), 12u);
  dd.line({0, 0, 0}, {1, 1, 1}, rgba(255, 0, 0));
  dd.sphere({0, 0, 0}, 1.0f, rgba(255, 0, 0));
  EXPECT_EQ(dd.line_count(), 12u);
  EXPECT_EQ(dd.dropped(), 2u);

  dd.text(glm::vec2{0, 0}, "a b\nc", rgba(255, 255, 255));  // spaces and newlines are free
  EXPECT_EQ(dd.char_count(), 3u);
  dd.text(glm::vec2{0, 0}, "abc", rgba(255, 255, 255));  // 3 more do not fit in 5
  EXPECT_EQ(dd.char_count(), 3u);
  EXPECT_EQ(dd.dropped(), 3u);
  dd.text(glm::vec2{0, 0}, "de", rgba(255, 255, 255));
  EXPECT_EQ(dd.char_count(), 5u);

  for (int i = 0; i < 12; ++i) dd.screen_line({0, 0}, {5, 5}, rgba(0, 255, 0));
  dd.screen_rect({0, 0}, {4, 4}, rgba(0, 255, 0), true);
  EXPECT_EQ(dd.screen_count(), 12u);
  EXPECT_EQ(dd.dropped(), 4u);

  dd.clear();
  EXPECT_EQ(dd.line_count(), 0u);
  EXPECT_EQ(dd.char_count(), 0u);
  EXPECT_EQ(dd.screen_count(), 0u);
  EXPECT_EQ(dd.dropped(), 4u);  // counts since construction
  dd.box({0, 0, -5}, {1, 1, 1}, rgba(255, 0, 0));
  EXPECT_EQ(dd.line_count(), 12u);
}

TEST(DebugDraw, EmitsTwoTrianglesPerLineCounterClockwise) {
  Scene s;
  DebugDraw dd(1000, 100);
  dd.box({0, 0, -6}, {1, 1, 1}, rgba(255, 0, 0));
  Emitted e = emit(dd, s);
  EXPECT_EQ(e.n.world, 24u);
  EXPECT_EQ(e.n.screen, 0u);
  EXPECT_EQ(e.n.text, 0u);
  expect_ccw(e.world);
  for (const ClipVertex& v : e.world) EXPECT_EQ(v.color, glm::vec4(1, 0, 0, 1));

  dd.clear();
  dd.sphere({0, 0, -6}, 1.0f, rgba(0, 0, 255, 128), 10);
  e = emit(dd, s);
  EXPECT_EQ(e.n.world, 60u);
  expect_ccw(e.world);
  EXPECT_FLOAT_EQ(e.world[0].color.a, 128.0f / 255.0f);
  EXPECT_LE(e.n.world, dd.max_triangles());
}

TEST(DebugDraw, WorldLineIsAboutOneAndAHalfPixelsWide) {
  Scene s;
  DebugDraw dd(10, 10);
  dd.line({-1, 0, -5}, {1, 0, -5}, rgba(255, 255, 255));
  Emitted e = emit(dd, s);
  ASSERT_EQ(e.n.world, 2u);
  float top = 1e9f, bottom = -1e9f;
  for (const ClipVertex& v : e.world) {
    const glm::vec2 p = to_pixel(v, s.vp);
    top = std::min(top, p.y);
    bottom = std::max(bottom, p.y);
    EXPECT_NEAR(v.position.z / v.position.w, e.world[0].position.z / e.world[0].position.w, 1e-6f);
  }
  EXPECT_NEAR(bottom - top, 1.5f, 1e-3f);
  EXPECT_NEAR((top + bottom) * 0.5f, 50.0f, 1e-3f);  // through the centre row
}

TEST(DebugDraw, LineBehindCameraEmitsNothingAndCrossingOneIsClipped) {
  Scene s;
  DebugDraw dd(10, 10);
  dd.line({0, 0, 5}, {1, 0, 5}, rgba(255, 255, 255));
  dd.line({-3, 1, 0.2f}, {3, 1, 0.4f}, rgba(255, 255, 255));  // behind the near plane too
  EXPECT_EQ(emit(dd, s).n.world, 0u);

  dd.clear();
  dd.line({0.5f, 0.5f, 5}, {0.5f, 0.5f, -5}, rgba(255, 255, 255));
  Emitted e = emit(dd, s);
  ASSERT_EQ(e.n.world, 2u);
  expect_ccw(e.world);
  float nearest = 1e9f;
  for (const ClipVertex& v : e.world) {
    EXPECT_GT(v.position.w, 0.0f);
    EXPECT_GE(v.position.z, -v.position.w - 1e-4f);  // in front of the near plane
    nearest = std::min(nearest, v.position.w);
  }
  EXPECT_NEAR(nearest, 0.5f, 1e-4f);  // cut exactly at the near plane (w = distance)
}

TEST(DebugDraw, ScreenTextQuadCoversItsPixelsWithTexelExactUvs) {
  Scene s;
  DebugDraw dd(10, 10);
  dd.text(glm::vec2{10, 20}, "A", rgba(255, 200, 0, 128), 2);
  Emitted e = emit(dd, s);
  ASSERT_EQ(e.n.text, 2u);
  expect_ccw(e.text);
  const FontGlyph g = font_glyph('A');
  const Image& atlas = dd.font_atlas();
  EXPECT_EQ(&atlas, &font_atlas());
  for (const ClipVertex& v : e.text) {
    EXPECT_EQ(v.position.z, -1.0f);
    EXPECT_EQ(v.position.w, 1.0f);
    EXPECT_EQ(v.color, glm::vec4(1.0f, 200.0f / 255.0f, 0.0f, 128.0f / 255.0f));
    const glm::vec2 p = to_pixel(v, s.vp);
    // Corners on [10, 22) x [20, 36) (6 x 8 glyph cell, scale 2); UVs at the glyph's texel edges.
    EXPECT_TRUE(std::abs(p.x - 10.0f) < 1e-4f || std::abs(p.x - 22.0f) < 1e-4f) << p.x;
    EXPECT_TRUE(std::abs(p.y - 20.0f) < 1e-4f || std::abs(p.y - 36.0f) < 1e-4f) << p.y;
    const glm::vec2 texel = v.uv * glm::vec2(atlas.width(), atlas.height());
    const bool left = std::abs(p.x - 10.0f) < 1e-4f, top = std::abs(p.y - 20.0f) < 1e-4f;
    EXPECT_FLOAT_EQ(texel.x, static_cast<float>(left ? g.x : g.x + g.width));
    EXPECT_FLOAT_EQ(texel.y, static_cast<float>(top ? g.y : g.y + g.height));
  }
}

TEST(DebugDraw, TextAdvancesAndBreaksLines) {
  Scene s;
  DebugDraw dd(10, 10);
  dd.text(glm::vec2{4.4f, 6.6f}, "ab\nc", rgba(255, 255, 255));  // rounded to (4, 7)
  Emitted e = emit(dd, s);
  ASSERT_EQ(e.n.text, 6u);
  auto min_corner = [&](int quad) {
    glm::vec2 m{1e9f};
    for (int k = 0; k < 6; ++k)
      m = glm::min(m, to_pixel(e.text[static_cast<std::size_t>(6 * quad + k)], s.vp));
    return m;
  };
  EXPECT_NEAR(min_corner(0).x, 4.0f, 1e-4f);
  EXPECT_NEAR(min_corner(0).y, 7.0f, 1e-4f);
  EXPECT_NEAR(min_corner(1).x, 4.0f + kFontAdvance, 1e-4f);
  EXPECT_NEAR(min_corner(2).x, 4.0f, 1e-4f);
  EXPECT_NEAR(min_corner(2).y, 7.0f + kFontLineHeight, 1e-4f);
}

TEST(DebugDraw, WorldTextAnchorsAtProjectionAndCullsBehind) {
  Scene s;
  DebugDraw dd(10, 10);
  dd.text(glm::vec3{0, 0, -5}, "x", rgba(255, 255, 255));
  dd.text(glm::vec3{0, 0, 5}, "behind", rgba(255, 255, 255));
  Emitted e = emit(dd, s);
  ASSERT_EQ(e.n.text, 2u);
  glm::vec2 m{1e9f};
  for (const ClipVertex& v : e.text) m = glm::min(m, to_pixel(v, s.vp));
  EXPECT_NEAR(m.x, 100.0f, 1e-4f);  // the screen centre
  EXPECT_NEAR(m.y, 50.0f, 1e-4f);
}

TEST(DebugDraw, ScreenLinesAndRects) {
  Scene s;
  DebugDraw dd(10, 10);
  dd.screen_rect({10, 10}, {20, 30}, rgba(0, 0, 0, 100), true);
  dd.screen_rect({10, 10}, {20, 30}, rgba(255, 0, 0), false);
  dd.screen_line({0.5f, 5.5f}, {9.5f, 5.5f}, rgba(0, 255, 0));
  Emitted e = emit(dd, s);
  EXPECT_EQ(e.n.screen, 2u + 8u + 2u);
  expect_ccw(e.screen);
  for (const ClipVertex& v : e.screen) EXPECT_EQ(v.position.z / v.position.w, -1.0f);
  // The filled rectangle's corners.
  glm::vec2 lo{1e9f}, hi{-1e9f};
  for (int k = 0; k < 6; ++k) {
    lo = glm::min(lo, to_pixel(e.screen[static_cast<std::size_t>(k)], s.vp));
    hi = glm::max(hi, to_pixel(e.screen[static_cast<std::size_t>(k)], s.vp));
  }
  EXPECT_NEAR(lo.x, 10.0f, 1e-4f);
  EXPECT_NEAR(lo.y, 10.0f, 1e-4f);
  EXPECT_NEAR(hi.x, 20.0f, 1e-4f);
  EXPECT_NEAR(hi.y, 30.0f, 1e-4f);
  // The line covers pixels 0..9 of row 5: [0, 10) x [5, 6).
  lo = glm::vec2{1e9f};
  hi = glm::vec2{-1e9f};
  for (std::size_t k = e.screen.size() - 6; k < e.screen.size(); ++k) {
    lo = glm::min(lo, to_pixel(e.screen[k], s.vp));
    hi = glm::max(hi, to_pixel(e.screen[k], s.vp));
  }
  EXPECT_NEAR(lo.x, 0.0f, 1e-4f);
  EXPECT_NEAR(hi.x, 10.0f, 1e-4f);
  EXPECT_NEAR(lo.y, 5.0f, 1e-4f);
  EXPECT_NEAR(hi.y, 6.0f, 1e-4f);
}

TEST(DebugDraw, ShortSpansGetWhatFits) {
  Scene s;
  DebugDraw dd(100, 10);
  dd.box({0, 0, -6}, {1, 1, 1}, rgba(255, 0, 0));
  std::vector<ClipVertex> world(3 * 5), none;
  const DebugTriangles n = dd.emit(s.view_proj, s.vp, world, none, none);
  EXPECT_EQ(n.world, 4u);  // whole quads only
}

}  // namespace
}  // namespace spindle::render
