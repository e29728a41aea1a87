#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

#include <spindle/anim/blending_job.h>

#include "anim_test_support.h"

namespace spindle::anim {
namespace {

using test::axis_angle;
using test::expect_near;
using test::expect_same_rotation;

JointTransform jt(glm::vec3 t, glm::quat r, glm::vec3 s) {
  return {t, r, s};
}

const glm::quat kId(1, 0, 0, 0);

struct Poses {
  std::vector<JointTransform> rest{jt({0, 0, 0}, kId, {1, 1, 1}), jt({0, 5, 0}, kId, {1, 1, 1})};
  std::vector<JointTransform> a{jt({1, 0, 0}, kId, {1, 1, 1}), jt({2, 0, 0}, kId, {2, 2, 2})};
  std::vector<JointTransform> b{jt({0, 4, 0}, axis_angle(90, {0, 0, 1}), {3, 1, 1}),
                                jt({0, 0, 8}, axis_angle(90, {0, 0, 1}), {4, 4, 4})};
  std::vector<JointTransform> out = std::vector<JointTransform>(2);
};

TEST(BlendingJob, WeightedAverageNormalisedByTotalWeight) {
  Poses p;
  const BlendLayer layers[] = {{.pose = p.a, .weight = 0.5f}, {.pose = p.b, .weight = 1.5f}};
  BlendingJob job{.rest_pose = p.rest, .layers = layers, .output = p.out};
  ASSERT_TRUE(job.run());
  // Weights 1:3 after normalisation.
  expect_near(p.out[0].translation, {0.25f, 3.0f, 0.0f});
  expect_near(p.out[0].scale, {2.5f, 1.0f, 1.0f});
  expect_near(p.out[1].translation, {0.5f, 0.0f, 6.0f});
  // normalize(1 * (1,0,0,0) + 3 * (c45,0,0,s45)) = (3.12132, 0, 0, 2.12132) / 3.77394.
  EXPECT_NEAR(p.out[0].rotation.w, 0.827072f, 1e-5f);
  EXPECT_NEAR(p.out[0].rotation.z, 0.562098f, 1e-5f);

  // A rotation stored in the other hemisphere blends the same (shortest path).
  p.b[0].rotation = -p.b[0].rotation;
  std::vector<JointTransform> flipped(2);
  ASSERT_TRUE((BlendingJob{.rest_pose = p.rest, .layers = layers, .output = flipped}.run()));
  expect_same_rotation(flipped[0].rotation, p.out[0].rotation);
}

TEST(BlendingJob, PerJointMasks) {
  Poses p;
  const float mask_a[] = {1.0f, 1.0f};
  const float mask_b[] = {0.0f, 0.25f};
  const BlendLayer layers[] = {{.pose = p.a, .weight = 1.0f, .joint_weights = mask_a},
                               {.pose = p.b, .weight = 1.0f, .joint_weights = mask_b}};
  ASSERT_TRUE((BlendingJob{.rest_pose = p.rest, .layers = layers, .output = p.out}.run()));
  // Joint 0: only a.
  expect_near(p.out[0].translation, p.a[0].translation);
  expect_same_rotation(p.out[0].rotation, kId);
  expect_near(p.out[0].scale, p.a[0].scale);
  // Joint 1: (1 * a + 0.25 * b) / 1.25.
  expect_near(p.out[1].translation, {1.6f, 0.0f, 1.6f});
  expect_near(p.out[1].scale, {2.4f, 2.4f, 2.4f});
}

TEST(BlendingJob, RestPoseFillsInBelowThreshold) {
  Poses p;
  // No layers at all: the rest pose.
  ASSERT_TRUE((BlendingJob{.rest_pose = p.rest, .output = p.out}.run()));
  expect_near(p.out[1].translation, {0, 5, 0});
  // Zero weight: the rest pose.
  const BlendLayer zero[] = {{.pose = p.a, .weight = 0.0f}};
  ASSERT_TRUE((BlendingJob{.rest_pose = p.rest, .layers = zero, .output = p.out}.run()));
  expect_near(p.out[0].translation, {0, 0, 0});
  expect_near(p.out[1].translation, {0, 5, 0});
  // Total 0.05 under threshold 0.1: rest weighs 0.05 too, so halfway.
  const BlendLayer small[] = {{.pose = p.a, .weight = 0.05f}};
  ASSERT_TRUE((BlendingJob{.rest_pose = p.rest, .layers = small, .output = p.out}.run()));
  expect_near(p.out[1].translation, {1.0f, 2.5f, 0.0f});
  expect_near(p.out[1].scale, {1.5f, 1.5f, 1.5f});
}

TEST(BlendingJob, AdditiveLayersApplyOnTop) {
  Poses p;
  std::vector<JointTransform> base{jt({1, 0, 0}, axis_angle(30, {0, 0, 1}), {2, 2, 2}),
                                   jt({1, 0, 0}, axis_angle(30, {0, 0, 1}), {2, 2, 2})};
  std::vector<JointTransform> delta{jt({0, 1, 0}, axis_angle(90, {1, 0, 0}), {1.5f, 1, 1}),
                                    jt({0, 1, 0}, axis_angle(90, {1, 0, 0}), {1.5f, 1, 1})};
  const float mask[] = {1.0f, 0.5f};
  const BlendLayer layers[] = {{.pose = base, .weight = 1.0f}};
  const BlendLayer additive[] = {{.pose = delta, .weight = 1.0f, .joint_weights = mask}};
  ASSERT_TRUE((BlendingJob{
      .rest_pose = p.rest, .layers = layers, .additive_layers = additive, .output = p.out}
                   .run()));
  // Full weight: t + dt, r * dr, s * ds.
  expect_near(p.out[0].translation, {1, 1, 0});
  expect_same_rotation(p.out[0].rotation, axis_angle(30, {0, 0, 1}) * axis_angle(90, {1, 0, 0}));
  expect_near(p.out[0].scale, {3, 2, 2});
  // Half weight: t + dt / 2, r * (half of dr: 45 deg, the nlerp midpoint), s * mix(1, ds, 0.5).
  expect_near(p.out[1].translation, {1, 0.5f, 0});
  expect_same_rotation(p.out[1].rotation, axis_angle(30, {0, 0, 1}) * axis_angle(45, {1, 0, 0}));
  expect_near(p.out[1].scale, {2.5f, 2, 2});
}

TEST(BlendingJob, ValidateRejectsBadInputs) {
  Poses p;
  std::vector<JointTransform> one(1), out3(3);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float short_mask[] = {1.0f};
  const float neg_mask[] = {1.0f, -1.0f};
  const BlendLayer wrong_size[] = {{.pose = p.a, .weight = 1}, {.pose = one, .weight = 1}};
  const BlendLayer bad_weight[] = {{.pose = p.a, .weight = nan}};
  const BlendLayer bad_mask[] = {{.pose = p.a, .weight = 1, .joint_weights = short_mask}};
  const BlendLayer neg[] = {{.pose = p.a, .weight = 1, .joint_weights = neg_mask}};
  EXPECT_EQ((BlendingJob{.output = p.out}.validate().message()), "BlendingJob: empty rest pose");
  EXPECT_EQ((BlendingJob{.rest_pose = p.rest, .output = out3}.validate().message()),
            "BlendingJob: output has 3 joints, rest pose has 2");
  EXPECT_EQ((BlendingJob{.rest_pose = p.rest, .threshold = 0.0f, .output = p.out}.run().message()),
            "BlendingJob: threshold must be finite and > 0");
  EXPECT_EQ(
      (BlendingJob{.rest_pose = p.rest, .layers = wrong_size, .output = p.out}.run().message()),
      "BlendingJob: layer 1 has 1 joints, rest pose has 2");
  EXPECT_EQ(
      (BlendingJob{.rest_pose = p.rest, .layers = bad_weight, .output = p.out}.run().message()),
      "BlendingJob: layer 0: weight must be in [0, 1e6]");
  EXPECT_EQ((BlendingJob{.rest_pose = p.rest, .layers = bad_mask, .output = p.out}.run().message()),
            "BlendingJob: layer 0 has 1 joint weights, expected 2");
  EXPECT_EQ(
      (BlendingJob{.rest_pose = p.rest, .additive_layers = neg, .output = p.out}.run().message()),
      "BlendingJob: additive layer 0: joint weights must be in [0, 1e6]");
  // Weights so large that the weighted sums would overflow a float are refused.
  const BlendLayer huge[] = {{.pose = p.a, .weight = 3e38f}};
  EXPECT_EQ((BlendingJob{.rest_pose = p.rest, .layers = huge, .output = p.out}.run().message()),
            "BlendingJob: layer 0: weight must be in [0, 1e6]");
  const BlendLayer largest[] = {{.pose = p.a, .weight = kMaxBlendWeight},
                                {.pose = p.b, .weight = kMaxBlendWeight}};
  ASSERT_TRUE((BlendingJob{.rest_pose = p.rest, .layers = largest, .output = p.out}.run()));
  for (const JointTransform& j : p.out)
    EXPECT_NEAR(glm::length(glm::vec4(j.rotation.x, j.rotation.y, j.rotation.z, j.rotation.w)),
                1.0f, 1e-5f);
}

// Layers without masks take a four-joints-at-a-time path (SSE2); masks of all ones give the same
// weights through the per-joint path. The two are written to agree to the bit; the tolerance only
// leaves room for a compiler that fuses the scalar path's multiply-adds (-march with FMA).
constexpr float kPathTolerance = 1e-6f;

std::vector<JointTransform> random_pose(std::mt19937& rng, int n) {
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<JointTransform> pose(n);
  for (JointTransform& j : pose) {
    j.translation = {u(rng), u(rng), u(rng)};
    j.rotation = glm::normalize(glm::quat(u(rng), u(rng), u(rng), u(rng)));
    j.scale = {1.0f + 0.4f * u(rng), 1.0f + 0.4f * u(rng), 1.0f + 0.4f * u(rng)};
  }
  return pose;
}

void expect_same_pose(std::span<const JointTransform> a, std::span<const JointTransform> b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t j = 0; j < a.size(); ++j) {
    SCOPED_TRACE(j);
    expect_near(a[j].translation, b[j].translation, kPathTolerance);
    expect_near(a[j].scale, b[j].scale, kPathTolerance);
    for (int c = 0; c < 4; ++c) EXPECT_NEAR(a[j].rotation[c], b[j].rotation[c], kPathTolerance);
  }
}

TEST(BlendingJob, UnmaskedPathMatchesPerJointPath) {
  std::mt19937 rng(16);
  // Layer weights: two layers (the common case), one, three, and more than the fast path unrolls;
  // some sums stay under the threshold so the rest pose joins in.
  const std::vector<std::vector<float>> weight_sets = {
      {0.7f, 0.3f}, {1.0f}, {0.2f, 0.0f, 0.5f}, {0.01f, 0.02f}, {1, 2, 3, 4, 5}, {0.0f}, {}};
  for (int n : {1, 3, 4, 5, 50, 53}) {
    const std::vector<JointTransform> rest = random_pose(rng, n);
    const std::vector<float> ones(n, 1.0f);
    for (const std::vector<float>& weights : weight_sets) {
      SCOPED_TRACE(testing::Message() << n << " joints, " << weights.size() << " layers");
      std::vector<std::vector<JointTransform>> poses;
      for (std::size_t i = 0; i < weights.size(); ++i) poses.push_back(random_pose(rng, n));
      std::vector<BlendLayer> plain, masked;
      for (std::size_t i = 0; i < weights.size(); ++i) {
        plain.push_back({.pose = poses[i], .weight = weights[i]});
        masked.push_back({.pose = poses[i], .weight = weights[i], .joint_weights = ones});
      }
      std::vector<JointTransform> fast(n), general(n);
      ASSERT_TRUE((BlendingJob{.rest_pose = rest, .layers = plain, .output = fast}.run()));
      ASSERT_TRUE((BlendingJob{.rest_pose = rest, .layers = masked, .output = general}.run()));
      expect_same_pose(fast, general);
    }
  }
}

TEST(BlendingJob, UnmaskedPathFallsBackToRestRotation) {
  // A NaN rotation leaves no usable sum: the rest rotation, in whichever lane it falls.
  std::mt19937 rng(7);
  const int n = 9;
  const std::vector<JointTransform> rest = random_pose(rng, n);
  std::vector<JointTransform> a = random_pose(rng, n), b = random_pose(rng, n);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int j : {2, 5, 8}) a[j].rotation = glm::quat(nan, 0, 0, 0);
  const BlendLayer layers[] = {{.pose = a, .weight = 0.7f}, {.pose = b, .weight = 0.3f}};
  std::vector<JointTransform> out(n);
  ASSERT_TRUE((BlendingJob{.rest_pose = rest, .layers = layers, .output = out}.run()));
  for (int j = 0; j < n; ++j) {
    SCOPED_TRACE(j);
    if (j == 2 || j == 5 || j == 8)
      expect_same_rotation(out[j].rotation, rest[j].rotation);
    else
      EXPECT_NEAR(glm::length(glm::vec4(out[j].rotation.x, out[j].rotation.y, out[j].rotation.z,
                                        out[j].rotation.w)),
                  1.0f, 1e-5f);
  }
}

TEST(BlendingJob, UnmaskedPathWithAdditiveLayers) {
  std::mt19937 rng(3);
  const int n = 53;
  const std::vector<JointTransform> rest = random_pose(rng, n);
  const std::vector<JointTransform> a = random_pose(rng, n), b = random_pose(rng, n);
  const std::vector<JointTransform> delta = random_pose(rng, n);
  const std::vector<float> ones(n, 1.0f);
  const BlendLayer plain[] = {{.pose = a, .weight = 0.6f}, {.pose = b, .weight = 0.4f}};
  const BlendLayer masked[] = {{.pose = a, .weight = 0.6f, .joint_weights = ones},
                               {.pose = b, .weight = 0.4f, .joint_weights = ones}};
  const BlendLayer additive[] = {{.pose = delta, .weight = 0.5f}};
  std::vector<JointTransform> fast(n), general(n);
  ASSERT_TRUE(
      (BlendingJob{.rest_pose = rest, .layers = plain, .additive_layers = additive, .output = fast}
           .run()));
  ASSERT_TRUE((BlendingJob{
      .rest_pose = rest, .layers = masked, .additive_layers = additive, .output = general}
                   .run()));
  expect_same_pose(fast, general);
}

}  // namespace
}  // namespace spindle::anim
