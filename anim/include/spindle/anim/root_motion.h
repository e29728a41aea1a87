// Root motion: the distance and turn a clip's root joint travels, handed to the game to move the
// entity, while the pose animates in place.
//
// Usage (offline, once per clip):
//
//   spindle::core::Result<spindle::anim::RootMotion> walk_motion =
//       spindle::anim::RootMotion::create(walk_clip, skeleton.find("hips"));
//
// Per frame and layer (a SamplingCache(1) of the layer's own, apart from its pose's cache):
//
//   spindle::anim::RootMotionDelta delta;
//   spindle::anim::RootMotionJob motion{.motion = &walk_motion.value(), .from = previous_time,
//                                       .to = previous_time + dt * speed, .cache = &cache,
//                                       .output = &delta};
//   spindle::anim::RootMotionRemovalJob in_place{.motion = &walk_motion.value(), .time = time,
//                                                .cache = &cache, .pose = sampled_walk_pose};
//   motion.run(); in_place.run();
//   spindle::anim::RootMotionBlendJob mix{.deltas = layer_deltas, .weights = layer_weights,
//                                         .output = &delta};  // several clips: blend the deltas
//   entity.position += entity.rotation * delta.translation;
//   entity.rotation = entity.rotation * glm::angleAxis(delta.yaw, glm::vec3(0, 1, 0));
//
// Conventions: +y is up. The motion is horizontal: the root's x / z translation and its yaw (the
// twist of its rotation about +y); height, pitch and roll stay in the pose. A delta's translation
// is in the frame of the clip's start heading turned by the yaw gained so far, so it applies to an
// entity facing where the clip started, whatever way the root has turned since; deltas compose as
// translation A.t + rotate(A.yaw) * B.t, yaw A.yaw + B.yaw.
//
// Time ranges are unwrapped like TrackTriggeringJob's (to = from + dt * speed): a looping range
// that passes the end adds (end - from) and then (to - start), composed; backwards playback gives
// the reverse motion; without loop both ends clamp to [0, duration].
//
// Removal keeps the root at its horizontal position and yaw of the clip's first frame: it is meant
// for a pose sampled from the same clip at the same time (before blending).
#pragma once

#include <span>

#include <glm/glm.hpp>

#include <spindle/anim/clip.h>
#include <spindle/anim/sampling_job.h>
#include <spindle/anim/skeleton.h>
#include <spindle/base/result.h>

namespace spindle::anim {

struct RootMotionDelta {
  // Horizontal (y = 0), in the frame described at the top.
  glm::vec3 translation{0.0f};
  // Radians about +y.
  float yaw = 0.0f;
};

// The root joint's keys of one clip, taken out once (offline) so the per-frame jobs sample a
// single joint, exactly as SamplingJob samples it in the full clip.
class RootMotion {
 public:
  RootMotion() = default;

  // Error when the joint is not one of the clip's. Allocates (decodes a quantised clip's keys).
  static core::Result<RootMotion> create(const Clip& clip, int joint);

  int joint() const { return joint_; }
  float duration() const { return root_.duration(); }

 private:
  friend struct RootMotionJob;
  friend struct RootMotionRemovalJob;
  Clip root_;  // one joint: the root's tracks
  int joint_ = -1;
  JointTransform start_{};  // the root at time 0
};

struct RootMotionJob {
  // Must outlive the job.
  const RootMotion* motion = nullptr;
  // The frame's playback: clip time before it and from + dt * speed (unwrapped, see the top).
  float from = 0.0f;
  float to = 0.0f;
  // Wrap around the duration (at most 1024 times in one range); false clamps.
  bool loop = true;
  // Cursor cache for the root's one-joint clip (joint_capacity() >= 1); one per layer, not the
  // pose's cache (switching clips would make every sample search).
  SamplingCache* cache = nullptr;
  // Written by run().
  RootMotionDelta* output = nullptr;

  core::Status validate() const;
  core::Status run() const;
};

struct RootMotionRemovalJob {
  // Must outlive the job.
  const RootMotion* motion = nullptr;
  // The clip time `pose` was sampled at.
  float time = 0.0f;
  SamplingCache* cache = nullptr;
  // The clip's sampled local pose; its root joint is changed in place.
  std::span<JointTransform> pose{};

  core::Status validate() const;
  core::Status run() const;
};

struct RootMotionBlendJob {
  // One delta per layer.
  std::span<const RootMotionDelta> deltas{};
  // As many weights, each finite and >= 0; normalised by their sum (a zero sum gives no motion).
  std::span<const float> weights{};
  // Written by run(): the weighted average of translations and of yaws.
  RootMotionDelta* output = nullptr;

  core::Status validate() const;
  core::Status run() const;
};

}  // namespace spindle::anim
