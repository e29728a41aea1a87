// The byte layout of a PackedClip (anim/include/spindle/anim/packed_clip.h says it in words):
// the header, where each table lies, and the view SamplingJob reads. Internal to anim/src.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "compressed_view.h"

namespace spindle::anim::detail {

constexpr std::uint32_t kPackedMagic = 0x4c435053;  // "SPCL" in memory order
constexpr std::uint16_t kWideTracks = 1;            // 16-bit track indices
constexpr std::uint16_t kWideTimes = 2;             // 16-bit time indices
constexpr std::uint32_t kMaxPackedJoints = 21845;   // 3 tracks each in 16 bits

struct PackedHeader {
  std::uint32_t magic;
  std::uint16_t version;
  std::uint16_t flags;
  std::uint32_t checksum_lo;  // core::Hasher over every byte but these 8
  std::uint32_t checksum_hi;
  std::uint32_t bytes;  // the whole packed clip
  std::uint32_t joints;
  float duration;
  std::uint32_t keys;   // stream keys
  std::uint32_t times;  // distinct key times
  float bound_translation;
  float bound_rotation;
  float bound_scale;
  std::uint32_t reserved[4];
  char name[32];  // zero-terminated
};
static_assert(sizeof(PackedHeader) == 96 && offsetof(PackedHeader, name) == 64);

// Byte offsets of the tables, widest first so that each is aligned, and the total (a multiple of
// 4). 64-bit, so hostile counts cannot wrap.
struct PackedLayout {
  std::uint64_t times, consumed, origin, step, values, tracks, time_indices, total;

  static PackedLayout of(int joints, std::uint64_t keys, std::uint64_t distinct, bool wide_tracks,
                         bool wide_times) {
    const std::uint64_t ranges = 2ull * static_cast<std::uint64_t>(joints);
    PackedLayout l{};
    l.times = sizeof(PackedHeader);
    l.consumed = l.times + 4 * distinct;
    l.origin = l.consumed + 4 * distinct;
    l.step = l.origin + 12 * ranges;
    l.values = l.step + 12 * ranges;
    // The 16-bit index tables right after the values (an even size), the 8-bit ones after them.
    std::uint64_t at = l.values + 6 * keys;
    const auto place = [&](std::uint64_t& table, bool wide) {
      if (wide) {
        table = at;
        at += 2 * keys;
      }
    };
    place(l.tracks, wide_tracks);
    place(l.time_indices, wide_times);
    const auto place8 = [&](std::uint64_t& table, bool wide) {
      if (!wide) {
        table = at;
        at += keys;
      }
    };
    place8(l.tracks, wide_tracks);
    place8(l.time_indices, wide_times);
    l.total = (at + 3) / 4 * 4;
    return l;
  }
};

// The tables of packed bytes whose header open() has checked (or an exact copy of such bytes).
inline CompressedView view_of(const std::byte* base) {
  PackedHeader h;
  std::memcpy(&h, base, sizeof h);
  const PackedLayout l =
      PackedLayout::of(static_cast<int>(h.joints), h.keys, h.times, (h.flags & kWideTracks) != 0,
                       (h.flags & kWideTimes) != 0);
  const auto at = [&](std::uint64_t offset) { return base + offset; };
  const std::size_t keys = h.keys, ranges = 2 * static_cast<std::size_t>(h.joints);
  CompressedView c;
  c.values = {reinterpret_cast<const Packed16x3*>(at(l.values)), keys};
  if ((h.flags & kWideTracks) != 0)
    c.tracks16 = {reinterpret_cast<const std::uint16_t*>(at(l.tracks)), keys};
  else
    c.tracks8 = {reinterpret_cast<const std::uint8_t*>(at(l.tracks)), keys};
  if ((h.flags & kWideTimes) != 0)
    c.times16 = {reinterpret_cast<const std::uint16_t*>(at(l.time_indices)), keys};
  else
    c.times8 = {reinterpret_cast<const std::uint8_t*>(at(l.time_indices)), keys};
  c.times = {reinterpret_cast<const float*>(at(l.times)), h.times};
  c.consumed = {reinterpret_cast<const std::uint32_t*>(at(l.consumed)), h.times};
  c.origin = {reinterpret_cast<const glm::vec3*>(at(l.origin)), ranges};
  c.step = {reinterpret_cast<const glm::vec3*>(at(l.step)), ranges};
  return c;
}

}  // namespace spindle::anim::detail
