// 16-bit key encodings shared by Clip::quantized() (encode) and SamplingJob / decoded_tracks()
// (decode); internal to anim/src. See clip.h for the scheme and the error bound.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

namespace spindle::anim::detail {

using Packed16x3 = std::array<std::uint16_t, 3>;

// Translation / scale: each component is origin + u * step with u in [0, 65535].
inline constexpr float kVec3Levels = 65535.0f;

inline Packed16x3 encode_vec3(const glm::vec3& v, const glm::vec3& origin, const glm::vec3& step) {
  Packed16x3 out{};
  for (int i = 0; i < 3; ++i) {
    if (step[i] <= 0.0f) continue;  // constant component: decodes to origin exactly
    const float u = std::round((v[i] - origin[i]) / step[i]);
    out[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(std::clamp(u, 0.0f, kVec3Levels));
  }
  return out;
}

inline glm::vec3 decode_vec3(const Packed16x3& p, const glm::vec3& origin, const glm::vec3& step) {
  return origin +
         glm::vec3(static_cast<float>(p[0]), static_cast<float>(p[1]), static_cast<float>(p[2])) *
             step;
}

// Rotation, "smallest three": the largest |component| is dropped (its sign made positive, which
// q -> -q allows) and rebuilt as sqrt(1 - others^2); the other three lie in [-1/sqrt2, 1/sqrt2]
// and take 15 bits each; the dropped component's index takes the top bits of words 0 and 1.
inline constexpr float kQuatRange = 0.70710678118654752f;  // 1 / sqrt(2)
inline constexpr float kQuatLevels = 32767.0f;             // 15 bits
inline constexpr float kQuatStep = 2.0f * kQuatRange / kQuatLevels;

inline Packed16x3 encode_quat(glm::quat q) {
  int largest = 0;
  for (int i = 1; i < 4; ++i)
    if (std::abs(q[i]) > std::abs(q[largest])) largest = i;
  if (q[largest] < 0.0f) q = -q;
  Packed16x3 out{};
  for (int i = 0, k = 0; i < 4; ++i) {
    if (i == largest) continue;
    const float u = std::round((q[i] + kQuatRange) / kQuatStep);
    out[static_cast<std::size_t>(k++)] =
        static_cast<std::uint16_t>(std::clamp(u, 0.0f, kQuatLevels));
  }
  out[0] = static_cast<std::uint16_t>(out[0] | ((largest & 1) << 15));
  out[1] = static_cast<std::uint16_t>(out[1] | ((largest >> 1) << 15));
  return out;
}

inline glm::quat decode_quat(const Packed16x3& p) {
  const int largest = (p[0] >> 15) | ((p[1] >> 15) << 1);
  const float a = static_cast<float>(p[0] & 0x7fff) * kQuatStep - kQuatRange;
  const float b = static_cast<float>(p[1] & 0x7fff) * kQuatStep - kQuatRange;
  const float c = static_cast<float>(p[2] & 0x7fff) * kQuatStep - kQuatRange;
  const float d = std::sqrt(std::max(0.0f, 1.0f - (a * a + b * b + c * c)));
  glm::quat q;
  // glm::quat's operator[] follows its memory order; encode_quat used the same indices.
  switch (largest) {
    case 0:
      q[0] = d, q[1] = a, q[2] = b, q[3] = c;
      break;
    case 1:
      q[0] = a, q[1] = d, q[2] = b, q[3] = c;
      break;
    case 2:
      q[0] = a, q[1] = b, q[2] = d, q[3] = c;
      break;
    default:
      q[0] = a, q[1] = b, q[2] = c, q[3] = d;
      break;
  }
  return q;
}

}  // namespace spindle::anim::detail
