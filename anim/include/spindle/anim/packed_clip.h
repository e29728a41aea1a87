// PackedClip: a compressed clip (Clip::compressed()) in one block of bytes, sampled where it lies:
// in a ROM image, a file read whole, or a ClipBank's cache slot. No heap, no pointers inside, so a
// byte-for-byte copy of it is the same clip.
//
// Usage:
//
//   spindle::core::Result<spindle::anim::Clip> walk = clip.compressed();
//   std::vector<std::byte> bytes(spindle::anim::PackedClip::size_of(walk.value()));
//   spindle::anim::PackedClip::pack(walk.value(), bytes);                  // at build time
//   ...
//   spindle::core::Result<spindle::anim::PackedClip> p = spindle::anim::PackedClip::open(bytes);
//   if (!p) report(p.message());  // "packed clip 'walk': ..." naming what and where
//   spindle::anim::SamplingJob{.packed = &p.value(), .time = t, .cache = &cache,
//                              .output = local}.run();
//
// Sampling a packed clip gives the same bits as sampling the Clip it was packed from.
//
// Layout (little-endian as the targets are; 4-byte aligned; the sizes follow from the counts):
// - A 96-byte header: magic "SPCL", version 1, flags (bit 0: 16-bit track indices, bit 1: 16-bit
//   time indices), a 64-bit checksum (core::Hasher over every other byte), the total size, joints,
//   duration, stream keys, distinct key times, the error bound and the name (31 bytes and a zero).
// - Then the tables widest first, so each lies aligned: times (f32), seek table (u32), origins and
//   steps (3 x f32 per vec3 track), values (3 x u16 per key), track and time indices (u16 or u8).
//
// open() checks everything sampling relies on, so bytes from outside (a file, a corrupted ROM
// image, a fuzzer) give an error naming what is wrong, never a read out of bounds: the size, the
// alignment, the magic and version, the checksum, the counts, finite values, times increasing
// inside the duration, the seek table, and each key's track and time index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include <spindle/anim/clip.h>
#include <spindle/base/result.h>

namespace spindle::anim {

class PackedClip {
 public:
  PackedClip() = default;

  // Bytes pack() writes for `clip`; 0 unless it is a compressed() clip.
  static std::size_t size_of(const Clip& clip);
  // Writes `clip` into `out` (at least size_of(clip) bytes, 4-byte aligned); returns the bytes
  // written. Errors: not a compressed() clip, `out` too small or misaligned.
  static core::Result<std::size_t> pack(const Clip& clip, std::span<std::byte> out);
  // A view of packed bytes, checked (see the top of this file); the bytes must stay unchanged for
  // as long as the view is used. Bytes past the header's size are ignored (padding). Allocates only
  // for an error's message.
  static core::Result<PackedClip> open(std::span<const std::byte> bytes);
  // The checksum open() compares with the header's: core::Hasher's digest of the bytes but the
  // checksum's own 8 (at offset 8). For tools that patch packed clips; 0 if `bytes` is shorter than
  // a header.
  static std::uint64_t checksum(std::span<const std::byte> bytes);

  bool valid() const { return base_ != nullptr; }
  std::string_view name() const;
  float duration() const;
  int joint_count() const;
  QuantizationError error_bound() const;
  // The checksum: the clip's identity by content.
  std::uint64_t id() const;
  // The packed bytes (the header's size).
  std::span<const std::byte> bytes() const;

 private:
  friend struct SamplingJob;
  friend class ClipBank;
  // The same clip in an exact copy of bytes() at `copy` (a cache slot), unchecked.
  PackedClip copied_to(const std::byte* copy) const {
    PackedClip p;
    p.base_ = copy;
    return p;
  }

  const std::byte* base_ = nullptr;
};

}  // namespace spindle::anim
