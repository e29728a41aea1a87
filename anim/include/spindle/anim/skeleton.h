// Skeleton: immutable runtime joint hierarchy, built and validated by SkeletonBuilder.
//
// Usage:
//
//   spindle::anim::SkeletonBuilder b;
//   int hip = b.add_joint({.name = "hip", .parent = -1, .rest = {.translation = {0, 1, 0}}});
//   b.add_joint({.name = "knee", .parent = hip, .rest = {.translation = {0, -0.5f, 0}}});
//   spindle::core::Result<spindle::anim::Skeleton> r = b.build();
//   if (!r) report(r.message());   // e.g. "skeleton: joint 'knee' (1): parent 3 comes after it"
//   const spindle::anim::Skeleton& skeleton = r.value();
//
// Joints are stored parent-before-child (parent index < joint index, -1 for roots), so every
// per-joint pass is a single forward loop. Joint indices fit in 16 bits (skinning stores them so).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <spindle/base/result.h>

namespace spindle::anim {

// Largest joint count: skinning stores joint indices as uint16_t.
inline constexpr int kMaxJoints = 65535;

// One joint's local transform relative to its parent: scale, then rotate, then translate.
// Poses are arrays of these: every job takes them, glm works on whole vectors, and a joint reads
// as one value. Sampling, blending and local-to-model also take SoaTransform poses (soa_pose.h),
// four joints per register with no transposing, to the same bits: the faster form for a pose
// that only passes through those jobs.
struct JointTransform {
  glm::vec3 translation{0.0f};
  glm::quat rotation{1.0f, 0.0f, 0.0f, 0.0f};  // w, x, y, z; unit length
  glm::vec3 scale{1.0f};

  // translate(t) * rotate(r) * scale(s).
  glm::mat4 to_matrix() const;
};

// Editable description of one joint, filled by the caller (importer, procedural generator).
struct JointDesc {
  // Unique, non-empty; used to find joints by name.
  std::string name{};
  // Index of an earlier joint, or -1 for a root.
  int parent = -1;
  // Local transform of the rest (bind) pose; blending falls back to it.
  JointTransform rest{};
  // Model space -> joint space at bind time; PaletteJob multiplies the model matrix by it.
  glm::mat4 inverse_bind{1.0f};
};

class Skeleton {
 public:
  Skeleton() = default;

  int joint_count() const { return static_cast<int>(parents_.size()); }
  // parents()[i] < i, or -1 for a root.
  std::span<const int> parents() const { return parents_; }
  std::span<const std::string> names() const { return names_; }
  std::span<const JointTransform> rest_pose() const { return rest_pose_; }
  std::span<const glm::mat4> inverse_binds() const { return inverse_binds_; }
  // Index of the joint with this name, or -1.
  int find(std::string_view name) const;

 private:
  friend class SkeletonBuilder;
  friend struct LocalToModelJob;
  std::vector<int> parents_;
  std::vector<std::string> names_;
  std::vector<JointTransform> rest_pose_;
  std::vector<glm::mat4> inverse_binds_;
  // Where the build uses SIMD: each inverse bind's 16 elements in column order, each repeated in
  // all four lanes, so LocalToModelJob's palette product loads them rather than broadcasting
  // (16 shuffles per joint). Empty otherwise.
  std::vector<glm::vec4> inverse_bind_lanes_;
};

// Offline side: collects joints, then build() checks them and produces the runtime Skeleton.
class SkeletonBuilder {
 public:
  // Returns the index the joint will have (joints keep the order they are added in).
  int add_joint(JointDesc joint);
  int joint_count() const { return static_cast<int>(joints_.size()); }

  // Rejects: no joints, too many joints, empty or duplicate names, parent out of range, a
  // parent that comes after its child (or the joint itself), cycles, non-finite rest poses or
  // inverse binds, zero-length rest rotations. Rest rotations are normalised.
  core::Result<Skeleton> build() const;

 private:
  std::vector<JointDesc> joints_;
};

}  // namespace spindle::anim
