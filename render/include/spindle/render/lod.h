// Levels of detail by size on screen, with hysteresis: what a game calls for each object each
// frame to choose among its meshes (the crowd's characters, bench/loadtest/scenes_anim.cpp). The
// level is kept per object, so one standing at a boundary does not flicker between two levels.
//
// Usage:
//
//   constexpr float kBelow[] = {120.0f, 40.0f};  // level 1 under 120 pixels tall, level 2 under 40
//   const float px = spindle::render::screen_size(camera, 360, head_height_point, 1.8f);
//   character.lod = spindle::render::lod_for_size(px, character.lod, kBelow);  // 0: full detail
//
// Both are pure functions: the same inputs give the same level in every job mode.
#pragma once

#include <cstdint>
#include <span>

#include <glm/glm.hpp>

#include "spindle/render/camera.h"

namespace spindle::render {

// The share by which something must grow past a boundary before it gets the finer level back.
inline constexpr float kLodHysteresis = 0.15f;

// The level (0: finest) for something `pixels` tall on screen that was at level `current`.
// `below` holds descending sizes: below[l] is the size under which level l + 1 is used. Getting
// coarser happens at once; getting finer only once `pixels` reaches the boundary times
// (1 + hysteresis). A size that is not a finite number >= 0 gets the coarsest level; a `current`
// past the last level counts as the last.
std::uint8_t lod_for_size(float pixels, std::uint8_t current, std::span<const float> below,
                          float hysteresis = kLodHysteresis);

// How many pixels tall something `size` units tall at `position` looks through `camera` on an
// image `image_height` pixels tall (measured at its distance along the view axis); 0 when
// `position` is not in front of the near plane.
float screen_size(const Camera& camera, int image_height, glm::vec3 position, float size);

}  // namespace spindle::render
