// Sound and its loaders on good input: every WAV format decodes to the samples computed here,
// chunk layouts real files use, encode_wav and wav_header, Sound::create's checks, the content
// sniffing, files on disk, and Ogg Vorbis against the sines it was encoded from.
#include <spindle/audio/sound.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "sound_test_util.h"

namespace spindle::audio {
namespace {

using test::Bytes;
using test::contains;
using test::Fmt;

void expect_samples(const Sound& s, const std::vector<double>& expected) {
  ASSERT_EQ(s.samples().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(s.samples()[i], static_cast<float>(expected[i])) << "sample " << i;
}

TEST(Wav, Pcm8MonoIsOffsetBinary) {
  const Bytes data = {0, 1, 64, 127, 128, 129, 192, 255};
  auto s = decode_wav(test::wav({.channels = 1, .bits = 8}, data), "u8.wav");
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s.value().channels(), 1u);
  EXPECT_EQ(s.value().sample_rate(), 8000u);
  EXPECT_EQ(s.value().frames(), 8u);
  EXPECT_EQ(s.value().name(), "u8.wav");
  std::vector<double> expected;
  for (std::uint8_t x : data) expected.push_back((x - 128) / 128.0);
  expect_samples(s.value(), expected);
}

TEST(Wav, Pcm16Stereo) {
  const std::vector<std::int16_t> values = {-32768, -1, 0, 1, 32767, 12345, -23456, 100};
  Bytes data;
  for (std::int16_t v : values) test::put16(data, static_cast<std::uint16_t>(v));
  auto s = decode_wav(test::wav({.channels = 2, .rate = 44100, .bits = 16}, data), "s16.wav");
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s.value().channels(), 2u);
  EXPECT_EQ(s.value().sample_rate(), 44100u);
  EXPECT_EQ(s.value().frames(), 4u);
  std::vector<double> expected;
  for (std::int16_t v : values) expected.push_back(v / 32768.0);
  expect_samples(s.value(), expected);
  EXPECT_EQ(s.value().samples()[0], -1.0f);
}

TEST(Wav, Pcm24SignExtends) {
  // Raw 24-bit patterns and their signed values.
  const std::vector<std::pair<std::uint32_t, std::int32_t>> values = {
      {0x800000, -8388608}, {0x7FFFFF, 8388607},  {0xFFFFFF, -1},
      {0x000001, 1},        {0x123456, 0x123456}, {0xABCDEF, 0xABCDEF - 0x1000000}};
  Bytes data;
  for (auto [raw, v] : values) test::put24(data, raw);
  auto s = decode_wav(test::wav({.channels = 2, .rate = 48000, .bits = 24}, data), "s24.wav");
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s.value().frames(), 3u);
  std::vector<double> expected;
  for (auto [raw, v] : values) expected.push_back(v / 8388608.0);
  expect_samples(s.value(), expected);
}

TEST(Wav, Pcm32) {
  const std::vector<std::int32_t> values = {std::numeric_limits<std::int32_t>::min(),
                                            std::numeric_limits<std::int32_t>::max(),
                                            -1,
                                            1,
                                            0x12345678,
                                            -0x0FEDCBA9};
  Bytes data;
  for (std::int32_t v : values) test::put32(data, static_cast<std::uint32_t>(v));
  auto s = decode_wav(test::wav({.channels = 1, .rate = 96000, .bits = 32}, data), "s32.wav");
  ASSERT_TRUE(s) << s.message();
  std::vector<double> expected;
  for (std::int32_t v : values) expected.push_back(v / 2147483648.0);
  expect_samples(s.value(), expected);
}

TEST(Wav, Float32AndFloat64) {
  const std::vector<float> values = {0.0f, -1.0f, 1.0f, 0.25f, -0.7071f, 1.5f, 1e-30f, -2.0f};
  Bytes f32, f64;
  for (float v : values) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    test::put32(f32, u);
    const double d = v;
    std::uint64_t w;
    std::memcpy(&w, &d, 8);
    test::put32(f64, static_cast<std::uint32_t>(w));
    test::put32(f64, static_cast<std::uint32_t>(w >> 32));
  }
  std::vector<double> expected(values.begin(), values.end());
  auto a = decode_wav(test::wav({.tag = 3, .channels = 2, .bits = 32}, f32), "f32.wav");
  ASSERT_TRUE(a) << a.message();
  expect_samples(a.value(), expected);
  auto b = decode_wav(test::wav({.tag = 3, .channels = 1, .bits = 64}, f64), "f64.wav");
  ASSERT_TRUE(b) << b.message();
  EXPECT_EQ(b.value().frames(), values.size());
  expect_samples(b.value(), expected);
}

