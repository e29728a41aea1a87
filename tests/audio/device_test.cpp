// Output devices: the null device, the WAV writer (its file parsed back byte by byte here, not
// with the loader under test elsewhere), and SDL devices on the `disk` driver (raw samples in a
// file we read back) and the `dummy` driver (headless). The SDL tests also run under TSan.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "spindle/audio/audio_plugin.h"
#include "spindle/audio/device.h"
#include "spindle/audio/ring.h"
#include "spindle/base/log.h"
#include "spindle/engine/engine.h"

namespace {

using namespace spindle::audio;
using Clock = std::chrono::steady_clock;

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

// Polls `done` until it holds or `seconds` pass; the outcome is decided by `done`, not the time.
template <class F>
bool wait_until(F done, double seconds = 20.0) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
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

// ---------------------------------------------------------------------------------------------
// SDL devices

// The disk driver writes the device's raw samples (here float32, native order, no header) to
// SDL_DISKAUDIOFILE, sleeping SDL_DISKAUDIODELAY ms per period. 1 ms per 256-frame period runs
// about five times faster than real time without turning SDL's thread into a busy loop.
DeviceConfig disk_config(const std::string& file) {
  setenv("SDL_DISKAUDIOFILE", file.c_str(), 1);
  setenv("SDL_DISKAUDIODELAY", "1", 1);
  return {.sample_rate = 48000, .channels = 2, .period_frames = 256, .driver = "disk"};
}

std::vector<float> read_floats(const std::string& path) {
  const std::vector<std::uint8_t> bytes = read_bytes(path);
  std::vector<float> samples(bytes.size() / sizeof(float));
  if (!samples.empty())  // an empty file: no memcpy from a null pointer
    std::memcpy(samples.data(), bytes.data(), samples.size() * sizeof(float));
  return samples;
}

// Writes frames [from, to) of the stereo test signal (left = signal, right = -signal) as fast
// as the ring takes them; returns the next frame to write.
std::uint32_t feed(AudioRing& ring, std::uint32_t from, std::uint32_t to) {
  float chunk[2 * 256];
  while (from < to) {
    const std::uint32_t n = std::min(256u, to - from);
    for (std::uint32_t i = 0; i < n; ++i) {
      chunk[2 * i] = signal_at(from + i);
      chunk[2 * i + 1] = -signal_at(from + i);
    }
    const std::uint32_t wrote = ring.write(chunk, n);
    from += wrote;
    if (wrote < n) break;
  }
  return from;
}

struct DiskFile {
  std::uint64_t frames = 0;
  std::uint64_t leading_silence = 0;
  std::uint64_t silence_inside = 0;  // zero frames between the first and last signal frame
  std::uint64_t trailing_silence = 0;
  std::vector<float> signal;  // the nonzero frames, left channel
  bool right_is_minus_left = true;
};

DiskFile analyse(const std::vector<float>& samples) {
  DiskFile f;
  f.frames = samples.size() / 2;
  std::uint64_t zeros_run = 0;
  for (std::uint64_t i = 0; i < f.frames; ++i) {
    const float l = samples[2 * i], r = samples[2 * i + 1];
    if (l == 0.0f && r == 0.0f) {
      ++zeros_run;
      continue;
    }
    if (f.signal.empty())
      f.leading_silence = zeros_run;
    else
      f.silence_inside += zeros_run;
    zeros_run = 0;
    f.signal.push_back(l);
    if (r != -l) f.right_is_minus_left = false;
  }
  if (f.signal.empty())
    f.leading_silence = zeros_run;
  else
    f.trailing_silence = zeros_run;
  return f;
}

// The disk driver's file holds the fed signal, every frame once and in order, after any start-up
// silence. If the producer (this thread, polling) falls behind, the device plays silence in
// between: tolerated, but it must then have counted those frames as underrun silence.
TEST(SdlDevice, DiskDriverWritesTheFedSignalInOrder) {
  const std::string path = temp_path("disk.raw");
  constexpr std::uint32_t kFrames = 48000;
  AudioRing ring(4096, 2);
  auto opened = open_sdl_device(ring, disk_config(path));
  ASSERT_TRUE(opened) << opened.message();
  OutputDevice& device = *opened.value();
  EXPECT_STREQ(device.name(), "sdl:disk");
  EXPECT_TRUE(device.realtime());

  std::uint32_t fed = 0;
  ASSERT_TRUE(wait_until([&] {
    fed = feed(ring, fed, kFrames);
    return fed == kFrames;
  }));
  ASSERT_TRUE(wait_until([&] { return ring.readable() == 0; }));
  const DeviceStats during = device.stats();
  ASSERT_TRUE(device.close().ok());
  const DeviceStats after = device.stats();

  const DiskFile file = analyse(read_floats(path));
  EXPECT_GE(file.frames, after.frames_played);  // pausing before close may add silence
  ASSERT_EQ(file.signal.size(), kFrames);
  for (std::uint32_t i = 0; i < kFrames; ++i) ASSERT_EQ(file.signal[i], signal_at(i)) << i;
  EXPECT_TRUE(file.right_is_minus_left);
  EXPECT_LE(file.silence_inside, during.silent_frames);
  if (file.silence_inside > 0) {
    EXPECT_GT(during.underruns, 0u);
  }
  std::remove(path.c_str());
}

// Start-up silence is not an underrun; running dry after the producer started is, and the
// device plays (and counts) silence for it.
TEST(SdlDevice, UnderrunPlaysSilenceAndCountsOnlyAfterStartUp) {
  const std::string path = temp_path("underrun.raw");
  AudioRing ring(4096, 2);
  auto opened = open_sdl_device(ring, disk_config(path));
  ASSERT_TRUE(opened) << opened.message();
  OutputDevice& device = *opened.value();

  ASSERT_TRUE(wait_until([&] { return device.stats().frames_played >= 4 * 256; }));
  EXPECT_EQ(device.stats().underruns, 0u);
  EXPECT_EQ(device.stats().silent_frames, 0u);

  constexpr std::uint32_t kFrames = 3000;
  ASSERT_EQ(feed(ring, 0, kFrames), kFrames);
  ASSERT_TRUE(wait_until([&] { return device.stats().underruns > 0; }));
  ASSERT_TRUE(device.close().ok());
  const DeviceStats stats = device.stats();
  EXPECT_GT(stats.silent_frames, 0u);

  const DiskFile file = analyse(read_floats(path));
  ASSERT_EQ(file.signal.size(), kFrames);
  for (std::uint32_t i = 0; i < kFrames; ++i) ASSERT_EQ(file.signal[i], signal_at(i)) << i;
  EXPECT_EQ(file.silence_inside, 0u);  // all fed at once, before the device could run dry
  EXPECT_GE(file.trailing_silence, stats.silent_frames);
  EXPECT_GE(file.leading_silence, 4u * 256u);
  std::remove(path.c_str());
}

// `dummy` needs no sound card and no file: the headless choice. It has only one default device,
// so SDL refuses a second one on it.
TEST(SdlDevice, DummyDriverOpensHeadless) {
  const DeviceConfig config{
      .sample_rate = 48000, .channels = 2, .period_frames = 256, .driver = "dummy"};
  AudioRing ring(2048, 2);
  auto opened = open_sdl_device(ring, config);
  ASSERT_TRUE(opened) << opened.message();
  EXPECT_STREQ(opened.value()->name(), "sdl:dummy");
  ASSERT_TRUE(wait_until([&] { return opened.value()->stats().frames_played >= 512; }));
  EXPECT_EQ(opened.value()->stats().underruns, 0u);  // nothing ever written: start-up

  AudioRing second_ring(2048, 2);
  auto second = open_sdl_device(second_ring, config);
  EXPECT_FALSE(second);
  EXPECT_TRUE(opened.value()->close().ok());
}

// Two devices share SDL's reference-counted audio subsystem: closing one leaves the other
// playing. (The disk driver reads SDL_DISKAUDIOFILE at each open, so each gets its own file.) A
// second driver in the same process is refused with a message naming both.
TEST(SdlDevice, TwoDevicesShareTheSubsystem) {
  const std::string path_a = temp_path("a.raw");
  const std::string path_b = temp_path("b.raw");
  AudioRing ring_a(4096, 2);
  AudioRing ring_b(4096, 2);
  auto a = open_sdl_device(ring_a, disk_config(path_a));
  ASSERT_TRUE(a) << a.message();
  auto b = open_sdl_device(ring_b, disk_config(path_b));
  ASSERT_TRUE(b) << b.message();

  AudioRing ring_c(2048, 2);
  auto c = open_sdl_device(ring_c, {.driver = "dummy"});
  ASSERT_FALSE(c);
  EXPECT_NE(c.message().find("dummy"), std::string::npos) << c.message();
  EXPECT_NE(c.message().find("disk"), std::string::npos) << c.message();

  ASSERT_EQ(feed(ring_a, 0, 1000), 1000u);
  ASSERT_TRUE(wait_until([&] { return ring_a.readable() == 0; }));
  EXPECT_TRUE(a.value()->close().ok());

  ASSERT_EQ(feed(ring_b, 0, 2000), 2000u);
  ASSERT_TRUE(wait_until([&] { return ring_b.readable() == 0; }));
  EXPECT_TRUE(b.value()->close().ok());

  EXPECT_EQ(analyse(read_floats(path_a)).signal.size(), 1000u);
  EXPECT_EQ(analyse(read_floats(path_b)).signal.size(), 2000u);
  std::remove(path_a.c_str());
  std::remove(path_b.c_str());
}

TEST(SdlDevice, UnknownDriverAndMismatchedRingAreErrors) {
  AudioRing ring(1024, 2);
  auto bad_driver = open_sdl_device(ring, {.driver = "no-such-driver"});
  ASSERT_FALSE(bad_driver);
  EXPECT_NE(bad_driver.message().find("no-such-driver"), std::string::npos) << bad_driver.message();

  auto bad_channels = open_sdl_device(ring, {.channels = 1, .driver = "dummy"});
  ASSERT_FALSE(bad_channels);
  EXPECT_NE(bad_channels.message().find("channels"), std::string::npos) << bad_channels.message();
}

// Faults: the device a game plays to goes away mid-stream. The disk driver writes into a FIFO
// whose reader leaves after a second of sound, so the driver's next write fails and SDL marks the
// device lost, as it does for an unplugged card. The plugin reports it, opens the device again
// (or, when that fails, plays to the null device), and the game's frames never wait on it.
struct LostDeviceRig {
  std::string fifo = temp_path("device.fifo");
  std::atomic<std::uint64_t> heard{0};  // bytes the FIFO's reader got
  std::atomic<bool> leave{false};
  std::thread listener;
  std::unique_ptr<spindle::core::Engine> engine;
  AudioPlugin* plugin = nullptr;
  std::vector<std::string> errors;
  int sink = -1;

