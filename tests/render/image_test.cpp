// Images and PNG: pixels, hashes, round trips through files, and the refusals of decode_png and
// load_png (empty, not a PNG, truncated, oversized headers, missing files).
#include <spindle/render/image.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "special_files.h"

// Helpers shared by the resource tests (declared where used, as in tests/anim): patterned
// images, PNG bytes in memory, temporary paths and IHDR patching.
namespace spindle::render::resource_test {

// Every pixel different, alpha included, from a seed.
Image patterned_image(int w, int h, std::uint32_t seed) {
  Image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      std::uint32_t v = seed + static_cast<std::uint32_t>(y * 131 + x * 7);
      v *= 2654435761u;
      img.at(x, y) = v;
    }
  return img;
}

// A path in the test temp folder, unique to this process.
std::string temp_path(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) /
          ("spindle_res_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// The PNG write_png makes of `img`, read back as bytes.
std::vector<std::uint8_t> png_bytes(const Image& img) {
  const std::string path = temp_path("bytes.png");
  EXPECT_TRUE(write_png(img, path));
  std::vector<std::uint8_t> bytes;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    std::uint8_t buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
      bytes.insert(bytes.end(), buf, buf + n);
    std::fclose(f);
  }
  std::filesystem::remove(path);
  return bytes;
}

std::uint32_t crc32(const std::uint8_t* p, std::size_t n) {
  std::uint32_t c = 0xffffffffu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return c ^ 0xffffffffu;
}

void put_be32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

// Rewrites the IHDR's width and height (the chunk right after the signature) and its CRC.
void patch_ihdr_size(std::vector<std::uint8_t>& png, std::uint32_t w, std::uint32_t h) {
  ASSERT_GE(png.size(), 33u);
  ASSERT_EQ(std::memcmp(png.data() + 12, "IHDR", 4), 0);
  put_be32(png.data() + 16, w);
  put_be32(png.data() + 20, h);
  put_be32(png.data() + 29, crc32(png.data() + 12, 17));  // type + 13 data bytes
}

}  // namespace spindle::render::resource_test

namespace spindle::render {
namespace {

using resource_test::patterned_image;
using resource_test::png_bytes;
using resource_test::temp_path;

TEST(Image, ConstructsFilledWithStride) {
  Image img(3, 2, rgba(1, 2, 3, 4), 5);
  EXPECT_EQ(img.width(), 3);
  EXPECT_EQ(img.height(), 2);
  EXPECT_EQ(img.stride(), 5);
  EXPECT_EQ(img.stride_bytes(), 20);
  EXPECT_EQ(img.at(2, 1), rgba(1, 2, 3, 4));
  EXPECT_EQ(img.bytes()[0], 1);
  EXPECT_EQ(img.bytes()[3], 4);
  EXPECT_EQ(Image(4, 2).stride(), 4);
  EXPECT_EQ(Image(4, 2, 0, 2).stride(), 4);  // never narrower than a row
  EXPECT_TRUE(Image().empty());
  EXPECT_TRUE(Image(0, 5).empty());
}

TEST(Image, HashAndSamePixelsIgnorePadding) {
  Image a(3, 2, rgba(9, 9, 9), 3);
  Image b(3, 2, rgba(9, 9, 9), 7);
  b.data()[5] = rgba(1, 1, 1);  // padding past the first row
  EXPECT_TRUE(a.same_pixels(b));
  EXPECT_EQ(a.hash(), b.hash());
  b.at(1, 1) = rgba(1, 1, 1);
  EXPECT_FALSE(a.same_pixels(b));
  EXPECT_NE(a.hash(), b.hash());
  EXPECT_FALSE(Image(2, 3).same_pixels(Image(3, 2)));
  EXPECT_NE(Image(2, 3).hash(), Image(3, 2).hash());
}

TEST(Image, DownscaleAveragesBlocksAndTheEdgesTakeTheRest) {
  // 5 x 3 with stride padding: factor 2 gives 2 x 1; the last column block is 3 wide, the row
  // block all 3 rows.
  Image img(5, 3, rgba(0, 0, 0, 255), 8);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x)
      img.at(x, y) = rgba(static_cast<std::uint32_t>(10 * x), static_cast<std::uint32_t>(y),
                          x < 2 ? 0u : 200u, 255);
  const Image small = downscale(img, 2);
  ASSERT_EQ(small.width(), 2);
  ASSERT_EQ(small.height(), 1);
  // Block 0: x 0-1, y 0-2: red (0 + 10) / 2 = 5, green (0 + 1 + 2) / 3 = 1, blue 0.
  EXPECT_EQ(small.at(0, 0), rgba(5, 1, 0, 255));
  // Block 1: x 2-4: red (20 + 30 + 40) / 3 = 30, green 1, blue 200.
  EXPECT_EQ(small.at(1, 0), rgba(30, 1, 200, 255));
  // Rounded, not truncated: 0 and 255 average to 128.
  Image two(2, 1, rgba(0, 0, 0, 0));
  two.at(1, 0) = rgba(255, 255, 255, 255);
  EXPECT_EQ(downscale(two, 2).at(0, 0), rgba(128, 128, 128, 128));
  // Larger than the image: one pixel; 1: the same pixels.
  EXPECT_EQ(downscale(img, 10).width(), 1);
  EXPECT_TRUE(downscale(img, 1).same_pixels(img));
}

TEST(Png, RoundTripsOddSizes) {
  for (auto [w, h] : {std::pair{1, 1}, {3, 5}, {17, 2}, {31, 33}}) {
    const Image img = patterned_image(w, h, 0x1234u + static_cast<std::uint32_t>(w));
    const std::string path = temp_path("round_trip_" + std::to_string(w) + ".png");
    ASSERT_TRUE(write_png(img, path)) << path;
    auto loaded = load_png(path);
    ASSERT_TRUE(loaded) << loaded.message();
    EXPECT_TRUE(loaded.value().same_pixels(img)) << w << "x" << h;
    std::filesystem::remove(path);
  }
}

TEST(Png, RoundTripWritesOnlyVisiblePixels) {
  Image img(5, 3, rgba(10, 20, 30, 40), 8);
  img.at(4, 2) = rgba(200, 100, 50, 255);
  auto decoded = decode_png(png_bytes(img), "padded");
  ASSERT_TRUE(decoded) << decoded.message();
  EXPECT_EQ(decoded.value().stride(), 5);
  EXPECT_TRUE(decoded.value().same_pixels(img));
}

TEST(Png, RefusesEmptyAndNonPng) {
  auto empty = decode_png({}, "nothing.png");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.message().rfind("nothing.png: empty", 0), 0u) << empty.message();

