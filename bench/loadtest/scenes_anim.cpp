// The animation load-test scene.
//
// crowd  N characters (10 to 5,000) standing on a grid, each blending two clips (walk and idle)
//        at its own clip times and speeds, with the blend weight drifting over time per
//        character. Characters come in `kinds` procedural variants (anim::make_character with
//        `joints` joints and `vertices` skinned vertices each), sharing skeletons, clips and
//        meshes as a real crowd shares assets. Stages: crowd_mood (gameplay: the blend weights),
//        anim_advance, anim_pose (parallel over characters), anim_skin (parallel over vertex
//        batches), transforms and render prep. Flags: --joints (default 50), --vertices
//        (default 2,000), --kinds (default 4), --quantized 1 (16-bit clip keys).
#include <cmath>
#include <string>
#include <vector>

#include <spindle/anim/animation_plugin.h>
#include <spindle/anim/procedural.h>
#include <spindle/gameplay/transform.h>

#include "scene.h"
#include "scene_common.h"

namespace spindle::loadtest {
namespace {

using anim::AnimationPlayer;

// How fast each character's walk/idle balance drifts (radians of phase per second).
struct Mood {
  float phase = 0.0f;
  float rate = 0.0f;
};

void setup_crowd(core::Engine& engine, const SceneParams& p) {
  const int joints = static_cast<int>(p.param("joints"));
  const int vertices = static_cast<int>(p.param("vertices"));
  const int kinds = static_cast<int>(p.param("kinds"));
  const bool quantized = p.param("quantized") != 0;
  anim::Animation& animation = engine.add_plugin<anim::AnimationPlugin>().animation();
  engine.add_plugin<core::TransformPlugin>();

  struct Kind {
    anim::SkeletonId skeleton;
    anim::ClipId walk, idle;
    anim::MeshId mesh;
  };
  std::vector<Kind> kind(static_cast<std::size_t>(kinds));
  for (int k = 0; k < kinds; ++k) {
    const float u = scene_unit(p.seed, static_cast<std::uint64_t>(k), 100);
    core::Result<anim::Character> made =
        anim::make_character({.seed = p.seed * 1000 + static_cast<std::uint64_t>(k),
                              .joint_count = joints,
                              .vertex_count = vertices,
                              .height = 1.6f + 0.4f * u,
                              .walk_duration = 0.9f + 0.3f * u,
                              .idle_duration = 2.5f + u});
    SPINDLE_ASSERT(made.ok(), "crowd: parameter ranges are the generator's");
    anim::Character& c = made.value();
    Kind& out = kind[static_cast<std::size_t>(k)];
    out.skeleton = animation.add_skeleton(std::move(c.skeleton)).value();
    if (quantized) {
      c.walk = c.walk.quantized().value();
      c.idle = c.idle.quantized().value();
    }
    out.walk = animation.add_clip(std::move(c.walk), out.skeleton).value();
    out.idle = animation.add_clip(std::move(c.idle), out.skeleton).value();
    out.mesh = animation.add_mesh(std::move(c.mesh), out.skeleton).value();
  }

  core::World& world = engine.world();
  const auto side =
      static_cast<std::uint32_t>(std::ceil(std::sqrt(static_cast<double>(p.objects))));
  const float spacing = 1.5f;
  for (std::uint32_t i = 0; i < p.objects; ++i) {
    const Kind& k = kind[i % kind.size()];
    const float u = scene_unit(p.seed, i, 0), v = scene_unit(p.seed, i, 1);
    AnimationPlayer player{.skeleton = k.skeleton};
    player.layers[0] = {.clip = k.walk, .time = 2.0f * u, .speed = 0.8f + 0.4f * v};
    player.layers[1] = {.clip = k.idle, .time = 5.0f * v, .speed = 0.9f + 0.2f * u};
    const core::Entity e = world.create();
    world.add<AnimationPlayer>(e, player);
    world.add<anim::SkinnedMeshInstance>(e, anim::SkinnedMeshInstance{k.mesh});
    world.add<anim::SkinnedBounds>(e);
    world.add<Mood>(
        e, Mood{6.2831853f * scene_unit(p.seed, i, 2), 0.2f + 0.8f * scene_unit(p.seed, i, 3)});
    const float x = (static_cast<float>(i % side) - 0.5f * static_cast<float>(side)) * spacing;
    const float z = (static_cast<float>(i / side) - 0.5f * static_cast<float>(side)) * spacing;
    world.add<core::Transform>(
        e, core::Transform::from(glm::vec3(x, 0.0f, z),
                                 glm::angleAxis(6.2831853f * u, glm::vec3(0, 1, 0))));
    world.add<core::WorldTransform>(e);
  }

  // Gameplay: each character drifts between walking and idling; the two weights always sum to 1.
  engine.add_system<Mood, AnimationPlayer>(
      "crowd_mood",
      [](core::StageContext& ctx, core::Entity, Mood& mood, AnimationPlayer& player) {
        mood.phase = std::fmod(mood.phase + ctx.dt() * mood.rate, 6.2831853f);
        const float walk = 0.5f + 0.5f * std::sin(mood.phase);
        player.layers[0].weight = walk;
        player.layers[1].weight = 1.0f - walk;
      },
      core::Phase::Gameplay);
  add_render_prep_stage(engine, p.objects + 16,
                        overview_camera(static_cast<float>(side) * spacing, 0.5f, 1.0f), 1.0f);
}

}  // namespace

void register_crowd_scene() {
  // 5,000 characters of the default size take about 0.3 s a frame in `single` mode.
  SceneDef def{.name = "crowd",
               .description =
                   "skinned characters (10-5,000): two clips blended per character, "
                   "pose jobs over characters, skinning over vertex batches",
               .objects = {10, 5000},
               .setup = setup_crowd};
  def.default_objects = {10, 100, 1000, 5000};
  def.check = [](const SceneParams& p) -> core::Status {
    // Skinned output: 6 floats per vertex per character (plus the shared meshes).
    const double bytes = 24.0 * p.objects * static_cast<double>(p.param("vertices"));
    if (bytes > 4e9)
      return core::Status::error("characters x vertices needs " +
                                 std::to_string(static_cast<long long>(bytes / 1e9)) +
                                 " GB of skinned vertices; at most 4 GB (lower --vertices)");
    return {};
  };
  def.params = {
      {"joints", "joints per character", 50, anim::kMinCharacterJoints, anim::kMaxCharacterJoints},
      {"vertices", "skinned vertices per character", 2000, 1, 100'000},
      {"kinds", "distinct characters (skeleton, clips, mesh) the crowd shares", 4, 1, 64},
      {"quantized", "1: clips with 16-bit keys (Clip::quantized)", 0, 0, 1},
  };
  register_scene(std::move(def));
}

}  // namespace spindle::loadtest
