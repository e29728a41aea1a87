// physics_occlusion(): an AudioPluginConfig::occlusion query backed by a physics raycast, for
// games that use both plugins (audio itself does not depend on physics: include this header only
// where spindle::physics is linked).
//
// Usage:
//
//   auto& phys = engine.add_plugin<spindle::physics::PhysicsPlugin>();
//   engine.add_plugin<spindle::audio::AudioPlugin>(spindle::audio::AudioPluginConfig{
//       .occlusion = spindle::audio::physics_occlusion(phys.physics()),
//       .occlusion_access = spindle::core::Access{}.read<spindle::physics::Physics>()});
//
// A ray from the listener to the emitter that hits a body (other than at the emitter itself)
// gives `occluded` (default 0.8): the mixer muffles the voice rather than cutting it.
#pragma once

#include <functional>

#include <glm/glm.hpp>

#include <spindle/physics/world.h>

namespace spindle::audio {

inline std::function<float(glm::vec3, glm::vec3)> physics_occlusion(const physics::Physics& physics,
                                                                    float occluded = 0.8f,
                                                                    float emitter_radius = 0.5f) {
  return [&physics, occluded, emitter_radius](glm::vec3 listener, glm::vec3 emitter) -> float {
    const glm::vec3 d = emitter - listener;
    const float len = glm::length(d);
    if (len <= emitter_radius) return 0.0f;
    // Stop short of the emitter so its own body does not count.
    const glm::vec3 to = listener + d * ((len - emitter_radius) / len);
    return physics.raycast(listener, to) ? occluded : 0.0f;
  };
}

}  // namespace spindle::audio
