// Levels of detail by size on screen (lod.h): thresholds, hysteresis both ways, bad sizes, and
// the size on screen of something seen through a camera.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "spindle/render/lod.h"

namespace spindle::render {
namespace {

constexpr float kBelow[] = {120.0f, 40.0f};

TEST(Lod, LevelsFollowTheThresholds) {
  EXPECT_EQ(lod_for_size(500.0f, 0, kBelow), 0);
  EXPECT_EQ(lod_for_size(120.0f, 0, kBelow), 0);
  EXPECT_EQ(lod_for_size(119.9f, 0, kBelow), 1);
  EXPECT_EQ(lod_for_size(39.9f, 0, kBelow), 2);
  EXPECT_EQ(lod_for_size(3.0f, 1, kBelow), 2);
  EXPECT_EQ(lod_for_size(10.0f, 0, {}), 0) << "one level only";
}

TEST(Lod, ComingNearerNeedsTheBandAboveTheBoundary) {
  // At level 2, just above 40 pixels is not enough; 46 (40 x 1.15) is.
  EXPECT_EQ(lod_for_size(41.0f, 2, kBelow), 2);
  EXPECT_EQ(lod_for_size(45.9f, 2, kBelow), 2);
  EXPECT_EQ(lod_for_size(46.0f, 2, kBelow), 1);
  // From level 2 straight past both bands.
  EXPECT_EQ(lod_for_size(140.0f, 2, kBelow), 0);
  EXPECT_EQ(lod_for_size(130.0f, 2, kBelow), 1) << "past 46 but not 138";
  // A size wobbling around a boundary keeps its level once it has it.
  std::uint8_t level = 0;
  int changes = 0;
  for (int f = 0; f < 100; ++f) {
    const float px = 120.0f + 5.0f * std::sin(0.7f * static_cast<float>(f));
    const std::uint8_t next = lod_for_size(px, level, kBelow);
    changes += next != level ? 1 : 0;
    level = next;
  }
  EXPECT_EQ(changes, 1) << "down once, never back up within the band";
  EXPECT_EQ(level, 1);
}

TEST(Lod, BadSizesAndLevelsGetTheCoarsestOrTheLast) {
  EXPECT_EQ(lod_for_size(std::numeric_limits<float>::quiet_NaN(), 0, kBelow), 2);
  EXPECT_EQ(lod_for_size(std::numeric_limits<float>::infinity(), 0, kBelow), 2);
  EXPECT_EQ(lod_for_size(-1.0f, 0, kBelow), 2);
  EXPECT_EQ(lod_for_size(50.0f, 9, kBelow), 1) << "a level past the last counts as the last";
}

TEST(Lod, ScreenSizeShrinksWithDistanceAndIsZeroBehind) {
  Camera cam;
  cam.position = {0.0f, 0.0f, 0.0f};
  cam.target = {0.0f, 0.0f, -1.0f};
  cam.fov_y_radians = 1.5707964f;  // 90 degrees: at distance d the image is 2d units tall
  cam.near_plane = 0.5f;
  EXPECT_NEAR(screen_size(cam, 360, {0, 0, -10}, 2.0f), 36.0f, 1e-3f);
  EXPECT_NEAR(screen_size(cam, 360, {3, 1, -20}, 2.0f), 18.0f, 1e-3f);
  EXPECT_EQ(screen_size(cam, 360, {0, 0, 5}, 2.0f), 0.0f);
  EXPECT_EQ(screen_size(cam, 360, {0, 0, -0.2f}, 2.0f), 0.0f) << "inside the near plane";
}

}  // namespace
}  // namespace spindle::render
