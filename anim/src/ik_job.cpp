#include <spindle/anim/ik_job.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "finite.h"

namespace spindle::anim {
namespace {

using core::Status;

// Lengths and projections below this (metres, or unit-vector components) count as zero.
constexpr float kEpsilon = 1e-6f;
constexpr float kTwoPi = 2.0f * std::numbers::pi_v<float>;

using detail::finite;

// The rotation of a matrix holding rotation, uniform scale and translation.
glm::quat rotation_of(const glm::mat4& m) {
  const glm::mat3 r(glm::normalize(glm::vec3(m[0])), glm::normalize(glm::vec3(m[1])),
                    glm::normalize(glm::vec3(m[2])));
  return glm::normalize(glm::quat_cast(r));
}

float scale_of(const glm::mat4& m) {
  return glm::length(glm::vec3(m[0]));
}

// The smallest rotation taking unit vector `from` onto unit vector `to`.
glm::quat arc(const glm::vec3& from, const glm::vec3& to) {
  const float d = glm::dot(from, to);
  if (d < -1.0f + 1e-6f) {
    // Opposite: any axis perpendicular to `from` does; pick one away from `from`'s largest axis.
    glm::vec3 side = std::abs(from.x) < 0.9f ? glm::vec3(1, 0, 0) : glm::vec3(0, 1, 0);
    return glm::angleAxis(std::numbers::pi_v<float>, glm::normalize(glm::cross(from, side)));
  }
  const glm::vec3 c = glm::cross(from, to);
  return glm::normalize(glm::quat(1.0f + d, c.x, c.y, c.z));
}

// Rotation about unit `axis` turning the part of `from` perpendicular to the axis onto the part
// of `to` perpendicular to it; identity where either part vanishes (nothing to turn toward).
glm::quat twist(const glm::vec3& axis, const glm::vec3& from, const glm::vec3& to) {
  const glm::vec3 x = from - glm::dot(from, axis) * axis;
  const glm::vec3 y = to - glm::dot(to, axis) * axis;
  if (glm::length(x) <= kEpsilon * glm::length(from) ||
      glm::length(y) <= kEpsilon * glm::length(to))
    return glm::quat(1.0f, 0.0f, 0.0f, 0.0f);
  const float angle = std::atan2(glm::dot(axis, glm::cross(x, y)), glm::dot(x, y));
  return glm::angleAxis(angle, axis);
}

glm::quat weighted(const glm::quat& q, float weight) {
  const glm::quat identity(1.0f, 0.0f, 0.0f, 0.0f);
  if (weight <= 0.0f) return identity;
  if (weight >= 1.0f) return q;
  return glm::normalize(glm::slerp(identity, q, weight));
}

Status check_weight(const char* job, float weight) {
  if (!(weight >= 0.0f && weight <= 1.0f))
    return Status::error(std::string(job) + ": weight must be in [0, 1]");
  return {};
}

}  // namespace

Status TwoBoneIkJob::validate() const {
  if (start_joint == nullptr || mid_joint == nullptr || end_joint == nullptr)
    return Status::error("TwoBoneIkJob: start, mid and end joint matrices are required");
  if (start_correction == nullptr || mid_correction == nullptr)
    return Status::error("TwoBoneIkJob: start and mid corrections are required");
  if (!finite(*start_joint) || !finite(*mid_joint) || !finite(*end_joint))
    return Status::error("TwoBoneIkJob: non-finite joint matrix");
  if (!detail::finite(target) || !detail::finite(pole_vector) || !detail::finite(mid_axis))
    return Status::error("TwoBoneIkJob: non-finite target, pole vector or mid axis");
  if (Status s = check_weight("TwoBoneIkJob", weight); !s) return s;
  if (!(soften > 0.0f && soften <= 1.0f))
    return Status::error("TwoBoneIkJob: soften must be in (0, 1]");
  if (glm::length(mid_axis) <= kEpsilon) return Status::error("TwoBoneIkJob: zero mid axis");
  if (glm::length(pole_vector) <= kEpsilon) return Status::error("TwoBoneIkJob: zero pole vector");
  if (scale_of(*start_joint) <= kEpsilon || scale_of(*mid_joint) <= kEpsilon)
    return Status::error("TwoBoneIkJob: start or mid joint matrix has zero scale");
  const glm::vec3 s(start_joint->operator[](3)), m(mid_joint->operator[](3)),
      e(end_joint->operator[](3));
  if (glm::length(m - s) <= kEpsilon || glm::length(e - m) <= kEpsilon)
    return Status::error("TwoBoneIkJob: zero-length bone (two joints at the same place)");
  if (glm::length(target - s) <= kEpsilon)
    return Status::error("TwoBoneIkJob: target at the start joint, no direction to reach in");
  return {};
}

Status TwoBoneIkJob::run() const {
  if (Status s = validate(); !s) return s;
  const glm::vec3 s((*start_joint)[3]), m((*mid_joint)[3]), e((*end_joint)[3]);
  const glm::vec3 axis = glm::normalize(glm::mat3(*mid_joint) * mid_axis);

  // Turning the lower bone v by psi about the axis gives |s - end|^2 =
  // a^2 + b^2 - 2 (u_par v_par + |u_perp| |v_perp| cos psi), psi measured from u_perp.
  const glm::vec3 u = s - m, v = e - m;
  const float a2 = glm::dot(u, u), b2 = glm::dot(v, v);
  const float u_par = glm::dot(u, axis), v_par = glm::dot(v, axis);
  const glm::vec3 u_perp = u - u_par * axis, v_perp = v - v_par * axis;
  const float pu = glm::length(u_perp), pv = glm::length(v_perp);
  if (pu <= kEpsilon * std::sqrt(a2) || pv <= kEpsilon * std::sqrt(b2))
    return Status::error("TwoBoneIkJob: mid axis parallel to a bone, the joint cannot bend");
  const float fixed = a2 + b2 - 2.0f * u_par * v_par;
  const float max_reach = std::sqrt(fixed + 2.0f * pu * pv);

  const glm::vec3 to_target = target - s;
  const float d = glm::length(to_target);
  float reach = d;
  const float eased_from = soften * max_reach;
  if (soften < 1.0f && d > eased_from) {
    const float span = max_reach - eased_from;
    reach = eased_from + span * (1.0f - std::exp(-(d - eased_from) / span));
  }
  const float c = (fixed - reach * reach) / (2.0f * pu * pv);
  const bool in_range = c >= -1.0f && c <= 1.0f;

  // phi: current angle from u_perp to v_perp about the axis, in [0, 2 pi); psi in [pi, 2 pi] is
  // the closed side of a straight chain (pi).
  float phi = std::atan2(glm::dot(axis, glm::cross(u_perp, v_perp)), glm::dot(u_perp, v_perp));
  if (phi < 0.0f) phi += kTwoPi;
  const float psi = kTwoPi - std::acos(std::clamp(c, -1.0f, 1.0f));
  const float bend = std::remainder(psi - phi, kTwoPi);

  // Then the whole chain turns about the start so the end lies on the target line, and twists
  // about that line toward the pole.
  const glm::vec3 end = m + glm::angleAxis(bend, axis) * v;
  const glm::vec3 dir = to_target / d;
  const glm::vec3 reach_now = end - s;
  const glm::quat swing = glm::length(reach_now) <= kEpsilon ? glm::quat(1.0f, 0.0f, 0.0f, 0.0f)
                                                             : arc(glm::normalize(reach_now), dir);
  const glm::quat turn = twist(dir, swing * (m - s), pole_vector) * swing;

  const glm::quat start_rotation = rotation_of(*start_joint);
  *start_correction =
      weighted(glm::normalize(glm::inverse(start_rotation) * turn * start_rotation), weight);
  *mid_correction = glm::angleAxis(bend * weight, glm::normalize(mid_axis));
  if (reached != nullptr) *reached = in_range && reach == d;
  return {};
}

Status AimIkJob::validate() const {
  if (joint == nullptr) return Status::error("AimIkJob: joint matrix is required");
  if (correction == nullptr) return Status::error("AimIkJob: correction is required");
  if (!finite(*joint)) return Status::error("AimIkJob: non-finite joint matrix");
  if (!detail::finite(target) || !detail::finite(forward) || !detail::finite(offset) ||
      !detail::finite(up) || !detail::finite(pole_vector))
    return Status::error("AimIkJob: non-finite target, forward, offset, up or pole vector");
  if (Status s = check_weight("AimIkJob", weight); !s) return s;
  if (glm::length(forward) <= kEpsilon) return Status::error("AimIkJob: zero forward axis");
  if (glm::length(up) <= kEpsilon) return Status::error("AimIkJob: zero up axis");
  if (glm::length(pole_vector) <= kEpsilon) return Status::error("AimIkJob: zero pole vector");
  if (scale_of(*joint) <= kEpsilon) return Status::error("AimIkJob: joint matrix has zero scale");
  if (glm::length(target - glm::vec3((*joint)[3])) <= kEpsilon)
    return Status::error("AimIkJob: target at the joint, no direction to aim in");
  return {};
}

Status AimIkJob::run() const {
  if (Status s = validate(); !s) return s;
  const glm::quat rotation = rotation_of(*joint);
  const glm::quat to_joint = glm::inverse(rotation);
  const glm::vec3 local_target = to_joint * (target - glm::vec3((*joint)[3])) / scale_of(*joint);
  const float r = glm::length(local_target);

  // The point of the ray offset + s forward (s > 0) at the target's distance from the joint:
  // turning it onto the target puts the target on the turned ray.
  const glm::vec3 f = glm::normalize(forward);
  const float of = glm::dot(offset, f);
  const float disc = of * of - glm::dot(offset, offset) + r * r;
  const float along = disc >= 0.0f ? -of + std::sqrt(disc) : -1.0f;
  const bool hit = along > 0.0f;
  const glm::vec3 aim_point = hit ? offset + along * f : f * r;

  const glm::vec3 dir = local_target / r;
  const glm::quat swing = arc(glm::normalize(aim_point), dir);
  const glm::quat full = twist(dir, swing * up, to_joint * pole_vector) * swing;
  *correction = weighted(glm::normalize(full), weight);
  if (reached != nullptr) *reached = hit;
  return {};
}

}  // namespace spindle::anim
