// The tables of a compressed clip as read-only views: what SamplingJob reads, whether the tables
// are a Clip's own vectors (Clip::compressed()) or one block of bytes (PackedClip, a ClipBank
// slot).
#pragma once

#include <cstdint>
#include <span>

#include <glm/glm.hpp>

#include "quantize.h"

namespace spindle::anim::detail {

struct CompressedView {
  // Per stream key: its value (anim/src/quantize.h), track (3 * joint + 0 / 1 / 2) and index into
  // `times`; the track and time indices are 8-bit or 16-bit, the span of the other width empty.
  std::span<const Packed16x3> values;
  std::span<const std::uint8_t> tracks8;
  std::span<const std::uint16_t> tracks16;
  std::span<const std::uint8_t> times8;
  std::span<const std::uint16_t> times16;
  // The distinct key times, increasing, and the seek table: stream keys needed by each.
  std::span<const float> times;
  std::span<const std::uint32_t> consumed;
  // Per vec3 track, [2 * joint + 0 / 1] for translation / scale: decode origin + u * step.
  std::span<const glm::vec3> origin;
  std::span<const glm::vec3> step;
};

}  // namespace spindle::anim::detail
