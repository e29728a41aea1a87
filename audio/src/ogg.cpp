// Ogg Vorbis: our own page walk (structure, CRC, one stream, end-of-stream) first, then
// stb_vorbis from Debian's libstb decodes. decode_ogg is the in-memory entry; the stream shares
// the page walk and the post-open checks.
#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ogg_format.h"
#include "spindle/audio/sound.h"

namespace spindle::audio {
namespace detail {
namespace {

constexpr std::uint8_t kFlagContinued = 0x01;
constexpr std::uint8_t kFlagFirst = 0x02;
constexpr std::uint8_t kFlagLast = 0x04;
constexpr std::size_t kPageHeaderBytes = 27;
// 27 header bytes + 255 lacing values + 255 * 255 body bytes.
constexpr std::size_t kMaxPageBytes = kPageHeaderBytes + 255 + 255 * 255;

// The Ogg CRC: polynomial 0x04C11DB7, not reflected, initial value 0, no final xor.
constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t r = i << 24;
    for (int b = 0; b < 8; ++b) r = (r & 0x80000000u) ? (r << 1) ^ 0x04C11DB7u : r << 1;
    t[i] = r;
  }
  return t;
}
constexpr std::array<std::uint32_t, 256> kCrcTable = make_crc_table();

std::uint32_t ogg_crc(const std::uint8_t* p, std::size_t n) {
  std::uint32_t crc = 0;
  for (std::size_t i = 0; i < n; ++i) crc = (crc << 8) ^ kCrcTable[((crc >> 24) ^ p[i]) & 0xFF];
  return crc;
}

// stb_vorbis 1.22 (Debian's) parses the comment header without checking its lengths against the
// packet: a huge length makes a failed or wrapped malloc it then writes through or frees, which
// the fuzz tests hit as heap corruption. So the lengths are checked here first.
constexpr std::size_t kMaxCommentBytes = 16u << 20;

core::Status check_comment_header(const std::vector<std::uint8_t>& p, std::string_view name) {
  const auto fail = [&](const std::string& problem) {
    return core::Status::error(std::string(name) + ": Vorbis comment header: " + problem + " (" +
                               std::to_string(p.size()) + "-byte packet)");
  };
  if (p.size() < 7 || p[0] != 3 || std::memcmp(&p[1], "vorbis", 6) != 0)
    return fail("the second packet is not one");
  std::uint64_t pos = 7;
  const auto length = [&](std::uint32_t& out) {
    if (p.size() - pos < 4) return false;
    out = le32(&p[pos]);
    pos += 4;
    return true;
  };
  std::uint32_t vendor = 0;
  if (!length(vendor) || vendor > p.size() - pos) return fail("vendor string runs past the end");
  pos += vendor;
  std::uint32_t count = 0;
  if (!length(count) || count > (p.size() - pos) / 4)
    return fail("comment count " + std::to_string(count) + " runs past the end");
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t n = 0;
    if (!length(n) || n > p.size() - pos)
      return fail("comment " + std::to_string(i) + " runs past the end");
    pos += n;
  }
  if (pos >= p.size() || !(p[pos] & 1)) return fail("no framing bit");
  return {};
}

core::Status page_error(std::string_view name, const std::string& problem, std::uint64_t page,
                        std::uint64_t at) {
  return core::Status::error(std::string(name) + ": " + problem + " (page " + std::to_string(page) +
                             ", at byte " + std::to_string(at) + ")");
}

}  // namespace

