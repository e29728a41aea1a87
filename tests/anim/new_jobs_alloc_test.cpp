// The IK, float track and root motion jobs allocate nothing in run(): set-up (creating tracks and
// root motion) may allocate, the per-frame calls may not.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <spindle/anim/float_track.h>
#include <spindle/anim/ik_job.h>
#include <spindle/anim/root_motion.h>
#include <spindle/anim/sampling_job.h>

#include "alloc_counter.h"

namespace spindle::anim {
namespace {

TEST(NewJobsAlloc, RunAllocatesNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  const FloatTrack track = FloatTrack::create("c", 1.0f, {{0, 0}, {0.5f, 1}, {1, 1}}).value();
  std::vector<JointTrack> tracks(1);
  tracks[0].translations = {{0.0f, {0, 1, 0}}, {1.0f, {2, 1, 0}}};
  tracks[0].rotations = {{0.0f, glm::quat(1, 0, 0, 0)}, {1.0f, glm::quat(0.9f, 0, 0.3f, 0)}};
  tracks[0].scales = {{0.0f, glm::vec3(1)}};
  const Clip clip = Clip::create("walk", 1.0f, std::move(tracks)).value();
  const RootMotion motion = RootMotion::create(clip, 0).value();
  SamplingCache cache(1);
  std::array<TrackEdge, 4> edges;
  std::array<JointTransform, 1> pose{};
  const glm::mat4 shoulder(1.0f);
  glm::mat4 elbow(1.0f), hand(1.0f);
  elbow[3] = {0, -1, 0, 1};
  hand[3] = {0.1f, -1.8f, 0, 1};

  const long before = test::heap_allocations();
  for (int frame = 0; frame < 100; ++frame) {
    const float from = 0.037f * static_cast<float>(frame), to = from + 0.037f;
    float value = 0;
    std::size_t count = 0;
    bool overflowed = false, reached = false;
    glm::quat a, b;
    RootMotionDelta d, mixed;
    const RootMotionDelta deltas[] = {d, d};
    const float weights[] = {0.7f, 0.3f};
    const bool ok =
        FloatTrackSamplingJob{.track = &track, .time = from, .output = &value}.run() &&
        TrackTriggeringJob{.track = &track,
                           .from = from,
                           .to = to,
                           .edges = edges,
                           .count = &count,
                           .overflowed = &overflowed}
            .run() &&
        RootMotionJob{.motion = &motion, .from = from, .to = to, .cache = &cache, .output = &d}
            .run() &&
        RootMotionRemovalJob{.motion = &motion, .time = from, .cache = &cache, .pose = pose}
            .run() &&
        RootMotionBlendJob{.deltas = deltas, .weights = weights, .output = &mixed}.run() &&
        TwoBoneIkJob{.start_joint = &shoulder,
                     .mid_joint = &elbow,
                     .end_joint = &hand,
                     .target = {0.5f, -1.0f, 0.3f},
                     .start_correction = &a,
                     .mid_correction = &b,
                     .reached = &reached}
            .run() &&
        AimIkJob{.joint = &shoulder, .target = {1, 2, 3}, .correction = &a}.run();
    ASSERT_TRUE(ok) << "frame " << frame;
  }
  EXPECT_EQ(test::heap_allocations() - before, 0);
}

}  // namespace
}  // namespace spindle::anim
