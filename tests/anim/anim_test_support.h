// Helpers shared by the animation tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

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

}  // namespace spindle::anim::test