TEST(Wav, ExtensiblePcmAndFloat) {
  Bytes pcm;
  for (std::uint32_t raw : {0x800000u, 0x400000u, 0x000000u, 0x7FFFFFu}) test::put24(pcm, raw);
  auto a = decode_wav(test::wav({.tag = 1, .channels = 2, .bits = 24, .extensible = true}, pcm),
                      "ext24.wav");
  ASSERT_TRUE(a) << a.message();
  expect_samples(a.value(), {-1.0, 0.5, 0.0, 8388607 / 8388608.0});

  Bytes flt;
  for (float v : {0.5f, -0.25f}) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    test::put32(flt, u);
  }
  auto b = decode_wav(test::wav({.tag = 3, .channels = 1, .bits = 32, .extensible = true}, flt),
                      "extf.wav");
  ASSERT_TRUE(b) << b.message();
  expect_samples(b.value(), {0.5, -0.25});

  // An extensible sub-format that is neither PCM nor float (here A-law, 6).
  auto c = decode_wav(test::wav({.tag = 6, .channels = 1, .bits = 8, .extensible = true}, {1}),
                      "alaw.wav");
  ASSERT_FALSE(c);
  EXPECT_TRUE(contains(c.message(), "alaw.wav: unsupported format tag 0x0006")) << c.message();
}

TEST(Wav, UnknownChunksAreSkippedWithTheirPadByte) {
  const Bytes data = {0x00, 0x40, 0x00, 0xC0};  // 0.5, -0.5
  // An odd-sized chunk before 'fmt ', one between 'fmt ' and 'data', one after 'data'.
  const Bytes bytes =
      test::riff({test::chunk("JUNK", {1, 2, 3}), test::chunk("fmt ", test::fmt_body({})),
                  test::chunk("LIST", Bytes(11, 'x')), test::chunk("data", data),
                  test::chunk("id3 ", Bytes(7, 0))});
  auto s = decode_wav(bytes, "chunks.wav");
  ASSERT_TRUE(s) << s.message();
  expect_samples(s.value(), {0.5, -0.5});
}

TEST(Wav, OddSizedDataWithOrWithoutItsPadByte) {
  const Bytes data = {128, 192, 64};  // 3 frames of 8-bit mono
  Bytes padded = test::wav({.bits = 8}, data);
  ASSERT_EQ(padded.size() % 2, 0u);
  auto a = decode_wav(padded, "pad.wav");
  ASSERT_TRUE(a) << a.message();
  expect_samples(a.value(), {0.0, 0.5, -0.5});
  padded.pop_back();  // many writers leave the pad byte out at the end of the file
  auto b = decode_wav(padded, "nopad.wav");
  ASSERT_TRUE(b) << b.message();
  expect_samples(b.value(), {0.0, 0.5, -0.5});
}

TEST(Wav, RiffSizeIsNotTrusted) {
  Bytes bytes = test::wav({}, {0, 0x40});
  test::set32(bytes, 4, 0xFFFFFFFF);  // streaming writers leave 0 or -1 here
  auto s = decode_wav(bytes, "riff.wav");
  ASSERT_TRUE(s) << s.message();
  expect_samples(s.value(), {0.5});
}

TEST(Wav, EmptyDataIsAnEmptySound) {
  auto s = decode_wav(test::wav({.channels = 2}, {}), "empty.wav");
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s.value().frames(), 0u);
  EXPECT_EQ(s.value().channels(), 2u);
}

TEST(Wav, EveryRateInRangeDecodes) {
  for (std::uint32_t rate : {kMinSampleRate, 11025u, 22050u, 44100u, 192000u, kMaxSampleRate}) {
    auto s = decode_wav(test::wav({.rate = rate}, {0, 0}), "rate.wav");
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(s.value().sample_rate(), rate);
    EXPECT_DOUBLE_EQ(s.value().seconds(), 1.0 / rate);
  }
}

TEST(Wav, NonFiniteFloatSamplesAreRefused) {
  for (double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(), 1e300}) {
    Bytes f64;
    for (double v : {0.0, bad}) {
      std::uint64_t w;
      std::memcpy(&w, &v, 8);
      test::put32(f64, static_cast<std::uint32_t>(w));
      test::put32(f64, static_cast<std::uint32_t>(w >> 32));
    }
    auto s = decode_wav(test::wav({.tag = 3, .bits = 64}, f64), "nan.wav");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.message(), "nan.wav: sample 1 is not finite (at byte 52)");
  }
}

TEST(EncodeWav, Pcm16RoundTripIsExactOnTheGrid) {
  const std::vector<float> src = test::sine(300, 2, 22050);
  const Bytes bytes = encode_wav(src, 2, 22050, WavFormat::Pcm16);
  EXPECT_EQ(bytes.size(), 44u + src.size() * 2);
  auto s = decode_wav(bytes, "rt16.wav");
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s.value().frames(), 300u);
  ASSERT_EQ(s.value().samples().size(), src.size());
  for (std::size_t i = 0; i < src.size(); ++i) EXPECT_EQ(s.value().samples()[i], src[i]) << i;
}

