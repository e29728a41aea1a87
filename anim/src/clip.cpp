#include <spindle/anim/clip.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include <spindle/anim/skeleton.h>

#include "compressed_view.h"
#include "finite.h"
#include "fit.h"
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

// The 16-bit range of one translation / scale track and its per-component error bound; bound < 0
// when the range overflows a float.
struct Vec3Range {
  glm::vec3 origin{0.0f};
  glm::vec3 step{0.0f};
  float bound = -1.0f;
};

Vec3Range vec3_range(const std::vector<Vec3Key>& track) {
  glm::vec3 lo = track[0].value, hi = track[0].value;
  for (const Vec3Key& k : track) {
    lo = glm::min(lo, k.value);
    hi = glm::max(hi, k.value);
  }
  const glm::vec3 extent = hi - lo;
  if (!detail::finite(extent)) return {};
  Vec3Range r{.origin = lo, .step = extent / detail::kVec3Levels, .bound = 0.0f};
  for (int i = 0; i < 3; ++i) {
    if (extent[i] == 0.0f) continue;  // decodes to origin exactly, lerps of equal values too
    const float quant = r.step[i] > 0.0f ? r.step[i] * 0.5f : extent[i];  // step underflowed to 0
    r.bound = std::max(r.bound, quant + rounding_slack(std::max(std::abs(lo[i]), std::abs(hi[i]))));
  }
  return r;
}

// Smallest |dot| between adjacent rotation keys of the track, or `so_far` if larger.
float min_adjacent_dot(const std::vector<QuatKey>& track, float so_far) {
  for (std::size_t k = 1; k < track.size(); ++k)
    so_far = std::min(so_far, std::abs(glm::dot(track[k - 1].value, track[k].value)));
  return so_far;
}

// Rotation (derivation in clip.h): per stored component e, key chord c, nlerp divides by m.
float rotation_bound(float min_dot) {
  const float e = detail::kQuatStep * 0.5f + 0x1p-22f;
  const float c = 3.47f * e;
  const float m = std::sqrt((1.0f + min_dot) * 0.5f);
  return min_dot <= 2.0f * c + 1e-6f ? std::numbers::pi_v<float>
                                     : 2.0f * std::asin(std::min(1.0f, c / m)) + 2e-6f;
}

core::Status range_overflow(const std::string& clip, std::size_t joint, bool translation) {
  return core::Status::error("clip '" + clip + "': joint " + std::to_string(joint) + " " +
                             (translation ? "translation" : "scale") +
                             " range overflows a float, cannot quantise");
}

}  // namespace

core::Result<Clip> Clip::quantized() const {
  if (is_quantized() && !is_compressed()) return *this;
  if (is_compressed())
    return core::Status::error("clip '" + name_ +
                               "': is compressed; quantise the float clip it came from");
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

  auto add_vec3 = [&](const std::vector<Vec3Key>& track) {
    const Vec3Range r = vec3_range(track);
    q.first.push_back(static_cast<std::uint32_t>(q.times.size()));
    q.origin.push_back(r.origin);
    q.step.push_back(r.step);
    for (const Vec3Key& k : track) {
      q.times.push_back(k.time);
      q.values.push_back(detail::encode_vec3(k.value, r.origin, r.step));
    }
    return r.bound;
  };

  float min_dot = 1.0f;
  QuantizationError& bound = q.bound;
  for (std::size_t j = 0; j < tracks; ++j) {
    const JointTrack& t = tracks_[j];
    const float bt = add_vec3(t.translations);
    q.first.push_back(static_cast<std::uint32_t>(q.times.size()));
    for (const QuatKey& k : t.rotations) {
      q.times.push_back(k.time);
      q.values.push_back(detail::encode_quat(k.value));
    }
    min_dot = min_adjacent_dot(t.rotations, min_dot);
    const float bs = add_vec3(t.scales);
    if (bt < 0.0f || bs < 0.0f) return range_overflow(name_, j, bt < 0.0f);
    bound.translation = std::max(bound.translation, bt);
    bound.scale = std::max(bound.scale, bs);
  }
  q.first.push_back(static_cast<std::uint32_t>(q.times.size()));
  bound.rotation = rotation_bound(min_dot);
  return out;
}

