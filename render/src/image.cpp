#include "spindle/render/image.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <stb_image.h>
#include <stb_image_write.h>

#include "spindle/base/file.h"
#include "spindle/base/hash.h"

// stb comes compiled in Debian's libstb (libstb-dev): no STB_IMAGE_IMPLEMENTATION here.

namespace spindle::render {
namespace {

constexpr std::uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
// A PNG file on disk larger than this is refused before it is read.
constexpr long long kMaxPngFileBytes = 256ll << 20;
// Deflate cannot expand one byte into more than about 1032; a header claiming more pixels than
// the file could hold is corrupt, and refusing it keeps stb from allocating for it.
constexpr std::uint64_t kMaxDeflateRatio = 1032;

std::string size_text(long long w, long long h) {
  return std::to_string(w) + "x" + std::to_string(h);
}

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

core::Status check_side(long long w, long long h, const std::string& name) {
  if (w <= 0 || h <= 0) return core::Status::error(name + ": " + size_text(w, h) + " is empty");
  if (w > kMaxImageSide || h > kMaxImageSide)
    return core::Status::error(name + ": " + size_text(w, h) + " exceeds " +
                               std::to_string(kMaxImageSide) + " per side");
  return {};
}

// PNG's CRC-32 (ISO 3309, reflected, as zlib's crc32()), one table lookup per byte.
constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t n = 0; n < 256; ++n) {
    std::uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? 0xedb88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}
constexpr std::array<std::uint32_t, 256> kCrcTable = make_crc_table();

std::uint32_t png_crc(const std::uint8_t* p, std::size_t n) {
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) c = kCrcTable[(c ^ p[i]) & 0xffu] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

// Walks the chunks up to IEND. Every chunk's length must fit in the bytes left: stb grows its
// buffer to a chunk's claimed length before reading it, so one damaged length would cost
// gigabytes of address space. Every chunk's CRC must match: stb does not look at them, so damage
// that leaves the pixels decodable (or sits in a chunk stb skips) would otherwise load as intact.
core::Status check_chunks(std::span<const std::uint8_t> bytes, const std::string& name) {
  std::size_t pos = 8;
  while (pos + 8 <= bytes.size()) {
    const std::uint32_t length = be32(bytes.data() + pos);
    const std::size_t left = bytes.size() - pos - 8;
    std::string type(reinterpret_cast<const char*>(bytes.data() + pos + 4), 4);
    for (char& c : type)
      if (!std::isalpha(static_cast<unsigned char>(c))) c = '?';
    const std::string where = "chunk '" + type + "' at byte " + std::to_string(pos);
    if (length > 0x7fffffffu || length > left) {
      return core::Status::error(name + ": truncated or corrupt PNG (" + where + " claims " +
                                 std::to_string(length) + " bytes, " + std::to_string(left) +
                                 " left)");
    }
    if (left - length < 4)
      return core::Status::error(name + ": truncated or corrupt PNG (" + where +
                                 ": its CRC is cut off)");
    if (png_crc(bytes.data() + pos + 4, 4 + std::size_t{length}) !=
        be32(bytes.data() + pos + 8 + length))
      return core::Status::error(name + ": truncated or corrupt PNG (" + where + ": CRC mismatch)");
    if (std::memcmp(bytes.data() + pos + 4, "IEND", 4) == 0) break;
    pos += 8 + std::size_t{length} + 4;
  }
  return {};
}

struct StbFree {
  void operator()(stbi_uc* p) const { stbi_image_free(p); }
};

}  // namespace

Image::Image(int width, int height, std::uint32_t fill, int stride)
    : width_(std::max(width, 0)), height_(std::max(height, 0)) {
  stride_ = std::max(stride, width_);
  pixels_.assign(static_cast<std::size_t>(stride_) * static_cast<std::size_t>(height_), fill);
}

std::uint64_t Image::hash() const {
  core::Hasher h;
  h.add(static_cast<std::uint64_t>(width_));
  h.add(static_cast<std::uint64_t>(height_));
  for (int y = 0; y < height_; ++y) h.add_bytes(row(y), static_cast<std::size_t>(width_) * 4);
  return h.value();
}

bool Image::same_pixels(const Image& other) const {
  if (width_ != other.width_ || height_ != other.height_) return false;
  const std::size_t row_bytes = static_cast<std::size_t>(width_) * 4;
  for (int y = 0; y < height_; ++y)
    if (std::memcmp(row(y), other.row(y), row_bytes) != 0) return false;
  return true;
}

