// Frustum planes from the camera matrices, checked against points and spheres placed by hand.
#include <gtest/gtest.h>

#include <cmath>

#include <glm/glm.hpp>

#include "spindle/render/camera.h"
#include "test_util.h"

namespace spindle::render {
namespace {

// Camera at the origin looking down -z; fov 90 degrees, aspect 1: the side planes are at 45
// degrees, so at depth d the frustum spans [-d, d] in x and y.
Camera square_camera() {
  Camera cam;
  cam.position = {0, 0, 0};
  cam.target = {0, 0, -1};
  cam.up = {0, 1, 0};
  cam.fov_y_radians = glm::radians(90.0f);
  cam.aspect = 1.0f;
  cam.near_plane = 1.0f;
  cam.far_plane = 100.0f;
  return cam;
}

float distance(const glm::vec4& plane, glm::vec3 p) {
  return glm::dot(glm::vec3(plane), p) + plane.w;
}

TEST(Frustum, PlanesAreNormalisedAndPointInward) {
  const Frustum f = Frustum::from_matrix(square_camera().view_projection());
  for (const glm::vec4& p : f.planes) EXPECT_NEAR(glm::length(glm::vec3(p)), 1.0f, 1e-5f);
  // Signed distances are true distances: a point on the axis at depth 50 is 49 from near,
  // 50 from far, and 50 * sin(45) from each side plane.
  const glm::vec3 inside{0, 0, -50};
  EXPECT_NEAR(distance(f.planes[Frustum::Near], inside), 49.0f, 1e-2f);
  EXPECT_NEAR(distance(f.planes[Frustum::Far], inside), 50.0f, 1e-2f);
  for (int side : {Frustum::Left, Frustum::Right, Frustum::Bottom, Frustum::Top}) {
    EXPECT_NEAR(distance(f.planes[side], inside), 50.0f * std::sqrt(0.5f), 1e-2f) << side;
  }
  EXPECT_LT(distance(f.planes[Frustum::Left], {-60, 0, -50}), 0.0f);
  EXPECT_LT(distance(f.planes[Frustum::Right], {60, 0, -50}), 0.0f);
  EXPECT_LT(distance(f.planes[Frustum::Bottom], {0, -60, -50}), 0.0f);
  EXPECT_LT(distance(f.planes[Frustum::Top], {0, 60, -50}), 0.0f);
}

TEST(Frustum, SpheresInFrontBehindOutsideAndStraddling) {
  const Frustum f = Frustum::from_matrix(square_camera().view_projection());
  EXPECT_TRUE(f.intersects_sphere({0, 0, -10}, 1.0f));     // in front
  EXPECT_TRUE(f.intersects_sphere({0, 0, -10}, 0.0f));     // a point in front
  EXPECT_FALSE(f.intersects_sphere({0, 0, 10}, 1.0f));     // behind the camera
  EXPECT_FALSE(f.intersects_sphere({0, 0, -0.5f}, 0.1f));  // between eye and near plane
  EXPECT_FALSE(f.intersects_sphere({0, 0, -200}, 5.0f));   // past the far plane
  EXPECT_TRUE(f.intersects_sphere({0, 0, -102}, 5.0f));    // straddling the far plane
  // Left of the frustum at depth 10 (edge at x = -10); 2 units out, distance 2 * sin(45).
  EXPECT_FALSE(f.intersects_sphere({-12, 0, -10}, 1.0f));
  EXPECT_TRUE(f.intersects_sphere({-12, 0, -10}, 1.5f));   // straddling the left plane
  EXPECT_FALSE(f.intersects_sphere({0, 13, -10}, 2.0f));   // above
  EXPECT_TRUE(f.intersects_sphere({0, 0, 0}, 2.0f));       // around the eye: straddles near
  EXPECT_TRUE(f.intersects_sphere({0, 0, -50}, 1000.0f));  // contains the whole frustum
}

TEST(Frustum, FollowsTheCamera) {
  Camera cam = square_camera();
  cam.position = {100, 0, 0};
  cam.target = {200, 0, 0};  // looking down +x
  const Frustum f = Frustum::from_matrix(cam.view_projection());
  EXPECT_TRUE(f.intersects_sphere({150, 0, 0}, 1.0f));
  EXPECT_FALSE(f.intersects_sphere({50, 0, 0}, 1.0f));
  EXPECT_FALSE(f.intersects_sphere({0, 0, -10}, 1.0f));
  EXPECT_FALSE(f.intersects_sphere({110, 0, 30}, 1.0f));  // beside it
}

TEST(Camera, ViewProjectionIsProjectionTimesView) {
  const Camera cam = test::test_camera();
  const glm::mat4 a = cam.view_projection();
  const glm::mat4 b = cam.projection() * cam.view();
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 4; ++r) EXPECT_FLOAT_EQ(a[c][r], b[c][r]);
  }
  // The target projects to the centre of the screen.
  const glm::vec4 clip = a * glm::vec4(cam.target, 1.0f);
  EXPECT_NEAR(clip.x / clip.w, 0.0f, 1e-6f);
  EXPECT_NEAR(clip.y / clip.w, 0.0f, 1e-6f);
}

}  // namespace
}  // namespace spindle::render
