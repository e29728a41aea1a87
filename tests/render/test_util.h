// Helpers shared by the render tests: random scenes and a test camera (modes and configs: modes.h).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "modes.h"
#include "spindle/jobs/job_system.h"
#include "spindle/render/draw_list.h"

namespace spindle::render::test {

using ::spindle::test::mode_name;
using ::spindle::test::own_modes;

// Objects spread around a camera at the origin looking down -z: some in view, many not.
inline std::vector<Renderable> random_scene(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> xy(-60.0f, 60.0f);
  std::uniform_real_distribution<float> z(-120.0f, 20.0f);
  std::uniform_real_distribution<float> radius(0.1f, 3.0f);
  std::vector<Renderable> objects(n);
  for (Renderable& o : objects) {
    o.center = {xy(rng), xy(rng), z(rng)};
    o.radius = radius(rng);
    o.material = rng() % 64;  // few materials and meshes: many equal keys
    o.mesh = rng() % 8;
    o.layer = static_cast<std::uint8_t>(rng() % 3);
    o.translucent = rng() % 4 == 0;
  }
  return objects;
}

inline Camera test_camera() {
  Camera cam;
  cam.position = {0.0f, 0.0f, 0.0f};
  cam.target = {0.0f, 0.0f, -1.0f};
  cam.up = {0.0f, 1.0f, 0.0f};
  cam.fov_y_radians = 1.0f;
  cam.aspect = 1.5f;
  cam.near_plane = 0.5f;
  cam.far_plane = 100.0f;
  return cam;
}

}  // namespace spindle::render::test
