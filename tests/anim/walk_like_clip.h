// A clip shaped like the anim-anchor workload's "walk": every translation, rotation and scale
// track of every joint keyed at 30 keys/s (31 keys for 1 s, last = first), per-joint sine motion.
#pragma once

#include <cmath>
#include <numbers>
#include <vector>

#include <spindle/anim/clip.h>
#include <spindle/anim/skeleton.h>

namespace spindle::anim::test {

// Offsets the motion from the skeleton's rest pose: root translation +-5 cm, others +-1 cm,
// rotations up to +-0.5 rad about two axes, uniform scale +-5%.
inline Clip make_walk_like_clip(const Skeleton& skeleton, int frames = 30, float duration = 1.0f) {
  std::vector<JointTrack> tracks(static_cast<std::size_t>(skeleton.joint_count()));
  for (std::size_t j = 0; j < tracks.size(); ++j) {
    const JointTransform& rest = skeleton.rest_pose()[j];
    const float phase = 0.37f * static_cast<float>(j);
    const float reach = j == 0 ? 0.05f : 0.01f;
    for (int f = 0; f <= frames; ++f) {
      const float t = duration * static_cast<float>(f) / static_cast<float>(frames);
      const float w = 2.0f * std::numbers::pi_v<float> * static_cast<float>(f % frames) /
                      static_cast<float>(frames);
      const float s = std::sin(w + phase), c = std::cos(w + 2.0f * phase);
      tracks[j].translations.push_back({t, rest.translation + glm::vec3(reach * s, reach * c, 0)});
      tracks[j].rotations.push_back(
          {t, rest.rotation * glm::angleAxis(0.5f * s, glm::vec3(1, 0, 0)) *
                  glm::angleAxis(0.5f * c, glm::vec3(0, 0, 1))});
      tracks[j].scales.push_back({t, glm::vec3(1.0f + 0.05f * s)});
    }
  }
  return Clip::create("walk_like", duration, std::move(tracks)).value();
}

}  // namespace spindle::anim::test