  const std::string text = "GIF89a, certainly not a PNG file";
  auto gif = decode_png({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}, "x.gif");
  ASSERT_FALSE(gif);
  EXPECT_EQ(gif.message(), "x.gif: not a PNG");
}

TEST(Png, RefusesEveryTruncation) {
  const std::vector<std::uint8_t> full = png_bytes(patterned_image(9, 7, 77));
  for (std::size_t n = 1; n < full.size(); ++n) {
    auto r = decode_png({full.data(), n}, "cut.png");
    if (n >= full.size() - 4 && r) {  // stb does not read the final CRC: whole pixels are fine
      EXPECT_TRUE(r.value().same_pixels(patterned_image(9, 7, 77)));
      continue;
    }
    ASSERT_FALSE(r) << "cut at " << n << " of " << full.size();
    if (n < 8) {
      EXPECT_EQ(r.message(), "cut.png: not a PNG");
    } else {
      EXPECT_EQ(r.message().rfind("cut.png: truncated or corrupt PNG (", 0), 0u) << r.message();
    }
  }
}

// image.h promises that corrupt files are refused, and stb ignores chunk CRCs: a PNG whose
// bytes were damaged where the pixels do not show it (a chunk's stored CRC, an ancillary chunk's
// data) used to load as if intact. Every chunk's CRC is checked now, up to IEND.
TEST(Png, RefusesAChunkWhoseCrcDoesNotMatch) {
  const Image image = patterned_image(9, 7, 77);
  const std::vector<std::uint8_t> good = png_bytes(image);
  ASSERT_TRUE(decode_png(good, "good.png"));
  // Each chunk in turn: its stored CRC with one bit flipped.
  std::size_t pos = 8;
  int chunks = 0;
  while (pos + 12 <= good.size()) {
    const std::uint32_t length = (std::uint32_t{good[pos]} << 24) | (good[pos + 1] << 16) |
                                 (good[pos + 2] << 8) | good[pos + 3];
    const std::string type(reinterpret_cast<const char*>(good.data() + pos + 4), 4);
    std::vector<std::uint8_t> bad = good;
    bad[pos + 8 + length] ^= 0x10;
    auto r = decode_png(bad, "bad.png");
    ASSERT_FALSE(r) << "a wrong CRC in chunk '" << type << "' loaded";
    EXPECT_EQ(r.message(), "bad.png: truncated or corrupt PNG (chunk '" + type + "' at byte " +
                               std::to_string(pos) + ": CRC mismatch)");
    ++chunks;
    pos += 12 + length;
  }
  EXPECT_GE(chunks, 3);  // IHDR, IDAT..., IEND
  // Damaged data under an intact CRC: a text chunk whose text changed after its CRC was made.
  std::vector<std::uint8_t> text = good;
  const std::string comment("tEXtComment\0made by a test", 26);
  std::vector<std::uint8_t> chunk = {0, 0, 0, static_cast<std::uint8_t>(comment.size() - 4)};
  chunk.insert(chunk.end(), comment.begin(), comment.end());
  chunk.resize(chunk.size() + 4);
  resource_test::put_be32(chunk.data() + chunk.size() - 4,
                          resource_test::crc32(chunk.data() + 4, comment.size()));
  chunk[chunk.size() - 6] ^= 0x01;  // the 's' of "test" -> 'r', the CRC left as it was
  text.insert(text.begin() + 33, chunk.begin(), chunk.end());  // after IHDR
  auto r = decode_png(text, "text.png");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(),
            "text.png: truncated or corrupt PNG (chunk 'tEXt' at byte 33: CRC mismatch)");
}