  LostDeviceRig() {
    std::signal(SIGPIPE, SIG_IGN);  // the driver then writes into a FIFO nobody reads
    std::remove(fifo.c_str());
    EXPECT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    listener = std::thread([this] {
      const int fd = ::open(fifo.c_str(), O_RDONLY);  // until SDL opens it for writing
      char buf[4096];
      while (fd >= 0 && !leave.load()) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;
        heard += static_cast<std::uint64_t>(n);
      }
      if (fd >= 0) ::close(fd);
    });
    sink = spindle::core::logger().add_sink(
        [](void* user, const spindle::core::LogRecord& r) {
          if (r.level == spindle::core::LogLevel::Error)
            static_cast<LostDeviceRig*>(user)->errors.emplace_back(r.message);
        },
        this);
    engine = std::make_unique<spindle::core::Engine>(spindle::core::EngineConfig{
        .mode = spindle::jobs::Mode::Single, .workers = 1, .pin_workers = false});
    AudioPluginConfig config;
    config.output = Output::Sdl;
    config.device = disk_config(fifo);
    plugin = &engine->add_plugin<AudioPlugin>(config);
    std::vector<float> tone(48000);
    for (std::size_t i = 0; i < tone.size(); ++i)
      tone[i] = 0.5f * std::sin(2.0f * 3.14159265f * 440.0f * static_cast<float>(i) / 48000.0f);
    const SoundId id =
        plugin->mixer().add_sound(Sound::create(std::move(tone), 1, 48000, "tone").value()).value();
    plugin->mixer().play(id, {.loop = true});
  }
  ~LostDeviceRig() {
    leave = true;
    // A listener still blocked in open() (SDL never opened the FIFO) is let go by a writer that
    // comes and goes; one in read() by the engine closing its device. A failure never hangs here.
    if (const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK); fd >= 0) ::close(fd);
    engine.reset();
    if (listener.joinable()) listener.join();
    spindle::core::logger().remove_sink(sink);
    std::remove(fifo.c_str());
  }
  // Steps the game (a frame a millisecond) until `done` or 20 s: a hang fails, never stalls.
  template <class F>
  bool step_until(F done) {
    return wait_until([&] {
      engine->step();
      return done();
    });
  }
  // Plays a second of sound into the FIFO, then the reader leaves.
  void lose_the_device() {
    ASSERT_TRUE(step_until([&] { return heard.load() >= 48000u * 2 * sizeof(float); }))
        << "the device never played";
    EXPECT_EQ(plugin->stats().device_losses, 0u);
    leave = true;
    listener.join();
  }
};

