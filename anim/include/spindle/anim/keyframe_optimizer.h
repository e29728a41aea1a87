// KeyframeOptimizer: offline, removes keys that a clip does not need for a given accuracy, judged
// where it shows: in model space, through the skeleton's hierarchy.
//
// Usage:
//
//   spindle::anim::KeyframeOptimizer opt{.tolerance = 0.001f, .distance = 0.1f};
//   spindle::core::Result<spindle::anim::Clip> lean = opt.run(walk, skeleton);
//   if (!lean) report(lean.message());
//   spindle::core::Result<spindle::anim::Clip> small = lean.value().compressed();
//
// For every joint the optimiser watches four points: the joint and one point `distance` along each
// of its local axes (where skin or an attachment would sit). A key is removed when, with it and
// every key removed before it gone, each watched point of the joint and of every joint below it
// stays within `tolerance` of where the original clip puts it. It checks at every distinct key
// time of the clip and at three points between neighbouring ones; sampling the result elsewhere
// can exceed the tolerance only by how far the motion bends between those points (tests measure
// it). The first and last key of every track stay. Greedy, one track at a time in joint order,
// keys left to right: deterministic, not minimal. Quantising the result afterwards adds its own
// error_bound() on top of the tolerance.
#pragma once

#include <spindle/anim/clip.h>
#include <spindle/anim/skeleton.h>
#include <spindle/base/result.h>

namespace spindle::anim {

struct KeyframeOptimizer {
  // Largest model-space distance, in the skeleton's units (metres), that any watched point may
  // move; > 0.
  float tolerance = 0.001f;
  // How far from each joint the watched points along its axes are; >= 0 (0: the joint only).
  float distance = 0.1f;

  // Errors: tolerance or distance out of range or not finite, a quantised or compressed clip
  // (optimise the float clip, then compress), a clip that does not match the skeleton.
  core::Status validate(const Clip& clip, const Skeleton& skeleton) const;
  // Validates, then returns a float clip with the same name, duration and joints, fewer keys.
  core::Result<Clip> run(const Clip& clip, const Skeleton& skeleton) const;
};

}  // namespace spindle::anim