TEST(Png, RefusesHugeHeaderBeforeDecoding) {
  std::vector<std::uint8_t> bytes = png_bytes(patterned_image(4, 4, 5));
  resource_test::patch_ihdr_size(bytes, 100000, 100000);
  auto r = decode_png(bytes, "huge.png");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "huge.png: 100000x100000 exceeds 16384 per side");

  resource_test::patch_ihdr_size(bytes, 20000, 10);
  r = decode_png(bytes, "wide.png");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "wide.png: 20000x10 exceeds 16384 per side");

  // Within the limit but far more pixels than 80-odd bytes can hold: refused, not allocated.
  resource_test::patch_ihdr_size(bytes, 16384, 16384);
  r = decode_png(bytes, "bomb.png");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message().rfind("bomb.png: truncated or corrupt PNG (", 0), 0u) << r.message();

  resource_test::patch_ihdr_size(bytes, 0, 4);
  r = decode_png(bytes, "zero.png");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "zero.png: 0x4 is empty");
}

// A damaged chunk length is refused before stb sizes a buffer by it.
TEST(Png, RefusesChunkLongerThanTheFile) {
  std::vector<std::uint8_t> bytes = png_bytes(patterned_image(4, 4, 5));
  const std::size_t idat = 8 + 25;  // signature, then IHDR (8 + 13 + 4 bytes)
  ASSERT_EQ(std::memcmp(bytes.data() + idat + 4, "IDAT", 4), 0);
  resource_test::put_be32(bytes.data() + idat, 0xfffffff0u);
  auto r = decode_png(bytes, "long.png");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message().rfind("long.png: truncated or corrupt PNG (chunk 'IDAT' at byte 33 claims "
                              "4294967280 bytes",
                              0),
            0u)
      << r.message();
}

TEST(Png, LoadNamesMissingFile) {
  auto r = load_png(temp_path("does_not_exist.png"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("does_not_exist.png: cannot open"), std::string::npos) << r.message();
}

TEST(Png, LoadNamesCorruptFile) {
  const std::string path = temp_path("corrupt.png");
  {
    std::ofstream out(path, std::ios::binary);
    out << "\x89PNG\r\n\x1a\n garbage after the signature";
  }
  auto r = load_png(path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message().rfind(path + ": truncated or corrupt PNG (", 0), 0u) << r.message();
  std::filesystem::remove(path);
}

TEST(Png, WriteNamesPath) {
  const std::string path = temp_path("no_such_dir/deeper/out.png");
  core::Status s = write_png(Image(2, 2), path);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message().rfind(path + ": ", 0), 0u) << s.message();
  s = write_png(Image(), temp_path("empty.png"));
  EXPECT_FALSE(s);
}

TEST(ImageDiff, CountsAndScales) {
  Image a(4, 2, rgba(100, 100, 100));
  Image b = a;
  b.at(1, 0) = rgba(110, 100, 97);
  b.at(3, 1) = rgba(100, 100, 100, 0);
  auto d = diff_images(a, b, 4);
  ASSERT_TRUE(d) << d.message();
  EXPECT_EQ(d.value().pixels_differing, 2u);
  EXPECT_EQ(d.value().max_channel_difference, 255);
  EXPECT_DOUBLE_EQ(d.value().mean_channel_difference, 13.0 / 24.0);
  EXPECT_EQ(d.value().difference.at(1, 0), rgba(40, 0, 12));
  EXPECT_EQ(d.value().difference.at(0, 0), rgba(0, 0, 0));

  auto same = diff_images(a, a);
  ASSERT_TRUE(same);
  EXPECT_EQ(same.value().pixels_differing, 0u);

  auto bad = diff_images(a, Image(2, 4));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("4x2"), std::string::npos) << bad.message();
}

// What is not a regular file is refused by what it is, before a byte is read: a FIFO blocked
// load_png forever, and /dev/zero was read to 256 MiB (750 MB of RSS) before it was refused.
TEST(Png, WhatIsNotARegularFileIsRefusedByWhatItIs) {
  for (const spindle::test::SpecialFile& f : spindle::test::special_files("png")) {
    auto image = spindle::test::returns_promptly(f, [&] { return load_png(f.path); });
    EXPECT_EQ(image.message(), f.path + ": not a regular file (" + f.kind + ")");
  }
}

}  // namespace
}  // namespace spindle::render
