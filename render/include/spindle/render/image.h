// render::Image: an owning RGBA8 picture (the renderer's output, a loaded PNG, a texture's
// source), plus PNG reading and writing through stb_image / stb_image_write.
//
// Usage:
//
//   spindle::render::Image img(320, 240);                // black, alpha 0
//   img.at(10, 20) = spindle::render::rgba(255, 0, 0);   // one red pixel
//   if (auto s = spindle::render::write_png(img, "shot.png"); !s) log(s.message());
//   auto loaded = spindle::render::load_png("shot.png"); // Result<Image>: a message naming the
//   if (!loaded) log(loaded.status().message());         // file and the problem, nothing kept
//   const std::uint8_t* bytes = img.bytes();             // R, G, B, A per pixel, rows of
//                                                        // stride_bytes(): hand these to a window
//
// A pixel is a std::uint32_t whose bytes in memory are R, G, B, A (rgba() packs one on a
// little-endian machine; the renderer's output is always in this byte order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "spindle/base/result.h"

namespace spindle::render {

// Packs 8-bit channels into a pixel whose bytes in memory are R, G, B, A.
constexpr std::uint32_t rgba(std::uint32_t r, std::uint32_t g, std::uint32_t b,
                             std::uint32_t a = 255) {
  return (r & 0xff) | ((g & 0xff) << 8) | ((b & 0xff) << 16) | ((a & 0xff) << 24);
}
constexpr std::uint32_t red_of(std::uint32_t p) {
  return p & 0xff;
}
constexpr std::uint32_t green_of(std::uint32_t p) {
  return (p >> 8) & 0xff;
}
constexpr std::uint32_t blue_of(std::uint32_t p) {
  return (p >> 16) & 0xff;
}
constexpr std::uint32_t alpha_of(std::uint32_t p) {
  return p >> 24;
}

// Larger images are refused by every loader (a hostile header cannot ask for gigabytes).
inline constexpr int kMaxImageSide = 16384;

class Image {
 public:
  Image() = default;
  // width x height pixels, all `fill`; rows are `stride` pixels apart (0: width).
  Image(int width, int height, std::uint32_t fill = 0, int stride = 0);

  int width() const { return width_; }
  int height() const { return height_; }
  int stride() const { return stride_; }  // pixels from one row to the next
  int stride_bytes() const { return stride_ * 4; }
  bool empty() const { return width_ == 0 || height_ == 0; }

  std::uint32_t* data() { return pixels_.data(); }
  const std::uint32_t* data() const { return pixels_.data(); }
  const std::uint8_t* bytes() const {
    return reinterpret_cast<const std::uint8_t*>(pixels_.data());
  }
  std::uint32_t* row(int y) { return pixels_.data() + static_cast<std::size_t>(y) * stride_; }
  const std::uint32_t* row(int y) const {
    return pixels_.data() + static_cast<std::size_t>(y) * stride_;
  }
  std::uint32_t& at(int x, int y) { return row(y)[x]; }
  std::uint32_t at(int x, int y) const { return row(y)[x]; }

  // A hash of the visible pixels (not the padding past width), the same on every machine.
  std::uint64_t hash() const;
  // Same size and the same visible pixels.
  bool same_pixels(const Image& other) const;

 private:
  int width_ = 0;
  int height_ = 0;
  int stride_ = 0;
  std::vector<std::uint32_t> pixels_;
};

// PNG in memory or on disk -> Image (any PNG stb_image reads: grey, grey+alpha, RGB, RGBA, 8 or
// 16 bits; converted to RGBA8). Errors name `name` (the path for load_png) and the problem:
// empty, not a PNG, truncated, corrupt (every chunk's CRC is checked, up to IEND), or larger than
// kMaxImageSide on a side. load_png reads regular files only, of at most 256 MiB: a directory,
// FIFO or device is refused by what it is (core::read_file_capped()).
core::Result<Image> decode_png(std::span<const std::uint8_t> bytes, const std::string& name);
core::Result<Image> load_png(const std::string& path);
// Writes the visible pixels as an RGBA PNG; the error names the path.
core::Status write_png(const Image& image, const std::string& path);

// `image` made `factor` times smaller on each side (at least 1 pixel): each pixel the rounded
// mean of a factor x factor block, channel by channel (the blocks of the last row and column
// take what is left). For thumbnails; factor <= 1 is a copy.
Image downscale(const Image& image, int factor);

// Differences between two images of the same size: pixels that differ, the largest channel
// difference, and an image of the per-channel absolute differences (scaled by `gain`, alpha 255).
struct ImageDiff {
  std::size_t pixels_differing = 0;
  int max_channel_difference = 0;      // R, G, B or A
  double mean_channel_difference = 0;  // over all channels of all pixels, RGB only
  Image difference;
};
core::Result<ImageDiff> diff_images(const Image& a, const Image& b, int gain = 4);

}  // namespace spindle::render