core::Result<OggPages> check_ogg_pages(ByteSource& source, std::string_view name) {
  const std::uint64_t size = source.size();
  std::vector<std::uint8_t> page(kMaxPageBytes);
  OggPages info;
  // The identification and comment header packets, gathered from the lacing values.
  std::vector<std::uint8_t> headers[2];
  std::size_t packet = 0;
  std::uint32_t serial = 0;
  std::uint64_t pos = 0;
  bool ended = false;
  while (pos < size) {
    const std::uint64_t index = info.pages;
    if (ended)
      return page_error(name, "bytes after the end-of-stream page (chained streams are not read)",
                        index, pos);
    const std::uint64_t left = size - pos;
    const std::size_t got =
        source.read(pos, std::span(page.data(), std::min<std::uint64_t>(left, kMaxPageBytes)));
    if (got < std::min<std::uint64_t>(left, kPageHeaderBytes))
      return page_error(name, "cannot read the file", index, pos);
    if (got < kPageHeaderBytes)
      return page_error(name,
                        "truncated page header: " + std::to_string(kPageHeaderBytes) +
                            " bytes needed, " + std::to_string(got) + " left",
                        index, pos);
    if (std::memcmp(page.data(), "OggS", 4) != 0)
      return page_error(name, "no 'OggS' page capture pattern", index, pos);
    if (page[4] != 0)
      return page_error(name, "Ogg version " + std::to_string(page[4]) + " (only 0 exists)", index,
                        pos);
    const std::uint8_t flags = page[5];
    const std::uint64_t granule = le64(&page[6]);
    const std::uint32_t page_serial = le32(&page[14]);
    const std::uint32_t sequence = le32(&page[18]);
    const std::uint32_t crc = le32(&page[22]);
    const std::size_t segments = page[26];
    const std::size_t header_bytes = kPageHeaderBytes + segments;
    if (got < header_bytes)
      return page_error(name,
                        "truncated page header: " + std::to_string(header_bytes) +
                            " bytes needed, " + std::to_string(got) + " left",
                        index, pos);
    std::size_t body = 0;
    for (std::size_t i = 0; i < segments; ++i) body += page[kPageHeaderBytes + i];
    if (got < header_bytes + body)
      return page_error(name,
                        "truncated page: " + std::to_string(header_bytes + body) +
                            " bytes declared, only " + std::to_string(left) + " present",
                        index, pos);
    page[22] = page[23] = page[24] = page[25] = 0;
    const std::uint32_t actual = ogg_crc(page.data(), header_bytes + body);
    if (actual != crc) return page_error(name, "page CRC mismatch (damaged bytes)", index, pos);
    if (index == 0) {
      if (!(flags & kFlagFirst))
        return page_error(name, "first page is not marked beginning-of-stream", index, pos);
      serial = page_serial;
    } else {
      if (page_serial != serial)
        return page_error(name, "a second logical stream (only one is read)", index, pos);
      if (flags & kFlagFirst)
        return page_error(name, "beginning-of-stream flag on a later page", index, pos);
    }
    if ((flags & kFlagContinued) && index == 0)
      return page_error(name, "first page continues a packet", index, pos);
    if (sequence != index)
      return page_error(name,
                        "page sequence number " + std::to_string(sequence) + ", expected " +
                            std::to_string(index) + " (missing or reordered pages)",
                        index, pos);
    std::size_t at = header_bytes;
    for (std::size_t i = 0; i < segments && packet < 2; ++i) {
      const std::size_t lace = page[kPageHeaderBytes + i];
      if (headers[packet].size() + lace > kMaxCommentBytes)
        return page_error(name, "Vorbis header packet over 16 MiB", index, pos);
      headers[packet].insert(headers[packet].end(), page.data() + at, page.data() + at + lace);
      at += lace;
      if (lace < 255) ++packet;
    }
    if (granule != ~std::uint64_t{0}) info.last_granule = granule;
    ended = (flags & kFlagLast) != 0;
    ++info.pages;
    pos += header_bytes + body;
  }
  if (info.pages == 0) return page_error(name, "no Ogg pages", 0, 0);
  if (!ended)
    return page_error(name, "truncated: the last page is not marked end-of-stream", info.pages - 1,
                      pos);
  if (packet < 2)
    return core::Status::error(std::string(name) + ": the Vorbis header packets are incomplete");
  if (core::Status s = check_comment_header(headers[1], name); !s) return s;
  return info;
}

std::string vorbis_error_text(int error) {
  switch (error) {
    case VORBIS__no_error:
      return "no error";
    case VORBIS_need_more_data:
      return "needs more data";
    case VORBIS_invalid_api_mixing:
      return "invalid API mixing";
    case VORBIS_outofmem:
      return "out of memory";
    case VORBIS_feature_not_supported:
      return "uses an unsupported feature (floor 0)";
    case VORBIS_too_many_channels:
      return "too many channels";
    case VORBIS_file_open_failure:
      return "cannot open the file";
    case VORBIS_seek_without_length:
      return "cannot seek in a stream of unknown length";
    case VORBIS_unexpected_eof:
      return "unexpected end of file (truncated?)";
    case VORBIS_seek_invalid:
      return "seek past the end";
    case VORBIS_invalid_setup:
      return "invalid Vorbis setup header";
    case VORBIS_invalid_stream:
      return "invalid Vorbis stream";
    case VORBIS_missing_capture_pattern:
      return "missing Ogg capture pattern";
    case VORBIS_invalid_stream_structure_version:
      return "invalid Ogg stream structure version";
    case VORBIS_continued_packet_flag_invalid:
      return "invalid continued-packet flag";
    case VORBIS_incorrect_stream_serial_number:
      return "incorrect stream serial number";
    case VORBIS_invalid_first_page:
      return "invalid first page (not Vorbis?)";
    case VORBIS_bad_packet_type:
      return "bad packet type";
    case VORBIS_cant_find_last_page:
      return "cannot find the last page";
    case VORBIS_seek_failed:
      return "seek failed";
    case VORBIS_ogg_skeleton_not_supported:
      return "Ogg Skeleton streams are not supported";
    default:
      return "stb_vorbis error " + std::to_string(error);
  }
}

