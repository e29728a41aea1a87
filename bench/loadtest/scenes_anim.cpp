// The animation load-test scene.
//
// crowd  N characters (10 to 5,000) standing on a grid, each blending two clips (walk and idle)
//        at its own clip times and speeds, with the blend weight drifting over time per
//        character. Characters come in `kinds` procedural variants (anim::make_character with
//        `joints` joints and `vertices` skinned vertices each), sharing skeletons, clips and
//        meshes as a real crowd shares assets. Stages: crowd_mood (gameplay: the blend weights),
//        anim_advance, anim_pose (parallel over characters), anim_skin (parallel over vertex
//        batches), transforms and the render stages. Flags: --joints (default 50), --vertices
//        (default 2,000), --kinds (default 4), --quantized 1 (16-bit clip keys), --draw 0
//        (animation and skinning only, no renderer), --lod 0 (every character at full detail).
//
// Levels of detail (crowd_lod, before the animation stages): each kind has three meshes made by
// the same generator from the same seed (so the same skeleton and clips), with `vertices`,
// 1/4 and 1/8 of them: fewer sides per tube, and at the last level the smallest bones (fingers)
// get no tube at all. A character's level follows its height on screen with hysteresis, and its
// SkinnedMeshInstance and render mesh follow the level, so a far character is skinned and drawn
// with its level's vertices only; at the last level it is also posed and skinned every other frame
// only (anim::AnimationLod). The report counts the characters at each level per frame.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <spindle/algorithms/chunks.h>
#include <spindle/anim/animation_plugin.h>
#include <spindle/anim/procedural.h>
#include <spindle/gameplay/transform.h>
#include <spindle/render/lod.h>
#include <spindle/render/render_plugin.h>

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

// Which render mesh draws a character (its kind's, at its level of detail).
struct CrowdMember {
  render::MeshId look = 0;
  std::uint8_t kind = 0;
  std::uint8_t lod = 0;  // 0: full detail
  std::uint8_t reserved[2]{};
};

constexpr int kCrowdLods = 3;
// The share of the full vertex count each level has.
constexpr int kLodVertexDivisor[kCrowdLods] = {1, 4, 8};
// A character goes to a coarser level when its height on screen falls under kLodBelowPixels[l]
// (level l + 1 below it), and back when it rises 15% above that (render::lod_for_size): a
// character at the boundary does not flicker between levels.
constexpr float kLodBelowPixels[kCrowdLods - 1] = {120.0f, 40.0f};
// Frames between pose and skin updates per level (anim::AnimationLod): the smallest characters
// move at half the frame rate, staggered so that half of them update each frame.
constexpr std::uint32_t kLodUpdateEvery[kCrowdLods] = {1, 1, 2};

struct CrowdLook {
  render::Renderer* renderer = nullptr;
  render::MaterialId material = 0;
  // Per character in the query's order, this frame's skinned streams (px null: not drawn).
  std::vector<render::VertexOverride> overrides;
  std::vector<std::uint32_t> counts;  // the submit's characters drawn per chunk, then offsets
};

// The submit's chunks: enough that 16 workers share 5,000 characters, each a few hundred.
constexpr std::uint32_t kMaxSubmitChunks = 64;

// The generator's skin as a render mesh: its vertices (replaced each frame by the skinned ones)
// and its triangles, tubes around the bones (drawn from both sides: their ends are open).
render::Mesh skin_look(const anim::Character& c, int kind) {
  const anim::SkinnedMesh& m = c.mesh;
  std::vector<render::Vertex> v(m.vertex_count());
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i].position = {m.px[i], m.py[i], m.pz[i]};
    v[i].normal = {m.nx[i], m.ny[i], m.nz[i]};
  }
  std::vector<std::uint32_t> idx = c.indices;
  if (idx.empty()) idx = {0, 0, 0};  // too few vertices for a ring: nothing shows
  core::Result<render::Mesh> mesh = render::Mesh::create(
      {.name = "crowd kind " + std::to_string(kind), .vertices = v, .indices = idx});
  SPINDLE_ASSERT(mesh.ok(), "crowd: the generator's skin is a valid mesh");
  return std::move(mesh.value());
}

