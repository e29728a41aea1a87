// Hostile input for the loaders: every truncation of a small WAV and a small Ogg, random byte
// flips with fixed seeds (for Ogg also with the page CRCs repaired, so the damage reaches
// stb_vorbis), and headers that lie. Never a crash; every refusal names the file and the problem.
#include <spindle/audio/sound.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "sound_test_util.h"

namespace spindle::audio {
namespace {

using test::Bytes;
using test::contains;
using test::Fmt;

// A decode that succeeded must be a sound a mixer can use; one that failed must name the file.
void expect_sane(const core::Result<Sound>& r, const std::string& name) {
  if (r) {
    const Sound& s = r.value();
    EXPECT_TRUE(s.channels() == 1 || s.channels() == 2);
    EXPECT_GE(s.sample_rate(), kMinSampleRate);
    EXPECT_LE(s.sample_rate(), kMaxSampleRate);
    EXPECT_LE(s.frames(), kMaxSoundFrames);
    for (float x : s.samples()) ASSERT_TRUE(std::isfinite(x));
  } else {
    EXPECT_EQ(r.message().rfind(name + ": ", 0), 0u) << r.message();
  }
}

Bytes small_wav() {
  return encode_wav(test::sine(64, 2, 22050), 2, 22050, WavFormat::Pcm16);
}
Bytes small_ogg() {
  return test::read_file(test::data_path("sine440_mono.ogg"));
}

// Truncation semantics: a WAV is whole when its 'data' chunk is, so every cut before the end of
// 'data' is an error, and cuts in chunks after 'data' (never read) give the full sound.
TEST(SoundFuzz, EveryTruncationOfAWavIsAnError) {
  const Bytes full = small_wav();
  for (std::size_t n = 0; n < full.size(); ++n) {
    const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    auto r = decode_wav(cut, "cut.wav");
    ASSERT_FALSE(r) << "truncated to " << n << " bytes";
    EXPECT_EQ(r.message().rfind("cut.wav: ", 0), 0u) << r.message();
    if (n >= 44) {  // the header is whole, the data is not
      EXPECT_EQ(r.message(), "cut.wav: truncated 'data' chunk: declares 256 bytes, only " +
                                 std::to_string(n - 44) + " present (at byte 36)");
    }
  }
}

TEST(SoundFuzz, TruncatingAChunkAfterDataKeepsTheWholeSound) {
  const Bytes data = {0x00, 0x40, 0x00, 0xC0, 0x00, 0x20};
  const Bytes full = test::riff({test::chunk("fmt ", test::fmt_body({})), test::chunk("data", data),
                                 test::chunk("LIST", Bytes(40, 'x'))});
  const std::size_t data_end = 12 + 24 + 8 + data.size();
  for (std::size_t n = 0; n <= full.size(); ++n) {
    auto r = decode_wav(std::span(full.data(), n), "tail.wav");
    if (n < data_end) {
      EXPECT_FALSE(r) << n;
    } else {
      ASSERT_TRUE(r) << n << ": " << r.message();
      EXPECT_EQ(r.value().frames(), 3u);
    }
  }
}

// Truncation semantics for Ogg: every page must be whole and the last one marked end-of-stream,
// so every cut, even one on a page boundary, is an error.
TEST(SoundFuzz, EveryTruncationOfAnOggIsAnError) {
  const Bytes full = small_ogg();
  ASSERT_TRUE(decode_ogg(full, "full.ogg"));
  const std::vector<std::size_t> pages = test::ogg_pages(full);
  ASSERT_EQ(pages.size(), 3u);
  for (std::size_t n = 0; n < full.size(); ++n) {
    auto r = decode_ogg(std::span(full.data(), n), "cut.ogg");
    ASSERT_FALSE(r) << "truncated to " << n << " bytes";
    EXPECT_EQ(r.message().rfind("cut.ogg: ", 0), 0u) << r.message();
    const bool on_boundary = std::find(pages.begin(), pages.end(), n) != pages.end();
    if (n == 0)
      EXPECT_TRUE(contains(r.message(), "no Ogg pages")) << r.message();
    else if (on_boundary)
      EXPECT_TRUE(contains(r.message(), "truncated: the last page is not marked end-of-stream"))
          << r.message();
    else
      EXPECT_TRUE(contains(r.message(), "truncated page")) << n << ": " << r.message();
  }
}

TEST(SoundFuzz, RandomByteFlipsInAWav) {
  const Bytes full = small_wav();
  std::mt19937 rng(1234);
  int ok = 0;
  for (int it = 0; it < 3000; ++it) {
    Bytes b = full;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f)
      b[rng() % b.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    auto r = decode_sound(b, "flip.wav");
    expect_sane(r, "flip.wav");
    ok += r ? 1 : 0;
  }
  // Most flips land in the samples and leave a valid (different) sound; some hit the header.
  EXPECT_GT(ok, 1000);
  EXPECT_LT(ok, 3000);
}

// The CRC catches every change of up to 32 consecutive bits: any one damaged byte is refused.
TEST(SoundFuzz, EveryDamagedByteOfAnOggIsCaught) {
  const Bytes full = small_ogg();
  for (std::size_t i = 0; i < full.size(); ++i) {
    Bytes b = full;
    b[i] ^= static_cast<std::uint8_t>(0x5A ^ i);
    if (b[i] == full[i]) b[i] ^= 0xFF;
    auto r = decode_sound(b, "byte.ogg");
    ASSERT_FALSE(r) << "byte " << i;
    EXPECT_EQ(r.message().rfind("byte.ogg: ", 0), 0u) << r.message();
  }
}

// Damage with valid CRCs: what a hostile file (or one damaged before it was written) looks like
// to stb_vorbis itself.
void fuzz_ogg_with_valid_crcs(const Bytes& full, std::uint32_t seed, int iterations) {
  std::mt19937 rng(seed);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int it = 0; it < iterations && std::chrono::steady_clock::now() < deadline; ++it) {
    Bytes b = full;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f)
      b[rng() % b.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    test::fix_ogg_crcs(b);
    expect_sane(decode_sound(b, "crc.ogg"), "crc.ogg");
  }
}

TEST(SoundFuzz, RandomByteFlipsInAnOggWithRepairedCrcs) {
  fuzz_ogg_with_valid_crcs(small_ogg(), 99, 2000);
  fuzz_ogg_with_valid_crcs(test::read_file(test::data_path("sine440_660_stereo.ogg")), 7, 1000);
}

core::Result<Sound> lie(const Fmt& fmt, const Bytes& data = {0, 0, 0, 0}) {
  return decode_wav(test::wav(fmt, data), "lie.wav");
}

void expect_error(const core::Result<Sound>& r, const std::string& message) {
  ASSERT_FALSE(r) << "expected: " << message;
  EXPECT_EQ(r.message(), message);
}

TEST(SoundFuzz, LyingWavHeaders) {
  // 'data' claims more than the file holds.
  Bytes b = test::wav({}, {1, 2, 3, 4});
  test::set32(b, 40, 1000);
  expect_error(decode_wav(b, "lie.wav"),
               "lie.wav: truncated 'data' chunk: declares 1000 bytes, only 4 present (at byte 36)");
  test::set32(b, 40, 0xFFFFFFFF);
  expect_error(decode_wav(b, "lie.wav"),
               "lie.wav: truncated 'data' chunk: declares 4294967295 bytes, only 4 present (at "
               "byte 36)");
  // Any chunk with a size of 0xFFFFFFFF.
  expect_error(
      decode_wav(test::riff({test::chunk("fmt ", test::fmt_body({})),
                             test::chunk("LIST", {1, 2}, 0xFFFFFFFF), test::chunk("data", {0, 0})}),
                 "lie.wav"),
      "lie.wav: truncated 'LIST' chunk: declares 4294967295 bytes, only 12 present (at "
      "byte 36)");
  expect_error(
      decode_wav(test::riff({test::chunk("fmt ", test::fmt_body({}), 0xFFFFFFFF)}), "lie.wav"),
      "lie.wav: truncated 'fmt ' chunk: declares 4294967295 bytes, only 16 present (at "
      "byte 12)");

  expect_error(lie({.channels = 0}), "lie.wav: 0 channels (at byte 12)");
  expect_error(lie({.channels = 3, .bits = 16}, Bytes(6, 0)),
               "lie.wav: 3 channels: only mono and stereo are supported (at byte 12)");
  expect_error(lie({.channels = 6, .bits = 16, .extensible = true}, Bytes(12, 0)),
               "lie.wav: 6 channels: only mono and stereo are supported (at byte 12)");
  expect_error(lie({.block_align = 0}),
               "lie.wav: block_align 0 does not match 1 channels of 16 bits (expected 2) (at byte "
               "12)");
  expect_error(lie({.byte_rate = 12345}),
               "lie.wav: byte_rate 12345 does not match 8000 Hz of 2-byte frames (expected 16000) "
               "(at byte 12)");
  expect_error(lie({.rate = 0}), "lie.wav: sample rate 0 Hz is outside 1000..384000 (at byte 12)");
  expect_error(lie({.rate = 1000000000}),
               "lie.wav: sample rate 1000000000 Hz is outside 1000..384000 (at byte 12)");
  expect_error(lie({.bits = 12}),
               "lie.wav: 12-bit PCM is not supported (PCM: 8, 16, 24, 32; float: 32, 64) (at "
               "byte 12)");
  expect_error(lie({.tag = 3, .bits = 16}),
               "lie.wav: 16-bit float is not supported (PCM: 8, 16, 24, 32; float: 32, 64) (at "
               "byte 12)");
  expect_error(lie({.tag = 0x55}),
               "lie.wav: unsupported format tag 0x0055 (PCM, IEEE float and extensible are "
               "read) (at byte 12)");
  expect_error(lie({.channels = 2}, {0, 0, 0}),
               "lie.wav: 'data' chunk of 3 bytes is not a whole number of 4-byte frames (at byte "
               "36)");

  // Chunk order and missing chunks.
  expect_error(
      decode_wav(test::riff({test::chunk("data", {0, 0}), test::chunk("fmt ", test::fmt_body({}))}),
                 "lie.wav"),
      "lie.wav: 'data' chunk before any 'fmt ' chunk (at byte 12)");
  expect_error(decode_wav(test::riff({test::chunk("LIST", {1, 2})}), "lie.wav"),
               "lie.wav: no 'fmt ' chunk (at byte 22)");
  expect_error(decode_wav(test::riff({test::chunk("fmt ", test::fmt_body({}))}), "lie.wav"),
               "lie.wav: no 'data' chunk (at byte 36)");
  Bytes stray = test::riff({test::chunk("fmt ", test::fmt_body({}))});
  stray.insert(stray.end(), {'d', 'a', 't'});
  expect_error(decode_wav(stray, "lie.wav"),
               "lie.wav: truncated chunk header: 8 bytes needed, 3 left (at byte 36)");
  expect_error(decode_wav(test::riff({test::chunk("fmt ", Bytes(14, 0))}), "lie.wav"),
               "lie.wav: 'fmt ' chunk of 14 bytes is too short (16 needed) (at byte 12)");
  expect_error(decode_wav(Bytes{'R', 'I', 'F', 'F', 0, 0, 0, 0, 'A', 'V', 'I', ' '}, "lie.wav"),
               "lie.wav: not a RIFF/WAVE file (at byte 0)");
}

// A frame count over kMaxSoundFrames with all its bytes present (a sparse file: no disk used) is
// refused from the header, before the samples are read or allocated.
TEST(SoundFuzz, HugeFrameCountsAreRefusedBeforeAllocating) {
  const std::uint64_t data_bytes = kMaxSoundFrames + 2;  // 8-bit mono: one byte a frame
  Bytes header = test::riff({test::chunk("fmt ", test::fmt_body({.bits = 8}))});
  const Bytes data_header = test::chunk("data", {}, static_cast<std::int64_t>(data_bytes));
  header.insert(header.end(), data_header.begin(), data_header.end());
  const std::string path = test::write_temp("huge.wav", header);
  std::filesystem::resize_file(path, header.size() + data_bytes);
  const std::string expected = path + ": " + std::to_string(data_bytes) +
                               " frames, more than the 134217728 a sound may have (at byte 36)";
  auto stream = open_stream(path);
  ASSERT_FALSE(stream);
  EXPECT_EQ(stream.message(), expected);
  auto sound = load_sound(path);
  ASSERT_FALSE(sound);
  EXPECT_EQ(sound.message(), expected);
  std::filesystem::remove(path);
}

// Rewrites the granule of the last page (the declared length) and repairs its CRC.
Bytes with_last_granule(std::uint64_t granule) {
  Bytes b = small_ogg();
  const std::size_t last = test::ogg_pages(b).back();
  for (int i = 0; i < 8; ++i) b[last + 6 + i] = static_cast<std::uint8_t>(granule >> (8 * i));
  test::fix_ogg_crcs(b);
  return b;
}

TEST(SoundFuzz, LyingOggLengths) {
  expect_error(decode_ogg(with_last_granule(std::uint64_t{1} << 40), "len.ogg"),
               "len.ogg: 1099511627776 frames declared, more than the 134217728 a sound may have");
  // A length stb cannot reach: an error, not a short sound (stb stops at the audio it has).
  auto longer = decode_ogg(with_last_granule(kMaxSoundFrames), "len.ogg");
  ASSERT_FALSE(longer);
  EXPECT_EQ(longer.message().rfind("len.ogg: decoded ", 0), 0u) << longer.message();
  EXPECT_TRUE(contains(longer.message(), "the stream declares 134217728 (corrupt audio packets)"))
      << longer.message();
  // A shorter declared length trims the last packet (how Vorbis marks the true end).
  auto shorter = decode_ogg(with_last_granule(5000), "len.ogg");
  ASSERT_TRUE(shorter) << shorter.message();
  EXPECT_EQ(shorter.value().frames(), 5000u);
}

TEST(SoundFuzz, OggStructureProblems) {
  const Bytes full = small_ogg();
  const std::vector<std::size_t> pages = test::ogg_pages(full);
  // The middle page removed: sequence numbers reveal it.
  Bytes gap(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(pages[1]));
  gap.insert(gap.end(), full.begin() + static_cast<std::ptrdiff_t>(pages[2]), full.end());
  expect_error(decode_ogg(gap, "gap.ogg"),
               "gap.ogg: page sequence number 2, expected 1 (missing or reordered pages) (page 1, "
               "at byte 58)");
  // Two streams chained.
  Bytes chained = full;
  chained.insert(chained.end(), full.begin(), full.end());
  expect_error(decode_ogg(chained, "chain.ogg"),
               "chain.ogg: bytes after the end-of-stream page (chained streams are not read) (page "
               "3, at byte 3706)");
  // Not Vorbis: an Ogg page with an unknown codec in its first packet.
  Bytes other = full;
  other[pages[0] + 28 + 1] = 'X';
  test::fix_ogg_crcs(other);
  auto r = decode_ogg(other, "opus.ogg");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message().rfind("opus.ogg: not a valid Ogg Vorbis stream (", 0), 0u) << r.message();
  // Comment header lengths that run past their packet: stb_vorbis 1.22 would corrupt its heap.
  const std::size_t comment = pages[1] + 27 + full[pages[1] + 26];
  ASSERT_EQ(full[comment], 3);
  for (std::uint32_t lie : {0xFFFFFFFFu, 0x7FFFFFFFu, 4000u}) {
    Bytes b = full;
    test::set32(b, comment + 7, lie);
    test::fix_ogg_crcs(b);
    auto v = decode_ogg(b, "vendor.ogg");
    ASSERT_FALSE(v);
    EXPECT_TRUE(contains(v.message(),
                         "vendor.ogg: Vorbis comment header: vendor string runs past "
                         "the end"))
        << v.message();
  }
  const std::uint32_t vendor = full[comment + 7] | (full[comment + 8] << 8);
  Bytes count = full;
  test::set32(count, comment + 11 + vendor, 0x40000000u);
  test::fix_ogg_crcs(count);
  auto c = decode_ogg(count, "count.ogg");
  ASSERT_FALSE(c);
  EXPECT_TRUE(contains(c.message(),
                       "count.ogg: Vorbis comment header: comment count 1073741824 "
                       "runs past the end"))
      << c.message();
  Bytes trailing = full;
  trailing.push_back(0);
  expect_error(decode_ogg(trailing, "junk.ogg"),
               "junk.ogg: bytes after the end-of-stream page (chained streams are not read) (page "
               "3, at byte 3706)");
}

}  // namespace
}  // namespace spindle::audio
