// Helpers shared by the sound, fuzz and stream tests: hand-built WAV bytes (any field, any
// chunk order, lies included), the checked-in Ogg files, temp files and reference signals.
#pragma once

#include <spindle/audio/sound.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <numbers>
#include <string>
#include <vector>

#include <unistd.h>

namespace spindle::audio::test {

using Bytes = std::vector<std::uint8_t>;

inline void put16(Bytes& b, std::uint32_t v) {
  b.push_back(static_cast<std::uint8_t>(v));
  b.push_back(static_cast<std::uint8_t>(v >> 8));
}
inline void put24(Bytes& b, std::uint32_t v) {
  put16(b, v);
  b.push_back(static_cast<std::uint8_t>(v >> 16));
}
inline void put32(Bytes& b, std::uint32_t v) {
  put16(b, v);
  put16(b, v >> 16);
}
inline void set32(Bytes& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// The fields of a 'fmt ' chunk, each settable to a lie. block_align and byte_rate default to
// the consistent values.
struct Fmt {
  std::uint32_t tag = 1;
  std::uint32_t channels = 1;
  std::uint32_t rate = 8000;
  std::uint32_t bits = 16;
  std::int64_t block_align = -1;
  std::int64_t byte_rate = -1;
  bool extensible = false;  // tag becomes 0xFFFE and `tag` the sub-format GUID's first bytes
};

inline Bytes fmt_body(const Fmt& f) {
  const std::uint32_t align =
      f.block_align >= 0 ? static_cast<std::uint32_t>(f.block_align) : f.channels * f.bits / 8;
  const std::uint32_t byte_rate =
      f.byte_rate >= 0 ? static_cast<std::uint32_t>(f.byte_rate) : f.rate * align;
  Bytes b;
  put16(b, f.extensible ? 0xFFFE : f.tag);
  put16(b, f.channels);
  put32(b, f.rate);
  put32(b, byte_rate);
  put16(b, align);
  put16(b, f.bits);
  if (f.extensible) {
    put16(b, 22);                       // cbSize
    put16(b, f.bits);                   // valid bits
    put32(b, f.channels == 2 ? 3 : 4);  // channel mask: FL|FR or FC
    put16(b, f.tag);
    const std::uint8_t tail[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80,
                                   0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};
    b.insert(b.end(), std::begin(tail), std::end(tail));
  }
  return b;
}

// One chunk: id, size (the body's unless `size` lies), body, pad byte when odd.
inline Bytes chunk(const char* id, const Bytes& body, std::int64_t size = -1) {
  Bytes b(id, id + 4);
  put32(b, size >= 0 ? static_cast<std::uint32_t>(size) : static_cast<std::uint32_t>(body.size()));
  b.insert(b.end(), body.begin(), body.end());
  if (body.size() % 2) b.push_back(0);
  return b;
}

// "RIFF" size "WAVE" and the chunks in the order given.
inline Bytes riff(std::initializer_list<Bytes> chunks) {
  Bytes b = {'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'A', 'V', 'E'};
  for (const Bytes& c : chunks) b.insert(b.end(), c.begin(), c.end());
  set32(b, 4, static_cast<std::uint32_t>(b.size() - 8));
  return b;
}

inline Bytes wav(const Fmt& f, const Bytes& data) {
  return riff({chunk("fmt ", fmt_body(f)), chunk("data", data)});
}

// `frames` frames of a sine per channel (440 Hz left, 660 Hz right) at amplitude 0.5, on the
// 1/32768 grid so a 16-bit round trip is exact.
inline std::vector<float> sine(std::uint32_t frames, std::uint32_t channels, std::uint32_t rate) {
  std::vector<float> s;
  for (std::uint32_t i = 0; i < frames; ++i)
    for (std::uint32_t c = 0; c < channels; ++c) {
      const double hz = c == 0 ? 440.0 : 660.0;
      const double x = 0.5 * std::sin(2.0 * std::numbers::pi * hz * i / rate);
      s.push_back(static_cast<float>(std::round(x * 32768.0) / 32768.0));
    }
  return s;
}

inline std::string data_path(const std::string& file) {
  return std::string(SPINDLE_AUDIO_DATA_DIR) + "/" + file;
}

inline Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) /
          ("spindle_audio_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

inline std::string write_temp(const std::string& name, const Bytes& bytes) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return path;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Ogg's CRC (polynomial 0x04C11DB7, not reflected), written independently of the decoder's.
inline std::uint32_t ogg_crc(const std::uint8_t* p, std::size_t n) {
  std::uint32_t crc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= std::uint32_t{p[i]} << 24;
    for (int b = 0; b < 8; ++b) crc = (crc & 0x80000000u) ? (crc << 1) ^ 0x04C11DB7u : crc << 1;
  }
  return crc;
}

// Byte offsets of the pages of a well-formed Ogg file (the segment tables are trusted).
inline std::vector<std::size_t> ogg_pages(const Bytes& b) {
  std::vector<std::size_t> pages;
  std::size_t pos = 0;
  while (pos + 27 <= b.size() && std::memcmp(&b[pos], "OggS", 4) == 0) {
    const std::size_t segs = b[pos + 26];
    if (pos + 27 + segs > b.size()) break;
    std::size_t body = 0;
    for (std::size_t i = 0; i < segs; ++i) body += b[pos + 27 + i];
    pages.push_back(pos);
    pos += 27 + segs + body;
  }
  return pages;
}

// Recomputes the CRC of every page that parses, so edits reach stb_vorbis instead of being
// stopped by the page check. Returns false when the page structure itself is broken.
inline bool fix_ogg_crcs(Bytes& b) {
  std::size_t pos = 0;
  while (pos < b.size()) {
    if (pos + 27 > b.size() || std::memcmp(&b[pos], "OggS", 4) != 0) return false;
    const std::size_t segs = b[pos + 26];
    if (pos + 27 + segs > b.size()) return false;
    std::size_t body = 0;
    for (std::size_t i = 0; i < segs; ++i) body += b[pos + 27 + i];
    const std::size_t len = 27 + segs + body;
    if (pos + len > b.size()) return false;
    set32(b, pos + 22, 0);
    set32(b, pos + 22, ogg_crc(&b[pos], len));
    pos += len;
  }
  return true;
}

// Zero crossings (sign changes) of one channel: a sine of f Hz over s seconds has about 2*f*s.
inline int zero_crossings(std::span<const float> interleaved, std::uint32_t channels,
                          std::uint32_t channel) {
  int n = 0;
  for (std::size_t i = channel + channels; i < interleaved.size(); i += channels)
    if ((interleaved[i - channels] < 0) != (interleaved[i] < 0)) ++n;
  return n;
}

}  // namespace spindle::audio::test
