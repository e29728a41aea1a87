// DebugDraw: lines, boxes, spheres, screen rectangles and text collected during a frame and
// handed to the renderer as clip-space triangles. Capacities are fixed in the constructor;
// nothing allocates afterwards. What does not fit is refused whole, counted in dropped() and
// logged once (warning, Render channel).
//
// Usage:
//
//   spindle::render::DebugDraw dd(/*max_lines=*/4096, /*max_chars=*/4096);
//   dd.box(center, {0.5f, 0.5f, 0.5f}, spindle::render::rgba(255, 255, 0));   // world space
//   dd.sphere(pos, 2.0f, spindle::render::rgba(0, 255, 255));
//   dd.screen_rect({8, 8}, {200, 40}, spindle::render::rgba(0, 0, 0, 160), /*filled=*/true);
//   dd.text(glm::vec2{12, 12}, "fps 60", spindle::render::rgba(255, 255, 255));  // pixels
//   dd.text(agent_pos, "agent 7", spindle::render::rgba(255, 128, 0));  // at a world point
//
//   // The renderer, once a frame (spans of 3 * max_triangles() vertices each):
//   auto n = dd.emit(camera.view_projection(), viewport, world, screen, text);
//   // world[0, 3 * n.world): depth-tested, alpha-blended, no texture
//   // screen[0, 3 * n.screen): no depth test, alpha-blended, no texture, after the world
//   // text[0, 3 * n.text): no depth test, alpha-blended, texture = a Nearest, non-mipmapped
//   //                      Texture of font_atlas(), after the screen group
//   dd.clear();
//
// Every emitted triangle winds counter-clockwise on screen (y up), so back-face culling keeps
// it; drawing them with CullMode::None is also fine. Screen space is in pixels, y down, (0, 0)
// the top-left corner of the image; screen and text triangles lie at z/w = -1 (depth 0). Text
// positions are rounded to whole pixels so scale-1 glyphs map texel to pixel. One thread at a
// time.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <glm/glm.hpp>

#include "spindle/render/image.h"
#include "spindle/render/raster.h"

namespace spindle::render {

// Triangle counts that DebugDraw::emit wrote into each span.
struct DebugTriangles {
  std::uint32_t world = 0;
  std::uint32_t screen = 0;
  std::uint32_t text = 0;
};

class DebugDraw {
 public:
  // max_lines: world lines, and screen lines and rectangles (each kind its own store);
  // max_chars: drawn characters (spaces and newlines are free).
  DebugDraw(std::uint32_t max_lines, std::uint32_t max_chars);

  // World space.
  void line(glm::vec3 a, glm::vec3 b, std::uint32_t color);
  void box(glm::vec3 center, glm::vec3 half_extents, std::uint32_t color);  // 12 lines
  // Three great circles (in the XY, YZ and ZX planes), `segments` lines each (3..256).
  void sphere(glm::vec3 center, float radius, std::uint32_t color, int segments = 16);

  // Screen space, pixels, y down. A line is 1 pixel wide (through pixel centres when its ends
  // are at x + 0.5); a rectangle covers [min, max), its outline the 1-pixel border inside it.
  void screen_line(glm::vec2 a, glm::vec2 b, std::uint32_t color);
  void screen_rect(glm::vec2 min, glm::vec2 max, std::uint32_t color, bool filled = false);

  // Text; '\n' starts a new line; scale is a whole factor (1..16). pixel_pos: the top-left of
  // the first character. world_pos: the top-left of the first character sits at the point's
  // projection; nothing is drawn when the point is behind the camera (or the near plane).
  void text(glm::vec2 pixel_pos, std::string_view s, std::uint32_t color, int scale = 1);
  void text(glm::vec3 world_pos, std::string_view s, std::uint32_t color, int scale = 1);

  void clear();  // forget this frame's primitives (dropped() keeps counting)

  // Primitives (a line, a box, a sphere, a rectangle, a whole string) refused for want of room,
  // since construction.
  std::uint64_t dropped() const { return dropped_; }
  std::uint32_t line_count() const { return static_cast<std::uint32_t>(lines_.size()); }
  std::uint32_t screen_count() const { return static_cast<std::uint32_t>(screen_.size()); }
  std::uint32_t char_count() const { return static_cast<std::uint32_t>(chars_.size()); }

  // The most triangles emit() writes into any one of its spans (2 per line or character).
  std::uint32_t max_triangles() const;
  // Writes 3 vertices per triangle into each group's span and returns the counts; a span
  // shorter than 3 * max_triangles() gets what fits. World lines are quads about 1.5 pixels
  // wide, clipped to the near plane first (a line wholly behind it emits nothing).
  DebugTriangles emit(const glm::mat4& view_proj, const raster::Viewport& vp,
                      std::span<raster::ClipVertex> world, std::span<raster::ClipVertex> screen,
                      std::span<raster::ClipVertex> text) const;

  // The atlas the text triangles' UVs point into (font.h's font_atlas()).
  const Image& font_atlas() const;

 private:
  struct Line {
    glm::vec3 a, b;
    std::uint32_t color;
  };
  struct ScreenQuad {  // a line (1 pixel wide) or a filled rectangle, in pixels
    glm::vec2 a, b;
    std::uint32_t color;
    bool rect;
  };
  struct Char {
    glm::vec3 anchor;  // pixels (z unused) or a world point
    glm::vec2 offset;  // pixels from the anchor to the glyph's top-left
    std::uint32_t color;
    char c;
    std::uint8_t scale;
    bool world;
  };

  bool refuse(const char* what);  // counts a drop, logs the first; returns false
  void add_text(glm::vec3 anchor, bool world, std::string_view s, std::uint32_t color, int scale);

  std::uint32_t max_lines_;
  std::uint32_t max_chars_;
  std::vector<Line> lines_;  // reserved to capacity: push_back never allocates
  std::vector<ScreenQuad> screen_;
  std::vector<Char> chars_;
  std::uint64_t dropped_ = 0;
  bool warned_ = false;
};

}  // namespace spindle::render