// One draw per skinned character, with its skinned positions and normals, in the query's order.
// Parallel, as the render plugin's own submit pass: chunks look up their characters' skinned
// streams and count those drawn, then each writes its draws from its offset.
void submit_characters(core::StageContext& ctx, render::Renderer& r,
                       const anim::Animation& animation, CrowdLook& look) {
  const auto query = ctx.world().query<const core::WorldTransform, const CrowdMember>();
  const auto n =
      static_cast<std::uint32_t>(std::min<std::size_t>(query.size(), look.overrides.size()));
  const std::uint32_t chunks =
      std::clamp<std::uint32_t>(std::min(ctx.split(), n / 256 + 1), 1, kMaxSubmitChunks);
  core::for_each_chunk(ctx.jobs(), chunks, {"render_submit", ctx.tag()}, [&](std::uint32_t c) {
    const core::ChunkRange range = core::chunk_range(n, chunks, c);
    auto i = static_cast<std::uint32_t>(range.begin);
    std::uint32_t drawn = 0;
    query.each_range(
        i, static_cast<std::uint32_t>(range.end),
        [&](core::Entity e, const core::WorldTransform&, const CrowdMember&) {
          const anim::SkinTargets where = animation.skin_targets(e);
          render::VertexOverride& o = look.overrides[i++];
          o = {};
          if (!where.valid || where.positions.empty()) return;
          o = {where.positions.x.data(), where.positions.y.data(), where.positions.z.data()};
          if (!where.normals.empty())
            o.nx = where.normals.x.data(), o.ny = where.normals.y.data(),
            o.nz = where.normals.z.data();
          ++drawn;
        });
    look.counts[c + 1] = drawn;
  });
  look.counts[0] = 0;
  for (std::uint32_t c = 0; c < chunks; ++c) look.counts[c + 1] += look.counts[c];
  // Every draw taken is written below (the renderer refuses and counts any past max_draws).
  const std::span<render::DrawCommand> draws = r.append_draws(look.counts[chunks], false);
  core::for_each_chunk(ctx.jobs(), chunks, {"render_submit", ctx.tag()}, [&](std::uint32_t c) {
    const core::ChunkRange range = core::chunk_range(n, chunks, c);
    auto i = static_cast<std::uint32_t>(range.begin);
    std::uint32_t at = look.counts[c];
    query.each_range(
        i, static_cast<std::uint32_t>(range.end),
        [&](core::Entity, const core::WorldTransform& w, const CrowdMember& member) {
          const render::VertexOverride& o = look.overrides[i++];
          if (o.px == nullptr) return;
          if (at < draws.size())
            draws[at] = {
                .mesh = member.look, .material = look.material, .model = w.matrix, .vertices = &o};
          ++at;
        });
  });
}

