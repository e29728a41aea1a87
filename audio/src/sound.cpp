// Sound's validation, the content sniffing loader, and the canonical WAV writer.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "spindle/audio/sound.h"
#include "spindle/base/assert.h"
#include "spindle/base/file.h"

namespace spindle::audio {
namespace {

// A sound file larger than this is refused before it is read: 1 GiB is already far more than
// kMaxSoundFrames of 16-bit stereo, and it keeps a wrong path (a disk image) from filling memory.
constexpr long long kMaxSoundFileBytes = 1ll << 30;

void put16(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}
void put32(std::uint8_t* p, std::uint32_t v) {
  put16(p, v);
  put16(p + 2, v >> 16);
}

}  // namespace

core::Result<Sound> Sound::create(std::vector<float> interleaved, std::uint32_t channels,
                                  std::uint32_t sample_rate, std::string name) {
  using core::Status;
  if (channels != 1 && channels != 2)
    return Status::error(name + ": " + std::to_string(channels) +
                         " channels: only mono and stereo are supported");
  if (sample_rate < kMinSampleRate || sample_rate > kMaxSampleRate)
    return Status::error(name + ": sample rate " + std::to_string(sample_rate) + " Hz is outside " +
                         std::to_string(kMinSampleRate) + ".." + std::to_string(kMaxSampleRate));
  if (interleaved.size() % channels != 0)
    return Status::error(name + ": " + std::to_string(interleaved.size()) +
                         " samples are not whole frames of " + std::to_string(channels) +
                         " channels");
  if (interleaved.size() / channels > kMaxSoundFrames)
    return Status::error(name + ": " + std::to_string(interleaved.size() / channels) +
                         " frames, more than the " + std::to_string(kMaxSoundFrames) +
                         " a sound may have");
  const auto bad = std::find_if(interleaved.begin(), interleaved.end(),
                                [](float x) { return !std::isfinite(x); });
  if (bad != interleaved.end()) {
    const auto i = static_cast<std::size_t>(bad - interleaved.begin());
    return Status::error(name + ": sample " + std::to_string(i) + " (frame " +
                         std::to_string(i / channels) + ", channel " +
                         std::to_string(i % channels) + ") is not finite");
  }
  Sound s;
  s.samples_ = std::move(interleaved);
  s.channels_ = channels;
  s.rate_ = sample_rate;
  s.name_ = std::move(name);
  return s;
}

core::Result<Sound> decode_sound(std::span<const std::uint8_t> bytes, std::string_view name) {
  if (bytes.size() >= 12 && std::memcmp(bytes.data(), "RIFF", 4) == 0 &&
      std::memcmp(bytes.data() + 8, "WAVE", 4) == 0)
    return decode_wav(bytes, name);
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), "OggS", 4) == 0)
    return decode_ogg(bytes, name);
  if (bytes.empty()) return core::Status::error(std::string(name) + ": empty file");
  return core::Status::error(std::string(name) +
                             ": neither a WAV (RIFF/WAVE) nor an Ogg (OggS) file");
}

core::Result<Sound> load_sound(const std::string& path) {
  // A regular file of at most 1 GiB, or an error that says what it is instead.
  core::Result<std::string> bytes =
      core::read_file_capped(path, static_cast<std::size_t>(kMaxSoundFileBytes), "a sound file");
  if (!bytes) return bytes.status();
  const std::string& b = bytes.value();
  return decode_sound(std::span(reinterpret_cast<const std::uint8_t*>(b.data()), b.size()), path);
}

std::array<std::uint8_t, 44> wav_header(std::uint32_t channels, std::uint32_t sample_rate,
                                        std::uint64_t frames, WavFormat format) {
  const std::uint32_t bytes_per_sample = format == WavFormat::Pcm16 ? 2 : 4;
  const std::uint32_t block_align = channels * bytes_per_sample;
  // RIFF sizes are 32-bit: a longer sound saturates them, as streaming writers do.
  const std::uint64_t data_bytes =
      std::min<std::uint64_t>(frames * block_align, std::numeric_limits<std::uint32_t>::max() - 36);
  std::array<std::uint8_t, 44> h{};
  std::memcpy(h.data(), "RIFF", 4);
  put32(h.data() + 4, static_cast<std::uint32_t>(36 + data_bytes));
  std::memcpy(h.data() + 8, "WAVEfmt ", 8);
  put32(h.data() + 16, 16);
  put16(h.data() + 20, format == WavFormat::Pcm16 ? 1 : 3);
  put16(h.data() + 22, channels);
  put32(h.data() + 24, sample_rate);
  put32(h.data() + 28, sample_rate * block_align);
  put16(h.data() + 32, block_align);
  put16(h.data() + 34, bytes_per_sample * 8);
  std::memcpy(h.data() + 36, "data", 4);
  put32(h.data() + 40, static_cast<std::uint32_t>(data_bytes));
  return h;
}

std::vector<std::uint8_t> encode_wav(std::span<const float> interleaved, std::uint32_t channels,
                                     std::uint32_t sample_rate, WavFormat format) {
  SPINDLE_ASSERT(channels == 1 || channels == 2, "encode_wav writes mono or stereo");
  SPINDLE_ASSERT(interleaved.size() % channels == 0, "encode_wav needs whole frames");
  const std::uint64_t frames = interleaved.size() / channels;
  const std::array<std::uint8_t, 44> header = wav_header(channels, sample_rate, frames, format);
  std::vector<std::uint8_t> out(header.begin(), header.end());
  const std::size_t bytes_per_sample = format == WavFormat::Pcm16 ? 2 : 4;
  out.resize(header.size() + interleaved.size() * bytes_per_sample);
  std::uint8_t* p = out.data() + header.size();
  for (const float x : interleaved) {
    if (format == WavFormat::Pcm16) {
      // The decoder divides by 32768, so scaling by 32768 makes the round trip exact; +1.0
      // clamps to 32767 and NaN writes silence.
      const float scaled = std::isnan(x) ? 0.0f : std::clamp(x * 32768.0f, -32768.0f, 32767.0f);
      put16(p, static_cast<std::uint16_t>(static_cast<std::int16_t>(std::lrint(scaled))));
      p += 2;
    } else {
      std::uint32_t u;
      std::memcpy(&u, &x, sizeof u);
      put32(p, u);
      p += 4;
    }
  }
  return out;
}

}  // namespace spindle::audio