core::Result<std::uint64_t> check_vorbis_stream(stb_vorbis* vorbis, const OggPages& pages,
                                                std::string_view name) {
  using core::Status;
  const stb_vorbis_info info = stb_vorbis_get_info(vorbis);
  const std::string n(name);
  if (info.channels < 1 || info.channels > 2)
    return Status::error(n + ": " + std::to_string(info.channels) +
                         " channels: only mono and stereo are supported");
  if (info.sample_rate < kMinSampleRate || info.sample_rate > kMaxSampleRate)
    return Status::error(n + ": sample rate " + std::to_string(info.sample_rate) +
                         " Hz is outside " + std::to_string(kMinSampleRate) + ".." +
                         std::to_string(kMaxSampleRate));
  // Checked on our own reading of the last granule: stb saturates it to 32 bits.
  if (pages.last_granule > kMaxSoundFrames)
    return Status::error(n + ": " + std::to_string(pages.last_granule) +
                         " frames declared, more than the " + std::to_string(kMaxSoundFrames) +
                         " a sound may have");
  const unsigned length = stb_vorbis_stream_length_in_samples(vorbis);
  if (length != pages.last_granule)
    return Status::error(n + ": stb_vorbis reads a length of " + std::to_string(length) +
                         " frames, the last page declares " + std::to_string(pages.last_granule) +
                         " (" + vorbis_error_text(stb_vorbis_get_error(vorbis)) + ")");
  return std::uint64_t{length};
}

}  // namespace detail

core::Result<Sound> decode_ogg(std::span<const std::uint8_t> bytes, std::string_view name) {
  using core::Status;
  if (bytes.size() > static_cast<std::size_t>(INT_MAX))
    return Status::error(std::string(name) + ": " + std::to_string(bytes.size()) +
                         " bytes is more than stb_vorbis reads (2 GiB)");
  detail::MemorySource source(bytes);
  core::Result<detail::OggPages> pages = detail::check_ogg_pages(source, name);
  if (!pages) return pages.status();

  core::Result<detail::Vorbis> opened = detail::Vorbis::open(
      [&](const stb_vorbis_alloc* alloc, int* error) {
        return stb_vorbis_open_memory(bytes.data(), static_cast<int>(bytes.size()), error, alloc);
      },
      name);
  if (!opened) return opened.status();
  const detail::Vorbis& vorbis = opened.value();
  core::Result<std::uint64_t> length =
      detail::check_vorbis_stream(vorbis.get(), pages.value(), name);
  if (!length) return length.status();
  const int channels = stb_vorbis_get_info(vorbis.get()).channels;

  // The declared length is only a claim until decoded: the vector grows with what stb really
  // produces instead of trusting it up front (a tiny hostile file may declare 2^27 frames).
  constexpr std::size_t kChunkFrames = 4096;
  std::vector<float> samples;
  samples.reserve(std::min<std::uint64_t>(length.value(), std::uint64_t{1} << 20) * channels);
  std::uint64_t decoded = 0;
  while (decoded < length.value()) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(kChunkFrames, length.value() - decoded));
    const std::size_t at = samples.size();
    samples.resize(at + want * channels);
    const int got = stb_vorbis_get_samples_float_interleaved(
        vorbis.get(), channels, samples.data() + at, static_cast<int>(want * channels));
    if (got <= 0) {
      samples.resize(at);
      break;
    }
    samples.resize(at + static_cast<std::size_t>(got) * channels);
    decoded += static_cast<std::uint64_t>(got);
  }
  if (decoded != length.value())
    return Status::error(std::string(name) + ": decoded " + std::to_string(decoded) +
                         " frames, the stream declares " + std::to_string(length.value()) +
                         " (corrupt audio packets)");
  return Sound::create(std::move(samples), static_cast<std::uint32_t>(channels),
                       stb_vorbis_get_info(vorbis.get()).sample_rate, std::string(name));
}

}  // namespace spindle::audio
