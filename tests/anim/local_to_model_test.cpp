#include <gtest/gtest.h>

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

}  // namespace
}  // namespace spindle::anim
