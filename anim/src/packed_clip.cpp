#include <spindle/anim/packed_clip.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include <spindle/base/hash.h>

#include "compressed_view.h"
#include "finite.h"
#include "packed_layout.h"

namespace spindle::anim {
namespace {

using detail::PackedHeader;
using detail::PackedLayout;

constexpr std::uint32_t kVersion = 1;

bool aligned4(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 4 == 0;
}

PackedHeader header_of(const std::byte* base) {
  PackedHeader h;
  std::memcpy(&h, base, sizeof h);
  return h;
}

}  // namespace

std::size_t PackedClip::size_of(const Clip& clip) {
  if (!clip.is_compressed()) return 0;
  const detail::CompressedView c = clip.compressed_view();
  return static_cast<std::size_t>(PackedLayout::of(clip.joint_count(), c.values.size(),
                                                   c.times.size(), c.tracks8.empty(),
                                                   c.times8.empty())
                                      .total);
}

core::Result<std::size_t> PackedClip::pack(const Clip& clip, std::span<std::byte> out) {
  const std::string where = "packing clip '" + clip.name() + "': ";
  if (!clip.is_compressed())
    return core::Status::error(where + "not a compressed() clip (pack what compressed() returns)");
  const detail::CompressedView c = clip.compressed_view();
  const bool wide_tracks = c.tracks8.empty(), wide_times = c.times8.empty();
  const PackedLayout l = PackedLayout::of(clip.joint_count(), c.values.size(), c.times.size(),
                                          wide_tracks, wide_times);
  if (out.size() < l.total)
    return core::Status::error(where + "needs " + std::to_string(l.total) + " bytes, given " +
                               std::to_string(out.size()));
  if (!aligned4(out.data())) return core::Status::error(where + "the output is not 4-byte aligned");

  std::byte* base = out.data();
  std::memset(base, 0, static_cast<std::size_t>(l.total));
  PackedHeader h{};
  h.magic = detail::kPackedMagic;
  h.version = kVersion;
  h.flags = static_cast<std::uint16_t>((wide_tracks ? detail::kWideTracks : 0u) |
                                       (wide_times ? detail::kWideTimes : 0u));
  h.bytes = static_cast<std::uint32_t>(l.total);
  h.joints = static_cast<std::uint32_t>(clip.joint_count());
  h.duration = clip.duration();
  h.keys = static_cast<std::uint32_t>(c.values.size());
  h.times = static_cast<std::uint32_t>(c.times.size());
  const QuantizationError bound = clip.error_bound();
  h.bound_translation = bound.translation;
  h.bound_rotation = bound.rotation;
  h.bound_scale = bound.scale;
  std::memcpy(h.name, clip.name().data(), std::min(clip.name().size(), sizeof h.name - 1));
  std::memcpy(base, &h, sizeof h);

  const auto put = [&](std::uint64_t offset, auto span) {
    if (!span.empty()) std::memcpy(base + offset, span.data(), span.size_bytes());
  };
  put(l.times, c.times);
  put(l.consumed, c.consumed);
  put(l.origin, c.origin);
  put(l.step, c.step);
  put(l.values, c.values);
  put(l.tracks, wide_tracks ? std::as_bytes(c.tracks16) : std::as_bytes(c.tracks8));
  put(l.time_indices, wide_times ? std::as_bytes(c.times16) : std::as_bytes(c.times8));

  const std::uint64_t sum = checksum({base, static_cast<std::size_t>(l.total)});
  h.checksum_lo = static_cast<std::uint32_t>(sum);
  h.checksum_hi = static_cast<std::uint32_t>(sum >> 32);
  std::memcpy(base, &h, sizeof h);
  return static_cast<std::size_t>(l.total);
}

std::uint64_t PackedClip::checksum(std::span<const std::byte> bytes) {
  if (bytes.size() < sizeof(PackedHeader)) return 0;
  core::Hasher h;  // the engine's determinism hash, 8 bytes a step
  h.add_bytes(bytes.data(), 8);
  h.add_bytes(bytes.data() + 16, bytes.size() - 16);
  return h.value();
}

core::Result<PackedClip> PackedClip::open(std::span<const std::byte> bytes) {
  std::string where = "packed clip: ";
  const auto fail = [&](const std::string& what) { return core::Status::error(where + what); };
  if (bytes.size() < sizeof(PackedHeader))
    return fail(std::to_string(bytes.size()) + " bytes, shorter than its " +
                std::to_string(sizeof(PackedHeader)) + "-byte header");
  if (!aligned4(bytes.data())) return fail("not 4-byte aligned");
  const PackedHeader h = header_of(bytes.data());
  if (h.magic != detail::kPackedMagic)
    return fail("no 'SPCL' magic at offset 0 (not a packed clip)");
  if (h.version != kVersion)
    return fail("version " + std::to_string(h.version) + ", this build reads version " +
                std::to_string(kVersion));
  if (h.name[sizeof h.name - 1] != '\0') return fail("the name at offset 64 is not terminated");
  // The name as messages quote it: control bytes from a hostile file shown as '?'.
  std::string name(h.name);
  for (char& ch : name)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  where = "packed clip '" + name + "': ";
  if ((h.flags & ~(detail::kWideTracks | detail::kWideTimes)) != 0)
    return fail("unknown flags " + std::to_string(h.flags) + " at offset 6");
  if (h.bytes > bytes.size())
    return fail("the header says " + std::to_string(h.bytes) + " bytes, " +
                std::to_string(bytes.size()) + " given (truncated)");
  if (h.reserved[0] != 0 || h.reserved[1] != 0 || h.reserved[2] != 0 || h.reserved[3] != 0)
    return fail("reserved header words (offset 48) are not zero");
  const std::span<const std::byte> whole = bytes.first(h.bytes);
  const std::uint64_t sum = checksum(whole);
  if (sum != (static_cast<std::uint64_t>(h.checksum_hi) << 32 | h.checksum_lo))
    return fail("checksum mismatch (the bytes were changed or damaged)");

  if (h.joints < 1 || h.joints > detail::kMaxPackedJoints)
    return fail(std::to_string(h.joints) + " joints (1 to " +
                std::to_string(detail::kMaxPackedJoints) + ")");
  if (h.times < 1 || h.times > 0xffff)
    return fail(std::to_string(h.times) + " distinct key times (1 to 65535)");
  const std::uint64_t tracks = 3ull * h.joints;
  if (h.keys < 2 * tracks)
    return fail(std::to_string(h.keys) + " stream keys, fewer than two per track (" +
                std::to_string(2 * tracks) + ")");
  const bool wide_tracks = (h.flags & detail::kWideTracks) != 0;
  const bool wide_times = (h.flags & detail::kWideTimes) != 0;
  if (!wide_tracks && tracks > 256)
    return fail("8-bit track indices for " + std::to_string(tracks) + " tracks");
  if (!wide_times && h.times > 256)
    return fail("8-bit time indices for " + std::to_string(h.times) + " key times");
  const PackedLayout l =
      PackedLayout::of(static_cast<int>(h.joints), h.keys, h.times, wide_tracks, wide_times);
  if (l.total != h.bytes)
    return fail("the header says " + std::to_string(h.bytes) + " bytes, its counts need " +
                std::to_string(l.total));
  if (!std::isfinite(h.duration) || h.duration <= 0.0f)
    return fail("duration " + std::to_string(h.duration) + " is not finite and positive");
  if (!(h.bound_translation >= 0.0f) || !(h.bound_rotation >= 0.0f) || !(h.bound_scale >= 0.0f) ||
      !std::isfinite(h.bound_translation) || !std::isfinite(h.bound_scale) ||
      !std::isfinite(h.bound_rotation))
    return fail("the error bound (offset 36) is not finite and non-negative");

  PackedClip p;
  p.base_ = bytes.data();
  const detail::CompressedView c = detail::view_of(p.base_);
  for (std::size_t f = 0; f < c.times.size(); ++f) {
    const float t = c.times[f];
    if (!std::isfinite(t) || t < 0.0f || t > h.duration || (f > 0 && t <= c.times[f - 1]))
      return fail("key time " + std::to_string(f) + " (" + std::to_string(t) +
                  ") is not finite, increasing and inside the duration");
    const std::uint32_t consumed = c.consumed[f];
    if (consumed < 2 * tracks || consumed > h.keys || (f > 0 && consumed < c.consumed[f - 1]))
      return fail("seek table entry " + std::to_string(f) + " (" + std::to_string(consumed) +
                  ") is outside [" + std::to_string(2 * tracks) + ", " + std::to_string(h.keys) +
                  "] or decreasing");
  }
  if (c.consumed.back() != h.keys)
    return fail("the seek table ends at " + std::to_string(c.consumed.back()) + " of " +
                std::to_string(h.keys) + " stream keys");
  for (std::size_t r = 0; r < c.origin.size(); ++r) {
    // Every decoded value, origin + u * step for u up to 65535, stays finite.
    if (!detail::finite(c.origin[r]) || !detail::finite(c.step[r]) ||
        !detail::finite(c.origin[r] + 65535.0f * c.step[r]))
      return fail("the range of vec3 track " + std::to_string(r) + " is not finite");
  }
  for (std::size_t k = 0; k < h.keys; ++k) {
    const std::uint32_t track = wide_tracks ? c.tracks16[k] : c.tracks8[k];
    const std::uint32_t time = wide_times ? c.times16[k] : c.times8[k];
    // The stream opens with keys 0 and 1 of every track, in track order: a reseek finds two
    // keys of every track behind any position.
    const bool opening = k < 2 * tracks;
    if (track >= tracks || (opening && track != k / 2))
      return fail("stream key " + std::to_string(k) + " has track " + std::to_string(track) +
                  (opening ? ", expected " + std::to_string(k / 2)
                           : ", the clip has " + std::to_string(tracks)));
    if (time >= h.times)
      return fail("stream key " + std::to_string(k) + " has time index " + std::to_string(time) +
                  ", the clip has " + std::to_string(h.times) + " key times");
  }
  return p;
}

std::string_view PackedClip::name() const {
  if (base_ == nullptr) return {};
  const char* name = reinterpret_cast<const char*>(base_ + offsetof(PackedHeader, name));
  return {name, std::strlen(name)};
}
float PackedClip::duration() const {
  return base_ ? header_of(base_).duration : 0.0f;
}
int PackedClip::joint_count() const {
  return base_ ? static_cast<int>(header_of(base_).joints) : 0;
}
QuantizationError PackedClip::error_bound() const {
  if (base_ == nullptr) return {};
  const PackedHeader h = header_of(base_);
  return {h.bound_translation, h.bound_rotation, h.bound_scale};
}
std::uint64_t PackedClip::id() const {
  if (base_ == nullptr) return 0;
  const PackedHeader h = header_of(base_);
  return static_cast<std::uint64_t>(h.checksum_hi) << 32 | h.checksum_lo;
}
std::span<const std::byte> PackedClip::bytes() const {
  if (base_ == nullptr) return {};
  return {base_, header_of(base_).bytes};
}

}  // namespace spindle::anim
