// Textures: RGBA8 pictures with a mip chain, made from an Image (or a PNG) through a call that
// validates, and the read-only view the rasteriser samples.
//
// Usage:
//
//   using spindle::render::Texture, spindle::render::Filter;
//   auto tex = Texture::create(image, {.mipmaps = true, .filter = Filter::Bilinear});
//   if (!tex) log(tex.status().message());     // e.g. "texture 'crate': 0x0 is empty"
//   const spindle::render::TextureView& v = tex.value().view();   // what the rasteriser reads
//
// Level 0 is the image; each further level halves each side (rounded down, at least 1) by
// averaging 2x2 texels (1x2 / 2x1 at odd edges), down to 1x1. Sampling wraps (repeat).
// An odd side's last row or column is left out of the next level (a plain box filter).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spindle/base/result.h"
#include "spindle/render/image.h"

namespace spindle::render {

enum class Filter : std::uint8_t { Nearest, Bilinear };

inline constexpr int kMaxMipLevels = 15;  // 16384 x 16384 down to 1 x 1

struct MipLevel {
  const std::uint32_t* texels = nullptr;  // width * height pixels, rows packed (stride = width)
  int width = 0;
  int height = 0;
};

// What the rasteriser samples: plain pointers into a Texture, valid while it lives.
struct TextureView {
  std::array<MipLevel, kMaxMipLevels> levels{};
  int level_count = 0;  // 0: no texture
  Filter filter = Filter::Bilinear;
  bool mipmaps = false;  // false: level 0 only, whatever the minification
};

struct TextureDesc {
  std::string name = "texture";  // named in errors and logs
  bool mipmaps = true;
  Filter filter = Filter::Bilinear;
};

class Texture {
 public:
  // Refuses (naming desc.name): an empty image, sides above kMaxImageSide.
  static core::Result<Texture> create(const Image& image, const TextureDesc& desc = {});
  // Raw RGBA8 pixels: refuses data whose size is not width * height * 4 bytes as well.
  static core::Result<Texture> create(std::span<const std::uint8_t> rgba, int width, int height,
                                      const TextureDesc& desc = {});
  // A PNG file (render::load_png's checks, then create()'s). A desc whose name is left at the
  // default "texture" takes the path as its name.
  static core::Result<Texture> load_png(const std::string& path, const TextureDesc& desc = {});

  const TextureView& view() const { return view_; }
  const std::string& name() const { return name_; }
  int width() const { return view_.levels[0].width; }
  int height() const { return view_.levels[0].height; }
  int level_count() const { return view_.level_count; }

  Texture() = default;
  Texture(Texture&& other) noexcept;
  Texture& operator=(Texture&& other) noexcept;
  Texture(const Texture&) = delete;
  Texture& operator=(const Texture&) = delete;

 private:
  void point_view();  // sets view_ pointers into texels_
  std::string name_;
  std::vector<std::uint32_t> texels_;  // all levels, level 0 first
  TextureView view_{};
};

}  // namespace spindle::render
