// Private to audio/: the Ogg page walk that runs before stb_vorbis sees a byte. stb_vorbis trusts
// what it reads; checking every page's structure and CRC first turns truncated, damaged or
// spliced files into a message naming the page instead of undefined behaviour inside stb.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "byte_source.h"
#include "spindle/base/result.h"

struct stb_vorbis;

namespace spindle::audio::detail {

struct OggPages {
  std::uint64_t pages = 0;
  std::uint64_t last_granule = 0;  // frames the stream declares (its end-of-stream page's granule)
};

// Every page must be well formed with a matching CRC, one logical stream, sequence numbers in
// order, the first page marked beginning-of-stream and the last end-of-stream, nothing between
// or after the pages. So a file cut anywhere, even on a page boundary, is refused.
core::Result<OggPages> check_ogg_pages(ByteSource& source, std::string_view name);

// stb_vorbis's error code as words.
std::string vorbis_error_text(int error);

// The checks shared by decode_ogg and the Ogg stream once stb has opened the file: channels,
// rate, and a declared length that matches the last page and fits kMaxSoundFrames. Returns the
// length in frames.
core::Result<std::uint64_t> check_vorbis_stream(stb_vorbis* vorbis, const OggPages& pages,
                                                std::string_view name);

}  // namespace spindle::audio::detail
