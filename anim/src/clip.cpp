#include <spindle/anim/clip.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include <spindle/anim/skeleton.h>

#include "finite.h"
#include "quantize.h"

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
  c.joint_count_ = static_cast<int>(tracks.size());
  c.tracks_ = std::move(tracks);
  return c;
}

namespace {

// Float rounding allowance for a vec3 component of magnitude <= m: decode (origin + u * step) and
// the lerps of both the float and the quantised sampler, a few ulps each.
float rounding_slack(float m) {
  return m * 0x1p-20f;
}

}  // namespace

core::Result<Clip> Clip::quantized() const {
  if (is_quantized()) return *this;
  Clip out;
  out.name_ = name_;
  out.duration_ = duration_;
  out.joint_count_ = joint_count_;
  QuantizedKeys& q = out.quantized_;

  std::size_t keys = 0;
  for (const JointTrack& t : tracks_)
    keys += t.translations.size() + t.rotations.size() + t.scales.size();
  const auto tracks = static_cast<std::size_t>(joint_count_);
  q.first.reserve(3 * tracks + 1);
  q.times.reserve(keys);
  q.values.reserve(keys);
  q.origin.reserve(2 * tracks);
  q.step.reserve(2 * tracks);

  // Returns the track's per-component bound, or a negative value if its range overflows.
  auto add_vec3 = [&](const std::vector<Vec3Key>& track) {
    glm::vec3 lo = track[0].value, hi = track[0].value;
    for (const Vec3Key& k : track) {
      lo = glm::min(lo, k.value);
      hi = glm::max(hi, k.value);
    }
    const glm::vec3 extent = hi - lo;
    if (!detail::finite(extent)) return -1.0f;
    const glm::vec3 step = extent / detail::kVec3Levels;
    q.first.push_back(static_cast<std::uint32_t>(q.times.size()));
    q.origin.push_back(lo);
    q.step.push_back(step);
    for (const Vec3Key& k : track) {
      q.times.push_back(k.time);
      q.values.push_back(detail::encode_vec3(k.value, lo, step));
    }
    float bound = 0.0f;
    for (int i = 0; i < 3; ++i) {
      if (extent[i] == 0.0f) continue;  // decodes to origin exactly, lerps of equal values too
      const float quant = step[i] > 0.0f ? step[i] * 0.5f : extent[i];  // step underflowed to 0
      bound = std::max(bound, quant + rounding_slack(std::max(std::abs(lo[i]), std::abs(hi[i]))));
    }
    return bound;
  };

  float min_dot = 1.0f;  // smallest |dot| between adjacent rotation keys
  QuantizationError& bound = q.bound;
  for (std::size_t j = 0; j < tracks; ++j) {
    const JointTrack& t = tracks_[j];
    const float bt = add_vec3(t.translations);
    q.first.push_back(static_cast<std::uint32_t>(q.times.size()));
    for (std::size_t k = 0; k < t.rotations.size(); ++k) {
      q.times.push_back(t.rotations[k].time);
      q.values.push_back(detail::encode_quat(t.rotations[k].value));
      if (k > 0)
        min_dot =
            std::min(min_dot, std::abs(glm::dot(t.rotations[k - 1].value, t.rotations[k].value)));
    }
    const float bs = add_vec3(t.scales);
    if (bt < 0.0f || bs < 0.0f)
      return core::Status::error("clip '" + name_ + "': joint " + std::to_string(j) + " " +
                                 (bt < 0.0f ? "translation" : "scale") +
                                 " range overflows a float, cannot quantise");
    bound.translation = std::max(bound.translation, bt);
    bound.scale = std::max(bound.scale, bs);
  }
  q.first.push_back(static_cast<std::uint32_t>(q.times.size()));

  // Rotation (derivation in clip.h): per stored component e, key chord c, nlerp divides by m.
  const float e = detail::kQuatStep * 0.5f + 0x1p-22f;
  const float c = 3.47f * e;
  const float m = std::sqrt((1.0f + min_dot) * 0.5f);
  bound.rotation = min_dot <= 2.0f * c + 1e-6f ? std::numbers::pi_v<float>
                                               : 2.0f * std::asin(std::min(1.0f, c / m)) + 2e-6f;
  return out;
}

std::vector<JointTrack> Clip::decoded_tracks() const {
  if (!is_quantized()) return tracks_;
  const QuantizedKeys& q = quantized_;
  std::vector<JointTrack> out(static_cast<std::size_t>(joint_count_));
  for (std::size_t j = 0; j < out.size(); ++j) {
    auto vec3_track = [&](std::size_t track, std::size_t range, std::vector<Vec3Key>& keys) {
      for (std::uint32_t k = q.first[track]; k < q.first[track + 1]; ++k)
        keys.push_back(
            {q.times[k], detail::decode_vec3(q.values[k], q.origin[range], q.step[range])});
    };
    vec3_track(3 * j, 2 * j, out[j].translations);
    for (std::uint32_t k = q.first[3 * j + 1]; k < q.first[3 * j + 2]; ++k)
      out[j].rotations.push_back({q.times[k], detail::decode_quat(q.values[k])});
    vec3_track(3 * j + 2, 2 * j + 1, out[j].scales);
  }
  return out;
}

std::size_t Clip::memory_bytes() const {
  std::size_t bytes = sizeof(Clip) + tracks_.capacity() * sizeof(JointTrack);
  for (const JointTrack& t : tracks_)
    bytes += (t.translations.capacity() + t.scales.capacity()) * sizeof(Vec3Key) +
             t.rotations.capacity() * sizeof(QuatKey);
  const QuantizedKeys& q = quantized_;
  bytes += q.first.capacity() * sizeof(q.first[0]) + q.times.capacity() * sizeof(q.times[0]) +
           q.values.capacity() * sizeof(q.values[0]) +
           (q.origin.capacity() + q.step.capacity()) * sizeof(glm::vec3);
  return bytes;
}

core::Status Clip::check_skeleton(const Skeleton& skeleton) const {
  if (joint_count() != skeleton.joint_count())
    return core::Status::error("clip '" + name_ + "': animates " + std::to_string(joint_count()) +
                               " joints, skeleton has " + std::to_string(skeleton.joint_count()));
  return {};
}

}  // namespace spindle::anim
