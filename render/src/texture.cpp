#include "spindle/render/texture.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace spindle::render {
namespace {

std::string prefix(const TextureDesc& desc) {
  return "texture '" + desc.name + "': ";
}

core::Status check_size(int width, int height, const TextureDesc& desc) {
  const std::string size = std::to_string(width) + "x" + std::to_string(height);
  if (width <= 0 || height <= 0) return core::Status::error(prefix(desc) + size + " is empty");
  if (width > kMaxImageSide || height > kMaxImageSide)
    return core::Status::error(prefix(desc) + size + " exceeds " + std::to_string(kMaxImageSide) +
                               " per side");
  return {};
}

int level_count_for(int width, int height, bool mipmaps) {
  int levels = 1;
  while (mipmaps && (width > 1 || height > 1)) {
    width = std::max(width / 2, 1);
    height = std::max(height / 2, 1);
    ++levels;
  }
  return levels;
}

// One level down: each texel averages (rounded) the 2x2 block above it, or the 2x1 / 1x2 block
// when the level above is one texel wide or high. An odd side's last row or column is left out,
// as in a plain box filter.
void downsample(const std::uint32_t* src, int sw, int sh, std::uint32_t* dst, int dw, int dh) {
  for (int y = 0; y < dh; ++y) {
    const int y0 = std::min(2 * y, sh - 1), y1 = std::min(2 * y + 1, sh - 1);
    for (int x = 0; x < dw; ++x) {
      const int x0 = std::min(2 * x, sw - 1), x1 = std::min(2 * x + 1, sw - 1);
      const std::uint32_t p[4] = {src[y0 * sw + x0], src[y0 * sw + x1], src[y1 * sw + x0],
                                  src[y1 * sw + x1]};
      std::uint32_t out = 0;
      for (int c = 0; c < 32; c += 8) {
        std::uint32_t sum = 0;
        for (std::uint32_t v : p) sum += (v >> c) & 0xff;
        out |= ((sum + 2) / 4) << c;  // a 1-wide block counts each texel twice: same average
      }
      dst[y * dw + x] = out;
    }
  }
}

}  // namespace

Texture::Texture(Texture&& other) noexcept
    : name_(std::move(other.name_)), texels_(std::move(other.texels_)), view_(other.view_) {
  point_view();
  other.texels_.clear();
  other.view_ = {};
}

Texture& Texture::operator=(Texture&& other) noexcept {
  if (this != &other) {
    name_ = std::move(other.name_);
    texels_ = std::move(other.texels_);
    view_ = other.view_;
    point_view();
    other.texels_.clear();
    other.view_ = {};
  }
  return *this;
}

void Texture::point_view() {
  std::size_t offset = 0;
  for (int i = 0; i < view_.level_count; ++i) {
    MipLevel& level = view_.levels[static_cast<std::size_t>(i)];
    level.texels = texels_.data() + offset;
    offset += static_cast<std::size_t>(level.width) * static_cast<std::size_t>(level.height);
  }
  for (int i = view_.level_count; i < kMaxMipLevels; ++i)
    view_.levels[static_cast<std::size_t>(i)] = {};
}

core::Result<Texture> Texture::create(const Image& image, const TextureDesc& desc) {
  if (core::Status s = check_size(image.width(), image.height(), desc); !s) return s;
  Texture t;
  t.name_ = desc.name;
  t.view_.filter = desc.filter;
  t.view_.mipmaps = desc.mipmaps;
  t.view_.level_count = level_count_for(image.width(), image.height(), desc.mipmaps);

  std::size_t total = 0;
  int w = image.width(), h = image.height();
  for (int i = 0; i < t.view_.level_count; ++i) {
    t.view_.levels[static_cast<std::size_t>(i)].width = w;
    t.view_.levels[static_cast<std::size_t>(i)].height = h;
    total += static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
    w = std::max(w / 2, 1);
    h = std::max(h / 2, 1);
  }
  t.texels_.resize(total);
  t.point_view();

  auto* level0 = const_cast<std::uint32_t*>(t.view_.levels[0].texels);
  for (int y = 0; y < image.height(); ++y)
    std::memcpy(level0 + static_cast<std::size_t>(y) * image.width(), image.row(y),
                static_cast<std::size_t>(image.width()) * 4);
  for (int i = 1; i < t.view_.level_count; ++i) {
    const MipLevel& above = t.view_.levels[static_cast<std::size_t>(i - 1)];
    const MipLevel& level = t.view_.levels[static_cast<std::size_t>(i)];
    downsample(above.texels, above.width, above.height, const_cast<std::uint32_t*>(level.texels),
               level.width, level.height);
  }
  return t;
}

core::Result<Texture> Texture::create(std::span<const std::uint8_t> rgba, int width, int height,
                                      const TextureDesc& desc) {
  if (core::Status s = check_size(width, height, desc); !s) return s;
  const std::size_t needed = static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4;
  if (rgba.size() != needed)
    return core::Status::error(prefix(desc) + std::to_string(rgba.size()) + " bytes of pixels, " +
                               std::to_string(width) + "x" + std::to_string(height) + " needs " +
                               std::to_string(needed));
  Image image(width, height);
  std::memcpy(image.data(), rgba.data(), needed);
  return create(image, desc);
}

core::Result<Texture> Texture::load_png(const std::string& path, const TextureDesc& desc) {
  core::Result<Image> image = render::load_png(path);
  if (!image) return image.status();
  if (desc.name == TextureDesc{}.name) {  // unnamed: the path names it
    TextureDesc named = desc;
    named.name = path;
    return create(image.value(), named);
  }
  return create(image.value(), desc);
}

}  // namespace spindle::render
