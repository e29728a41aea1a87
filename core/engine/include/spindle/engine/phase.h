// Phase: where a stage sits in the frame. A name and a number; stages run in ascending number,
// then in registration order. Core declares the two it knows (Phase::Input, Phase::Gameplay); each
// plugin declares its own next to its stages (physics 300, transforms 400, animation 500, render
// preparation 600, render 700 for those that ship with Spindle).
//
// Usage:
//
//   inline constexpr spindle::core::Phase kAiPhase{"ai", 250};  // after gameplay, before physics
//   engine.add_stage({.name = "think", .phase = kAiPhase, .run = think});
#pragma once

#include <cstdint>

namespace spindle::core {

// Where a stage sits in the frame: stages run in ascending `order`, then in registration order.
// Core declares the phases it knows; a plugin declares its own, e.g.
//   inline constexpr spindle::core::Phase kPhysicsPhase{"physics", 300};
// Two phases with the same order are the same phase.
struct Phase {
  const char* name = "gameplay";  // for logs and reports; must outlive the engine (a literal)
  std::int32_t order = 200;

  static const Phase Input;     // 100: input and what reacts to it first
  static const Phase Gameplay;  // 200: game logic (the default)

  friend constexpr bool operator==(Phase a, Phase b) { return a.order == b.order; }
  friend constexpr bool operator<(Phase a, Phase b) { return a.order < b.order; }
};
inline constexpr Phase Phase::Input{"input", 100};
inline constexpr Phase Phase::Gameplay{"gameplay", 200};
inline const char* to_string(Phase phase) {
  return phase.name;
}

}  // namespace spindle::core