core::Result<Image> decode_png(std::span<const std::uint8_t> bytes, const std::string& name) {
  using core::Status;
  if (bytes.empty()) return Status::error(name + ": empty (0 bytes)");
  if (bytes.size() < sizeof kPngSignature ||
      std::memcmp(bytes.data(), kPngSignature, sizeof kPngSignature) != 0)
    return Status::error(name + ": not a PNG");
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    return Status::error(name + ": " + std::to_string(bytes.size()) + " bytes is too large");
  const int len = static_cast<int>(bytes.size());

  // The size from the IHDR chunk (always first) ourselves: stb refuses some huge sizes itself
  // with a vaguer message.
  int bits_per_pixel = 1;
  if (bytes.size() >= 26 && std::memcmp(bytes.data() + 12, "IHDR", 4) == 0) {
    const long long iw = be32(bytes.data() + 16), ih = be32(bytes.data() + 20);
    if (core::Status s = check_side(iw, ih, name); !s) return s;
    static constexpr int kChannels[7] = {1, 1, 3, 1, 2, 1, 4};  // by colour type
    bits_per_pixel = std::max<int>(bytes[24], 1) * (bytes[25] < 7 ? kChannels[bytes[25]] : 1);
  }
  if (core::Status s = check_chunks(bytes, name); !s) return s;
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(bytes.data(), len, &w, &h, &comp))
    return Status::error(name + ": truncated or corrupt PNG (" + stbi_failure_reason() + ")");
  if (core::Status s = check_side(w, h, name); !s) return s;
  // Smallest raw (inflated) size: the packed rows plus one filter byte per row.
  const std::uint64_t min_raw = ((static_cast<std::uint64_t>(w) * bits_per_pixel + 7) / 8 + 1) *
                                static_cast<std::uint64_t>(h);
  if (min_raw > static_cast<std::uint64_t>(bytes.size()) * kMaxDeflateRatio + 4096)
    return Status::error(name + ": truncated or corrupt PNG (" + std::to_string(bytes.size()) +
                         " bytes cannot hold " + size_text(w, h) + " pixels)");

  int dw = 0, dh = 0, dcomp = 0;
  std::unique_ptr<stbi_uc, StbFree> pixels(
      stbi_load_from_memory(bytes.data(), len, &dw, &dh, &dcomp, 4));
  if (!pixels)
    return Status::error(name + ": truncated or corrupt PNG (" + stbi_failure_reason() + ")");
  if (dw != w || dh != h)  // stb disagreeing with itself: never trust the pixels
    return Status::error(name + ": truncated or corrupt PNG (size changed while decoding)");

  Image image(w, h);
  std::memcpy(image.data(), pixels.get(), static_cast<std::size_t>(w) * h * 4);
  return image;
}

core::Result<Image> load_png(const std::string& path) {
  // A regular file of at most 256 MiB, or an error that says what it is instead: /dev/zero is
  // refused before a byte is read, a FIFO without blocking.
  core::Result<std::string> bytes =
      core::read_file_capped(path, static_cast<std::size_t>(kMaxPngFileBytes), "a PNG");
  if (!bytes) return bytes.status();
  const std::string& b = bytes.value();
  return decode_png(std::span(reinterpret_cast<const std::uint8_t*>(b.data()), b.size()), path);
}

core::Status write_png(const Image& image, const std::string& path) {
  if (image.empty()) return core::Status::error(path + ": cannot write an empty image");
  errno = 0;
  if (!stbi_write_png(path.c_str(), image.width(), image.height(), 4, image.bytes(),
                      image.stride_bytes())) {
    const int err = errno;
    return core::Status::error(path + ": cannot write PNG" +
                               (err ? std::string(" (") + std::strerror(err) + ")" : ""));
  }
  return {};
}

Image downscale(const Image& image, int factor) {
  if (factor <= 1 || image.empty()) {
    Image copy(image.width(), image.height());
    for (int y = 0; y < image.height(); ++y) std::copy_n(image.row(y), image.width(), copy.row(y));
    return copy;
  }
  const int w = std::max(1, image.width() / factor), h = std::max(1, image.height() / factor);
  Image out(w, h);
  for (int y = 0; y < h; ++y) {
    // The last block row and column reach the image's edge.
    const int y0 = y * factor, y1 = y + 1 == h ? image.height() : y0 + factor;
    for (int x = 0; x < w; ++x) {
      const int x0 = x * factor, x1 = x + 1 == w ? image.width() : x0 + factor;
      std::uint32_t sum[4] = {0, 0, 0, 0};
      for (int yy = y0; yy < y1; ++yy)
        for (int xx = x0; xx < x1; ++xx)
          for (int c = 0; c < 4; ++c) sum[c] += (image.at(xx, yy) >> (8 * c)) & 0xffu;
      const auto n = static_cast<std::uint32_t>((y1 - y0) * (x1 - x0));
      std::uint32_t pixel = 0;
      for (int c = 0; c < 4; ++c) pixel |= ((sum[c] + n / 2) / n) << (8 * c);
      out.at(x, y) = pixel;
    }
  }
  return out;
}

core::Result<ImageDiff> diff_images(const Image& a, const Image& b, int gain) {
  if (a.width() != b.width() || a.height() != b.height())
    return core::Status::error("diff_images: sizes differ (" + size_text(a.width(), a.height()) +
                               " and " + size_text(b.width(), b.height()) + ")");
  ImageDiff d;
  d.difference = Image(a.width(), a.height(), rgba(0, 0, 0));
  std::uint64_t rgb_sum = 0;
  for (int y = 0; y < a.height(); ++y) {
    const std::uint32_t* ra = a.row(y);
    const std::uint32_t* rb = b.row(y);
    std::uint32_t* rd = d.difference.row(y);
    for (int x = 0; x < a.width(); ++x) {
      if (ra[x] == rb[x]) continue;
      ++d.pixels_differing;
      int diff[4];
      for (int c = 0; c < 4; ++c) {
        const int ca = static_cast<int>((ra[x] >> (8 * c)) & 0xff);
        const int cb = static_cast<int>((rb[x] >> (8 * c)) & 0xff);
        diff[c] = std::abs(ca - cb);
        d.max_channel_difference = std::max(d.max_channel_difference, diff[c]);
      }
      rgb_sum += static_cast<std::uint64_t>(diff[0] + diff[1] + diff[2]);
      auto scaled = [gain](int v) {
        return static_cast<std::uint32_t>(std::clamp(v * gain, 0, 255));
      };
      rd[x] = rgba(scaled(diff[0]), scaled(diff[1]), scaled(diff[2]));
    }
  }
  const double channels = 3.0 * a.width() * a.height();
  d.mean_channel_difference = channels > 0 ? static_cast<double>(rgb_sum) / channels : 0.0;
  return d;
}

}  // namespace spindle::render
