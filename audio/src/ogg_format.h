// Private to audio/: what stands between a file and stb_vorbis, shared by decode_ogg and the Ogg
// stream. stb_vorbis trusts what it reads: the page walk (structure, CRC, the comment header's
// lengths) turns truncated, damaged or spliced files into a message naming the page, and the
// arena bounds and reclaims whatever stb allocates for the rest.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#define STB_VORBIS_HEADER_ONLY  // the implementation is compiled in libstb.so
#include <stb_vorbis.h>

#include "byte_source.h"
#include "spindle/base/result.h"

namespace spindle::audio::detail {

struct OggPages {
  std::uint64_t pages = 0;
  std::uint64_t last_granule = 0;  // frames the stream declares (its end-of-stream page's granule)
};

// Every page must be well formed with a matching CRC, one logical stream, sequence numbers in
// order, the first page marked beginning-of-stream and the last end-of-stream, nothing between
// or after the pages. So a file cut anywhere, even on a page boundary, is refused. The comment
// header's lengths must fit its packet (stb_vorbis 1.22 corrupts its heap when they do not).
core::Result<OggPages> check_ogg_pages(ByteSource& source, std::string_view name);

// stb_vorbis's error code as words.
std::string vorbis_error_text(int error);

// An open stb_vorbis whose every allocation comes from an arena it owns. stb leaks on some
// failure paths with hostile setup headers (the fuzz tests saw 100 MB over a few thousand files)
// and would malloc whatever sizes a header names; with an arena nothing leaks and a hostile file
// runs out of memory at the arena's size instead.
class Vorbis {
 public:
  Vorbis() = default;
  Vorbis(Vorbis&& o) noexcept
      : arena_(std::move(o.arena_)), vorbis_(std::exchange(o.vorbis_, nullptr)) {}
  Vorbis& operator=(Vorbis&& o) noexcept {
    std::swap(arena_, o.arena_);
    std::swap(vorbis_, o.vorbis_);
    return *this;
  }
  ~Vorbis() {
    if (vorbis_) stb_vorbis_close(vorbis_);  // before the arena it lives in is freed
  }
  stb_vorbis* get() const { return vorbis_; }

  // Calls open(&alloc, &error) with arenas from 256 KiB, doubling while stb runs out of memory,
  // up to 32 MiB: stb tells the size it needs only once it has succeeded (typical files need
  // about 100 KiB).
  template <class Open>
  static core::Result<Vorbis> open(Open&& open, std::string_view name) {
    int error = VORBIS_outofmem;
    for (int bytes = 256 << 10; bytes <= (32 << 20) && error == VORBIS_outofmem; bytes *= 2) {
      Vorbis v;
      v.arena_ = std::make_unique_for_overwrite<char[]>(static_cast<std::size_t>(bytes));
      const stb_vorbis_alloc alloc{v.arena_.get(), bytes};
      error = 0;
      v.vorbis_ = open(&alloc, &error);
      if (v.vorbis_) return v;
    }
    return core::Status::error(std::string(name) + ": not a valid Ogg Vorbis stream (" +
                               vorbis_error_text(error) + ")");
  }

 private:
  std::unique_ptr<char[]> arena_;
  stb_vorbis* vorbis_ = nullptr;
};

// The checks shared by decode_ogg and the Ogg stream once stb has opened the file: channels,
// rate, and a declared length that matches the last page and fits kMaxSoundFrames. Returns the
// length in frames.
core::Result<std::uint64_t> check_vorbis_stream(stb_vorbis* vorbis, const OggPages& pages,
                                                std::string_view name);

}  // namespace spindle::audio::detail
