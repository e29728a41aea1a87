#include <spindle/anim/sampling_job.h>

#include <algorithm>
#include <cmath>

namespace spindle::anim {
namespace {

// Forward steps tried before a binary search is cheaper.
constexpr int kMaxForwardSteps = 4;

template <class Key>
std::uint32_t seek(const std::vector<Key>& keys, float t, std::uint32_t cursor, bool forward,
                   std::uint64_t& searches) {
  const auto n = static_cast<std::uint32_t>(keys.size());
  if (forward && cursor < n) {
    int steps = 0;
    while (cursor + 1 < n && keys[cursor + 1].time <= t && steps < kMaxForwardSteps) {
      ++cursor;
      ++steps;
    }
    if (cursor + 1 >= n || keys[cursor + 1].time > t) return cursor;
  }
  ++searches;
  auto it = std::upper_bound(keys.begin(), keys.end(), t,
                             [](float time, const Key& k) { return time < k.time; });
  const auto after = static_cast<std::uint32_t>(it - keys.begin());
  return after == 0 ? 0 : after - 1;
}

// 0 when t is at or before keys[k] or k is the last key; otherwise the fraction toward k + 1.
template <class Key>
float alpha(const std::vector<Key>& keys, std::uint32_t k, float t) {
  if (k + 1 >= keys.size() || t <= keys[k].time) return 0.0f;
  return (t - keys[k].time) / (keys[k + 1].time - keys[k].time);
}

glm::vec3 sample(const std::vector<Vec3Key>& keys, std::uint32_t k, float t) {
  const float a = alpha(keys, k, t);
  if (a == 0.0f) return keys[k].value;
  return keys[k].value + (keys[k + 1].value - keys[k].value) * a;
}

glm::quat sample(const std::vector<QuatKey>& keys, std::uint32_t k, float t) {
  const float a = alpha(keys, k, t);
  if (a == 0.0f) return keys[k].value;
  const glm::quat q0 = keys[k].value;
  glm::quat q1 = keys[k + 1].value;
  if (glm::dot(q0, q1) < 0.0f) q1 = -q1;  // shortest path
  return glm::normalize(q0 * (1.0f - a) + q1 * a);
}

}  // namespace

void SamplingCache::resize(int joint_count) {
  cursors_.assign(static_cast<std::size_t>(std::max(joint_count, 0)) * 3, 0);
  clip_ = nullptr;
}

core::Status SamplingJob::validate() const {
  if (clip == nullptr) return core::Status::error("SamplingJob: no clip");
  if (cache == nullptr) return core::Status::error("SamplingJob: no cache");
  if (!std::isfinite(time)) return core::Status::error("SamplingJob: time is not finite");
  const int n = clip->joint_count();
  if (cache->joint_capacity() < n)
    return core::Status::error("SamplingJob: cache holds " +
                               std::to_string(cache->joint_capacity()) + " joints, clip has " +
                               std::to_string(n));
  if (output.size() != static_cast<std::size_t>(n))
    return core::Status::error("SamplingJob: output has " + std::to_string(output.size()) +
                               " joints, clip has " + std::to_string(n));
  return {};
}

core::Status SamplingJob::run() const {
  if (core::Status s = validate(); !s) return s;
  SamplingCache& c = *cache;
  const bool forward = c.clip_ == clip && time >= c.time_;
  std::span<const JointTrack> tracks = clip->tracks();
  std::uint32_t* cur = c.cursors_.data();
  for (std::size_t j = 0; j < tracks.size(); ++j, cur += 3) {
    const JointTrack& tr = tracks[j];
    cur[0] = seek(tr.translations, time, cur[0], forward, c.searches_);
    cur[1] = seek(tr.rotations, time, cur[1], forward, c.searches_);
    cur[2] = seek(tr.scales, time, cur[2], forward, c.searches_);
    output[j].translation = sample(tr.translations, cur[0], time);
    output[j].rotation = sample(tr.rotations, cur[1], time);
    output[j].scale = sample(tr.scales, cur[2], time);
  }
  c.clip_ = clip;
  c.time_ = time;
  return {};
}

}  // namespace spindle::anim
