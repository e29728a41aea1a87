#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <glm/gtc/matrix_transform.hpp>

#include <spindle/anim/local_to_model_job.h>

#include "anim_test_support.h"

namespace spindle::anim {
namespace {

using test::axis_angle;
using test::expect_near;

// The obvious definition: walk up to the root, composing matrices built with glm's own
// translate / rotate / scale.
glm::mat4 recursive_model(const Skeleton& s, std::span<const JointTransform> local, int joint,
                          const glm::mat4& root) {
  const JointTransform& l = local[joint];
  const glm::mat4 m = glm::translate(glm::mat4(1.0f), l.translation) * glm::mat4_cast(l.rotation) *
                      glm::scale(glm::mat4(1.0f), l.scale);
  const int parent = s.parents()[joint];
  return (parent < 0 ? root : recursive_model(s, local, parent, root)) * m;
}

Skeleton tree() {
  // Two roots, branching: 0 -> {1 -> {2, 4}, 3}, 5 -> 6.
  SkeletonBuilder b;
  const int parents[] = {-1, 0, 1, 0, 1, -1, 5};
  const char* names[] = {"j0", "j1", "j2", "j3", "j4", "j5", "j6"};
  for (int i = 0; i < 7; ++i) {
    JointDesc j{.name = names[i], .parent = parents[i]};
    j.inverse_bind = glm::translate(glm::mat4(1.0f), glm::vec3(-float(i), 0.5f, 0.0f));
    b.add_joint(j);
  }
  core::Result<Skeleton> r = b.build();
  EXPECT_TRUE(r) << r.message();
  return r.value();
}

std::vector<JointTransform> pose(int n) {
  std::vector<JointTransform> local(n);
  for (int i = 0; i < n; ++i) {
    const float f = static_cast<float>(i + 1);
    local[i].translation = {f, -0.5f * f, 0.25f};
    local[i].rotation = axis_angle(17.0f * f, {1.0f, f, -0.5f});
    local[i].scale = i == 2 ? glm::vec3(1.0f, 2.0f, 0.5f) : glm::vec3(1.0f + 0.1f * f);
  }
  return local;
}

TEST(LocalToModelJob, MatchesRecursiveComputation) {
  const Skeleton s = tree();
  const std::vector<JointTransform> local = pose(7);
  std::vector<glm::mat4> model(7);
  const glm::mat4 root = glm::translate(glm::mat4(1.0f), glm::vec3(10, 0, -3)) *
                         glm::mat4_cast(axis_angle(45.0f, {0, 1, 0}));
  ASSERT_TRUE(
      (LocalToModelJob{.skeleton = &s, .local = local, .model = model, .root = root}.run()));
  for (int j = 0; j < 7; ++j) {
    SCOPED_TRACE(j);
    expect_near(model[j], recursive_model(s, local, j, root));
  }
}

TEST(PaletteJob, MultipliesModelByInverseBind) {
  const Skeleton s = tree();
  const std::vector<JointTransform> local = pose(7);
  std::vector<glm::mat4> model(7), palette(7);
  ASSERT_TRUE((LocalToModelJob{.skeleton = &s, .local = local, .model = model}.run()));
  ASSERT_TRUE(
      (PaletteJob{.model = model, .inverse_binds = s.inverse_binds(), .palette = palette}.run()));
  for (int j = 0; j < 7; ++j) {
    SCOPED_TRACE(j);
    expect_near(palette[j], recursive_model(s, local, j, glm::mat4(1.0f)) * s.inverse_binds()[j]);
  }
}

TEST(LocalToModelJob, ValidateRejectsBadInputs) {
  const Skeleton s = tree();
  std::vector<JointTransform> local(7), short_local(6);
  std::vector<glm::mat4> model(7), short_model(3);
  EXPECT_EQ((LocalToModelJob{.local = local, .model = model}.run().message()),
            "LocalToModelJob: no skeleton");
  EXPECT_EQ((LocalToModelJob{.skeleton = &s, .local = short_local, .model = model}.run().message()),
            "LocalToModelJob: local pose has 6 joints, skeleton has 7");
  EXPECT_EQ((LocalToModelJob{.skeleton = &s, .local = local, .model = short_model}.run().message()),
            "LocalToModelJob: model has 3 matrices, skeleton has 7");
  EXPECT_EQ((PaletteJob{.model = model, .inverse_binds = short_model, .palette = model}
                 .validate()
                 .message()),
            "PaletteJob: 7 model matrices but 3 inverse binds");
  std::vector<glm::mat4> palette(7);
  EXPECT_EQ((PaletteJob{.model = model, .inverse_binds = model, .palette = short_model}
                 .validate()
                 .message()),
            "PaletteJob: palette has 3 matrices, expected 7");
}

// A tree of n joints whose parents jump around (a parent in the same group of four, several
// groups back, or none), with non-uniform scales, for the four-joints-at-a-time path and its tail.
Skeleton branching(int n) {
  SkeletonBuilder b;
  for (int i = 0; i < n; ++i) {
    const int parent = i == 0 ? -1 : i % 11 == 0 ? -1 : (i * 7) % i;
    JointDesc j{.name = std::to_string(i), .parent = parent};
    j.inverse_bind = glm::translate(glm::mat4(1.0f), glm::vec3(0.1f * float(i), -1.0f, 0.5f)) *
                     glm::mat4_cast(axis_angle(3.0f * float(i), {0.0f, 1.0f, 1.0f}));
    b.add_joint(j);
  }
  core::Result<Skeleton> r = b.build();
  EXPECT_TRUE(r) << r.message();
  return r.value();
}

TEST(LocalToModelJob, FourAtATimeMatchesRecursiveForAnyJointCount) {
  const glm::mat4 root = glm::translate(glm::mat4(1.0f), glm::vec3(-2, 1, 4)) *
                         glm::mat4_cast(axis_angle(-30.0f, {1, 1, 0}));
  for (int n : {1, 3, 4, 5, 50, 53}) {
    SCOPED_TRACE(n);
    const Skeleton s = branching(n);
    std::vector<JointTransform> local = pose(n);
    for (JointTransform& j : local) j.translation *= 0.1f;  // keep matrices near unit size
    std::vector<glm::mat4> model(n), palette(n), separate(n);
    ASSERT_TRUE((LocalToModelJob{
        .skeleton = &s, .local = local, .model = model, .root = root, .palette = palette}
                     .run()));
    ASSERT_TRUE((
        PaletteJob{.model = model, .inverse_binds = s.inverse_binds(), .palette = separate}.run()));
    for (int j = 0; j < n; ++j) {
      SCOPED_TRACE(j);
      const glm::mat4 expected = recursive_model(s, local, j, root);
      expect_near(model[j], expected);
      expect_near(palette[j], expected * s.inverse_binds()[j]);
      // The fused palette is PaletteJob's, to the bit.
      for (int c = 0; c < 4; ++c)
        for (int r = 0; r < 4; ++r) EXPECT_EQ(palette[j][c][r], separate[j][c][r]);
    }
  }
}

TEST(LocalToModelJob, ValidateRejectsWrongPaletteSize) {
  const Skeleton s = tree();
  std::vector<JointTransform> local(7);
  std::vector<glm::mat4> model(7), palette(6);
  EXPECT_EQ((LocalToModelJob{.skeleton = &s, .local = local, .model = model, .palette = palette}
                 .run()
                 .message()),
            "LocalToModelJob: palette has 6 matrices, skeleton has 7");
}

}  // namespace
}  // namespace spindle::anim
