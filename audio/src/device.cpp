// The synchronous devices: the null device and the WAV-file writer. Both drain the ring when the
// producer pumps them, through stack buffers, so pumping never allocates.
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "device_detail.h"
#include "spindle/audio/device.h"
#include "spindle/audio/sound.h"
#include "spindle/base/assert.h"
#include "spindle/base/log.h"

namespace spindle::audio {

namespace detail {

core::Status check_config(const DeviceConfig& config, const std::string& what) {
  if (config.channels == 0 || config.channels > kMaxDeviceChannels)
    return core::Status::error(what + ": " + std::to_string(config.channels) + " channels (1 to " +
                               std::to_string(kMaxDeviceChannels) + ")");
  if (config.sample_rate == 0) return core::Status::error(what + ": sample rate 0");
  return {};
}

}  // namespace detail

namespace {

// Frames per pass through the stack buffer.
std::uint32_t chunk_frames(std::uint32_t channels) {
  return detail::kChunkFloats / channels;
}

class NullDevice final : public OutputDevice {
 public:
  explicit NullDevice(const DeviceConfig& config) : config_(config) {}
  const char* name() const override { return "null"; }
  bool realtime() const override { return false; }
  void pump(AudioRing& ring) override {
    SPINDLE_ASSERT(ring.channels() == config_.channels, "ring and device channels differ");
    float buffer[detail::kChunkFloats];
    while (std::uint32_t n = ring.read(buffer, chunk_frames(config_.channels)))
      counters_.add_played(n);
  }
  DeviceStats stats() const override { return counters_.snapshot(); }
  const DeviceConfig& config() const override { return config_; }

 private:
  DeviceConfig config_;
  detail::DeviceCounters counters_;
};

std::size_t sample_bytes(WavFormat format) {
  return format == WavFormat::Pcm16 ? 2 : 4;
}

// WAV is little-endian whatever the host is.
std::size_t encode_samples(const float* in, std::size_t count, WavFormat format,
                           std::uint8_t* out) {
  std::uint8_t* o = out;
  for (std::size_t i = 0; i < count; ++i) {
    float x = in[i];
    if (format == WavFormat::Pcm16) {
      if (std::isnan(x)) x = 0.0f;
      x = x > 1.0f ? 1.0f : (x < -1.0f ? -1.0f : x);
      const auto v =
          static_cast<std::uint16_t>(static_cast<std::int16_t>(std::lrint(x * 32767.0f)));
      *o++ = static_cast<std::uint8_t>(v);
      *o++ = static_cast<std::uint8_t>(v >> 8);
    } else {
      const auto v = std::bit_cast<std::uint32_t>(x);
      for (int b = 0; b < 4; ++b) *o++ = static_cast<std::uint8_t>(v >> (8 * b));
    }
  }
  return static_cast<std::size_t>(o - out);
}

class WavWriter final : public OutputDevice {
 public:
  WavWriter(std::FILE* file, std::string path, const DeviceConfig& config, WavFormat format)
      : file_(file), path_(std::move(path)), config_(config), format_(format) {
    // The RIFF and data sizes are 32-bit; stop before they would wrap.
    const std::uint64_t frame_bytes = config.channels * sample_bytes(format);
    max_frames_ = (std::numeric_limits<std::uint32_t>::max() - 36) / frame_bytes;
  }
  // Nobody is left to receive close()'s error here, so it is logged, unless pump() already did.
  ~WavWriter() override {
    if (file_ == nullptr) return;
    if (core::Status s = close(); !s && !error_logged_) SPINDLE_LOG_ERROR(Audio, "%s", s.c_str());
  }

  const char* name() const override { return "wav"; }
  bool realtime() const override { return false; }

  void pump(AudioRing& ring) override {
    SPINDLE_ASSERT(ring.channels() == config_.channels, "ring and device channels differ");
    float samples[detail::kChunkFloats];
    std::uint8_t bytes[detail::kChunkFloats * 4];
    // After an error (or close) the ring is still drained so the producer never stalls.
    while (std::uint32_t n = ring.read(samples, chunk_frames(config_.channels))) {
      counters_.add_played(n);
      if (file_ == nullptr || !error_.ok()) continue;
      if (frames_written_ + n > max_frames_) {
        fail_once(path_ + ": reached the 4 GiB WAV size limit; later samples are dropped");
        continue;
      }
      const std::size_t size =
          encode_samples(samples, std::size_t{n} * config_.channels, format_, bytes);
      if (std::fwrite(bytes, 1, size, file_) != size) {
        fail_once(path_ + ": write failed (" + std::strerror(errno) + ")");
        continue;
      }
      frames_written_ += n;
    }
  }

  core::Status close() override {
    if (file_ == nullptr) return error_;
    // Best effort even after a write error: the header then covers what did reach the file.
    const std::array<std::uint8_t, 44> header =
        wav_header(config_.channels, config_.sample_rate, frames_written_, format_);
    if (std::fflush(file_) != 0 || std::fseek(file_, 0, SEEK_SET) != 0 ||
        std::fwrite(header.data(), 1, header.size(), file_) != header.size())
      record(path_ + ": finishing the WAV header failed (" + std::strerror(errno) + ")");
    if (std::fclose(file_) != 0) record(path_ + ": close failed (" + std::strerror(errno) + ")");
    file_ = nullptr;
    return error_;
  }

  DeviceStats stats() const override { return counters_.snapshot(); }
  const DeviceConfig& config() const override { return config_; }

 private:
  // Keeps the first error only: one failing disk must not log once per pumped frame.
  void record(std::string message) {
    if (error_.ok()) error_ = core::Status::error(std::move(message));
  }
  // pump() cannot return the error, so it is logged here, once; close() returns it too.
  void fail_once(std::string message) {
    record(std::move(message));
    SPINDLE_LOG_ERROR(Audio, "%s", error_.c_str());
    error_logged_ = true;
  }

  std::FILE* file_;
  std::string path_;
  DeviceConfig config_;
  WavFormat format_;
  std::uint64_t frames_written_ = 0;
  std::uint64_t max_frames_ = 0;
  core::Status error_;
  bool error_logged_ = false;
  detail::DeviceCounters counters_;
};

}  // namespace

core::Result<std::unique_ptr<OutputDevice>> open_wav_writer(const std::string& path,
                                                            const DeviceConfig& config,
                                                            bool float_samples) {
  if (core::Status s = detail::check_config(config, "WAV writer '" + path + "'"); !s) return s;
  const WavFormat format = float_samples ? WavFormat::Float32 : WavFormat::Pcm16;
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr)
    return core::Status::error(path + ": cannot open for writing (" + std::strerror(errno) + ")");
  // A placeholder header, so even a run that never closes leaves a recognisable file.
  const std::array<std::uint8_t, 44> header =
      wav_header(config.channels, config.sample_rate, 0, format);
  if (std::fwrite(header.data(), 1, header.size(), file) != header.size()) {
    core::Status s = core::Status::error(path + ": write failed (" + std::strerror(errno) + ")");
    std::fclose(file);
    return s;
  }
  return std::unique_ptr<OutputDevice>(std::make_unique<WavWriter>(file, path, config, format));
}

std::unique_ptr<OutputDevice> make_null_device(const DeviceConfig& config) {
  SPINDLE_ASSERT(detail::check_config(config, "null device").ok(), "bad null device config");
  return std::make_unique<NullDevice>(config);
}

}  // namespace spindle::audio
