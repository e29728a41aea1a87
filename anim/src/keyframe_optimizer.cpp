#include <spindle/anim/keyframe_optimizer.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <spindle/anim/local_to_model_job.h>
#include <spindle/anim/sampling_job.h>

namespace spindle::anim {
namespace {

// The joint and one point `distance` along each of its axes, in model space.
using Watched = std::array<glm::vec3, 4>;

Watched watched(const glm::mat4& m, float distance) {
  return {glm::vec3(m[3]), glm::vec3(m * glm::vec4(distance, 0, 0, 1)),
          glm::vec3(m * glm::vec4(0, distance, 0, 1)), glm::vec3(m * glm::vec4(0, 0, distance, 1))};
}

// Every distinct key time of the clip and three evenly spaced points between neighbours.
std::vector<float> check_times(const Clip& clip) {
  std::vector<float> keys;
  for (const JointTrack& t : clip.tracks()) {
    for (const Vec3Key& k : t.translations) keys.push_back(k.time);
    for (const QuatKey& k : t.rotations) keys.push_back(k.time);
    for (const Vec3Key& k : t.scales) keys.push_back(k.time);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<float> times;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i > 0)
      for (float f : {0.25f, 0.5f, 0.75f})
        times.push_back(keys[i - 1] + f * (keys[i] - keys[i - 1]));
    times.push_back(keys[i]);
  }
  return times;
}

// The parts of JointTrack and JointTransform the optimiser walks over, one at a time.
template <class Keys, class Value>
struct Part {
  std::vector<Keys> JointTrack::*keys;
  Value JointTransform::*value;
};

}  // namespace

core::Status KeyframeOptimizer::validate(const Clip& clip, const Skeleton& skeleton) const {
  if (!std::isfinite(tolerance) || tolerance <= 0.0f)
    return core::Status::error("KeyframeOptimizer: tolerance " + std::to_string(tolerance) +
                               " must be finite and > 0");
  if (!std::isfinite(distance) || distance < 0.0f)
    return core::Status::error("KeyframeOptimizer: distance " + std::to_string(distance) +
                               " must be finite and >= 0");
  if (clip.is_quantized())
    return core::Status::error("KeyframeOptimizer: clip '" + clip.name() +
                               "' has 16-bit keys; optimise the float clip, then compress");
  if (clip.tracks().empty())
    return core::Status::error("KeyframeOptimizer: clip '" + clip.name() + "' has no tracks");
  if (core::Status s = clip.check_skeleton(skeleton); !s)
    return core::Status::error("KeyframeOptimizer: " + s.message());
  return {};
}