TEST(EncodeWav, Pcm16RoundsAndClamps) {
  const std::vector<float> src = {
      1.0f,         -1.0f,        1.5f,          -1.5f,
      0.4f / 32768, 0.6f / 32768, -0.6f / 32768, std::numeric_limits<float>::quiet_NaN()};
  const Bytes bytes = encode_wav(src, 1, 8000, WavFormat::Pcm16);
  std::vector<std::int16_t> got;
  for (std::size_t i = 44; i < bytes.size(); i += 2)
    got.push_back(static_cast<std::int16_t>(bytes[i] | (bytes[i + 1] << 8)));
  EXPECT_EQ(got, (std::vector<std::int16_t>{32767, -32768, 32767, -32768, 0, 1, -1, 0}));
}

TEST(EncodeWav, Float32RoundTripIsBitExact) {
  const std::vector<float> src = {0.1f, -0.3f, 1.75f, -1e-20f, 0.0f, 0.999f};
  auto s = decode_wav(encode_wav(src, 1, 48000, WavFormat::Float32), "rtf.wav");
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(s.value().samples().size(), src.size());
  for (std::size_t i = 0; i < src.size(); ++i) EXPECT_EQ(s.value().samples()[i], src[i]);
}

TEST(WavHeader, Fields) {
  const auto u16 = [](const std::array<std::uint8_t, 44>& h, int at) {
    return h[at] | (h[at + 1] << 8);
  };
  const auto u32 = [&](const std::array<std::uint8_t, 44>& h, int at) {
    return static_cast<std::uint32_t>(u16(h, at) | (u16(h, at + 2) << 16));
  };
  const auto h = wav_header(2, 44100, 1000, WavFormat::Pcm16);
  EXPECT_EQ(std::string(h.begin(), h.begin() + 4), "RIFF");
  EXPECT_EQ(u32(h, 4), 36u + 4000u);
  EXPECT_EQ(std::string(h.begin() + 8, h.begin() + 16), "WAVEfmt ");
  EXPECT_EQ(u32(h, 16), 16u);
  EXPECT_EQ(u16(h, 20), 1);  // PCM
  EXPECT_EQ(u16(h, 22), 2);
  EXPECT_EQ(u32(h, 24), 44100u);
  EXPECT_EQ(u32(h, 28), 44100u * 4);
  EXPECT_EQ(u16(h, 32), 4);
  EXPECT_EQ(u16(h, 34), 16);
  EXPECT_EQ(std::string(h.begin() + 36, h.begin() + 40), "data");
  EXPECT_EQ(u32(h, 40), 4000u);

  const auto f = wav_header(1, 8000, 10, WavFormat::Float32);
  EXPECT_EQ(u16(f, 20), 3);  // IEEE float
  EXPECT_EQ(u32(f, 28), 32000u);
  EXPECT_EQ(u16(f, 32), 4);
  EXPECT_EQ(u16(f, 34), 32);
  EXPECT_EQ(u32(f, 40), 40u);
  // A header for more than 4 GiB of samples saturates its sizes.
  const auto big = wav_header(2, 48000, std::uint64_t{1} << 31, WavFormat::Float32);
  EXPECT_EQ(u32(big, 4), 0xFFFFFFFFu);
  EXPECT_EQ(u32(big, 40), 0xFFFFFFFFu - 36);
}

TEST(SoundCreate, ValidatesEverything) {
  EXPECT_TRUE(Sound::create({0.f, 1.f}, 2, 48000, "ok"));
  EXPECT_TRUE(Sound::create({}, 1, kMinSampleRate, "empty"));
  auto ch = Sound::create({0.f, 0.f, 0.f}, 3, 48000, "tri");
  ASSERT_FALSE(ch);
  EXPECT_EQ(ch.message(), "tri: 3 channels: only mono and stereo are supported");
  EXPECT_FALSE(Sound::create({}, 0, 48000, "zero"));
  auto lo = Sound::create({0.f}, 1, kMinSampleRate - 1, "slow");
  ASSERT_FALSE(lo);
  EXPECT_EQ(lo.message(), "slow: sample rate 999 Hz is outside 1000..384000");
  EXPECT_FALSE(Sound::create({0.f}, 1, kMaxSampleRate + 1, "fast"));
  auto half = Sound::create({0.f, 0.f, 0.f}, 2, 48000, "half");
  ASSERT_FALSE(half);
  EXPECT_EQ(half.message(), "half: 3 samples are not whole frames of 2 channels");
  auto inf =
      Sound::create({0.f, 0.f, 0.f, std::numeric_limits<float>::infinity()}, 2, 48000, "inf");
  ASSERT_FALSE(inf);
  EXPECT_EQ(inf.message(), "inf: sample 3 (frame 1, channel 1) is not finite");
  EXPECT_FALSE(Sound::create({std::numeric_limits<float>::quiet_NaN()}, 1, 48000, "nan"));
}

