// Root motion: deltas of a root moving at constant speed (within a loop, across its wrap, over
// several loops, backwards, clamped), a turning root, removal to animate in place, and blending.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include <spindle/anim/root_motion.h>
#include <spindle/anim/sampling_job.h>

#include "anim_test_support.h"

namespace spindle::anim {
namespace {

using test::axis_angle;
using test::expect_near;

constexpr float kPi = std::numbers::pi_v<float>;

// Joint 0 (the root) walks along +x at `speed` m/s over a 1 s clip while bobbing up; joint 1 is a
// static child. `turn_degrees`: the root also turns about +y, evenly (keys every 0.125 s).
Clip walker(float speed, float turn_degrees = 0.0f) {
  std::vector<JointTrack> tracks(2);
  tracks[0].translations = {{0.0f, {0.1f, 1.0f, 0.0f}}, {1.0f, {0.1f + speed, 1.2f, 0.0f}}};
  for (int k = 0; k <= 8; ++k) {
    const float t = 0.125f * static_cast<float>(k);
    tracks[0].rotations.push_back({t, axis_angle(turn_degrees * t, {0, 1, 0})});
  }
  tracks[0].scales = {{0.0f, glm::vec3(1.0f)}};
  tracks[1].translations = {{0.0f, {0, 0.5f, 0}}};
  tracks[1].rotations = {{0.0f, glm::quat(1, 0, 0, 0)}};
  tracks[1].scales = {{0.0f, glm::vec3(1.0f)}};
  core::Result<Clip> r = Clip::create("walk", 1.0f, std::move(tracks));
  EXPECT_TRUE(r) << r.message();
  return std::move(r.value());
}

RootMotion motion_of(const Clip& clip) {
  core::Result<RootMotion> r = RootMotion::create(clip, 0);
  EXPECT_TRUE(r) << r.message();
  return std::move(r.value());
}

RootMotionDelta delta(const RootMotion& motion, float from, float to, bool loop = true) {
  SamplingCache cache(1);
  RootMotionDelta out;
  const RootMotionJob job{
      .motion = &motion, .from = from, .to = to, .loop = loop, .cache = &cache, .output = &out};
  const core::Status s = job.run();
  EXPECT_TRUE(s) << s.message();
  return out;
}

TEST(RootMotion, ConstantSpeedGivesSpeedTimesDt) {
  const Clip clip = walker(2.0f);
  const RootMotion motion = motion_of(clip);
  const RootMotionDelta d = delta(motion, 0.2f, 0.3f);
  expect_near(d.translation, {0.2f, 0, 0}, 1e-5f);  // horizontal only: the bob stays in the pose
  EXPECT_NEAR(d.yaw, 0.0f, 1e-6f);
  // Across the loop boundary: (end - from) + (to - start).
  expect_near(delta(motion, 0.9f, 1.05f).translation, {0.3f, 0, 0}, 1e-5f);
  expect_near(delta(motion, 0.5f, 3.5f).translation, {6.0f, 0, 0}, 1e-4f);
  // Backwards, within and across the boundary.
  expect_near(delta(motion, 0.3f, 0.1f).translation, {-0.4f, 0, 0}, 1e-5f);
  expect_near(delta(motion, 0.1f, -0.1f).translation, {-0.4f, 0, 0}, 1e-5f);
  // Not looping: clamped at the end.
  expect_near(delta(motion, 0.9f, 1.2f, false).translation, {0.2f, 0, 0}, 1e-5f);
  expect_near(delta(motion, 1.0f, 1.3f, false).translation, {0, 0, 0}, 1e-6f);
}

TEST(RootMotion, ATurningRootComposesInTheHeadingFrame) {
  const Clip clip = walker(2.0f, 90.0f);
  const RootMotion motion = motion_of(clip);
  const RootMotionDelta whole = delta(motion, 0.0f, 1.0f);
  EXPECT_NEAR(whole.yaw, kPi / 2, 1e-5f);
  // Half then half, composed by hand, equals the whole.
  const RootMotionDelta a = delta(motion, 0.0f, 0.5f), b = delta(motion, 0.5f, 1.0f);
  EXPECT_NEAR(a.yaw + b.yaw, whole.yaw, 1e-5f);
  expect_near(a.translation + glm::angleAxis(a.yaw, glm::vec3(0, 1, 0)) * b.translation,
              whole.translation, 1e-5f);
  // Half a clip in, the root has turned 45 degrees: its model-space step along +x reads as a step
  // turned back by 45 degrees.
  expect_near(delta(motion, 0.5f, 0.6f).translation,
              glm::angleAxis(-kPi / 4, glm::vec3(0, 1, 0)) * glm::vec3(0.2f, 0, 0), 1e-5f);
  // Over the wrap the yaw keeps accumulating.
  EXPECT_NEAR(delta(motion, 0.75f, 1.25f).yaw, kPi / 4, 1e-5f);
}

TEST(RootMotion, RemovalAnimatesInPlace) {
  const Clip clip = walker(2.0f, 90.0f);
  const RootMotion motion = motion_of(clip);
  SamplingCache pose_cache(2), root_cache(1);
  std::vector<JointTransform> pose(2);
  for (const float t : {0.0f, 0.3f, 0.7f, 1.0f}) {
    ASSERT_TRUE(
        (SamplingJob{.clip = &clip, .time = t, .cache = &pose_cache, .output = pose}).run());
    const float height = pose[0].translation.y;
    const JointTransform child = pose[1];
    ASSERT_TRUE(
        (RootMotionRemovalJob{.motion = &motion, .time = t, .cache = &root_cache, .pose = pose})
            .run());
    expect_near(pose[0].translation, {0.1f, height, 0.0f}, 1e-5f);
    test::expect_same_rotation(pose[0].rotation, glm::quat(1, 0, 0, 0));
    expect_near(pose[1].translation, child.translation, 0.0f);
  }
}

TEST(RootMotion, BlendingWeighsTheDeltas) {
  const Clip walk = walker(2.0f), run = walker(5.0f, 30.0f);
  const RootMotion walk_motion = motion_of(walk), run_motion = motion_of(run);
  const RootMotionDelta deltas[] = {delta(walk_motion, 0.2f, 0.3f), delta(run_motion, 0.2f, 0.3f)};
  const float weights[] = {0.7f, 0.3f};
  RootMotionDelta out;
  ASSERT_TRUE((RootMotionBlendJob{.deltas = deltas, .weights = weights, .output = &out}).run());
  expect_near(out.translation, 0.7f * deltas[0].translation + 0.3f * deltas[1].translation, 1e-6f);
  EXPECT_NEAR(out.yaw, 0.3f * deltas[1].yaw, 1e-7f);
  EXPECT_NEAR(out.translation.x, 0.7f * 0.2f + 0.3f * 0.5f * std::cos(0.2f * kPi / 6), 1e-4f);
  // Weights are relative; all zero is no motion.
  const float scaled[] = {7.0f, 3.0f}, zero[] = {0.0f, 0.0f};
  RootMotionDelta same, none;
  ASSERT_TRUE((RootMotionBlendJob{.deltas = deltas, .weights = scaled, .output = &same}).run());
  expect_near(same.translation, out.translation, 1e-6f);
  ASSERT_TRUE((RootMotionBlendJob{.deltas = deltas, .weights = zero, .output = &none}).run());
  expect_near(none.translation, glm::vec3(0.0f), 0.0f);
  const float negative[] = {0.5f, -0.5f};
  EXPECT_FALSE((RootMotionBlendJob{.deltas = deltas, .weights = negative, .output = &out}).run());
  EXPECT_FALSE(
      (RootMotionBlendJob{.deltas = deltas, .weights = std::span(weights).first(1), .output = &out})
          .run());
}

TEST(RootMotion, RefusesBadInputs) {
  const Clip clip = walker(1.0f);
  EXPECT_FALSE(RootMotion::create(clip, 2));
  EXPECT_FALSE(RootMotion::create(clip, -1));
  const RootMotion motion = motion_of(clip);
  SamplingCache cache(1), no_room;
  RootMotionDelta out;
  RootMotionJob job{.motion = &motion, .from = 0, .to = 0.1f, .cache = &cache, .output = &out};
  ASSERT_TRUE(job.run());
  job.to = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(job.run());
  job.to = 5000.0f;
  EXPECT_FALSE(job.run()) << "more than 1024 loops";
  job.to = 0.1f;
  job.cache = &no_room;
  EXPECT_FALSE(job.run());
  const RootMotion empty;
  EXPECT_FALSE((RootMotionJob{.motion = &empty, .cache = &cache, .output = &out}).run());
  std::vector<JointTransform> pose(2);
  EXPECT_FALSE(
      (RootMotionRemovalJob{
           .motion = &motion, .time = 0, .cache = &cache, .pose = std::span(pose).first(0)})
          .run());
}

}  // namespace
}  // namespace spindle::anim
