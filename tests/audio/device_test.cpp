// Output devices: the null device and the WAV writer (its file parsed back byte by byte here, not
// with the loader under test elsewhere).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spindle/audio/device.h"
#include "spindle/audio/ring.h"
#include "spindle/base/log.h"

namespace {

using namespace spindle::audio;

std::string temp_path(const std::string& name) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "spindle_" + info->name() + "_" + name;
}

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

std::uint32_t le32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (std::uint32_t{b[at + 3]} << 24);
}
std::uint16_t le16(const std::vector<std::uint8_t>& b, std::size_t at) {
  return static_cast<std::uint16_t>(b[at] | (b[at + 1] << 8));
}
std::string tag(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::string(reinterpret_cast<const char*>(b.data() + at), 4);
}

// Frame i of the test signal: nonzero (so it differs from silence) and exact in float.
float signal_at(std::uint32_t i) {
  return static_cast<float>(i + 1) / 65536.0f;
}

// ---------------------------------------------------------------------------------------------
// Null device

TEST(NullDevice, DrainsTheRingAndCountsFrames) {
  auto device = make_null_device();
  EXPECT_STREQ(device->name(), "null");
  EXPECT_FALSE(device->realtime());
  AudioRing ring(16384, 2);
  std::vector<float> block(2 * 10000, 0.25f);
  ASSERT_EQ(ring.write(block.data(), 10000), 10000u);
  device->pump(ring);
  EXPECT_EQ(ring.readable(), 0u);
  EXPECT_EQ(device->stats().frames_played, 10000u);
  EXPECT_EQ(device->stats().underruns, 0u);
  EXPECT_TRUE(device->close().ok());
}

// ---------------------------------------------------------------------------------------------
// WAV writer

struct ParsedWav {
  std::uint16_t format_tag = 0;
  std::uint16_t channels = 0;
  std::uint32_t rate = 0;
  std::uint16_t bits = 0;
  std::vector<std::uint8_t> data;
};

ParsedWav parse_wav(const std::vector<std::uint8_t>& b) {
  ParsedWav w;
  EXPECT_GE(b.size(), 44u);
  if (b.size() < 44) return w;
  EXPECT_EQ(tag(b, 0), "RIFF");
  EXPECT_EQ(le32(b, 4), b.size() - 8);
  EXPECT_EQ(tag(b, 8), "WAVE");
  EXPECT_EQ(tag(b, 12), "fmt ");
  EXPECT_EQ(le32(b, 16), 16u);
  w.format_tag = le16(b, 20);
  w.channels = le16(b, 22);
  w.rate = le32(b, 24);
  w.bits = le16(b, 34);
  EXPECT_EQ(le32(b, 28), w.rate * w.channels * w.bits / 8);  // byte rate
  EXPECT_EQ(le16(b, 32), w.channels * w.bits / 8);           // block align
  EXPECT_EQ(tag(b, 36), "data");
  EXPECT_EQ(le32(b, 40), b.size() - 44);
  w.data.assign(b.begin() + 44, b.end());
  return w;
}

// Pumps `samples` through a small ring in uneven pieces, so the writer sees many pumps and the
// ring wraps.
void pump_through(OutputDevice& device, const std::vector<float>& samples, std::uint32_t channels) {
  AudioRing ring(1000, channels);
  const auto frames = static_cast<std::uint32_t>(samples.size() / channels);
  std::uint32_t done = 0;
  std::uint32_t step = 0;
  while (done < frames) {
    const std::uint32_t want = std::min(frames - done, 1 + (step++ * 131) % 700);
    done += ring.write(samples.data() + std::size_t{done} * channels, want);
    device.pump(ring);
  }
}

