// The RIFF/WAVE reader: chunks walked with bounds checks, formats validated before any sample is
// allocated, samples converted to float. decode_wav is the in-memory entry; the stream uses
// parse_wav and convert_wav_samples on pieces of the file.
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "spindle/audio/sound.h"
#include "wav_format.h"

namespace spindle::audio {
namespace detail {
namespace {

constexpr std::uint16_t kTagPcm = 1;
constexpr std::uint16_t kTagFloat = 3;
constexpr std::uint16_t kTagExtensible = 0xFFFE;
// WAVE_FORMAT_EXTENSIBLE's sub-format GUID is the old format tag in its first two bytes followed
// by this fixed tail (KSDATAFORMAT_SUBTYPE_*).
constexpr std::array<std::uint8_t, 14> kGuidTail = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80,
                                                    0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};

struct Fail {
  std::string_view name;
  core::Status operator()(const std::string& problem, std::uint64_t at) const {
    return core::Status::error(std::string(name) + ": " + problem + " (at byte " +
                               std::to_string(at) + ")");
  }
};

// A chunk id as text for messages, unprintable bytes as '?' so garbage stays readable.
std::string chunk_id(const std::uint8_t* p) {
  std::string id(reinterpret_cast<const char*>(p), 4);
  for (char& c : id)
    if (c < 0x20 || c > 0x7e) c = '?';
  return "'" + id + "'";
}

std::string hex16(std::uint32_t v) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string s = "0x";
  for (int shift = 12; shift >= 0; shift -= 4) s += kDigits[(v >> shift) & 0xF];
  return s;
}

// Reads the 'fmt ' body (size bytes at `at`) into `layout`'s format fields.
core::Status parse_fmt(const std::uint8_t* fmt, std::uint32_t size, std::uint64_t at,
                       WavLayout& layout, const Fail& fail) {
  if (size < 16)
    return fail("'fmt ' chunk of " + std::to_string(size) + " bytes is too short (16 needed)", at);
  std::uint32_t tag = le16(fmt);
  const std::uint32_t channels = le16(fmt + 2);
  const std::uint32_t rate = le32(fmt + 4);
  const std::uint32_t byte_rate = le32(fmt + 8);
  const std::uint32_t block_align = le16(fmt + 12);
  const std::uint32_t bits = le16(fmt + 14);
  if (tag == kTagExtensible) {
    if (size < 40 || le16(fmt + 16) < 22)
      return fail("WAVE_FORMAT_EXTENSIBLE 'fmt ' chunk of " + std::to_string(size) +
                      " bytes is too short (40 needed)",
                  at);
    if (le16(fmt + 18) > bits)
      return fail(std::to_string(le16(fmt + 18)) + " valid bits in a " + std::to_string(bits) +
                      "-bit container",
                  at);
    if (std::memcmp(fmt + 26, kGuidTail.data(), kGuidTail.size()) != 0)
      return fail("WAVE_FORMAT_EXTENSIBLE with an unknown sub-format GUID", at);
    tag = le16(fmt + 24);
  }
  if (tag != kTagPcm && tag != kTagFloat)
    return fail(
        "unsupported format tag " + hex16(tag) + " (PCM, IEEE float and extensible are read)", at);
  if (channels == 0) return fail("0 channels", at);
  if (channels > 2)
    return fail(std::to_string(channels) + " channels: only mono and stereo are supported", at);
  if (rate < kMinSampleRate || rate > kMaxSampleRate)
    return fail("sample rate " + std::to_string(rate) + " Hz is outside " +
                    std::to_string(kMinSampleRate) + ".." + std::to_string(kMaxSampleRate),
                at);
  const bool pcm = tag == kTagPcm;
  const bool bits_ok =
      pcm ? (bits == 8 || bits == 16 || bits == 24 || bits == 32) : (bits == 32 || bits == 64);
  if (!bits_ok)
    return fail(std::to_string(bits) + (pcm ? "-bit PCM" : "-bit float") +
                    " is not supported (PCM: 8, 16, 24, 32; float: 32, 64)",
                at);
  const std::uint32_t expected_align = channels * bits / 8;
  if (block_align != expected_align)
    return fail("block_align " + std::to_string(block_align) + " does not match " +
                    std::to_string(channels) + " channels of " + std::to_string(bits) +
                    " bits (expected " + std::to_string(expected_align) + ")",
                at);
  const std::uint64_t expected_rate = std::uint64_t{rate} * block_align;
  if (byte_rate != expected_rate)
    return fail("byte_rate " + std::to_string(byte_rate) + " does not match " +
                    std::to_string(rate) + " Hz of " + std::to_string(block_align) +
                    "-byte frames (expected " + std::to_string(expected_rate) + ")",
                at);
  layout.channels = channels;
  layout.sample_rate = rate;
  layout.bits = bits;
  layout.block_align = block_align;
  layout.coding = pcm ? SampleCoding::Pcm : SampleCoding::Float;
  return {};
}

// Converts `count` samples with `decode` (one sample's bytes to float) and stops at the first
// non-finite one; one loop per format keeps the switch out of the per-sample path.
template <std::size_t kBytes, bool kCanBeNonFinite, class Decode>
std::size_t convert(const std::uint8_t* src, std::size_t count, float* out, Decode decode) {
  for (std::size_t i = 0; i < count; ++i, src += kBytes) {
    out[i] = static_cast<float>(decode(src));
    if constexpr (kCanBeNonFinite) {
      if (!std::isfinite(out[i])) return i;
    }
  }
  return count;
}

}  // namespace

