// StreamDecoder against load_sound: the same samples for WAV and Ogg whatever the read sizes
// (straddling the stream's internal 4096-frame pieces), seek then read equals the slice, 0 at the
// end, and what a truncated file does (before open: refused; shrinking after open: error()).
#include <spindle/audio/mixer.h>
#include <spindle/audio/sound.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sound_test_util.h"
#include "special_files.h"

namespace spindle::audio {
namespace {

using test::Bytes;
using test::contains;

// Reads the whole stream `chunk` frames at a time.
std::vector<float> read_all(StreamDecoder& s, std::uint32_t chunk) {
  std::vector<float> out;
  std::vector<float> buf(std::size_t{chunk} * s.channels());
  for (;;) {
    const std::uint32_t got = s.read(buf.data(), chunk);
    EXPECT_LE(got, chunk);
    if (got == 0) break;
    out.insert(out.end(), buf.begin(), buf.begin() + std::size_t{got} * s.channels());
  }
  return out;
}

std::unique_ptr<StreamDecoder> open_ok(const std::string& path) {
  auto r = open_stream(path);
  EXPECT_TRUE(r) << r.message();
  return r ? std::move(r).value() : nullptr;
}

// The stream matches load_sound for every read size; `tolerance` 0 means bit-identical.
void expect_same_as_load(const std::string& path, float tolerance) {
  auto sound = load_sound(path);
  ASSERT_TRUE(sound) << sound.message();
  const Sound& ref = sound.value();
  for (std::uint32_t chunk : {1u, 7u, 100u, 1023u, 4095u, 4096u, 4097u, 10000u, 1u << 16}) {
    auto s = open_ok(path);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->channels(), ref.channels());
    EXPECT_EQ(s->sample_rate(), ref.sample_rate());
    EXPECT_EQ(s->frames(), ref.frames());
    EXPECT_EQ(s->name(), path);
    const std::vector<float> got = read_all(*s, chunk);
    ASSERT_EQ(got.size(), ref.samples().size()) << "chunk " << chunk;
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], ref.samples()[i], tolerance) << "chunk " << chunk << " sample " << i;
    EXPECT_TRUE(s->error().empty()) << s->error();
    float buf[8];
    EXPECT_EQ(s->read(buf, 4), 0u);  // still 0 after the end
  }
}

// Seeks to each frame, reads `n` and compares with the loaded slice.
void expect_seek_slices(const std::string& path, float tolerance) {
  auto sound = load_sound(path);
  ASSERT_TRUE(sound) << sound.message();
  const Sound& ref = sound.value();
  auto s = open_ok(path);
  ASSERT_TRUE(s);
  const std::uint64_t frames = ref.frames();
  for (std::uint64_t at : {frames / 2, std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{4095},
                           std::uint64_t{4096}, frames - 300, std::uint64_t{777}, frames - 1}) {
    ASSERT_TRUE(s->seek(at)) << at << ": " << s->error();
    std::vector<float> buf(500 * std::size_t{ref.channels()});
    const std::uint32_t got = s->read(buf.data(), 500);
    ASSERT_EQ(got, std::min<std::uint64_t>(500, frames - at)) << at;
    for (std::size_t i = 0; i < std::size_t{got} * ref.channels(); ++i)
      ASSERT_NEAR(buf[i], ref.samples()[at * ref.channels() + i], tolerance)
          << "seek " << at << " sample " << i;
  }
  EXPECT_FALSE(s->seek(frames));
  EXPECT_EQ(s->error(), path + ": seek to frame " + std::to_string(frames) + " past the end (" +
                            std::to_string(frames) + " frames)");
  float buf[2];
  EXPECT_EQ(s->read(buf, 1), 0u);  // an error ends the stream
}

class StreamTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const std::string& p : paths_) std::filesystem::remove(p);
  }
  std::string temp(const std::string& name, const Bytes& bytes) {
    paths_.push_back(test::write_temp(name, bytes));
    return paths_.back();
  }
  std::vector<std::string> paths_;
};

TEST_F(StreamTest, WavMatchesLoadSound) {
  expect_same_as_load(
      temp("s16.wav", encode_wav(test::sine(10007, 2, 44100), 2, 44100, WavFormat::Pcm16)), 0.0f);
  expect_same_as_load(
      temp("f32.wav", encode_wav(test::sine(9000, 1, 48000), 1, 48000, WavFormat::Float32)), 0.0f);
  // 24-bit with chunks before and after 'data': 3-byte samples never align with the pieces.
  Bytes data;
  for (std::uint32_t i = 0; i < 2 * 5003; ++i) test::put24(data, i * 2654435761u);
  expect_same_as_load(
      temp("s24.wav", test::riff({test::chunk("JUNK", {1, 2, 3}),
                                  test::chunk("fmt ", test::fmt_body({.channels = 2, .bits = 24})),
                                  test::chunk("data", data), test::chunk("LIST", {4, 5})})),
      0.0f);
}

TEST_F(StreamTest, OggMatchesLoadSound) {
  // The same stb decoder over the same packets: identical samples.
  expect_same_as_load(test::data_path("sine440_mono.ogg"), 0.0f);
  expect_same_as_load(test::data_path("sine440_660_stereo.ogg"), 0.0f);
}

TEST_F(StreamTest, WavSeekThenReadIsTheSlice) {
  expect_seek_slices(
      temp("seek.wav", encode_wav(test::sine(12000, 2, 22050), 2, 22050, WavFormat::Pcm16)), 0.0f);
}

