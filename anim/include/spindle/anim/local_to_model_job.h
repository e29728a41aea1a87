// LocalToModelJob turns a local pose into model-space matrices; PaletteJob multiplies those by
// the inverse bind matrices to give the skinning palette.
//
// Usage:
//
//   std::vector<glm::mat4> model(skeleton.joint_count()), palette(skeleton.joint_count());
//   spindle::anim::LocalToModelJob ltm{.skeleton = &skeleton, .local = blended, .model = model};
//   spindle::anim::PaletteJob pal{.model = model, .inverse_binds = skeleton.inverse_binds(),
//                                 .palette = palette};
//   if (auto s = ltm.run(); !s) report(s.message());
//   if (auto s = pal.run(); !s) report(s.message());
//
// Or both in one pass (the palette product is taken while the model matrix is in registers):
//
//   spindle::anim::LocalToModelJob ltm{.skeleton = &skeleton, .local = blended, .model = model,
//                                      .palette = palette};
//
// Because parents come before children, LocalToModelJob is one forward pass:
// model[i] = (parent < 0 ? root : model[parent]) * local[i].to_matrix(). The local matrices are
// built four joints at a time (SSE2); the products with the parents go joint by joint.
#pragma once

#include <span>

#include <glm/glm.hpp>

#include <spindle/anim/skeleton.h>
#include <spindle/anim/soa_pose.h>
#include <spindle/base/result.h>

namespace spindle::anim {

struct LocalToModelJob {
  // Supplies the parent indices; must outlive the job.
  const Skeleton* skeleton = nullptr;
  // Local pose, skeleton->joint_count() joints.
  std::span<const JointTransform> local{};
  // Or the local pose as soa_count(joints) SoaTransform entries (soa_pose.h; exactly one of the
  // two is set): the same bits, without transposing.
  std::span<const SoaTransform> soa_local{};
  // Model-space matrices, skeleton->joint_count(); written by run().
  std::span<glm::mat4> model{};
  // Placed above every root (e.g. the character's world matrix; identity for model space).
  glm::mat4 root{1.0f};
  // Optional skinning palette, empty or skeleton->joint_count(): when set, run() also writes
  // palette[i] = model[i] * skeleton->inverse_binds()[i], what PaletteJob computes. May not
  // alias `model`.
  std::span<glm::mat4> palette{};

  core::Status validate() const;
  core::Status run() const;
};

struct PaletteJob {
  // Model-space joint matrices (LocalToModelJob output).
  std::span<const glm::mat4> model{};
  // Skeleton::inverse_binds(), same count.
  std::span<const glm::mat4> inverse_binds{};
  // palette[i] = model[i] * inverse_binds[i]; same count; may alias neither input.
  std::span<glm::mat4> palette{};

  core::Status validate() const;
  core::Status run() const;
};

}  // namespace spindle::anim
