#include <spindle/anim/clip.h>

#include <cmath>

#include <spindle/anim/skeleton.h>

#include "finite.h"

namespace spindle::anim {
namespace {

using detail::finite;

template <class Key>
core::Status check_track(const std::string& clip, int joint, const char* kind,
                         const std::vector<Key>& keys, float duration) {
  const std::string where =
      "clip '" + clip + "': joint " + std::to_string(joint) + " " + kind + " track";
  if (keys.empty()) return core::Status::error(where + " has no keys");
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const std::string key = where + " key " + std::to_string(k);
    const float t = keys[k].time;
    if (!std::isfinite(t)) return core::Status::error(key + ": time is not finite");
    if (t < 0.0f || t > duration)
      return core::Status::error(key + ": time " + std::to_string(t) + " outside [0, " +
                                 std::to_string(duration) + "]");
    if (k > 0 && !(t > keys[k - 1].time))
      return core::Status::error(key + ": times not strictly increasing");
    if (!finite(keys[k].value)) return core::Status::error(key + ": value is not finite");
  }
  return {};
}

}  // namespace

core::Result<Clip> Clip::create(std::string name, float duration, std::vector<JointTrack> tracks) {
  if (!std::isfinite(duration) || duration <= 0.0f)
    return core::Status::error("clip '" + name + "': duration " + std::to_string(duration) +
                               " must be finite and > 0");
  if (tracks.empty()) return core::Status::error("clip '" + name + "': no joint tracks");
  if (tracks.size() > static_cast<std::size_t>(kMaxJoints))
    return core::Status::error("clip '" + name + "': too many joint tracks");
  for (std::size_t j = 0; j < tracks.size(); ++j) {
    const int joint = static_cast<int>(j);
    if (core::Status s = check_track(name, joint, "translation", tracks[j].translations, duration);
        !s)
      return s;
    if (core::Status s = check_track(name, joint, "rotation", tracks[j].rotations, duration); !s)
      return s;
    if (core::Status s = check_track(name, joint, "scale", tracks[j].scales, duration); !s)
      return s;
    for (std::size_t k = 0; k < tracks[j].rotations.size(); ++k) {
      glm::quat& q = tracks[j].rotations[k].value;
      if (glm::dot(q, q) < 1e-12f)
        return core::Status::error("clip '" + name + "': joint " + std::to_string(j) +
                                   " rotation track key " + std::to_string(k) +
                                   ": zero-length rotation");
      q = glm::normalize(q);
    }
  }
  Clip c;
  c.name_ = std::move(name);
  c.duration_ = duration;
  c.tracks_ = std::move(tracks);
  return c;
}

core::Status Clip::check_skeleton(const Skeleton& skeleton) const {
  if (joint_count() != skeleton.joint_count())
    return core::Status::error("clip '" + name_ + "': animates " + std::to_string(joint_count()) +
                               " joints, skeleton has " + std::to_string(skeleton.joint_count()));
  return {};
}

}  // namespace spindle::anim
