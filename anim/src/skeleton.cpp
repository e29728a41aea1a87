#include <spindle/anim/skeleton.h>

#include <cmath>
#include <unordered_set>

#include <glm/gtc/matrix_transform.hpp>

#include <spindle/gameplay/transform.h>

#include "finite.h"

namespace spindle::anim {
namespace {

using detail::finite;

}  // namespace

glm::mat4 JointTransform::to_matrix() const {
  return core::compose_trs(translation, rotation, scale);
}

int Skeleton::find(std::string_view name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return static_cast<int>(i);
  return -1;
}

int SkeletonBuilder::add_joint(JointDesc joint) {
  joints_.push_back(std::move(joint));
  return static_cast<int>(joints_.size()) - 1;
}

core::Result<Skeleton> SkeletonBuilder::build() const {
  const int n = joint_count();
  if (n == 0) return core::Status::error("skeleton: no joints");
  if (n > kMaxJoints)
    return core::Status::error("skeleton: " + std::to_string(n) + " joints, at most " +
                               std::to_string(kMaxJoints));
  std::unordered_set<std::string_view> seen;
  for (int i = 0; i < n; ++i) {
    const JointDesc& j = joints_[i];
    const std::string where = "skeleton: joint '" + j.name + "' (" + std::to_string(i) + ")";
    if (j.name.empty())
      return core::Status::error("skeleton: joint " + std::to_string(i) + " has no name");
    if (!seen.insert(j.name).second) return core::Status::error(where + ": duplicate name");
    if (j.parent < -1 || j.parent >= n)
      return core::Status::error(where + ": parent " + std::to_string(j.parent) +
                                 " out of range [-1, " + std::to_string(n - 1) + "]");
    if (j.parent == i) return core::Status::error(where + ": is its own parent (cycle)");
    if (j.parent > i) {
      // Tell a real cycle apart from a mere ordering problem: follow the chain up.
      int p = j.parent;
      for (int steps = 0; p >= 0 && p < n && p != i && steps <= n; ++steps) p = joints_[p].parent;
      if (p == i) return core::Status::error(where + ": cycle in the parent chain");
      return core::Status::error(where + ": parent " + std::to_string(j.parent) +
                                 " comes after it (parents must come before children)");
    }
    if (!finite(j.rest.translation) || !finite(j.rest.rotation) || !finite(j.rest.scale))
      return core::Status::error(where + ": rest pose is not finite");
    if (glm::dot(j.rest.rotation, j.rest.rotation) < 1e-12f)
      return core::Status::error(where + ": rest rotation has zero length");
    if (!finite(j.inverse_bind)) return core::Status::error(where + ": inverse bind not finite");
  }
  Skeleton s;
  s.parents_.reserve(n);
  s.names_.reserve(n);
  s.rest_pose_.reserve(n);
  s.inverse_binds_.reserve(n);
  for (const JointDesc& j : joints_) {
    s.parents_.push_back(j.parent);
    s.names_.push_back(j.name);
    JointTransform rest = j.rest;
    rest.rotation = glm::normalize(rest.rotation);
    s.rest_pose_.push_back(rest);
    s.inverse_binds_.push_back(j.inverse_bind);
  }
#if defined(__SSE2__) && (!defined(SPINDLE_SIMD) || SPINDLE_SIMD)
  s.inverse_bind_lanes_.reserve(16 * static_cast<std::size_t>(n));
  for (const glm::mat4& m : s.inverse_binds_)
    for (int c = 0; c < 4; ++c)
      for (int r = 0; r < 4; ++r) s.inverse_bind_lanes_.emplace_back(m[c][r]);
#endif
  return s;
}

}  // namespace spindle::anim
