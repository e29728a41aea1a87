// Load-test scenes: a scene fills an Engine with stages and `objects` entities. Registration is
// open: a subsystem adds its scene by calling register_scene() from register_builtin_scenes()
// (scenes.cpp), or with SPINDLE_LOADTEST_SCENE in a source file linked into the executable
// itself (a static library's object that nothing references is dropped by the linker, and its
// static registration with it).
//
// Usage:
//
//   void setup_swarm(spindle::core::Engine& engine, const spindle::loadtest::SceneParams& p) {
//     engine.add_system<...>(...);               // stages
//     for (std::uint32_t i = 0; i < p.objects; ++i) { ... }  // entities, from p.seed
//   }
//   SPINDLE_LOADTEST_SCENE(swarm, "tens of thousands of agents", 1, 1'000'000, setup_swarm);
//
// A scene must be deterministic for a given (objects, seed, parameters): the harness checks that
// every mode ends with the same world hash.
//
// Object counts: every scene declares the counts it accepts (SceneDef::objects). The harness
// refuses a count outside them before any scene allocates, so the maximum is what the scene can
// run in sensible time and memory: about a second a frame in `single` mode on the 2-core
// reference machine, far below its 24 GiB. --help lists each scene's range.
//
// Parameters: a scene may declare integer parameters (SceneDef::params); each becomes a flag of
// spindle_loadtest (`--joints 80`), checked against its range, and the setup reads the value with
// p.param("joints"). The report lists every parameter's value. register_scene() gives every scene
// that does not declare it "draw" (1, or 0: no render stage in the frame; add_scene_renderer()
// does it).
inline constexpr const char* kDrawParam =
    "1: draw what the scene simulates; 0: no render stages, the simulation alone";
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <spindle/base/result.h>
#include <spindle/engine/engine.h>
#include <spindle/report/report.h>

namespace spindle::loadtest {

// An integer parameter of a scene; `value` is the default in SceneDef::params and this run's value
// in SceneParams::params.
struct SceneParam {
  std::string name;  // the flag is --<name>
  std::string description;
  std::int64_t value = 0;
  std::int64_t min = 0;
  std::int64_t max = 0;
};

struct SceneParams {
  std::uint32_t objects = 1000;
  std::uint64_t seed = 1;
  std::vector<SceneParam> params{};
  // The rendered image's size (the harness's --width/--height).
  std::uint32_t width = 640;
  std::uint32_t height = 360;
  // Draws beyond the scene's own that the renderer must hold: the other scenes' of a scene made
  // of several (`soak`); add_scene_renderer() adds them to its max_draws.
  std::uint32_t extra_draws = 0;
  // The value of a declared parameter (asserts that the scene declared it).
  std::int64_t param(std::string_view name) const;
};

// The object counts a scene accepts, both ends included.
struct ObjectRange {
  std::uint32_t min = 1;
  std::uint32_t max = 0;  // 0: not declared, which register_scene refuses
};

struct SceneDef {
  std::string name;
  std::string description;
  ObjectRange objects;
  std::function<void(core::Engine&, const SceneParams&)> setup{};
  // Entity capacity the scene needs for `objects` (default: objects + 1024).
  std::function<std::uint32_t(std::uint32_t objects)> capacity{};
  // Published numbers the report shows beside this scene's (Reference::scene is filled in).
  std::vector<report::Reference> references{};
  // Parameters with their defaults and ranges.
  std::vector<SceneParam> params{};
  // Object counts run when --objects is not given: ascending, within `objects`.
  std::vector<std::uint32_t> default_objects{10, 100, 1000, 5000, 10000, 20000, 50000};
  // Refuses runs the scene cannot do beyond its ranges (parameter combinations too big for
  // memory); the message is printed and the harness exits with code 2 before running anything.
  // Called only with counts and parameter values in range. Empty: all of those are fine.
  std::function<core::Status(const SceneParams&)> check{};
};

// Adds a scene; returns true so it can initialise a static. A second scene of the same name
// replaces the first. Asserts that the scene declares its object range and that its default
// counts lie in it.
bool register_scene(SceneDef def);
const SceneDef* find_scene(std::string_view name);
std::vector<std::string> scene_names();

// Scenes built into the harness (called once by the harness so that static registration in a
// static library is never dropped by the linker).
void register_builtin_scenes();
// The Bullet scenes (`spawn`, `boxes`; scenes_physics.cpp), called by register_builtin_scenes().
void register_physics_scenes();
// The animation scene (`crowd`; scenes_anim.cpp), called by register_builtin_scenes().
void register_crowd_scene();
// The rendering anchor (`cubes`; scenes_cubes.cpp), called by register_builtin_scenes().
void register_cubes_scene();
// The audio scene (`orchestra`; scenes_audio.cpp), called by register_builtin_scenes().
void register_audio_scenes();
// The mixed scene (`soak`: crowd, boids, spawn and orchestra in one world; scenes_soak.cpp),
// called by register_builtin_scenes() after the scenes it is made of.
void register_soak_scene();

}  // namespace spindle::loadtest

// The scene runs the default counts (up to 50,000) when --objects is not given, so max_objects is
// at least that; a scene with a smaller range sets SceneDef::default_objects and calls
// register_scene() instead.
#define SPINDLE_LOADTEST_SCENE(id, description, min_objects, max_objects, setup_fn)    \
  static const bool spindle_loadtest_scene_##id = ::spindle::loadtest::register_scene( \
      {#id, description, {min_objects, max_objects}, setup_fn, nullptr})