TEST(DecodeSound, GoesByContentNotName) {
  const Bytes w = encode_wav(test::sine(10, 1, 8000), 1, 8000, WavFormat::Pcm16);
  auto a = decode_sound(w, "actually_a_wav.ogg");
  ASSERT_TRUE(a) << a.message();
  EXPECT_EQ(a.value().frames(), 10u);
  auto b = decode_sound(test::read_file(test::data_path("sine440_mono.ogg")), "really.wav");
  ASSERT_TRUE(b) << b.message();
  EXPECT_EQ(b.value().channels(), 1u);
  auto c = decode_sound(Bytes{'I', 'D', '3', 4, 0, 0, 0, 0, 0, 0, 0, 0}, "song.mp3");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.message(), "song.mp3: neither a WAV (RIFF/WAVE) nor an Ogg (OggS) file");
  auto d = decode_sound({}, "nothing.wav");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.message(), "nothing.wav: empty file");
}

TEST(LoadSound, ReadsFilesAndNamesThemInErrors) {
  const std::vector<float> src = test::sine(1000, 2, 44100);
  const std::string path =
      test::write_temp("load.wav", encode_wav(src, 2, 44100, WavFormat::Float32));
  auto s = load_sound(path);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(s.value().name(), path);
  EXPECT_TRUE(std::equal(src.begin(), src.end(), s.value().samples().begin()));
  EXPECT_EQ(s.value().bytes(), src.size() * sizeof(float));
  std::remove(path.c_str());

  auto missing = load_sound("/nonexistent/boom.wav");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(contains(missing.message(), "/nonexistent/boom.wav: cannot open: "))
      << missing.message();
}

// Fraction of the signal's energy explained by `reference` (normalised correlation).
double correlation(std::span<const float> x, std::uint32_t channels, std::uint32_t channel,
                   const std::vector<double>& reference) {
  double xy = 0, xx = 0, yy = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    const double v = x[i * channels + channel];
    xy += v * reference[i];
    xx += v * v;
    yy += reference[i] * reference[i];
  }
  return xy / std::sqrt(xx * yy);
}

std::vector<double> reference_sine(double hz, std::uint32_t rate, std::uint64_t frames) {
  std::vector<double> r;
  for (std::uint64_t i = 0; i < frames; ++i)
    r.push_back(0.5 * std::sin(2.0 * std::numbers::pi * hz * static_cast<double>(i) / rate));
  return r;
}

TEST(Ogg, MonoDecodesToItsSine) {
  auto s = load_sound(test::data_path("sine440_mono.ogg"));
  ASSERT_TRUE(s) << s.message();
  const Sound& snd = s.value();
  EXPECT_EQ(snd.channels(), 1u);
  EXPECT_EQ(snd.sample_rate(), 22050u);
  EXPECT_EQ(snd.frames(), 5512u);  // int(0.25 * 22050), from the last page's granule
  // 440 Hz for 0.25 s crosses zero about 220 times; q0 Vorbis keeps the waveform itself.
  EXPECT_NEAR(test::zero_crossings(snd.samples(), 1, 0), 220, 4);
  EXPECT_GT(correlation(snd.samples(), 1, 0, reference_sine(440, 22050, snd.frames())), 0.99);
  float peak = 0;
  for (float x : snd.samples()) peak = std::max(peak, std::abs(x));
  EXPECT_NEAR(peak, 0.5f, 0.1f);
}

TEST(Ogg, StereoKeepsItsChannelsApart) {
  auto s = load_sound(test::data_path("sine440_660_stereo.ogg"));
  ASSERT_TRUE(s) << s.message();
  const Sound& snd = s.value();
  EXPECT_EQ(snd.channels(), 2u);
  EXPECT_EQ(snd.sample_rate(), 22050u);
  EXPECT_EQ(snd.frames(), 16537u);
  EXPECT_NEAR(test::zero_crossings(snd.samples(), 2, 0), 660, 6);  // 2 * 440 * 0.75
  EXPECT_NEAR(test::zero_crossings(snd.samples(), 2, 1), 990, 6);  // 2 * 660 * 0.75
  EXPECT_GT(correlation(snd.samples(), 2, 0, reference_sine(440, 22050, snd.frames())), 0.99);
  EXPECT_GT(correlation(snd.samples(), 2, 1, reference_sine(660, 22050, snd.frames())), 0.99);
  EXPECT_LT(std::abs(correlation(snd.samples(), 2, 0, reference_sine(660, 22050, snd.frames()))),
            0.05);
}

}  // namespace
}  // namespace spindle::audio
