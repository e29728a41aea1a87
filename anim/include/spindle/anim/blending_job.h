// BlendingJob: mixes several local poses into one, then applies additive layers on top.
//
// Usage:
//
//   spindle::anim::BlendLayer layers[] = {{.pose = walk_pose, .weight = 0.7f},
//                                         {.pose = run_pose, .weight = 0.3f}};
//   spindle::anim::BlendLayer additive[] = {{.pose = wave_delta, .weight = 1.0f,
//                                            .joint_weights = upper_body_mask}};
//   spindle::anim::BlendingJob job{.rest_pose = skeleton.rest_pose(), .layers = layers,
//                                  .additive_layers = additive, .output = blended};
//   if (spindle::core::Status s = job.run(); !s) report(s.message());
//
// With SoA poses (soa_pose.h) set BlendLayer::soa_pose and soa_output instead: the same bits.
//
// Normal layers: per joint j a layer weighs weight * joint_weights[j] (joint_weights empty = 1).
// Translations and scales are weighted averages; rotations are the normalised weighted sum, each
// rotation negated if needed to lie in the same hemisphere as the sum so far (shortest path).
// Weights are normalised by their per-joint total. Where that total is below `threshold` the rest
// pose fills the gap with weight (threshold - total): a joint no layer drives holds the rest pose.
//
// Additive layers hold deltas (e.g. inverse(reference) * animated). With w = weight *
// joint_weights[j]: translation += w * t; rotation = rotation * nlerp(identity, r, w) (shortest
// path); scale *= mix(1, s, w). They apply in array order after the normal blend.
#pragma once

#include <span>

#include <spindle/anim/skeleton.h>
#include <spindle/anim/soa_pose.h>
#include <spindle/base/result.h>

namespace spindle::anim {

// Largest layer weight and mask entry: weights are relative, and sums of poses scaled by weights
// far beyond this overflow a float (rotations collapse to zero length).
inline constexpr float kMaxBlendWeight = 1e6f;

struct BlendLayer {
  // A local pose with as many joints as the rest pose.
  std::span<const JointTransform> pose{};
  // Or the pose as SoaTransform entries, soa_count(joints) of them (soa_pose.h). A job's layers
  // are all of one form, the form of its output.
  std::span<const SoaTransform> soa_pose{};
  // Layer weight, in [0, kMaxBlendWeight].
  float weight = 0.0f;
  // Optional per-joint mask (entries in [0, kMaxBlendWeight]), as many entries as joints; empty
  // means all 1.
  std::span<const float> joint_weights{};
};

struct BlendingJob {
  // Fallback pose and joint count; usually skeleton.rest_pose().
  std::span<const JointTransform> rest_pose{};
  // Layers averaged by weight; may be empty (the output is then the rest pose + additives).
  std::span<const BlendLayer> layers{};
  // Deltas applied on top of the blend, in order.
  std::span<const BlendLayer> additive_layers{};
  // Per-joint total weight under which the rest pose fills in; > 0.
  float threshold = 0.1f;
  // Blended local pose, as many joints as rest_pose; written by run(). May not alias a layer.
  std::span<JointTransform> output{};
  // Or the blended pose as soa_count(joints) SoaTransform entries (exactly one of the two is
  // set), from layers given as soa_pose: the same bits as the JointTransform form, without the
  // transposes (four joints per register throughout).
  std::span<SoaTransform> soa_output{};

  core::Status validate() const;
  core::Status run() const;
};

}  // namespace spindle::anim
