#include "spindle/render/lod.h"

#include <cmath>

namespace spindle::render {

std::uint8_t lod_for_size(float pixels, std::uint8_t current, std::span<const float> below,
                          float hysteresis) {
  const auto last = static_cast<std::uint8_t>(below.size());
  if (!(pixels >= 0.0f) || !std::isfinite(pixels)) return last;
  std::uint8_t want = 0;
  while (want < last && pixels < below[want]) ++want;
  if (current > last) current = last;
  if (want >= current) return want;
  // Finer: one level at a time, each only past its boundary's band.
  std::uint8_t level = current;
  while (level > want && pixels >= below[level - 1] * (1.0f + hysteresis)) --level;
  return level;
}

float screen_size(const Camera& camera, int image_height, glm::vec3 position, float size) {
  const glm::vec4 clip = camera.view_projection() * glm::vec4(position, 1.0f);
  if (!(clip.w > camera.near_plane)) return 0.0f;
  return size * 0.5f * static_cast<float>(image_height) * camera.projection()[1][1] / clip.w;
}

}  // namespace spindle::render
