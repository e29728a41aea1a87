#include <spindle/anim/blending_job.h>

#include <cmath>
#include <string>

namespace spindle::anim {
namespace {

core::Status check_layers(std::span<const BlendLayer> layers, std::size_t joints,
                          const char* kind) {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const BlendLayer& l = layers[i];
    // Built only on failure: run() validates every frame and must not allocate.
    const auto where = [&] {
      return std::string("BlendingJob: ") + kind + " " + std::to_string(i);
    };
    if (l.pose.size() != joints)
      return core::Status::error(where() + " has " + std::to_string(l.pose.size()) +
                                 " joints, rest pose has " + std::to_string(joints));
    if (!(l.weight >= 0.0f && l.weight <= kMaxBlendWeight))
      return core::Status::error(where() + ": weight must be in [0, 1e6]");
    if (!l.joint_weights.empty() && l.joint_weights.size() != joints)
      return core::Status::error(where() + " has " + std::to_string(l.joint_weights.size()) +
                                 " joint weights, expected " + std::to_string(joints));
    for (float w : l.joint_weights)
      if (!(w >= 0.0f && w <= kMaxBlendWeight))
        return core::Status::error(where() + ": joint weights must be in [0, 1e6]");
  }
  return {};
}

float joint_weight(const BlendLayer& l, std::size_t j) {
  return l.joint_weights.empty() ? l.weight : l.weight * l.joint_weights[j];
}

}  // namespace

core::Status BlendingJob::validate() const {
  if (rest_pose.empty()) return core::Status::error("BlendingJob: empty rest pose");
  if (output.size() != rest_pose.size())
    return core::Status::error("BlendingJob: output has " + std::to_string(output.size()) +
                               " joints, rest pose has " + std::to_string(rest_pose.size()));
  if (!std::isfinite(threshold) || threshold <= 0.0f)
    return core::Status::error("BlendingJob: threshold must be finite and > 0");
  if (core::Status s = check_layers(layers, rest_pose.size(), "layer"); !s) return s;
  return check_layers(additive_layers, rest_pose.size(), "additive layer");
}

core::Status BlendingJob::run() const {
  if (core::Status s = validate(); !s) return s;
  for (std::size_t j = 0; j < rest_pose.size(); ++j) {
    glm::vec3 t(0.0f), s(0.0f);
    glm::quat q(0.0f, 0.0f, 0.0f, 0.0f);
    float total = 0.0f;
    auto add = [&](const JointTransform& p, float w) {
      t += p.translation * w;
      s += p.scale * w;
      // Keep every contribution in the hemisphere of the sum so far.
      q = q + (glm::dot(q, p.rotation) < 0.0f ? -w : w) * p.rotation;
      total += w;
    };
    for (const BlendLayer& l : layers) {
      const float w = joint_weight(l, j);
      if (w > 0.0f) add(l.pose[j], w);
    }
    if (total < threshold) add(rest_pose[j], threshold - total);
    JointTransform out;
    out.translation = t / total;
    out.scale = s / total;
    const float len2 = glm::dot(q, q);
    // Opposite rotations of equal weight cancel; the rest rotation is the only sane answer.
    out.rotation = len2 > 1e-12f ? q / std::sqrt(len2) : rest_pose[j].rotation;

    for (const BlendLayer& l : additive_layers) {
      const float w = joint_weight(l, j);
      if (w <= 0.0f) continue;
      const JointTransform& d = l.pose[j];
      out.translation += d.translation * w;
      glm::quat r = d.rotation;
      if (r.w < 0.0f) r = -r;  // shortest path from identity
      const glm::quat id(1.0f, 0.0f, 0.0f, 0.0f);
      out.rotation = glm::normalize(out.rotation * glm::normalize(id * (1.0f - w) + r * w));
      out.scale *= glm::vec3(1.0f) + (d.scale - glm::vec3(1.0f)) * w;
    }
    output[j] = out;
  }
  return {};
}

}  // namespace spindle::anim