TEST(SdlDevice, ADeviceLostMidStreamIsReportedAndOpenedAgain) {
  LostDeviceRig rig;
  const std::string after = temp_path("after.raw");
  std::remove(after.c_str());
  rig.lose_the_device();
  setenv("SDL_DISKAUDIOFILE", after.c_str(), 1);  // where the device opens again
  ASSERT_TRUE(rig.step_until([&] { return rig.plugin->stats().device_losses == 1; }))
      << "the lost device was never noticed";
  EXPECT_EQ(rig.plugin->stats().device_reopens, 1u);
  ASSERT_NE(rig.plugin->device(), nullptr);
  EXPECT_TRUE(rig.plugin->device()->realtime());
  EXPECT_FALSE(rig.plugin->device()->lost());
  // The reopened device plays the mix on.
  EXPECT_TRUE(rig.step_until([&] { return read_floats(after).size() >= 48000u; }));
  ASSERT_EQ(rig.errors.size(), 1u);
  EXPECT_NE(rig.errors[0].find("was lost (unplugged, or its driver failed); opened sdl:disk again"),
            std::string::npos)
      << rig.errors[0];
  EXPECT_EQ(rig.plugin->stats().device_losses, 1u);
  std::remove(after.c_str());
}

TEST(SdlDevice, ALostDeviceThatCannotBeOpenedAgainLeavesTheGameOnTheNullDevice) {
  LostDeviceRig rig;
  rig.lose_the_device();
  setenv("SDL_DISKAUDIOFILE", "/nonexistent/folder/audio.raw", 1);  // opening it fails
  ASSERT_TRUE(rig.step_until([&] { return rig.plugin->stats().device_losses == 1; }));
  EXPECT_EQ(rig.plugin->stats().device_reopens, 0u);
  ASSERT_NE(rig.plugin->device(), nullptr);
  EXPECT_FALSE(rig.plugin->device()->realtime()) << rig.plugin->device()->name();
  // Mixing goes on by game time: a step mixes its 1/60 s.
  const std::uint64_t mixed = rig.plugin->stats().frames_mixed;
  for (int i = 0; i < 60; ++i) rig.engine->step();
  EXPECT_EQ(rig.plugin->stats().frames_mixed - mixed, 48000u);
  ASSERT_EQ(rig.errors.size(), 2u);
  EXPECT_NE(rig.errors[0].find("opening it again failed"), std::string::npos) << rig.errors[0];
  EXPECT_NE(rig.errors[1].find("playing to the null device from now on"), std::string::npos)
      << rig.errors[1];
}

}  // namespace