core::Result<Clip> Clip::compressed() const {
  if (is_compressed()) return *this;
  const std::string where = "clip '" + name_ + "': ";
  if (is_quantized())
    return core::Status::error(where + "is quantized(); compress the float clip it came from");
  const auto joints = static_cast<std::size_t>(joint_count_);
  if (3 * joints > 0xffff)
    return core::Status::error(where + std::to_string(joints) +
                               " joints, a compressed clip holds at most 21845");

  Clip out;
  out.name_ = name_;
  out.duration_ = duration_;
  out.joint_count_ = joint_count_;
  CompressedKeys& c = out.compressed_;

  for (const JointTrack& t : tracks_) {
    for (const Vec3Key& k : t.translations) c.times.push_back(k.time);
    for (const QuatKey& k : t.rotations) c.times.push_back(k.time);
    for (const Vec3Key& k : t.scales) c.times.push_back(k.time);
  }
  std::sort(c.times.begin(), c.times.end());
  c.times.erase(std::unique(c.times.begin(), c.times.end()), c.times.end());
  if (c.times.size() > 0xffff)
    return core::Status::error(where + std::to_string(c.times.size()) +
                               " distinct key times, a compressed clip holds at most 65535");
  detail::fit(c.times);
  const auto time_index = [&](float t) {
    return static_cast<std::uint16_t>(std::lower_bound(c.times.begin(), c.times.end(), t) -
                                      c.times.begin());
  };

  struct StreamKey {
    std::uint16_t track;
    std::uint16_t time;
    detail::Packed16x3 value;
  };
  std::vector<StreamKey> stream;
  // Keys 2 and later, each with the time of its track's previous key (when playback needs it).
  struct Later {
    float needed;
    StreamKey key;
  };
  std::vector<Later> later;
  stream.reserve(3 * joints * 2);
  c.origin.reserve(2 * joints);
  c.step.reserve(2 * joints);
  const auto add_track = [&](std::uint16_t track, const auto& keys, auto encode) {
    for (std::size_t k = 0; k < keys.size(); ++k) {
      const StreamKey key{track, time_index(keys[k].time), encode(keys[k].value)};
      if (k < 2)
        stream.push_back(key);
      else
        later.push_back({keys[k - 1].time, key});
    }
    if (keys.size() == 1) stream.push_back(stream.back());  // every track holds two keys
  };

  float min_dot = 1.0f;
  for (std::size_t j = 0; j < joints; ++j) {
    const JointTrack& t = tracks_[j];
    const Vec3Range rt = vec3_range(t.translations), rs = vec3_range(t.scales);
    if (rt.bound < 0.0f || rs.bound < 0.0f) return range_overflow(name_, j, rt.bound < 0.0f);
    c.origin.push_back(rt.origin);
    c.step.push_back(rt.step);
    c.origin.push_back(rs.origin);
    c.step.push_back(rs.step);
    c.bound.translation = std::max(c.bound.translation, rt.bound);
    c.bound.scale = std::max(c.bound.scale, rs.bound);
    min_dot = min_adjacent_dot(t.rotations, min_dot);
    const auto track = static_cast<std::uint16_t>(3 * j);
    add_track(track, t.translations,
              [&](const glm::vec3& v) { return detail::encode_vec3(v, rt.origin, rt.step); });
    add_track(static_cast<std::uint16_t>(track + 1), t.rotations,
              [](const glm::quat& q) { return detail::encode_quat(q); });
    add_track(static_cast<std::uint16_t>(track + 2), t.scales,
              [&](const glm::vec3& v) { return detail::encode_vec3(v, rs.origin, rs.step); });
  }
  c.bound.rotation = rotation_bound(min_dot);

  // (needed, track) is unique: a track's keys are needed at strictly increasing times.
  std::sort(later.begin(), later.end(), [](const Later& a, const Later& b) {
    return a.needed != b.needed ? a.needed < b.needed : a.key.track < b.key.track;
  });
  c.consumed.reserve(c.times.size());
  std::size_t l = 0;
  for (float t : c.times) {
    while (l < later.size() && later[l].needed <= t) stream.push_back(later[l++].key);
    c.consumed.push_back(static_cast<std::uint32_t>(stream.size()));
  }

  const bool narrow_tracks = 3 * joints <= 256, narrow_times = c.times.size() <= 256;
  c.values.reserve(stream.size());
  for (const StreamKey& k : stream) {
    c.values.push_back(k.value);
    if (narrow_tracks)
      c.tracks8.push_back(static_cast<std::uint8_t>(k.track));
    else
      c.tracks16.push_back(k.track);
    if (narrow_times)
      c.times8.push_back(static_cast<std::uint8_t>(k.time));
    else
      c.times16.push_back(k.time);
  }
  detail::fit(c.tracks8);
  detail::fit(c.tracks16);
  detail::fit(c.times8);
  detail::fit(c.times16);
  return out;
}

detail::CompressedView Clip::compressed_view() const {
  const CompressedKeys& c = compressed_;
  return {.values = c.values,
          .tracks8 = c.tracks8,
          .tracks16 = c.tracks16,
          .times8 = c.times8,
          .times16 = c.times16,
          .times = c.times,
          .consumed = c.consumed,
          .origin = c.origin,
          .step = c.step};
}

std::vector<JointTrack> Clip::decoded_tracks() const {
  if (!is_quantized()) return tracks_;
  if (is_compressed()) {
    const CompressedKeys& c = compressed_;
    std::vector<JointTrack> out(static_cast<std::size_t>(joint_count_));
    // Stream order keeps each track's keys in time order; one-key tracks are stored twice.
    for (std::size_t i = 0; i < c.values.size(); ++i) {
      const std::size_t track = c.tracks8.empty() ? c.tracks16[i] : c.tracks8[i];
      const std::size_t j = track / 3u, part = track % 3u;
      const float t = c.times[c.times8.empty() ? c.times16[i] : c.times8[i]];
      if (part == 1) {
        std::vector<QuatKey>& keys = out[j].rotations;
        if (keys.empty() || keys.back().time < t)
          keys.push_back({t, detail::decode_quat(c.values[i])});
        continue;
      }
      std::vector<Vec3Key>& keys = part == 0 ? out[j].translations : out[j].scales;
      const std::size_t r = 2 * j + part / 2;
      if (keys.empty() || keys.back().time < t)
        keys.push_back({t, detail::decode_vec3(c.values[i], c.origin[r], c.step[r])});
    }
    return out;
  }
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
  const CompressedKeys& c = compressed_;
  bytes += c.values.capacity() * sizeof(c.values[0]) + c.tracks8.capacity() +
           c.tracks16.capacity() * 2 + c.times8.capacity() + c.times16.capacity() * 2 +
           c.times.capacity() * sizeof(float) + c.consumed.capacity() * sizeof(std::uint32_t) +
           (c.origin.capacity() + c.step.capacity()) * sizeof(glm::vec3);
  return bytes;
}

core::Status Clip::check_skeleton(const Skeleton& skeleton) const {
  if (joint_count() != skeleton.joint_count())
    return core::Status::error("clip '" + name_ + "': animates " + std::to_string(joint_count()) +
                               " joints, skeleton has " + std::to_string(skeleton.joint_count()));
  return {};
}

}  // namespace spindle::anim
