// Textures: validation (messages name the texture), the mip chain's sizes and box-filtered
// content, and views that stay valid when a texture moves.
#include <spindle/render/texture.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "special_files.h"

namespace spindle::render {
namespace resource_test {
Image patterned_image(int w, int h, std::uint32_t seed);  // image_test.cpp
}
namespace {

TEST(Texture, RefusesEmptyAndOversizedNamingIt) {
  auto empty = Texture::create(Image(), {.name = "crate"});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.message(), "texture 'crate': 0x0 is empty");

  const std::vector<std::uint8_t> none;
  auto wide = Texture::create(none, 20000, 1, {.name = "wide"});
  ASSERT_FALSE(wide);
  EXPECT_EQ(wide.message(), "texture 'wide': 20000x1 exceeds 16384 per side");
}

TEST(Texture, RefusesByteCountMismatchNamingIt) {
  const std::vector<std::uint8_t> bytes(4 * 4 * 4 - 1);
  auto t = Texture::create(bytes, 4, 4, {.name = "short"});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.message(), "texture 'short': 63 bytes of pixels, 4x4 needs 64");
  auto neg = Texture::create(bytes, -4, 4, {.name = "neg"});
  ASSERT_FALSE(neg);
  EXPECT_EQ(neg.message().rfind("texture 'neg': ", 0), 0u);
}

TEST(Texture, MipChainSizes) {
  auto t = Texture::create(Image(5, 3));
  ASSERT_TRUE(t) << t.message();
  const TextureView& v = t.value().view();
  ASSERT_EQ(v.level_count, 3);
  EXPECT_EQ(v.levels[0].width, 5);
  EXPECT_EQ(v.levels[0].height, 3);
  EXPECT_EQ(v.levels[1].width, 2);
  EXPECT_EQ(v.levels[1].height, 1);
  EXPECT_EQ(v.levels[2].width, 1);
  EXPECT_EQ(v.levels[2].height, 1);
  EXPECT_EQ(v.levels[3].texels, nullptr);

  auto big = Texture::create(Image(256, 16));
  ASSERT_TRUE(big);
  EXPECT_EQ(big.value().level_count(), 9);  // 256 -> 1 across, 16 -> 1 down

  auto flat = Texture::create(Image(64, 64), {.mipmaps = false, .filter = Filter::Nearest});
  ASSERT_TRUE(flat);
  EXPECT_EQ(flat.value().level_count(), 1);
  EXPECT_FALSE(flat.value().view().mipmaps);
  EXPECT_EQ(flat.value().view().filter, Filter::Nearest);
}

TEST(Texture, MipContentIsRoundedBoxAverage) {
  Image img(4, 2);
  img.at(0, 0) = rgba(0, 10, 255, 255);
  img.at(1, 0) = rgba(1, 20, 255, 255);
  img.at(0, 1) = rgba(0, 30, 0, 0);
  img.at(1, 1) = rgba(1, 40, 0, 0);
  for (int x = 2; x < 4; ++x)
    for (int y = 0; y < 2; ++y) img.at(x, y) = rgba(7, 7, 7, 7);
  auto t = Texture::create(img);
  ASSERT_TRUE(t);
  const TextureView& v = t.value().view();
  ASSERT_EQ(v.level_count, 3);
  // (0+1+0+1)/4 = 0.5 -> 1; (10+20+30+40)/4 = 25; (255*2)/4 = 127.5 -> 128.
  EXPECT_EQ(v.levels[1].texels[0], rgba(1, 25, 128, 128));
  EXPECT_EQ(v.levels[1].texels[1], rgba(7, 7, 7, 7));
  // 2x1 -> 1x1 averages the two: (1+7)/2 = 4, (25+7)/2 = 16, (128+7)/2 = 67.5 -> 68.
  EXPECT_EQ(v.levels[2].texels[0], rgba(4, 16, 68, 68));
}

TEST(Texture, LevelZeroIsTheImageWithoutPadding) {
  Image img = resource_test::patterned_image(7, 5, 3);
  Image padded(7, 5, 0, 11);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) padded.at(x, y) = img.at(x, y);
  auto t = Texture::create(padded);
  ASSERT_TRUE(t);
  const MipLevel& l0 = t.value().view().levels[0];
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 7; ++x) ASSERT_EQ(l0.texels[y * 7 + x], img.at(x, y));

  // The same pixels as raw bytes.
  std::vector<std::uint8_t> bytes(img.bytes(), img.bytes() + 7 * 5 * 4);
  auto raw = Texture::create(bytes, 7, 5, {.name = "raw"});
  ASSERT_TRUE(raw) << raw.message();
  EXPECT_EQ(raw.value().name(), "raw");
  for (int i = 0; i < 35; ++i) ASSERT_EQ(raw.value().view().levels[0].texels[i], l0.texels[i]);
}

TEST(Texture, MovedTextureViewPointsAtItsOwnTexels) {
  Image img = resource_test::patterned_image(8, 8, 11);
  auto made = Texture::create(img, {.name = "moved"});
  ASSERT_TRUE(made);
  Texture a = std::move(made.value());
  Texture b(std::move(a));
  EXPECT_EQ(a.level_count(), 0);  // NOLINT(bugprone-use-after-move): moved-from is empty
  ASSERT_EQ(b.level_count(), 4);
  EXPECT_EQ(b.name(), "moved");
  EXPECT_EQ(b.view().levels[0].texels[9], img.at(1, 1));

  std::vector<Texture> many;
  for (int i = 0; i < 20; ++i) {  // growth moves every element
    auto t = Texture::create(resource_test::patterned_image(3, 3, static_cast<std::uint32_t>(i)));
    ASSERT_TRUE(t);
    many.push_back(std::move(t.value()));
  }
  for (int i = 0; i < 20; ++i) {
    const Image expect = resource_test::patterned_image(3, 3, static_cast<std::uint32_t>(i));
    const TextureView& v = many[static_cast<std::size_t>(i)].view();
    EXPECT_EQ(v.levels[0].texels[4], expect.at(1, 1));
    EXPECT_EQ(v.levels[1].texels, v.levels[0].texels + 9);
  }

  Texture c;
  c = std::move(b);
  EXPECT_EQ(c.view().levels[0].texels[9], img.at(1, 1));
  EXPECT_EQ(c.view().levels[3].width, 1);
}

TEST(Texture, LoadPngNamesThePath) {
  auto missing = Texture::load_png("/nonexistent/dir/t.png");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.message().rfind("/nonexistent/dir/t.png: ", 0), 0u) << missing.message();
}

TEST(Texture, LoadPngRefusesWhatIsNotARegularFile) {
  for (const spindle::test::SpecialFile& f : spindle::test::special_files("texture")) {
    auto texture = spindle::test::returns_promptly(f, [&] { return Texture::load_png(f.path); });
    EXPECT_EQ(texture.message(), f.path + ": not a regular file (" + f.kind + ")");
  }
}

}  // namespace
}  // namespace spindle::render