TEST_F(StreamTest, OggSeekThenReadIsTheSlice) {
  // stb_vorbis_seek decodes from the page before the target; the overlap-add is the same, so
  // the samples agree to float rounding.
  expect_seek_slices(test::data_path("sine440_mono.ogg"), 1e-6f);
  expect_seek_slices(test::data_path("sine440_660_stereo.ogg"), 1e-6f);
}

TEST_F(StreamTest, EmptyWavEndsAtOnce) {
  auto s = open_ok(temp("empty.wav", encode_wav({}, 1, 8000, WavFormat::Pcm16)));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->frames(), 0u);
  float buf[4];
  EXPECT_EQ(s->read(buf, 4), 0u);
  EXPECT_TRUE(s->error().empty());
}

// Truncation semantics for streams: a file already cut is refused by open_stream with the same
// message as load_sound; a file that shrinks while it streams returns the frames that are still
// there, then 0 with error() set: never a silent short end.
TEST_F(StreamTest, TruncatedBeforeOpenIsRefused) {
  const Bytes full = encode_wav(test::sine(1000, 2, 8000), 2, 8000, WavFormat::Pcm16);
  const std::string path = temp("cut.wav", Bytes(full.begin(), full.begin() + 2000));
  auto r = open_stream(path);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(),
            path + ": truncated 'data' chunk: declares 4000 bytes, only 1956 present (at byte 36)");
  EXPECT_EQ(r.message(), load_sound(path).message());

  const Bytes ogg = test::read_file(test::data_path("sine440_660_stereo.ogg"));
  const std::string ogg_path = temp("cut.ogg", Bytes(ogg.begin(), ogg.begin() + 4000));
  auto o = open_stream(ogg_path);
  ASSERT_FALSE(o);
  EXPECT_TRUE(contains(o.message(), ogg_path + ": truncated page")) << o.message();
  EXPECT_EQ(o.message(), load_sound(ogg_path).message());
}

TEST_F(StreamTest, WavShrinkingWhileStreamingSetsError) {
  const std::vector<float> src = test::sine(10000, 2, 8000);
  const std::string path = temp("shrink.wav", encode_wav(src, 2, 8000, WavFormat::Pcm16));
  auto s = open_ok(path);
  ASSERT_TRUE(s);
  std::vector<float> buf(2 * 3000);
  ASSERT_EQ(s->read(buf.data(), 3000), 3000u);
  // Cut in the middle of frame 6000 (4 bytes a frame after the 44-byte header).
  std::filesystem::resize_file(path, 44 + 6000 * 4 + 3);
  std::uint64_t total = 3000;
  for (std::uint32_t got; (got = s->read(buf.data(), 3000)) != 0;) total += got;
  EXPECT_EQ(total, 6000u);  // every whole frame still on disk, nothing after
  EXPECT_EQ(s->error(), path +
                            ": truncated 'data' chunk: the file ends at byte 24047, the chunk "
                            "runs to byte 40044");
  EXPECT_FALSE(s->seek(0));  // the error is sticky
}

TEST_F(StreamTest, OggShrinkingWhileStreamingSetsError) {
  const Bytes ogg = test::read_file(test::data_path("sine440_660_stereo.ogg"));
  const std::string path = temp("shrink.ogg", ogg);
  auto s = open_ok(path);
  ASSERT_TRUE(s);
  std::filesystem::resize_file(path, test::ogg_pages(ogg).back() + 100);  // into the last page
  std::vector<float> buf(2 * 1000);
  std::uint64_t total = 0;
  for (std::uint32_t got; (got = s->read(buf.data(), 1000)) != 0;) total += got;
  EXPECT_LT(total, s->frames());
  EXPECT_TRUE(contains(s->error(), path + ": the stream ends at frame " + std::to_string(total) +
                                       " of 16537 (truncated or corrupt"))
      << s->error();
}

TEST_F(StreamTest, OpenRefusesWhatLoadRefuses) {
  auto missing = open_stream("/nonexistent/music.ogg");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(contains(missing.message(), "/nonexistent/music.ogg: cannot open: "))
      << missing.message();
  const std::string text = temp("notes.txt", Bytes{'h', 'e', 'l', 'l', 'o'});
  auto t = open_stream(text);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.message(), text + ": neither a WAV (RIFF/WAVE) nor an Ogg (OggS) file");
  const std::string empty = temp("empty.bin", {});
  EXPECT_EQ(open_stream(empty).message(), empty + ": empty file");
  const std::string tri = temp("tri.wav", test::wav({.channels = 3}, Bytes(6, 0)));
  EXPECT_EQ(open_stream(tri).message(), load_sound(tri).message());
}

// What is not a regular file is refused by what it is, before a byte is read, by all three ways a
// sound file comes in: a FIFO blocked each of them forever, /dev/zero was "empty" and a directory
// was "9223372036854775807 bytes".
TEST(SoundFiles, WhatIsNotARegularFileIsRefusedByWhatItIs) {
  Mixer mixer({.block_frames = 64});
  for (const spindle::test::SpecialFile& f : spindle::test::special_files("sound")) {
    const std::string expected = f.path + ": not a regular file (" + f.kind + ")";
    auto sound = spindle::test::returns_promptly(f, [&] { return load_sound(f.path); });
    EXPECT_EQ(sound.message(), expected);
    auto stream = spindle::test::returns_promptly(f, [&] { return open_stream(f.path); });
    EXPECT_EQ(stream.message(), expected);
    auto added = spindle::test::returns_promptly(f, [&] { return mixer.add_stream(f.path); });
    EXPECT_EQ(added.message(), expected);
  }
}

}  // namespace
}  // namespace spindle::audio
