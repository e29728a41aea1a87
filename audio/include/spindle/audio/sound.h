// audio::Sound: decoded PCM in memory (32-bit float, interleaved, mono or stereo, any rate), and
// the loaders that make one from WAV (PCM 8/16/24/32-bit and 32-bit float) or Ogg Vorbis bytes.
// StreamDecoder reads a long file a piece at a time instead (the mixer's streamed voices).
//
// Usage:
//
//   auto boom = spindle::audio::load_sound("data/boom.wav");   // Result<Sound>
//   if (!boom) log(boom.status().message());                  // "data/boom.wav: truncated 'data'
//                                                             //  chunk: ..." - nothing is kept
//   mixer.add_sound(std::move(boom).value());
//
//   auto music = spindle::audio::open_stream("music.ogg");    // Result<unique_ptr<StreamDecoder>>
//   float buf[2 * 4096];
//   std::uint32_t got = (*music)->read(buf, 4096);            // frames, 0 at the end
//
// Every loader validates before it keeps anything: truncated files, lying chunk sizes, absurd
// rates or lengths (over kMaxSoundFrames), zero or more than two channels, unknown formats and
// garbage bytes give a message naming the file (the `name` argument) and the problem. WAV is
// parsed here; Ogg Vorbis goes through stb_vorbis (Debian's libstb-dev, already the renderer's
// PNG dependency: no new package, and it can seek, which looping streams need).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spindle/base/result.h"

namespace spindle::audio {

inline constexpr std::uint32_t kMinSampleRate = 1000;
inline constexpr std::uint32_t kMaxSampleRate = 384000;
// About 45 minutes of 48 kHz: a header asking for more is refused before anything is allocated.
inline constexpr std::uint64_t kMaxSoundFrames = std::uint64_t{1} << 27;

class Sound {
 public:
  Sound() = default;
  // Checks channels (1 or 2), rate (kMinSampleRate..kMaxSampleRate), that samples holds whole
  // frames (at most kMaxSoundFrames) and that every sample is finite.
  static core::Result<Sound> create(std::vector<float> interleaved, std::uint32_t channels,
                                    std::uint32_t sample_rate, std::string name);

  std::uint32_t channels() const { return channels_; }
  std::uint32_t sample_rate() const { return rate_; }
  std::uint64_t frames() const { return channels_ ? samples_.size() / channels_ : 0; }
  std::span<const float> samples() const { return samples_; }  // interleaved, -1..1 nominal
  const std::string& name() const { return name_; }
  std::size_t bytes() const { return samples_.size() * sizeof(float); }
  double seconds() const { return rate_ ? static_cast<double>(frames()) / rate_ : 0.0; }

 private:
  std::vector<float> samples_;
  std::uint32_t channels_ = 0;
  std::uint32_t rate_ = 0;
  std::string name_;
};

// Decoders of bytes already in memory; `name` is what messages call them.
core::Result<Sound> decode_wav(std::span<const std::uint8_t> bytes, std::string_view name);
core::Result<Sound> decode_ogg(std::span<const std::uint8_t> bytes, std::string_view name);
// By content (RIFF/WAVE or OggS), not by extension.
core::Result<Sound> decode_sound(std::span<const std::uint8_t> bytes, std::string_view name);
// A regular file of at most 1 GiB; a directory, FIFO or device is refused by what it is, before a
// byte is read (core::read_file_capped(); open_stream() and Mixer::add_stream() check the same).
core::Result<Sound> load_sound(const std::string& path);

// A long file decoded a piece at a time (WAV or Ogg, by content). Not thread-safe: one user at
// a time (the mixer decodes each stream from one job at a time).
class StreamDecoder {
 public:
  virtual ~StreamDecoder() = default;
  virtual std::uint32_t channels() const = 0;
  virtual std::uint32_t sample_rate() const = 0;
  virtual std::uint64_t frames() const = 0;  // length in frames
  // Decodes up to `frames` frames into `out` (interleaved, channels() per frame); returns how
  // many, 0 at the end. Damage part-way (a file that shrank, a corrupt packet) ends the stream:
  // the frames before it are returned, error() is set, and every later read() returns 0.
  virtual std::uint32_t read(float* out, std::uint32_t frames) = 0;
  // Moves to `frame` (< frames()); false (and error(), which ends the stream) when it cannot.
  virtual bool seek(std::uint64_t frame) = 0;
  virtual const std::string& error() const = 0;  // empty while all is well
  virtual const std::string& name() const = 0;
};
// Opens and validates the header (for Ogg, every page's structure and CRC and the first
// packets); the file stays open. A file already truncated is refused as load_sound refuses it.
core::Result<std::unique_ptr<StreamDecoder>> open_stream(const std::string& path);

// The 44-byte header of a canonical WAV file holding `frames` frames: 16-bit PCM or 32-bit float.
// Past 4 GiB the sizes saturate (RIFF size 0xFFFFFFFF), as streaming writers do.
enum class WavFormat : std::uint8_t { Pcm16, Float32 };
std::array<std::uint8_t, 44> wav_header(std::uint32_t channels, std::uint32_t sample_rate,
                                        std::uint64_t frames, WavFormat format);
// A whole WAV file in memory (tests, tools): header + samples converted to `format`.
std::vector<std::uint8_t> encode_wav(std::span<const float> interleaved, std::uint32_t channels,
                                     std::uint32_t sample_rate, WavFormat format);

}  // namespace spindle::audio
