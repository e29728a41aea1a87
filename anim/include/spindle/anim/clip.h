// Clip: immutable runtime animation, one translation / rotation / scale track per joint, each
// with keyframes at arbitrary times. Clip::create() validates the editable tracks.
//
// Usage:
//
//   std::vector<spindle::anim::JointTrack> tracks(skeleton.joint_count());
//   tracks[0].translations = {{0.0f, {0, 0, 0}}, {1.0f, {0, 2, 0}}};
//   tracks[0].rotations = {{0.0f, glm::quat(1, 0, 0, 0)}};
//   tracks[0].scales = {{0.0f, glm::vec3(1)}};
//   ...
//   spindle::core::Result<spindle::anim::Clip> clip =
//       spindle::anim::Clip::create("walk", 1.0f, std::move(tracks));
//   if (clip) if (auto s = clip.value().check_skeleton(skeleton); !s) report(s.message());
//
// Every track needs at least one key (a one-key track is constant). Before the first key and
// after the last, a track holds its end value; looping is the player's business (wrap the time).
#pragma once

#include <span>
#include <string>
#include <vector>

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <spindle/core/result.h>

namespace spindle::anim {

class Skeleton;

struct Vec3Key {
  float time = 0.0f;  // seconds from the clip start
  glm::vec3 value{0.0f};
};

struct QuatKey {
  float time = 0.0f;  // seconds from the clip start
  glm::quat value{1.0f, 0.0f, 0.0f, 0.0f};
};

// The keys of one joint; times strictly increasing within each track, in [0, duration].
struct JointTrack {
  std::vector<Vec3Key> translations;
  std::vector<QuatKey> rotations;
  std::vector<Vec3Key> scales;
};

class Clip {
 public:
  Clip() = default;

  // Rejects: non-finite or non-positive duration, no tracks, empty tracks, times that are not
  // finite, outside [0, duration] or not strictly increasing, non-finite values, zero-length
  // rotations. Rotation keys are normalised.
  static core::Result<Clip> create(std::string name, float duration,
                                   std::vector<JointTrack> tracks);

  const std::string& name() const { return name_; }
  float duration() const { return duration_; }
  int joint_count() const { return static_cast<int>(tracks_.size()); }
  std::span<const JointTrack> tracks() const { return tracks_; }

  // Error when the clip animates a different number of joints than the skeleton has.
  core::Status check_skeleton(const Skeleton& skeleton) const;

 private:
  std::string name_;
  float duration_ = 0.0f;
  std::vector<JointTrack> tracks_;
};

}  // namespace spindle::anim
