#include <spindle/anim/root_motion.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include <glm/gtc/quaternion.hpp>

#include <spindle/base/assert.h>

#include "finite.h"
#include "playback_range.h"

namespace spindle::anim {
namespace {

using core::Status;

const glm::vec3 kUp(0.0f, 1.0f, 0.0f);

// The twist of q about +y, in (-pi, pi].
float yaw_of(const glm::quat& q) {
  const float yaw = 2.0f * std::atan2(q.y, q.w);
  return std::remainder(yaw, 2.0f * std::numbers::pi_v<float>);
}

glm::vec3 turn(float yaw, const glm::vec3& v) {
  return glm::angleAxis(yaw, kUp) * v;
}

glm::vec3 horizontal(const glm::vec3& v) {
  return {v.x, 0.0f, v.z};
}

// A then B (B in the frame A ends in).
RootMotionDelta compose(const RootMotionDelta& a, const RootMotionDelta& b) {
  return {a.translation + turn(a.yaw, b.translation), a.yaw + b.yaw};
}

Status check_cache(const char* job, const SamplingCache* cache) {
  if (cache == nullptr || cache->joint_capacity() < 1)
    return Status::error(std::string(job) + ": needs a SamplingCache with room for 1 joint");
  return {};
}

}  // namespace

core::Result<RootMotion> RootMotion::create(const Clip& clip, int joint) {
  if (joint < 0 || joint >= clip.joint_count())
    return Status::error("RootMotion: joint " + std::to_string(joint) + " not in clip '" +
                         clip.name() + "' (" + std::to_string(clip.joint_count()) + " joints)");
  std::vector<JointTrack> tracks = clip.decoded_tracks();
  std::vector<JointTrack> root{std::move(tracks[static_cast<std::size_t>(joint)])};
  core::Result<Clip> one = Clip::create(clip.name() + " root", clip.duration(), std::move(root));
  if (!one) return Status::error("RootMotion: " + one.message());
  RootMotion motion;
  motion.root_ = std::move(one.value());
  motion.joint_ = joint;
  SamplingCache cache(1);
  const SamplingJob start{
      .clip = &motion.root_, .time = 0.0f, .cache = &cache, .output = {&motion.start_, 1}};
  if (Status s = start.run(); !s) return Status::error("RootMotion: " + s.message());
  return motion;
}

namespace {

JointTransform sample_root(const Clip& root, double time, SamplingCache* cache) {
  JointTransform out;
  const SamplingJob job{
      .clip = &root, .time = static_cast<float>(time), .cache = cache, .output = {&out, 1}};
  [[maybe_unused]] const Status sampled = job.run();
  SPINDLE_ASSERT(sampled.ok(), "RootMotion: sampling a checked one-joint clip cannot fail");
  return out;
}

}  // namespace

Status RootMotionJob::validate() const {
  if (motion == nullptr || motion->joint() < 0)
    return Status::error("RootMotionJob: no root motion (or a default-constructed one)");
  if (output == nullptr) return Status::error("RootMotionJob: no output");
  if (Status s = check_cache("RootMotionJob", cache); !s) return s;
  return detail::check_playback("RootMotionJob", from, to, motion->duration(), loop);
}

Status RootMotionJob::run() const {
  if (Status s = validate(); !s) return s;
  const float start_yaw = yaw_of(motion->start_.rotation);
  RootMotionDelta total;
  detail::for_each_piece(from, to, motion->duration(), loop, [&](const detail::PlaybackPiece& p) {
    if (p.begin == p.end) return;
    const JointTransform a = sample_root(motion->root_, p.begin, cache);
    const JointTransform b = sample_root(motion->root_, p.end, cache);
    const float yaw_a = yaw_of(a.rotation);
    // The piece's motion in the frame of the clip's start heading turned by what the root had
    // turned at its beginning.
    const RootMotionDelta piece{
        turn(start_yaw - yaw_a, horizontal(b.translation - a.translation)),
        std::remainder(yaw_of(b.rotation) - yaw_a, 2.0f * std::numbers::pi_v<float>)};
    total = compose(total, piece);
  });
  *output = total;
  return {};
}

Status RootMotionRemovalJob::validate() const {
  if (motion == nullptr || motion->joint() < 0)
    return Status::error("RootMotionRemovalJob: no root motion (or a default-constructed one)");
  if (Status s = check_cache("RootMotionRemovalJob", cache); !s) return s;
  if (!std::isfinite(time)) return Status::error("RootMotionRemovalJob: time is not finite");
  if (pose.size() <= static_cast<std::size_t>(motion->joint()))
    return Status::error("RootMotionRemovalJob: pose has " + std::to_string(pose.size()) +
                         " joints, the root is joint " + std::to_string(motion->joint()));
  return {};
}

Status RootMotionRemovalJob::run() const {
  if (Status s = validate(); !s) return s;
  const JointTransform now = sample_root(motion->root_, time, cache);
  JointTransform& root = pose[static_cast<std::size_t>(motion->joint())];
  root.translation -= horizontal(now.translation - motion->start_.translation);
  const float yaw = yaw_of(now.rotation) - yaw_of(motion->start_.rotation);
  root.rotation = glm::normalize(glm::angleAxis(-yaw, kUp) * root.rotation);
  return {};
}

Status RootMotionBlendJob::validate() const {
  if (output == nullptr) return Status::error("RootMotionBlendJob: no output");
  if (weights.size() != deltas.size())
    return Status::error("RootMotionBlendJob: " + std::to_string(deltas.size()) + " deltas but " +
                         std::to_string(weights.size()) + " weights");
  for (std::size_t i = 0; i < deltas.size(); ++i) {
    if (!(std::isfinite(weights[i]) && weights[i] >= 0.0f))
      return Status::error("RootMotionBlendJob: weight " + std::to_string(i) +
                           " must be finite and >= 0");
    if (!detail::finite(deltas[i].translation) || !std::isfinite(deltas[i].yaw))
      return Status::error("RootMotionBlendJob: delta " + std::to_string(i) + " is not finite");
  }
  return {};
}

Status RootMotionBlendJob::run() const {
  if (Status s = validate(); !s) return s;
  float total = 0.0f;
  RootMotionDelta sum;
  for (std::size_t i = 0; i < deltas.size(); ++i) {
    total += weights[i];
    sum.translation += weights[i] * deltas[i].translation;
    sum.yaw += weights[i] * deltas[i].yaw;
  }
  *output =
      total > 0.0f ? RootMotionDelta{sum.translation / total, sum.yaw / total} : RootMotionDelta{};
  return {};
}

}  // namespace spindle::anim
