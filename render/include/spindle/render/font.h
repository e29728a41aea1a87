// The built-in bitmap font: printable ASCII (32..126) drawn for Spindle, 5 x 8 pixels a glyph in
// an atlas of 8 x 8 cells, for debug text and simple HUDs.
//
// Usage:
//
//   const spindle::render::Image& atlas = spindle::render::font_atlas();  // 128 x 64, built once
//   auto tex = spindle::render::Texture::create(
//       atlas, {.name = "font", .mipmaps = false, .filter = spindle::render::Filter::Nearest});
//   spindle::render::FontGlyph g = spindle::render::font_glyph('A');  // texels of 'A' in atlas
//   // Draw a g.width x g.height quad per character (times a whole scale), UVs from
//   // font_glyph_uv(g), and advance by kFontAdvance * scale; kFontLineHeight between lines.
//
// Glyph pixels are white with alpha 255, everything else is transparent black (alpha 0), so
// the text colour is the vertex colour times the atlas. Characters outside 32..126 draw as '?'.
#pragma once

#include <glm/glm.hpp>

#include "spindle/render/image.h"

namespace spindle::render {

inline constexpr int kFontFirstChar = 32;   // ' '
inline constexpr int kFontLastChar = 126;   // '~'
inline constexpr int kFontCellSize = 8;     // atlas cells are 8 x 8 texels, 16 to a row
inline constexpr int kFontAdvance = 6;      // pixels from one character to the next, scale 1
inline constexpr int kFontGlyphHeight = 8;  // rows 0-6 capitals, row 7 descenders
inline constexpr int kFontLineHeight = 10;  // pixels from one line to the next, scale 1

// A character's rectangle in the atlas, in texels: x, y its top-left, kFontAdvance wide (the
// glyph's 5 columns and a blank one) and kFontGlyphHeight high.
struct FontGlyph {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
};

// The atlas (white glyph pixels on transparent), made on first use; thread-safe.
const Image& font_atlas();
// The rectangle for `c`; characters outside 32..126 give '?'.
FontGlyph font_glyph(char c);
// True for the characters the font draws (32..126).
constexpr bool font_has_glyph(char c) {
  return static_cast<unsigned char>(c) >= kFontFirstChar &&
         static_cast<unsigned char>(c) <= kFontLastChar;
}

// The glyph's corners as UVs (top-left, bottom-right) at texel edges: a quad whose corners sit
// on whole pixels, with the glyph's size times a whole scale, puts every pixel centre on a
// texel centre, so Nearest sampling copies the glyph exactly.
struct FontGlyphUv {
  glm::vec2 min{0.0f};
  glm::vec2 max{0.0f};
};
FontGlyphUv font_glyph_uv(const FontGlyph& g);

}  // namespace spindle::render
