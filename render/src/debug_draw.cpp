#include "spindle/render/debug_draw.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "spindle/base/log.h"
#include "spindle/render/font.h"

#include "finite.h"

namespace spindle::render {
namespace {

using raster::ClipVertex;

constexpr float kWorldLineHalfWidth = 0.75f;  // pixels: lines about 1.5 pixels wide
constexpr float kScreenLineHalfWidth = 0.5f;
constexpr int kMaxTextScale = 16;
constexpr int kMinSphereSegments = 3;
constexpr int kMaxSphereSegments = 256;

glm::vec4 to_vec4(std::uint32_t c) {
  return glm::vec4(static_cast<float>(red_of(c)), static_cast<float>(green_of(c)),
                   static_cast<float>(blue_of(c)), static_cast<float>(alpha_of(c))) /
         255.0f;
}

using detail::finite;

// Writes triangles into a span, as many as fit.
struct Writer {
  std::span<ClipVertex> out;
  std::uint32_t triangles = 0;

  // A convex quad from its corners in order around it (either way round): two triangles,
  // counter-clockwise on screen (y up) whatever the corners' order.
  void quad(glm::vec4 p[4], glm::vec2 uv[4], const glm::vec4& color) {
    if (3 * (static_cast<std::size_t>(triangles) + 2) > out.size()) return;
    for (int k = 0; k < 4; ++k)
      if (!finite(p[k])) return;
    const glm::vec2 a = glm::vec2(p[0]) / p[0].w, b = glm::vec2(p[1]) / p[1].w,
                    c = glm::vec2(p[2]) / p[2].w;
    if ((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x) < 0.0f) {
      std::swap(p[1], p[3]);
      std::swap(uv[1], uv[3]);
    }
    ClipVertex* v = out.data() + 3 * static_cast<std::size_t>(triangles);
    for (int k : {0, 1, 2, 0, 2, 3}) *v++ = {.position = p[k], .color = color, .uv = uv[k]};
    triangles += 2;
  }
};

// Pixels (y down) to clip space at depth 0 (z/w = -1, w = 1).
glm::vec4 pixel_to_clip(glm::vec2 p, const raster::Viewport& vp) {
  return {2.0f * p.x / static_cast<float>(vp.width) - 1.0f,
          1.0f - 2.0f * p.y / static_cast<float>(vp.height), -1.0f, 1.0f};
}

// A screen-space quad around the segment a-b (pixels), `hw` to each side and past each end.
void thick_segment(Writer& w, glm::vec2 a, glm::vec2 b, float hw, const glm::vec4& color,
                   const raster::Viewport& vp) {
  glm::vec2 d = b - a;
  const float len = glm::length(d);
  d = len > 1e-6f ? d / len : glm::vec2(1.0f, 0.0f);
  const glm::vec2 n{-d.y, d.x};
  const glm::vec2 t = d * hw, s = n * hw;
  glm::vec4 p[4] = {pixel_to_clip(a - t - s, vp), pixel_to_clip(b + t - s, vp),
                    pixel_to_clip(b + t + s, vp), pixel_to_clip(a - t + s, vp)};
  glm::vec2 uv[4] = {};
  w.quad(p, uv, color);
}

}  // namespace

DebugDraw::DebugDraw(std::uint32_t max_lines, std::uint32_t max_chars)
    : max_lines_(max_lines), max_chars_(max_chars) {
  lines_.reserve(max_lines);
  screen_.reserve(max_lines);
  chars_.reserve(max_chars);
  (void)render::font_atlas();  // built now, not during a frame
}

bool DebugDraw::refuse(const char* what) {
  ++dropped_;
  if (!warned_) {
    warned_ = true;
    SPINDLE_LOG_WARNING(Render,
                        "debug draw full (%u lines, %u characters): %s dropped; further drops "
                        "are only counted",
                        max_lines_, max_chars_, what);
  }
  return false;
}

void DebugDraw::line(glm::vec3 a, glm::vec3 b, std::uint32_t color) {
  if (lines_.size() >= max_lines_) {
    refuse("a line");
    return;
  }
  lines_.push_back({a, b, color});
}

void DebugDraw::box(glm::vec3 center, glm::vec3 half_extents, std::uint32_t color) {
  if (lines_.size() + 12 > max_lines_) {
    refuse("a box");
    return;
  }
  const auto corner = [&](int i) {
    return center + half_extents *
                        glm::vec3(i & 1 ? 1.0f : -1.0f, i & 2 ? 1.0f : -1.0f, i & 4 ? 1.0f : -1.0f);
  };
  // Corners differing in one bit share an edge.
  for (int i = 0; i < 8; ++i)
    for (int bit : {1, 2, 4})
      if (!(i & bit)) lines_.push_back({corner(i), corner(i | bit), color});
}

void DebugDraw::sphere(glm::vec3 center, float radius, std::uint32_t color, int segments) {
  segments = std::clamp(segments, kMinSphereSegments, kMaxSphereSegments);
  if (lines_.size() + 3 * static_cast<std::size_t>(segments) > max_lines_) {
    refuse("a sphere");
    return;
  }
  const auto point = [&](int plane, int k) {
    const float a =
        2.0f * std::numbers::pi_v<float> * static_cast<float>(k) / static_cast<float>(segments);
    const float c = radius * std::cos(a), s = radius * std::sin(a);
    switch (plane) {
      case 0:
        return center + glm::vec3(c, s, 0.0f);
      case 1:
        return center + glm::vec3(0.0f, c, s);
      default:
        return center + glm::vec3(s, 0.0f, c);
    }
  };
  for (int plane = 0; plane < 3; ++plane)
    for (int k = 0; k < segments; ++k)
      lines_.push_back({point(plane, k), point(plane, k + 1), color});
}

void DebugDraw::screen_line(glm::vec2 a, glm::vec2 b, std::uint32_t color) {
  if (screen_.size() >= max_lines_) {
    refuse("a screen line");
    return;
  }
  screen_.push_back({a, b, color, false});
}

void DebugDraw::screen_rect(glm::vec2 min, glm::vec2 max, std::uint32_t color, bool filled) {
  const glm::vec2 lo = glm::min(min, max), hi = glm::max(min, max);
  if (filled) {
    if (screen_.size() >= max_lines_) {
      refuse("a rectangle");
      return;
    }
    screen_.push_back({lo, hi, color, true});
    return;
  }
  // The border inside [lo, hi): top and bottom rows, then the sides between them.
  const ScreenQuad sides[4] = {
      {lo, {hi.x, std::min(lo.y + 1.0f, hi.y)}, color, true},
      {{lo.x, std::max(hi.y - 1.0f, lo.y + 1.0f)}, hi, color, true},
      {{lo.x, lo.y + 1.0f}, {std::min(lo.x + 1.0f, hi.x), hi.y - 1.0f}, color, true},
      {{std::max(hi.x - 1.0f, lo.x + 1.0f), lo.y + 1.0f}, {hi.x, hi.y - 1.0f}, color, true},
  };
  std::size_t needed = 0;
  for (const ScreenQuad& q : sides) needed += (q.b.x > q.a.x && q.b.y > q.a.y) ? 1 : 0;
  if (screen_.size() + needed > max_lines_) {
    refuse("a rectangle");
    return;
  }
  for (const ScreenQuad& q : sides)
    if (q.b.x > q.a.x && q.b.y > q.a.y) screen_.push_back(q);
}

void DebugDraw::text(glm::vec2 pixel_pos, std::string_view s, std::uint32_t color, int scale) {
  add_text(glm::vec3(pixel_pos, 0.0f), false, s, color, scale);
}

void DebugDraw::text(glm::vec3 world_pos, std::string_view s, std::uint32_t color, int scale) {
  add_text(world_pos, true, s, color, scale);
}

void DebugDraw::add_text(glm::vec3 anchor, bool world, std::string_view s, std::uint32_t color,
                         int scale) {
  scale = std::clamp(scale, 1, kMaxTextScale);
  std::size_t drawn = 0;
  for (char c : s) drawn += (c != ' ' && c != '\n') ? 1 : 0;
  if (chars_.size() + drawn > max_chars_) {
    refuse("a string");
    return;
  }
  int column = 0, row = 0;
  for (char c : s) {
    if (c == '\n') {
      column = 0;
      ++row;
      continue;
    }
    if (c != ' ')
      chars_.push_back({anchor,
                        glm::vec2(static_cast<float>(column * kFontAdvance * scale),
                                  static_cast<float>(row * kFontLineHeight * scale)),
                        color, c, static_cast<std::uint8_t>(scale), world});
    ++column;
  }
}

void DebugDraw::clear() {
  lines_.clear();
  screen_.clear();
  chars_.clear();
}

std::uint32_t DebugDraw::max_triangles() const {
  return 2 * std::max(max_lines_, max_chars_);
}

const Image& DebugDraw::font_atlas() const {
  return render::font_atlas();
}

DebugTriangles DebugDraw::emit(const glm::mat4& view_proj, const raster::Viewport& vp,
                               std::span<ClipVertex> world, std::span<ClipVertex> screen,
                               std::span<ClipVertex> text) const {
  if (vp.width <= 0 || vp.height <= 0) return {};
  const glm::vec2 half_size{0.5f * static_cast<float>(vp.width),
                            0.5f * static_cast<float>(vp.height)};

  Writer w{world};
  for (const Line& l : lines_) {
    glm::vec4 a = view_proj * glm::vec4(l.a, 1.0f);
    glm::vec4 b = view_proj * glm::vec4(l.b, 1.0f);
    // Keep the part in front of the near plane (z >= -w).
    const float da = a.z + a.w, db = b.z + b.w;
    if (da < 0.0f && db < 0.0f) continue;
    if (da < 0.0f) a += (b - a) * (da / (da - db));
    if (db < 0.0f) b += (a - b) * (db / (db - da));
    if (a.w <= 1e-6f || b.w <= 1e-6f) continue;
    // Widen across the projected direction, in pixels, then back to clip space (times w).
    glm::vec2 d = (glm::vec2(b) / b.w - glm::vec2(a) / a.w) * half_size;
    const float len = glm::length(d);
    d = len > 1e-6f ? d / len : glm::vec2(1.0f, 0.0f);
    const glm::vec2 t = d * kWorldLineHalfWidth / half_size;  // along, in NDC
    const glm::vec2 n = glm::vec2(-d.y, d.x) * kWorldLineHalfWidth / half_size;
    const auto offset = [](const glm::vec4& p, glm::vec2 o) {
      return p + glm::vec4(o * p.w, 0.0f, 0.0f);
    };
    glm::vec4 p[4] = {offset(a, -t - n), offset(b, t - n), offset(b, t + n), offset(a, -t + n)};
    glm::vec2 uv[4] = {};
    w.quad(p, uv, to_vec4(l.color));
  }
  DebugTriangles counts;
  counts.world = w.triangles;

  w = Writer{screen};
  for (const ScreenQuad& q : screen_) {
    if (!q.rect) {
      thick_segment(w, q.a, q.b, kScreenLineHalfWidth, to_vec4(q.color), vp);
      continue;
    }
    glm::vec4 p[4] = {pixel_to_clip(q.a, vp), pixel_to_clip({q.b.x, q.a.y}, vp),
                      pixel_to_clip(q.b, vp), pixel_to_clip({q.a.x, q.b.y}, vp)};
    glm::vec2 uv[4] = {};
    w.quad(p, uv, to_vec4(q.color));
  }
  counts.screen = w.triangles;

  w = Writer{text};
  for (const Char& ch : chars_) {
    glm::vec2 origin{ch.anchor};
    if (ch.world) {
      const glm::vec4 c = view_proj * glm::vec4(ch.anchor, 1.0f);
      if (!finite(c) || c.w <= 1e-6f || c.z < -c.w) continue;  // behind the camera
      origin = {(c.x / c.w + 1.0f) * half_size.x, (1.0f - c.y / c.w) * half_size.y};
    }
    if (!std::isfinite(origin.x) || !std::isfinite(origin.y)) continue;
    const glm::vec2 lo = glm::floor(origin + 0.5f) + ch.offset;
    const FontGlyph g = font_glyph(ch.c);
    const glm::vec2 hi = lo + glm::vec2(static_cast<float>(g.width * ch.scale),
                                        static_cast<float>(g.height * ch.scale));
    if (hi.x <= 0.0f || hi.y <= 0.0f || lo.x >= 2.0f * half_size.x || lo.y >= 2.0f * half_size.y)
      continue;  // off screen
    const FontGlyphUv t = font_glyph_uv(g);
    glm::vec4 p[4] = {pixel_to_clip(lo, vp), pixel_to_clip({hi.x, lo.y}, vp), pixel_to_clip(hi, vp),
                      pixel_to_clip({lo.x, hi.y}, vp)};
    glm::vec2 uv[4] = {t.min, {t.max.x, t.min.y}, t.max, {t.min.x, t.max.y}};
    w.quad(p, uv, to_vec4(ch.color));
  }
  counts.text = w.triangles;
  return counts;
}

}  // namespace spindle::render
