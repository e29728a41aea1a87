// PNG fuzzing: deterministic mutations (flip, insert, delete, duplicate, truncate, huge numbers)
// of small valid PNGs through decode_png. Every input must give either an image of a sane size
// or an error that starts with the name; never a crash (run under ASan too). Fixed seeds, so a
// failure repeats; the iteration number is in the message.
#include <spindle/render/image.h>
#include <spindle/render/texture.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace spindle::render {
namespace resource_test {  // image_test.cpp
Image patterned_image(int w, int h, std::uint32_t seed);
std::vector<std::uint8_t> png_bytes(const Image& img);
std::uint32_t crc32(const std::uint8_t* p, std::size_t n);
void put_be32(std::uint8_t* p, std::uint32_t v);
}  // namespace resource_test
namespace {

using Bytes = std::vector<std::uint8_t>;

// One to six edits of any bytes.
Bytes mutate(Bytes data, std::mt19937& rng) {
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n)(rng); };
  const int edits = rng() % 2 ? 1 : std::uniform_int_distribution<int>(2, 6)(rng);
  for (int e = 0; e < edits; ++e) {
    const std::size_t pos = data.empty() ? 0 : pick(data.size() - 1);
    const auto at = data.begin() + static_cast<std::ptrdiff_t>(pos);
    switch (std::uniform_int_distribution<int>(0, 6)(rng)) {
      case 0:  // flip a byte
        if (!data.empty()) data[pos] = static_cast<std::uint8_t>(rng());
        break;
      case 1:  // flip one bit
        if (!data.empty()) data[pos] ^= static_cast<std::uint8_t>(1u << pick(7));
        break;
      case 2:  // insert a byte
        data.insert(at, static_cast<std::uint8_t>(rng()));
        break;
      case 3:  // delete a run
        if (!data.empty())
          data.erase(at,
                     at + static_cast<std::ptrdiff_t>(std::min(1 + pick(15), data.size() - pos)));
        break;
      case 4: {  // duplicate a run
        if (data.empty()) break;
        const Bytes run(
            at, at + static_cast<std::ptrdiff_t>(std::min(1 + pick(40), data.size() - pos)));
        data.insert(data.begin() + static_cast<std::ptrdiff_t>(pos), run.begin(), run.end());
        break;
      }
      case 5:  // truncate
        data.resize(pos);
        break;
      case 6:  // a big big-endian number (a chunk length, a width, a height)
        if (data.size() >= pos + 4) {
          const std::uint32_t v = pick(1) ? 0xffffffffu : 0x80000000u >> pick(31);
          for (int i = 0; i < 4; ++i)
            data[pos + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
        }
        break;
    }
  }
  return data;
}

void put_chunk(Bytes& png, const char* type, const Bytes& data) {
  const std::size_t at = png.size();
  png.resize(at + 8 + data.size() + 4);
  resource_test::put_be32(png.data() + at, static_cast<std::uint32_t>(data.size()));
  std::memcpy(png.data() + at + 4, type, 4);
  std::copy(data.begin(), data.end(), png.begin() + static_cast<std::ptrdiff_t>(at + 8));
  resource_test::put_be32(png.data() + at + 8 + data.size(),
                          resource_test::crc32(png.data() + at + 4, 4 + data.size()));
}

// A PNG of any colour type and bit depth that write_png cannot make: `w` x `h`, scanlines of
// `row_bytes` made up from `seed` with the filter types in turn, stored (uncompressed) deflate.
Bytes make_png(int w, int h, std::uint8_t color_type, std::uint8_t depth, std::size_t row_bytes,
               std::uint32_t seed, int palette_entries = 0) {
  Bytes png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  Bytes ihdr(13, 0);
  resource_test::put_be32(ihdr.data(), static_cast<std::uint32_t>(w));
  resource_test::put_be32(ihdr.data() + 4, static_cast<std::uint32_t>(h));
  ihdr[8] = depth;
  ihdr[9] = color_type;
  put_chunk(png, "IHDR", ihdr);
  if (palette_entries > 0) {
    Bytes plte;
    for (int i = 0; i < palette_entries * 3; ++i) plte.push_back(static_cast<std::uint8_t>(i * 37));
    put_chunk(png, "PLTE", plte);
  }
  Bytes raw;
  std::mt19937 rng(seed);
  for (int y = 0; y < h; ++y) {
    raw.push_back(static_cast<std::uint8_t>(y % 5));  // none, sub, up, average, paeth
    for (std::size_t i = 0; i < row_bytes; ++i) raw.push_back(static_cast<std::uint8_t>(rng()));
  }
  Bytes z = {0x78, 0x01, 0x01};  // zlib header; one final stored block (raw is small)
  const auto len = static_cast<std::uint16_t>(raw.size());
  for (std::uint16_t v : {len, static_cast<std::uint16_t>(~len)}) {
    z.push_back(static_cast<std::uint8_t>(v & 0xff));
    z.push_back(static_cast<std::uint8_t>(v >> 8));
  }
  z.insert(z.end(), raw.begin(), raw.end());
  std::uint32_t a = 1, b = 0;  // adler32
  for (std::uint8_t c : raw) {
    a = (a + c) % 65521;
    b = (b + a) % 65521;
  }
  z.resize(z.size() + 4);
  resource_test::put_be32(z.data() + z.size() - 4, (b << 16) | a);
  put_chunk(png, "IDAT", z);
  put_chunk(png, "IEND", {});
  return png;
}