core::Result<WavLayout> parse_wav(ByteSource& source, std::string_view name) {
  const Fail fail{name};
  const std::uint64_t size = source.size();
  std::array<std::uint8_t, 40> buf{};
  if (size < 12 || source.read(0, std::span(buf.data(), 12)) < 12)
    return fail("not a WAV file: " + std::to_string(size) + " bytes, a RIFF header needs 12", 0);
  if (std::memcmp(buf.data(), "RIFF", 4) != 0 || std::memcmp(buf.data() + 8, "WAVE", 4) != 0)
    return fail("not a RIFF/WAVE file", 0);

  WavLayout layout;
  bool have_fmt = false;
  std::uint64_t pos = 12;
  // The RIFF size field is not trusted (streaming writers leave it 0 or 0xFFFFFFFF): chunks are
  // bounded by the bytes actually present.
  while (pos < size) {
    if (size - pos < 8)
      return fail("truncated chunk header: 8 bytes needed, " + std::to_string(size - pos) + " left",
                  pos);
    if (source.read(pos, std::span(buf.data(), 8)) < 8)
      return fail("cannot read chunk header", pos);
    const std::string id = chunk_id(buf.data());
    const std::uint32_t chunk_size = le32(buf.data() + 4);
    const std::uint64_t body = pos + 8;
    const std::uint64_t left = size - body;
    const bool is_data = std::memcmp(buf.data(), "data", 4) == 0;
    if (is_data && !have_fmt) return fail("'data' chunk before any 'fmt ' chunk", pos);
    if (chunk_size > left)
      return fail("truncated " + id + " chunk: declares " + std::to_string(chunk_size) +
                      " bytes, only " + std::to_string(left) + " present",
                  pos);
    if (is_data) {
      if (chunk_size % layout.block_align != 0)
        return fail("'data' chunk of " + std::to_string(chunk_size) +
                        " bytes is not a whole number of " + std::to_string(layout.block_align) +
                        "-byte frames",
                    pos);
      layout.frames = chunk_size / layout.block_align;
      if (layout.frames > kMaxSoundFrames)
        return fail(std::to_string(layout.frames) + " frames, more than the " +
                        std::to_string(kMaxSoundFrames) + " a sound may have",
                    pos);
      layout.data_offset = body;
      return layout;
    }
    if (std::memcmp(buf.data(), "fmt ", 4) == 0) {
      if (have_fmt) return fail("a second 'fmt ' chunk", pos);
      const std::size_t want = std::min<std::size_t>(chunk_size, buf.size());
      if (source.read(body, std::span(buf.data(), want)) < want)
        return fail("cannot read 'fmt ' chunk", pos);
      if (core::Status s = parse_fmt(buf.data(), chunk_size, pos, layout, fail); !s) return s;
      have_fmt = true;
    }
    // Odd sizes are followed by a pad byte; a file that ends right before it is accepted.
    pos = body + chunk_size + (chunk_size & 1u);
  }
  return fail(have_fmt ? "no 'data' chunk" : "no 'fmt ' chunk", size);
}

std::size_t convert_wav_samples(const std::uint8_t* src, std::size_t frames,
                                const WavLayout& layout, float* out) {
  const std::size_t count = frames * layout.channels;
  if (layout.coding == SampleCoding::Float) {
    if (layout.bits == 64)
      return convert<8, true>(src, count, out, [](const std::uint8_t* p) {
        double d;
        const std::uint64_t u = le64(p);
        std::memcpy(&d, &u, sizeof d);
        // Beyond float's range the cast would be undefined: such a sample counts as non-finite.
        return std::fabs(d) <= std::numeric_limits<float>::max() ? d : std::nan("");
      });
    return convert<4, true>(src, count, out, [](const std::uint8_t* p) {
      float f;
      const std::uint32_t u = le32(p);
      std::memcpy(&f, &u, sizeof f);
      return f;
    });
  }
  switch (layout.bits) {
    case 8:
      return convert<1, false>(src, count, out,
                               [](const std::uint8_t* p) { return (p[0] - 128) * (1.0 / 128.0); });
    case 16:
      return convert<2, false>(src, count, out, [](const std::uint8_t* p) {
        return static_cast<std::int16_t>(le16(p)) * (1.0 / 32768.0);
      });
    case 24:
      return convert<3, false>(src, count, out, [](const std::uint8_t* p) {
        const std::uint32_t u =
            (std::uint32_t{p[0]} << 8) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 24);
        return (static_cast<std::int32_t>(u) >> 8) * (1.0 / 8388608.0);
      });
    default:
      return convert<4, false>(src, count, out, [](const std::uint8_t* p) {
        return static_cast<std::int32_t>(le32(p)) * (1.0 / 2147483648.0);
      });
  }
}

}  // namespace detail

core::Result<Sound> decode_wav(std::span<const std::uint8_t> bytes, std::string_view name) {
  detail::MemorySource source(bytes);
  core::Result<detail::WavLayout> parsed = detail::parse_wav(source, name);
  if (!parsed) return parsed.status();
  const detail::WavLayout& layout = parsed.value();
  std::vector<float> samples(static_cast<std::size_t>(layout.frames) * layout.channels);
  const std::size_t done = detail::convert_wav_samples(bytes.data() + layout.data_offset,
                                                       layout.frames, layout, samples.data());
  if (done != samples.size())
    return core::Status::error(std::string(name) + ": sample " + std::to_string(done) +
                               " is not finite (at byte " +
                               std::to_string(layout.data_offset + done * layout.bits / 8) + ")");
  return Sound::create(std::move(samples), layout.channels, layout.sample_rate, std::string(name));
}

}  // namespace spindle::audio