core::Result<Clip> KeyframeOptimizer::run(const Clip& clip, const Skeleton& skeleton) const {
  if (core::Status s = validate(clip, skeleton); !s) return s;
  const auto joints = static_cast<std::size_t>(clip.joint_count());
  const std::vector<float> times = check_times(clip);
  std::span<const int> parents = skeleton.parents();

  // Reference points from the original clip, and the current local pose at every check time.
  std::vector<JointTransform> local(times.size() * joints);
  std::vector<Watched> reference(times.size() * joints);
  std::vector<glm::mat4> model(joints);
  SamplingCache cache(clip.joint_count());
  const auto pose_at = [&](std::size_t c) {
    return std::span<JointTransform>(local).subspan(c * joints, joints);
  };
  for (std::size_t c = 0; c < times.size(); ++c) {
    if (core::Status s =
            SamplingJob{.clip = &clip, .time = times[c], .cache = &cache, .output = pose_at(c)}
                .run();
        !s)
      return s;
    if (core::Status s =
            LocalToModelJob{.skeleton = &skeleton, .local = pose_at(c), .model = model}.run();
        !s)
      return s;
    for (std::size_t j = 0; j < joints; ++j)
      reference[c * joints + j] = watched(model[j], distance);
  }

  std::vector<JointTrack> tracks(clip.tracks().begin(), clip.tracks().end());
  std::vector<JointTransform> candidate(joints);
  std::vector<char> below(joints);  // joints whose points a change to joint j moves
  SamplingCache segment_cache(1);
  std::vector<JointTransform> segment_value(1);

  // Tries dropping each inner key of one track of joint j; keeps the pose cache in step.
  const auto optimise = [&](std::size_t j, auto part) -> core::Status {
    auto& keys = tracks[j].*(part.keys);
    if (keys.size() < 3) return {};
    std::vector<char> keep(keys.size(), 1);
    std::size_t prev = 0;
    for (std::size_t k = 1; k + 1 < keys.size(); ++k) {
      // The track as it would be between the kept key before k and key k + 1, sampled by the
      // runtime's own sampler so that the check sees the bits a game will.
      JointTrack segment{
          {{0.0f, glm::vec3(0)}}, {{0.0f, glm::quat(1, 0, 0, 0)}}, {{0.0f, glm::vec3(1)}}};
      segment.*(part.keys) = {keys[prev], keys[k + 1]};
      core::Result<Clip> seg = Clip::create("segment", clip.duration(), {segment});
      if (!seg) return seg.status();
      segment_cache.invalidate();  // a new clip, perhaps at the last one's address
      const auto first = static_cast<std::size_t>(
          std::upper_bound(times.begin(), times.end(), keys[prev].time) - times.begin());
      const auto last = static_cast<std::size_t>(
          std::lower_bound(times.begin(), times.end(), keys[k + 1].time) - times.begin());
      bool fits = true;
      for (std::size_t c = first; c < last && fits; ++c) {
        if (core::Status s = SamplingJob{.clip = &seg.value(),
                                         .time = times[c],
                                         .cache = &segment_cache,
                                         .output = segment_value}
                                 .run();
            !s)
          return s;
        std::span<const JointTransform> pose = pose_at(c);
        std::copy(pose.begin(), pose.end(), candidate.begin());
        candidate[j].*(part.value) = segment_value[0].*(part.value);
        if (core::Status s =
                LocalToModelJob{.skeleton = &skeleton, .local = candidate, .model = model}.run();
            !s)
          return s;
        for (std::size_t i = j; i < joints && fits; ++i) {
          if (!below[i]) continue;
          const Watched w = watched(model[i], distance);
          const Watched& r = reference[c * joints + i];
          for (std::size_t p = 0; p < w.size(); ++p)
            if (glm::length(w[p] - r[p]) > tolerance) fits = false;
        }
      }
      if (!fits) {
        prev = k;
        continue;
      }
      keep[k] = 0;
      for (std::size_t c = first; c < last; ++c) {
        (void)SamplingJob{.clip = &seg.value(),
                          .time = times[c],
                          .cache = &segment_cache,
                          .output = segment_value}
            .run();
        pose_at(c)[j].*(part.value) = segment_value[0].*(part.value);
      }
    }
    std::size_t out = 0;
    for (std::size_t k = 0; k < keys.size(); ++k)
      if (keep[k]) keys[out++] = keys[k];
    keys.resize(out);
    return {};
  };

  for (std::size_t j = 0; j < joints; ++j) {
    for (std::size_t i = 0; i < joints; ++i)
      below[i] =
          i == j || (i > j && parents[i] >= 0 && below[static_cast<std::size_t>(parents[i])]);
    if (core::Status s = optimise(
            j, Part<Vec3Key, glm::vec3>{&JointTrack::translations, &JointTransform::translation});
        !s)
      return s;
    if (core::Status s = optimise(
            j, Part<QuatKey, glm::quat>{&JointTrack::rotations, &JointTransform::rotation});
        !s)
      return s;
    if (core::Status s =
            optimise(j, Part<Vec3Key, glm::vec3>{&JointTrack::scales, &JointTransform::scale});
        !s)
      return s;
  }
  return Clip::create(clip.name(), clip.duration(), std::move(tracks));
}

}  // namespace spindle::anim