struct Seed {
  Bytes png;
  int width, height;
};

// RGBA8 from write_png (one with long runs, which compress well), and hand-made grey, grey +
// alpha, RGB, palette, 1-bit and 16-bit ones.
std::vector<Seed> seeds() {
  std::vector<Seed> out = {
      {make_png(7, 5, 0, 8, 7, 1), 7, 5},      // grey
      {make_png(13, 3, 0, 1, 2, 2), 13, 3},    // grey, 1 bit
      {make_png(3, 3, 4, 16, 12, 3), 3, 3},    // grey + alpha, 16 bits
      {make_png(6, 2, 2, 8, 18, 4), 6, 2},     // RGB
      {make_png(9, 4, 3, 4, 5, 5, 16), 9, 4},  // palette, 4 bits
      {make_png(2, 2, 6, 16, 16, 6), 2, 2},    // RGBA, 16 bits
  };
  out.push_back({resource_test::png_bytes(resource_test::patterned_image(5, 4, 1)), 5, 4});
  out.push_back({resource_test::png_bytes(resource_test::patterned_image(1, 9, 2)), 1, 9});
  Image flat(16, 16, rgba(20, 40, 60));
  for (int i = 0; i < 16; ++i) flat.at(i, i) = rgba(255, 255, 255);
  out.push_back({resource_test::png_bytes(flat), 16, 16});
  return out;
}

TEST(ResourceFuzz, SeedsDecode) {
  for (const Seed& seed : seeds()) {
    auto r = decode_png(seed.png, "seed.png");
    ASSERT_TRUE(r) << r.message();
    EXPECT_EQ(r.value().width(), seed.width);
    EXPECT_EQ(r.value().height(), seed.height);
  }
  // A palette index past the palette's end is corrupt, not a crash.
  auto short_palette = decode_png(make_png(9, 4, 3, 4, 5, 5, 2), "palette.png");
  if (!short_palette) {
    EXPECT_EQ(short_palette.message().rfind("palette.png: ", 0), 0u);
  }
}

TEST(ResourceFuzz, DecodePngNeverCrashesAndNamesItself) {
  const std::vector<Seed> inputs = seeds();
  std::mt19937 rng(20240613);
  const auto start = std::chrono::steady_clock::now();
  int decoded = 0, refused = 0;
  constexpr int kIterations = 40000;
  for (int i = 0; i < kIterations; ++i) {
    const Bytes bytes = mutate(inputs[static_cast<std::size_t>(i) % inputs.size()].png, rng);
    auto r = decode_png(bytes, "fuzz.png");
    if (r) {
      ++decoded;
      const Image& img = r.value();
      ASSERT_GT(img.width(), 0) << "iteration " << i;
      ASSERT_GT(img.height(), 0) << "iteration " << i;
      ASSERT_LE(img.width(), kMaxImageSide) << "iteration " << i;
      ASSERT_LE(img.height(), kMaxImageSide) << "iteration " << i;
      (void)img.hash();  // every pixel readable
      // A decoded image makes a texture (the path a loaded PNG takes next).
      ASSERT_TRUE(Texture::create(img)) << "iteration " << i;
    } else {
      ++refused;
      ASSERT_EQ(r.message().rfind("fuzz.png: ", 0), 0u) << "iteration " << i << ": " << r.message();
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("decoded", decoded);
  RecordProperty("refused", refused);
  std::printf("%d mutated PNGs: %d decoded, %d refused, %.2f s\n", kIterations, decoded, refused,
              seconds);
  EXPECT_GT(refused, 0);
  EXPECT_GT(decoded, 0);  // some mutations (e.g. in ancillary bytes) still decode
}

// Arbitrary bytes behind a valid signature: the parser sees nonsense chunks from the start.
TEST(ResourceFuzz, RandomBytesAfterSignature) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    Bytes bytes = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 200)(rng);
    for (std::size_t k = 0; k < n; ++k) bytes.push_back(static_cast<std::uint8_t>(rng()));
    if (i % 2 == 0 && bytes.size() >= 16) {  // a plausible IHDR header half the time
      const std::uint8_t ihdr[8] = {0, 0, 0, 13, 'I', 'H', 'D', 'R'};
      std::copy(ihdr, ihdr + 8, bytes.begin() + 8);
    }
    auto r = decode_png(bytes, "noise.png");
    if (!r) {
      ASSERT_EQ(r.message().rfind("noise.png: ", 0), 0u) << i << ": " << r.message();
    }
  }
}

}  // namespace
}  // namespace spindle::render
