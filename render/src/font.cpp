#include "spindle/render/font.h"

#include "font_glyphs.h"

namespace spindle::render {
namespace {

constexpr int kCellsPerRow = 16;
constexpr int kAtlasWidth = kCellsPerRow * kFontCellSize;  // 128
constexpr int kAtlasHeight = 8 * kFontCellSize;            // 64: 6 rows used, sides a power of 2

static_assert(font_data::kGlyphCount == kFontLastChar - kFontFirstChar + 1);
static_assert(font_data::kGlyphRows == kFontGlyphHeight && kFontGlyphHeight <= kFontCellSize);
static_assert(font_data::kGlyphColumns < kFontAdvance && kFontAdvance <= kFontCellSize);

Image build_atlas() {
  Image atlas(kAtlasWidth, kAtlasHeight, rgba(0, 0, 0, 0));
  for (int g = 0; g < font_data::kGlyphCount; ++g) {
    const int x0 = (g % kCellsPerRow) * kFontCellSize;
    const int y0 = (g / kCellsPerRow) * kFontCellSize;
    for (int y = 0; y < font_data::kGlyphRows; ++y)
      for (int x = 0; x < font_data::kGlyphColumns; ++x)
        if (font_data::kGlyphs[g][y][x] == '#') atlas.at(x0 + x, y0 + y) = rgba(255, 255, 255);
  }
  return atlas;
}

}  // namespace

const Image& font_atlas() {
  static const Image atlas = build_atlas();
  return atlas;
}

FontGlyph font_glyph(char c) {
  const int g = (font_has_glyph(c) ? static_cast<unsigned char>(c) : '?') - kFontFirstChar;
  return {(g % kCellsPerRow) * kFontCellSize, (g / kCellsPerRow) * kFontCellSize, kFontAdvance,
          kFontGlyphHeight};
}

FontGlyphUv font_glyph_uv(const FontGlyph& g) {
  const glm::vec2 size{static_cast<float>(kAtlasWidth), static_cast<float>(kAtlasHeight)};
  return {glm::vec2(static_cast<float>(g.x), static_cast<float>(g.y)) / size,
          glm::vec2(static_cast<float>(g.x + g.width), static_cast<float>(g.y + g.height)) / size};
}

}  // namespace spindle::render
