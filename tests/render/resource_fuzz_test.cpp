// PNG fuzzing: deterministic mutations (flip, insert, delete, duplicate, truncate, huge numbers)
// of small valid PNGs through decode_png. Every input must give either an image of a sane size
// or an error that starts with the name; never a crash (run under ASan too). Fixed seeds, so a
// failure repeats; the iteration number is in the message.
#include <spindle/render/image.h>
#include <spindle/render/texture.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace spindle::render {
namespace resource_test {  // image_test.cpp
Image patterned_image(int w, int h, std::uint32_t seed);
std::vector<std::uint8_t> png_bytes(const Image& img);
}  // namespace resource_test
namespace {

using Bytes = std::vector<std::uint8_t>;

// One to six edits of any bytes.
Bytes mutate(Bytes data, std::mt19937& rng) {
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n)(rng); };
  const int edits = std::uniform_int_distribution<int>(1, 6)(rng);
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

// Grey, grey+alpha, RGB and 16-bit PNGs too would widen the search; write_png only makes RGBA8,
// so the seeds are RGBA8 of a few sizes, one of them with long runs (compresses well).
std::vector<Bytes> seeds() {
  std::vector<Bytes> out;
  out.push_back(resource_test::png_bytes(resource_test::patterned_image(5, 4, 1)));
  out.push_back(resource_test::png_bytes(resource_test::patterned_image(1, 9, 2)));
  Image flat(16, 16, rgba(20, 40, 60));
  for (int i = 0; i < 16; ++i) flat.at(i, i) = rgba(255, 255, 255);
  out.push_back(resource_test::png_bytes(flat));
  return out;
}

TEST(ResourceFuzz, DecodePngNeverCrashesAndNamesItself) {
  const std::vector<Bytes> inputs = seeds();
  std::mt19937 rng(20240613);
  const auto start = std::chrono::steady_clock::now();
  int decoded = 0, refused = 0;
  constexpr int kIterations = 20000;
  for (int i = 0; i < kIterations; ++i) {
    const Bytes bytes = mutate(inputs[static_cast<std::size_t>(i) % inputs.size()], rng);
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