void setup_crowd(core::Engine& engine, const SceneParams& p) {
  const int joints = static_cast<int>(p.param("joints"));
  const int vertices = static_cast<int>(p.param("vertices"));
  const int kinds = static_cast<int>(p.param("kinds"));
  const bool quantized = p.param("quantized") != 0;
  const bool draw = p.param("draw") != 0;
  anim::Animation& animation = engine.add_plugin<anim::AnimationPlugin>().animation();
  use_transforms(engine);

  const bool lod = p.param("lod") != 0;
  struct Kind {
    anim::SkeletonId skeleton;
    anim::ClipId walk, idle;
    anim::MeshId mesh[kCrowdLods];
    render::MeshId look[kCrowdLods] = {};  // the same vertices with triangles, for the renderer
  };
  std::vector<Kind> kind(static_cast<std::size_t>(kinds));
  const auto side =
      static_cast<std::uint32_t>(std::ceil(std::sqrt(static_cast<double>(p.objects))));
  const float spacing = 1.5f;
  auto look = std::make_shared<CrowdLook>();
  const render::Camera camera = overview_camera(static_cast<float>(side) * spacing, 0.5f, 1.0f);
  if (draw) {
    look->renderer = &add_scene_renderer(
        engine, p, camera, p.objects,
        [look, &animation](core::StageContext& ctx, render::Renderer& r) {
          submit_characters(ctx, r, animation, *look);
        },
        // The draws take the skinned buffers' addresses beside anim_skin; only the geometry
        // reads the vertices, after it.
        core::Access{}.read<anim::SkinTargets, CrowdMember>(),
        core::Access{}.read<anim::Animation>());
    look->material =
        look->renderer
            ->add_material(
                {.name = "skin", .color = {0.85f, 0.7f, 0.55f, 1.0f}, .cull_back = false})
            .value();
  } else {
    add_scene_audio(engine, p, camera.position, 4);
  }
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
    if (draw) out.look[0] = look->renderer->add_mesh(skin_look(c, k)).value();
    out.walk = animation.add_clip(std::move(c.walk), out.skeleton).value();
    out.idle = animation.add_clip(std::move(c.idle), out.skeleton).value();
    out.mesh[0] = animation.add_mesh(std::move(c.mesh), out.skeleton).value();
    // The coarser levels: the generator's skeleton and clips depend on the seed only, so its
    // meshes with fewer vertices fit the skeleton already added.
    for (int l = 1; l < kCrowdLods; ++l) {
      anim::CharacterDesc desc{.seed = p.seed * 1000 + static_cast<std::uint64_t>(k),
                               .joint_count = joints,
                               .vertex_count = std::max(vertices / kLodVertexDivisor[l], 1),
                               .height = 1.6f + 0.4f * u,
                               .walk_duration = 0.9f + 0.3f * u,
                               .idle_duration = 2.5f + u};
      core::Result<anim::Character> coarse = anim::make_character(desc);
      SPINDLE_ASSERT(coarse.ok(), "crowd: parameter ranges are the generator's");
      if (draw) out.look[l] = look->renderer->add_mesh(skin_look(coarse.value(), k)).value();
      out.mesh[l] = animation.add_mesh(std::move(coarse.value().mesh), out.skeleton).value();
    }
  }

  core::World& world = engine.world();
  world.register_component<CrowdMember>("crowd_member");
  look->overrides.resize(p.objects);
  look->counts.resize(kMaxSubmitChunks + 1);
  for (std::uint32_t i = 0; i < p.objects; ++i) {
    const Kind& k = kind[i % kind.size()];
    const float u = scene_unit(p.seed, i, 0), v = scene_unit(p.seed, i, 1);
    AnimationPlayer player{.skeleton = k.skeleton};
    player.layers[0] = {.clip = k.walk, .time = 2.0f * u, .speed = 0.8f + 0.4f * v};
    player.layers[1] = {.clip = k.idle, .time = 5.0f * v, .speed = 0.9f + 0.2f * u};
    const core::Entity e = world.create();
    world.add<AnimationPlayer>(e, player);
    world.add<anim::SkinnedMeshInstance>(e, anim::SkinnedMeshInstance{k.mesh[0]});
    world.add<anim::SkinnedBounds>(e);
    world.add<anim::AnimationLod>(e);
    world.add<Mood>(
        e, Mood{6.2831853f * scene_unit(p.seed, i, 2), 0.2f + 0.8f * scene_unit(p.seed, i, 3)});
    const float x = (static_cast<float>(i % side) - 0.5f * static_cast<float>(side)) * spacing;
    const float z = (static_cast<float>(i / side) - 0.5f * static_cast<float>(side)) * spacing;
    world.add<core::Transform>(
        e, core::Transform::from(glm::vec3(x, 0.0f, z),
                                 glm::angleAxis(6.2831853f * u, glm::vec3(0, 1, 0))));
    world.add<core::WorldTransform>(e);
    world.add<CrowdMember>(
        e, CrowdMember{.look = k.look[0], .kind = static_cast<std::uint8_t>(i % kind.size())});
  }

  // Levels of detail from each character's height on screen, before anything is posed.
  SceneCounts& counts = scene_counts(engine);
  const std::size_t first_count = counts.names.size();
  for (int l = 0; l < kCrowdLods; ++l)
    counts.add("characters at LOD " + std::to_string(l) + " (" +
               std::to_string(std::max(vertices / kLodVertexDivisor[l], 1)) + " vertices)");
  render::Camera eye = camera;
  eye.aspect = static_cast<float>(p.width) / static_cast<float>(p.height);
  const int image_height = static_cast<int>(p.height);
  engine.add_stage(
      {.name = "crowd_lod",
       .phase = core::Phase::Gameplay,
       .access =
           core::Access{}
               .read<core::WorldTransform>()
               .write<CrowdMember, anim::SkinnedMeshInstance, anim::AnimationLod, SceneCounts>(),
       // Over the characters in parallel (ctx.parallel_for): with 16 workers this serial pass
       // was the longest stretch of the frame's start.
       .run = [kind, eye, image_height, lod, first_count](core::StageContext& ctx) {
         core::World& w = ctx.world();
         std::atomic<std::uint32_t> at[kCrowdLods] = {};
         const auto query = w.query<const core::WorldTransform, CrowdMember,
                                    anim::SkinnedMeshInstance, anim::AnimationLod>();
         ctx.parallel_for(query.size(), [&](std::uint32_t b, std::uint32_t e) {
           std::uint32_t here[kCrowdLods] = {};
           query.each_range(b, e,
                            [&](core::Entity, const core::WorldTransform& t, CrowdMember& m,
                                anim::SkinnedMeshInstance& inst, anim::AnimationLod& rate) {
                              // The character's height on screen (about 1.8 units, around its
                              // middle).
                              const float pixels = render::screen_size(
                                  eye, image_height,
                                  glm::vec3(t.matrix * glm::vec4(0.0f, 0.9f, 0.0f, 1.0f)), 1.8f);
                              const std::uint8_t level =
                                  lod ? render::lod_for_size(pixels, m.lod, kLodBelowPixels) : 0;
                              const Kind& k = kind[m.kind];
                              m.lod = level;
                              m.look = k.look[level];
                              inst.mesh = k.mesh[level];
                              rate.every = kLodUpdateEvery[level];
                              ++here[level];
                            });
           for (int l = 0; l < kCrowdLods; ++l) at[l].fetch_add(here[l], std::memory_order_relaxed);
         });
         SceneCounts& out = *w.resource<SceneCounts>();
         for (int l = 0; l < kCrowdLods; ++l) out.values[first_count + l] = at[l].load();
       }});

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
      // Issue 16's crowd figures (and its 60 FPS target) predate the renderer: --draw 0 runs
      // the scene as they were measured, animation and skinning without the render stages.
      {"draw", "1: draw the characters; 0: animate and skin only", 1, 0, 1},
      {"lod", "1: levels of detail by height on screen; 0: every character at full detail", 1, 0,
       1},
  };
  register_scene(std::move(def));
}

}  // namespace spindle::loadtest
