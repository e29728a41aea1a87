// Helpers shared by the animation tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <spindle/anim/clip.h>
#include <spindle/anim/keyframe_optimizer.h>
#include <spindle/anim/procedural.h>
#include <spindle/anim/skeleton.h>

namespace spindle::anim::test {

inline void expect_near(const glm::vec3& a, const glm::vec3& b, float eps = 1e-5f) {
  EXPECT_NEAR(a.x, b.x, eps);
  EXPECT_NEAR(a.y, b.y, eps);
  EXPECT_NEAR(a.z, b.z, eps);
}

// q and -q are the same rotation.
inline void expect_same_rotation(const glm::quat& a, const glm::quat& b, float eps = 1e-5f) {
  EXPECT_NEAR(std::abs(glm::dot(a, b)), 1.0f, eps)
      << "a=(" << a.w << "," << a.x << "," << a.y << "," << a.z << ") b=(" << b.w << "," << b.x
      << "," << b.y << "," << b.z << ")";
}

inline void expect_near(const glm::mat4& a, const glm::mat4& b, float eps = 1e-4f) {
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r)
      EXPECT_NEAR(a[c][r], b[c][r], eps) << "column " << c << " row " << r;
}

inline glm::quat axis_angle(float degrees, glm::vec3 axis) {
  return glm::angleAxis(glm::radians(degrees), glm::normalize(axis));
}

// Every rotation key time of `tracks` and a point 30% of the way to each, points before and after
// the clip, and a 60 Hz sweep of `duration`; sorted.
inline std::vector<float> times_around_keys(std::span<const JointTrack> tracks, float duration) {
  std::vector<float> times = {-0.25f, duration + 0.25f};
  for (const JointTrack& t : tracks)
    for (std::size_t k = 0; k < t.rotations.size(); ++k) {
      times.push_back(t.rotations[k].time);
      if (k > 0) times.push_back(0.7f * t.rotations[k - 1].time + 0.3f * t.rotations[k].time);
    }
  for (int f = 0; f <= 60; ++f) times.push_back(duration * static_cast<float>(f) / 60.0f);
  std::sort(times.begin(), times.end());
  return times;
}

// Float clips for the jobs' four-joint paths: for 16 to 19 joints (every n % 4), a seeded
// character's walk and idle (irregular key times) and its walk keyframe-optimised (sparse and
// one-key tracks).
struct FourWideClips {
  int joints;
  Clip walk, idle, lean;
};

inline std::vector<FourWideClips> four_wide_clips() {
  std::vector<FourWideClips> out;
  for (int joints = 16; joints <= 19; ++joints) {
    Character ch =
        make_character(
            {.seed = static_cast<std::uint64_t>(joints), .joint_count = joints, .vertex_count = 16})
            .value();
    Clip lean =
        KeyframeOptimizer{.tolerance = 0.002f, .distance = 0.1f}.run(ch.walk, ch.skeleton).value();
    out.push_back({joints, std::move(ch.walk), std::move(ch.idle), std::move(lean)});
  }
  return out;
}

}  // namespace spindle::anim::test