TEST(WavWriter, Pcm16FileMatchesWhatWasPumped) {
  const std::string path = temp_path("pcm16.wav");
  auto opened = open_wav_writer(path, {.sample_rate = 44100, .channels = 2});
  ASSERT_TRUE(opened) << opened.message();
  OutputDevice& device = *opened.value();
  EXPECT_STREQ(device.name(), "wav");
  EXPECT_FALSE(device.realtime());

  std::vector<float> samples;
  for (int i = 0; i < 5000; ++i) {
    samples.push_back(std::sin(static_cast<float>(i) * 0.01f));
    samples.push_back(static_cast<float>(i % 7 - 3) * 0.4f);  // reaches +-1.2: clipped
  }
  pump_through(device, samples, 2);
  EXPECT_EQ(device.stats().frames_played, 5000u);
  ASSERT_TRUE(device.close().ok());
  EXPECT_TRUE(device.close().ok());  // a second close is harmless

  const ParsedWav wav = parse_wav(read_bytes(path));
  EXPECT_EQ(wav.format_tag, 1);  // PCM
  EXPECT_EQ(wav.channels, 2);
  EXPECT_EQ(wav.rate, 44100u);
  EXPECT_EQ(wav.bits, 16);
  ASSERT_EQ(wav.data.size(), samples.size() * 2);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto got = static_cast<std::int16_t>(le16(wav.data, 2 * i));
    const float clipped = std::fmax(-1.0f, std::fmin(1.0f, samples[i]));
    ASSERT_NEAR(got, clipped * 32767.0f, 0.5f) << "sample " << i;
  }
  std::remove(path.c_str());
}

TEST(WavWriter, FloatFileHoldsTheExactSamples) {
  const std::string path = temp_path("float.wav");
  auto opened = open_wav_writer(path, {.sample_rate = 48000, .channels = 1}, true);
  ASSERT_TRUE(opened) << opened.message();
  std::vector<float> samples(3001);
  for (std::size_t i = 0; i < samples.size(); ++i) samples[i] = signal_at(i) - 0.02f;
  pump_through(*opened.value(), samples, 1);
  opened.value().reset();  // the destructor finishes the file as close() would

  const ParsedWav wav = parse_wav(read_bytes(path));
  EXPECT_EQ(wav.format_tag, 3);  // IEEE float
  EXPECT_EQ(wav.channels, 1);
  EXPECT_EQ(wav.rate, 48000u);
  EXPECT_EQ(wav.bits, 32);
  ASSERT_EQ(wav.data.size(), samples.size() * 4);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    float got;
    const std::uint32_t bits = le32(wav.data, 4 * i);
    std::memcpy(&got, &bits, 4);
    ASSERT_EQ(got, samples[i]) << "sample " << i;
  }
  std::remove(path.c_str());
}

TEST(WavWriter, UnwritablePathIsAnErrorNamingIt) {
  const std::string path = "/nonexistent-spindle-dir/out.wav";
  auto opened = open_wav_writer(path, {});
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.message().find(path), std::string::npos) << opened.message();
}

TEST(WavWriter, BadConfigIsAnError) {
  auto opened = open_wav_writer(temp_path("bad.wav"), {.channels = 0});
  ASSERT_FALSE(opened);
  EXPECT_NE(opened.message().find("channels"), std::string::npos) << opened.message();
}

void count_audio_errors(void* user, const spindle::core::LogRecord& record) {
  if (record.channel == spindle::core::LogChannel::Audio &&
      record.level == spindle::core::LogLevel::Error)
    ++*static_cast<int*>(user);
}

// /dev/full accepts the open and fails every write: many pumps must log one error, and close()
// must return it.
TEST(WavWriter, WriteErrorIsReportedOnceNotPerPump) {
  const std::string path = "/dev/full";
  auto opened = open_wav_writer(path, {});
  if (!opened) GTEST_SKIP() << "no /dev/full: " << opened.message();
  int errors = 0;
  spindle::core::Logger& log = spindle::core::logger();
  const int sink = log.add_sink(&count_audio_errors, &errors);
  ASSERT_GT(sink, 0);

  std::vector<float> samples(2 * 200000, 0.5f);
  pump_through(*opened.value(), samples, 2);
  const spindle::core::Status closed = opened.value()->close();
  opened.value().reset();
  log.remove_sink(sink);

  EXPECT_FALSE(closed.ok());
  EXPECT_NE(closed.message().find(path), std::string::npos) << closed.message();
  EXPECT_EQ(errors, 1);
}

}  // namespace
