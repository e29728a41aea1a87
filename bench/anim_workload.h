// The animation workload of /work/shared/anim-anchor.md (issue 16), built through the public
// anim API so benchmarks, tests and samples can measure against ozz-animation's figures.
//
// Usage:
//
//   const spindle::bench::AnimWorkload w = spindle::bench::make_anim_workload();
//   // w.skeleton: 50 joints; w.walk (1 s) and w.idle (3 s): 30 keys/s on every track;
//   // w.mesh: 2,000 vertices with 4 non-zero influences each.
//
// Skeleton: a humanoid in depth-first order: pelvis, 4 spine, 2 neck, head; per side clavicle,
// upper arm, forearm, hand and 13 finger segments (thumb, index, middle 3 each; ring, little 2);
// per side thigh, shin, foot, toe. Y up, T-pose, rest rotations identity, inverse binds the
// inverse of the model-space rest pose.
//
// Clips: every translation, rotation and scale track has a key every 1/30 s (31 keys for the
// walk, 91 for the idle), the last key a copy of the first so both loop. Each joint moves on
// sines with its own phases: the root translates +-5 cm, other joints +-1 cm around their rest
// offsets; rotations turn up to +-0.5 rad about two axes; scale is uniform, +-5%.
//
// Deterministic: no RNG, the same data every call.
#pragma once

#include <spindle/anim/clip.h>
#include <spindle/anim/skeleton.h>
#include <spindle/anim/skinned_mesh.h>

namespace spindle::bench {

inline constexpr int kAnimWorkloadJoints = 50;
inline constexpr int kAnimWorkloadVertices = 2000;
inline constexpr float kAnimWorkloadKeysPerSecond = 30.0f;

struct AnimWorkload {
  anim::Skeleton skeleton;
  anim::Clip walk;  // 1 s
  anim::Clip idle;  // 3 s
  anim::SkinnedMesh mesh;
};

// Builds the whole workload (a few milliseconds); aborts with a message if the anim API rejects
// it, which would be a bug in this file.
AnimWorkload make_anim_workload();

}  // namespace spindle::bench
