// Inverse kinematics on a posed skeleton: TwoBoneIkJob bends a start / mid / end chain (shoulder,
// elbow, hand) so the end reaches a target; AimIkJob turns one joint (a head) so an axis points at
// a target. Both read model-space matrices (LocalToModelJob's output) and write local-space
// correction rotations: multiply them into the local pose, then run LocalToModelJob again.
//
// Usage:
//
//   glm::quat start_fix, mid_fix;
//   bool reached = false;
//   spindle::anim::TwoBoneIkJob ik{.start_joint = &model[shoulder], .mid_joint = &model[elbow],
//                                  .end_joint = &model[hand], .target = grip,
//                                  .pole_vector = {0, 0, -1}, .mid_axis = {1, 0, 0},
//                                  .start_correction = &start_fix, .mid_correction = &mid_fix,
//                                  .reached = &reached};
//   if (spindle::core::Status s = ik.run(); !s) report(s.message());
//   local[shoulder].rotation = local[shoulder].rotation * start_fix;
//   local[elbow].rotation = local[elbow].rotation * mid_fix;
//
//   glm::quat head_fix;
//   spindle::anim::AimIkJob aim{.joint = &model[head], .target = look_at, .forward = {0, 0, 1},
//                               .offset = eyes, .up = {0, 1, 0}, .pole_vector = {0, 1, 0},
//                               .correction = &head_fix};
//   if (aim.run()) local[head].rotation = local[head].rotation * head_fix;
//
// Two-bone: the mid joint turns about mid_axis until the start-to-end distance equals the
// start-to-target distance (clamped to what the bone lengths allow, softened near full reach);
// then the start joint turns the whole chain onto the target and twists it about the
// start-to-target line so the mid joint lies on the pole vector's side. Positive rotation about
// mid_axis must close the joint (bend the elbow); with the axis the other way the chain bends
// backwards. Out of reach, the chain straightens and points at the target (reached = false).
//
// Aim: the joint turns so the ray from `offset` along `forward` (both in the joint's space) passes
// through the target, then twists about the joint-to-target line so `up` leans toward the pole
// vector. A target closer than the offset allows cannot be hit: the joint then aims `forward` from
// its own origin (reached = false).
//
// Weight blends each correction from identity (0) to the full correction (1). Matrices may hold
// uniform scale, not shear. Refused with a Status: non-finite inputs, a target at the start joint
// (or aim joint), bones shorter than 1e-6, a mid axis parallel to a bone, zero-length axes or pole.
#pragma once

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <spindle/base/result.h>

namespace spindle::anim {

struct TwoBoneIkJob {
  // Model-space matrices of the three joints (LocalToModelJob output). The mid joint is below the
  // start and the end below the mid in the hierarchy, not necessarily their direct children.
  const glm::mat4* start_joint = nullptr;
  const glm::mat4* mid_joint = nullptr;
  const glm::mat4* end_joint = nullptr;
  // Where the end joint should be, model space.
  glm::vec3 target{0.0f};
  // Model-space direction the mid joint (elbow, knee) should point toward, seen from the
  // start-to-target line. Ignored where it is parallel to that line.
  glm::vec3 pole_vector{0.0f, 1.0f, 0.0f};
  // The mid joint's hinge, in the mid joint's local space; positive rotation about it closes the
  // joint.
  glm::vec3 mid_axis{0.0f, 0.0f, 1.0f};
  // In [0, 1]: 0 leaves the pose, 1 applies the full correction.
  float weight = 1.0f;
  // In (0, 1]: the fraction of the chain length beyond which reach is eased, so the chain does
  // not snap straight as the target moves away. 1 = no easing.
  float soften = 1.0f;
  // Written by run(): local corrections, post-multiplied into the start / mid local rotations.
  glm::quat* start_correction = nullptr;
  glm::quat* mid_correction = nullptr;
  // Optional, written by run(): the end reaches the target at weight 1.
  bool* reached = nullptr;

  core::Status validate() const;
  core::Status run() const;
};

struct AimIkJob {
  // Model-space matrix of the joint to turn.
  const glm::mat4* joint = nullptr;
  // What to aim at, model space.
  glm::vec3 target{0.0f};
  // Axis that should point at the target, joint space.
  glm::vec3 forward{0.0f, 0.0f, 1.0f};
  // Origin of the aiming ray relative to the joint, joint space (e.g. the eyes from the head).
  glm::vec3 offset{0.0f};
  // Joint-space axis twisted toward pole_vector once forward is aimed.
  glm::vec3 up{0.0f, 1.0f, 0.0f};
  // Model-space direction `up` should lean toward. Ignored where parallel to the aim.
  glm::vec3 pole_vector{0.0f, 1.0f, 0.0f};
  // In [0, 1].
  float weight = 1.0f;
  // Written by run(): the local correction, post-multiplied into the joint's local rotation.
  glm::quat* correction = nullptr;
  // Optional, written by run(): the ray passes through the target (false: target too close for
  // the offset).
  bool* reached = nullptr;

  core::Status validate() const;
  core::Status run() const;
};

}  // namespace spindle::anim
