// The animation stages in the world: results equal the jobs run by hand, time advance rules,
// bad references, entity lifecycle, and bit-identical output in every mode and worker count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <spindle/anim/animation_plugin.h>
#include <spindle/anim/blending_job.h>
#include <spindle/anim/float_track.h>
#include <spindle/anim/local_to_model_job.h>
#include <spindle/anim/procedural.h>
#include <spindle/anim/sampling_job.h>
#include <spindle/anim/skinning_job.h>
#include <spindle/base/hash.h>
#include <spindle/engine/engine.h>

#include "modes.h"

namespace spindle::anim {
namespace {

core::EngineConfig config(jobs::Mode mode, std::uint32_t workers = 2) {
  core::EngineConfig c;
  c.mode = mode;
  c.workers = mode == jobs::Mode::Single ? 1 : workers;
  c.pin_workers = false;
  c.entity_capacity = 4096;
  return c;
}

struct Assets {
  SkeletonId skeleton;
  ClipId walk, idle, idle_additive;
  MeshId mesh;
  MaskId upper;
};

Character make(std::uint64_t seed, int joints = 24, int vertices = 900) {
  core::Result<Character> r =
      make_character({.seed = seed, .joint_count = joints, .vertex_count = vertices});
  EXPECT_TRUE(r) << r.message();
  return std::move(r.value());
}

Assets add_assets(Animation& anim, const Character& c) {
  Assets a;
  a.skeleton = anim.add_skeleton(c.skeleton).value();
  a.walk = anim.add_clip(c.walk, a.skeleton).value();
  a.idle = anim.add_clip(c.idle, a.skeleton).value();
  a.idle_additive = anim.add_clip(c.idle, a.skeleton).value();
  a.mesh = anim.add_mesh(c.mesh, a.skeleton).value();
  std::vector<float> mask(static_cast<std::size_t>(c.skeleton.joint_count()), 0.0f);
  for (std::size_t j = mask.size() / 2; j < mask.size(); ++j) mask[j] = 1.0f;
  a.upper = anim.add_mask(std::move(mask), a.skeleton).value();
  return a;
}

AnimationPlayer two_clip_player(const Assets& a, float phase, float blend) {
  AnimationPlayer p{.skeleton = a.skeleton};
  p.layers[0] = {.clip = a.walk, .time = phase, .speed = 1.0f, .weight = 1.0f - blend};
  p.layers[1] = {.clip = a.idle, .time = 2.0f * phase, .speed = 0.5f, .weight = blend};
  return p;
}

// The character's view, hashed bit for bit.
std::uint64_t hash_view(const CharacterView& v) {
  core::Hasher h;
  auto add = [&](const void* p, std::size_t bytes) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < bytes; i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, b + i, std::min<std::size_t>(8, bytes - i));
      h.add(word);
    }
  };
  add(v.palette.data(), v.palette.size_bytes());
  for (auto s :
       {v.positions.x, v.positions.y, v.positions.z, v.normals.x, v.normals.y, v.normals.z})
    add(s.data(), s.size_bytes());
  add(&v.bounds, sizeof v.bounds);
  return h.value();
}

TEST(AnimationPlugin, OneCharacterMatchesTheJobsRunByHand) {
  const Character c = make(11, 24, 901);
  core::Engine engine(config(jobs::Mode::Single));
  AnimationConfig ac;
  ac.skin_batch_vertices = 64;  // 15 batches, the last one 5 vertices: offsets are exercised
  Animation& anim = engine.add_plugin<AnimationPlugin>(ac).animation();
  const Assets a = add_assets(anim, c);
  core::World& world = engine.world();
  const core::Entity e = world.create();
  AnimationPlayer p = two_clip_player(a, 0.25f, 0.3f);
  p.layers[2] = {.clip = a.idle_additive,
                 .time = 0.5f,
                 .speed = 0.0f,
                 .weight = 0.4f,
                 .mask = a.upper,
                 .additive = true};
  world.add<AnimationPlayer>(e, p);
  world.add<SkinnedMeshInstance>(e, SkinnedMeshInstance{a.mesh});
  world.add<SkinnedBounds>(e, SkinnedBounds{});
  for (int i = 0; i < 7; ++i) engine.step();

  // By hand: the times after 7 fixed steps, then the same jobs at the player's times.
  const float dt = static_cast<float>(core::ns_to_seconds(engine.config().fixed_step_ns));
  float t0 = 0.25f, t1 = 0.5f;
  for (int i = 0; i < 7; ++i) {
    t0 = std::fmod(t0 + dt, c.walk.duration());
    t1 = std::fmod(t1 + dt * 0.5f, c.idle.duration());
  }
  const AnimationPlayer& now = *world.get<AnimationPlayer>(e);
  EXPECT_FLOAT_EQ(now.layers[0].time, t0);
  EXPECT_FLOAT_EQ(now.layers[1].time, t1);
  EXPECT_EQ(now.layers[2].time, 0.5f) << "speed 0 holds";

  const std::size_t joints = static_cast<std::size_t>(c.skeleton.joint_count());
  std::vector<JointTransform> walk(joints), idle(joints), delta(joints), local(joints);
  SamplingCache k0(c.skeleton.joint_count()), k1(k0), k2(k0);
  t0 = now.layers[0].time;
  t1 = now.layers[1].time;
  ASSERT_TRUE(SamplingJob({.clip = &c.walk, .time = t0, .cache = &k0, .output = walk}).run());
  ASSERT_TRUE(SamplingJob({.clip = &c.idle, .time = t1, .cache = &k1, .output = idle}).run());
  ASSERT_TRUE(SamplingJob({.clip = &c.idle, .time = 0.5f, .cache = &k2, .output = delta}).run());
  std::vector<float> mask(joints, 0.0f);
  for (std::size_t j = joints / 2; j < joints; ++j) mask[j] = 1.0f;
  const BlendLayer layers[] = {{.pose = walk, .weight = 0.7f}, {.pose = idle, .weight = 0.3f}};
  const BlendLayer additive[] = {{.pose = delta, .weight = 0.4f, .joint_weights = mask}};
  ASSERT_TRUE(BlendingJob({.rest_pose = c.skeleton.rest_pose(),
                           .layers = layers,
                           .additive_layers = additive,
                           .output = local})
                  .run());
  std::vector<glm::mat4> model(joints), palette(joints);
  ASSERT_TRUE(LocalToModelJob({.skeleton = &c.skeleton, .local = local, .model = model}).run());
  ASSERT_TRUE(
      PaletteJob({.model = model, .inverse_binds = c.skeleton.inverse_binds(), .palette = palette})
          .run());
  const std::size_t n = c.mesh.vertex_count();
  std::vector<float> px(n), py(n), pz(n), nx(n), ny(n), nz(n);
  ASSERT_TRUE(SkinningJob({.palette = palette,
                           .joint_indices = c.mesh.joint_indices,
                           .joint_weights = c.mesh.joint_weights,
                           .in_positions = c.mesh.positions(),
                           .in_normals = c.mesh.normals(),
                           .out_positions = {px, py, pz},
                           .out_normals = {nx, ny, nz}})
                  .run());

  const CharacterView v = anim.view(e);
  ASSERT_TRUE(v.valid);
  ASSERT_EQ(v.palette.size(), joints);
  EXPECT_EQ(std::memcmp(v.palette.data(), palette.data(), joints * sizeof(glm::mat4)), 0);
  ASSERT_EQ(v.positions.size(), n);
  ASSERT_EQ(v.normals.size(), n);
  EXPECT_EQ(std::memcmp(v.positions.x.data(), px.data(), n * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(v.positions.z.data(), pz.data(), n * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(v.normals.y.data(), ny.data(), n * sizeof(float)), 0);
  glm::vec3 lo(INFINITY), hi(-INFINITY);
  for (std::size_t i = 0; i < n; ++i) {
    lo = glm::min(lo, glm::vec3(px[i], py[i], pz[i]));
    hi = glm::max(hi, glm::vec3(px[i], py[i], pz[i]));
  }
  const SkinnedBounds& b = *world.get<SkinnedBounds>(e);
  EXPECT_EQ(b.min, lo);
  EXPECT_EQ(b.max, hi);
  EXPECT_EQ(v.bounds.max, hi);
  EXPECT_GT(hi.y - lo.y, 1.0f) << "a standing character";
  EXPECT_EQ(anim.stats().characters, 1u);
  EXPECT_EQ(anim.stats().vertices, n);
  EXPECT_EQ(anim.stats().batches, 15u);
}

TEST(AnimationPlugin, AdvanceWrapsLoopsClampsOthersAndRestartsNonFiniteTimes) {
  const Character c = make(12);
  Animation anim(AnimationConfig{}, 16);
  const Assets a = add_assets(anim, c);
  const float d = c.walk.duration();
  AnimationPlayer p{.skeleton = a.skeleton};
  p.layers[0] = {.clip = a.walk, .time = d - 0.01f, .speed = 1.0f};
  p.layers[1] = {.clip = a.walk, .time = 0.01f, .speed = -1.0f};
  p.layers[2] = {.clip = a.walk, .time = d - 0.01f, .speed = 2.0f, .loop = false};
  p.layers[3] = {.clip = a.walk, .time = NAN, .speed = 1.0f};
  anim.advance(0.05f, p);
  EXPECT_NEAR(p.layers[0].time, 0.04f, 1e-5f);
  EXPECT_NEAR(p.layers[1].time, d - 0.04f, 1e-5f);
  EXPECT_EQ(p.layers[2].time, d);
  EXPECT_EQ(p.layers[3].time, 0.0f);
  p.layers[2].speed = -100.0f;
  anim.advance(0.05f, p);
  EXPECT_EQ(p.layers[2].time, 0.0f);
  for (int i = 0; i < 10000; ++i) anim.advance(0.37f, p);
  for (const AnimationLayer& l : p.layers) {
    EXPECT_GE(l.time, 0.0f);
    EXPECT_LE(l.time, d);
  }
  AnimationLayer off{.clip = ClipId::None, .time = 3.0f};
  p.layers[0] = off;
  anim.advance(1.0f, p);
  EXPECT_EQ(p.layers[0].time, 3.0f) << "a layer without a clip is left alone";
}

TEST(AnimationPlugin, AssetsAreCheckedAgainstTheirSkeleton) {
  const Character small = make(13, 20, 100);
  const Character big = make(14, 30, 100);
  Animation anim(AnimationConfig{}, 16);
  const SkeletonId s20 = anim.add_skeleton(small.skeleton).value();
  auto err = [](const auto& r, const char* what) {
    ASSERT_FALSE(r) << what;
    EXPECT_NE(r.message().find(what), std::string::npos) << r.message();
  };
  err(anim.add_clip(big.walk, s20), "add_clip: clip 'walk'");
  err(anim.add_clip(small.walk, SkeletonId{9}), "unknown skeleton id 9");
  err(anim.add_mesh(big.mesh, s20), "joint index");
  err(anim.add_mask(std::vector<float>(19, 1.0f), s20), "19 weights for 20 joints");
  std::vector<float> nan_mask(20, 1.0f);
  nan_mask[4] = NAN;
  err(anim.add_mask(nan_mask, s20), "joint 4");
  err(anim.add_skeleton(Skeleton{}), "empty skeleton");
  EXPECT_EQ(anim.clip(ClipId{1}), nullptr) << "nothing was added by the failures";
  EXPECT_EQ(anim.mesh(MeshId{1}), nullptr);
  ASSERT_TRUE(anim.add_clip(small.walk, s20));
  EXPECT_EQ(anim.clip_skeleton(ClipId{1}), s20);
  EXPECT_EQ(anim.clip(ClipId{0}), nullptr);
  EXPECT_EQ(anim.clip(ClipId{2}), nullptr);
}

TEST(AnimationPlugin, BadReferencesRejectOrSkipAndRecoverWhenFixed) {
  const Character c = make(15);
  const Character other = make(16, 30, 100);
  core::Engine engine(config(jobs::Mode::Single));
  Animation& anim = engine.add_plugin<AnimationPlugin>().animation();
  const Assets a = add_assets(anim, c);
  const SkeletonId s_other = anim.add_skeleton(other.skeleton).value();
  const ClipId other_walk = anim.add_clip(other.walk, s_other).value();
  const MeshId other_mesh = anim.add_mesh(other.mesh, s_other).value();
  core::World& world = engine.world();

  const core::Entity unknown = world.create();
  world.add<AnimationPlayer>(unknown, AnimationPlayer{.skeleton = SkeletonId{77}});
  const core::Entity wrong_mesh = world.create();
  world.add<AnimationPlayer>(wrong_mesh, two_clip_player(a, 0, 0.5f));
  world.add<SkinnedMeshInstance>(wrong_mesh, SkinnedMeshInstance{other_mesh});
  const core::Entity bad_layer = world.create();
  AnimationPlayer p = two_clip_player(a, 0, 0.5f);
  p.layers[1].clip = other_walk;  // another skeleton's clip
  p.layers[2] = {.clip = ClipId{999}};
  p.layers[3] = {.clip = a.idle, .weight = 3e38f};  // would overflow the blend
  world.add<AnimationPlayer>(bad_layer, p);
  world.add<SkinnedMeshInstance>(bad_layer, SkinnedMeshInstance{a.mesh});
  engine.step();
  EXPECT_FALSE(anim.view(unknown).valid);
  EXPECT_FALSE(anim.view(wrong_mesh).valid);
  EXPECT_TRUE(anim.view(bad_layer).valid);
  EXPECT_EQ(anim.stats().rejected, 2u);
  EXPECT_EQ(anim.stats().characters, 1u);
  EXPECT_EQ(anim.stats().bad_layers, 3u);
  engine.step();
  EXPECT_EQ(anim.stats().bad_layers, 6u) << "skipped again every frame";

  // The bad layers left only the walk layer: the pose equals walk alone at the same time.
  const core::Entity clean = world.create();
  AnimationPlayer walk_only = *world.get<AnimationPlayer>(bad_layer);
  walk_only.layers[1] = {};
  walk_only.layers[2] = {};
  walk_only.layers[3] = {};
  world.add<AnimationPlayer>(clean, walk_only);
  world.add<SkinnedMeshInstance>(clean, SkinnedMeshInstance{a.mesh});
  world.get<AnimationPlayer>(bad_layer)->layers[0].speed = 0.0f;
  world.get<AnimationPlayer>(clean)->layers[0].speed = 0.0f;
  engine.step();
  EXPECT_EQ(hash_view(anim.view(clean)), hash_view(anim.view(bad_layer)));

  world.get<SkinnedMeshInstance>(wrong_mesh)->mesh = a.mesh;
  world.get<AnimationPlayer>(unknown)->skeleton = a.skeleton;
  engine.step();
  EXPECT_TRUE(anim.view(wrong_mesh).valid);
  EXPECT_TRUE(anim.view(unknown).valid);
  EXPECT_TRUE(anim.view(unknown).positions.empty()) << "no mesh: a pose only";
  EXPECT_EQ(anim.view(unknown).palette.size(), c.skeleton.joint_count());
  EXPECT_EQ(anim.stats().rejected, 0u);
}

TEST(AnimationPlugin, CharactersFollowTheirEntities) {
  const Character c = make(17);
  core::EngineConfig cfg = config(jobs::Mode::Single);
  cfg.entity_capacity = 5;  // full: a new entity must reuse a destroyed one's index
  core::Engine engine(cfg);
  Animation& anim = engine.add_plugin<AnimationPlugin>().animation();
  const Assets a = add_assets(anim, c);
  core::World& world = engine.world();
  std::vector<core::Entity> es;
  for (int i = 0; i < 5; ++i) {
    es.push_back(world.create());
    world.add<AnimationPlayer>(es.back(), two_clip_player(a, 0.1f * static_cast<float>(i), 0.5f));
    world.add<SkinnedMeshInstance>(es.back(), SkinnedMeshInstance{a.mesh});
    world.add<SkinnedBounds>(es.back());
  }
  engine.step();
  EXPECT_EQ(anim.stats().characters, 5u);
  EXPECT_FALSE(world.get<SkinnedBounds>(es[2])->is_empty());
  const std::uint64_t rebuilds = anim.stats().rebuilds;
  engine.step();
  EXPECT_EQ(anim.stats().rebuilds, rebuilds) << "steady frames reuse the buffers";

  world.destroy(es[1]);
  world.remove<SkinnedMeshInstance>(es[2]);
  world.remove<AnimationPlayer>(es[3]);
  const core::Entity reused = world.create();
  ASSERT_EQ(reused.index, es[1].index) << "the test needs the index reused in the same frame";
  world.add<AnimationPlayer>(reused, two_clip_player(a, 0.9f, 0.2f));
  engine.step();
  EXPECT_FALSE(anim.view(es[1]).valid) << "the old generation is gone";
  EXPECT_TRUE(anim.view(reused).valid);
  EXPECT_TRUE(anim.view(reused).positions.empty()) << "the new entity has no mesh";
  EXPECT_TRUE(anim.view(es[2]).valid);
  EXPECT_TRUE(anim.view(es[2]).positions.empty());
  EXPECT_TRUE(world.get<SkinnedBounds>(es[2])->is_empty()) << "no stale bounds without a mesh";
  EXPECT_FALSE(anim.view(es[3]).valid);
  EXPECT_TRUE(world.get<SkinnedBounds>(es[3])->is_empty()) << "no stale bounds without a player";
  EXPECT_FALSE(world.get<SkinnedBounds>(es[4])->is_empty());
  EXPECT_EQ(anim.stats().characters, 4u);
  EXPECT_EQ(anim.stats().skinned, 2u);
  EXPECT_EQ(anim.stats().vertices, 2 * c.mesh.vertex_count());

  // Another skeleton with another joint count: the buffers follow.
  const Character big = make(18, 40, 200);
  const Assets b = add_assets(anim, big);
  world.get<AnimationPlayer>(es[0])->skeleton = b.skeleton;
  world.get<AnimationPlayer>(es[0])->layers = two_clip_player(b, 0.3f, 0.5f).layers;
  world.get<SkinnedMeshInstance>(es[0])->mesh = b.mesh;
  engine.step();
  ASSERT_TRUE(anim.view(es[0]).valid);
  EXPECT_EQ(anim.view(es[0]).palette.size(), 40u);
  EXPECT_EQ(anim.view(es[0]).positions.size(), big.mesh.vertex_count());
}

// skin_targets() names the buffers view() will show, fixed by anim_pose: a stage declaring
// read<SkinTargets>() runs after anim_pose and beside anim_skin (the frame graph does not order it
// after skinning), one declaring read<Animation>() after anim_skin. In every mode, with the
// reader taking every character's targets while skinning runs (ThreadSanitizer sees the two).
TEST(AnimationPlugin, SkinTargetsAreTheViewsBuffersAndMayBeReadBesideSkinning) {
  const Character c = make(23, 24, 3000);
  for (jobs::Mode mode : test::available_modes()) {
    core::Engine engine(config(mode, 4));
    Animation& anim = engine.add_plugin<AnimationPlugin>().animation();
    const Assets a = add_assets(anim, c);
    core::World& world = engine.world();
    std::vector<core::Entity> es;
    for (int i = 0; i < 6; ++i) {
      es.push_back(world.create());
      world.add<AnimationPlayer>(es.back(), two_clip_player(a, 0.2f * static_cast<float>(i), 0.3f));
      if (i != 5) world.add<SkinnedMeshInstance>(es.back(), SkinnedMeshInstance{a.mesh});
    }
    std::vector<SkinTargets> taken(es.size());
    const core::StageId beside =
        engine.add_stage({.name = "beside_skinning",
                          .phase = kAnimationPhase,
                          .access = core::Access{}.read<SkinTargets>(),
                          .run =
                              [&](core::StageContext& ctx) {
                                ctx.parallel_for(static_cast<std::uint32_t>(es.size()),
                                                 [&](std::uint32_t b, std::uint32_t e) {
                                                   for (std::uint32_t i = b; i < e; ++i)
                                                     taken[i] = anim.skin_targets(es[i]);
                                                 });
                              },
                          .simulation = false});
    const core::StageId after = engine.add_stage({.name = "after_skinning",
                                                  .phase = kAnimationPhase,
                                                  .access = core::Access{}.read<Animation>(),
                                                  .run = [](core::StageContext&) {},
                                                  .simulation = false});
    const auto pose = static_cast<core::StageId>(engine.find_stage("anim_pose"));
    const auto skin = static_cast<core::StageId>(engine.find_stage("anim_skin"));
    EXPECT_TRUE(engine.depends_on(beside, pose));
    EXPECT_FALSE(engine.depends_on(beside, skin)) << "the addresses do not wait for skinning";
    EXPECT_TRUE(engine.depends_on(after, skin));
    for (int frame = 0; frame < 3; ++frame) {
      engine.step();
      for (std::size_t i = 0; i < es.size(); ++i) {
        const CharacterView v = anim.view(es[i]);
        ASSERT_TRUE(v.valid);
        EXPECT_TRUE(taken[i].valid);
        EXPECT_EQ(taken[i].positions.x.data(), v.positions.x.data()) << i;
        EXPECT_EQ(taken[i].positions.z.data(), v.positions.z.data()) << i;
        EXPECT_EQ(taken[i].normals.y.data(), v.normals.y.data()) << i;
        EXPECT_EQ(taken[i].positions.size(), v.positions.size()) << i;
        EXPECT_EQ(taken[i].positions.empty(), i == 5) << "character " << i << " has no mesh";
      }
    }
    world.destroy(es[0]);
    engine.step();
    EXPECT_FALSE(anim.skin_targets(es[0]).valid) << "a dead entity has no targets";
    EXPECT_FALSE(anim.skin_targets(core::Entity{}).valid);
  }
}

TEST(AnimationPlugin, ARejectedCharacterRecoversWhenItsAssetArrives) {
  const Character c = make(19);
  core::Engine engine(config(jobs::Mode::Single));
  Animation& anim = engine.add_plugin<AnimationPlugin>().animation();
  core::World& world = engine.world();
  const core::Entity e = world.create();
  world.add<AnimationPlayer>(e, AnimationPlayer{.skeleton = SkeletonId{1}});  // not loaded yet
  engine.step();
  EXPECT_FALSE(anim.view(e).valid);
  EXPECT_EQ(anim.stats().rejected, 1u);
  engine.step();
  ASSERT_EQ(anim.add_skeleton(c.skeleton).value(), SkeletonId{1});
  engine.step();
  EXPECT_TRUE(anim.view(e).valid);
  EXPECT_EQ(anim.stats().rejected, 0u);
}

TEST(AnimationPlugin, AnInvalidConfigFallsBackToTheDefaults) {
  AnimationConfig bad;
  bad.skin_batch_vertices = 0;
  EXPECT_FALSE(Animation::validate(bad));
  const Animation anim(bad, 16);
  EXPECT_EQ(anim.config().skin_batch_vertices, AnimationConfig{}.skin_batch_vertices);
}

// 40 characters of 2 kinds, 2 normal layers + a masked additive layer, different times and
// speeds, destroyed and spawned mid-run: the world hash and every character's output are the
// same in every mode and with 1, 2 and 4 workers.
std::uint64_t run_crowd(jobs::Mode mode, std::uint32_t workers) {
  core::Engine engine(config(mode, workers));
  AnimationConfig ac;
  ac.skin_batch_vertices = 128;
  Animation& anim = engine.add_plugin<AnimationPlugin>(ac).animation();
  const Character kinds[] = {make(21, 30, 700), make(22, 50, 300)};
  const Assets assets[] = {add_assets(anim, kinds[0]), add_assets(anim, kinds[1])};
  core::World& world = engine.world();
  std::vector<core::Entity> es;
  auto spawn = [&](int i) {
    const Assets& a = assets[i % 2];
    AnimationPlayer p =
        two_clip_player(a, 0.037f * static_cast<float>(i), static_cast<float>(i % 5) / 4.0f);
    p.layers[0].speed = 0.5f + 0.1f * static_cast<float>(i % 7);
    if (i % 3 == 0)
      p.layers[3] = {.clip = a.idle_additive,
                     .speed = 1.3f,
                     .weight = 0.5f,
                     .mask = a.upper,
                     .additive = true};
    const core::Entity e = world.create();
    world.add<AnimationPlayer>(e, p);
    world.add<SkinnedMeshInstance>(e, SkinnedMeshInstance{a.mesh});
    world.add<SkinnedBounds>(e, SkinnedBounds{});
    es.push_back(e);
  };
  for (int i = 0; i < 40; ++i) spawn(i);
  for (int f = 0; f < 30; ++f) {
    if (f == 10) {
      world.destroy(es[3]);
      world.destroy(es[17]);
      spawn(40);
    }
    engine.step();
  }
  core::Hasher h;
  h.add(world.state_hash());
  for (core::Entity e : es) h.add(anim.view(e).valid ? hash_view(anim.view(e)) : 0u);
  return h.value();
}

TEST(AnimationPlugin, SameOutputInEveryModeAndWorkerCount) {
  ::spindle::test::expect_same_in_every_mode(
      [](jobs::Mode mode, std::uint32_t workers) { return run_crowd(mode, workers); });
}

// AnimationLod: a character updated every 3rd frame shows, in the frames it updates, exactly what
// one updated every frame shows (its layers advance every step), holds its view in between, and
// updates at once when its mesh changes; the frames are staggered by entity index.
TEST(AnimationLod, EveryNthFrameMatchesEveryFrameWhenItUpdatesAndHoldsBetween) {
  const Character c = make(31, 24, 600);
  const Character coarse = make(31, 24, 150);  // same seed: same skeleton, another mesh
  core::Engine engine(config(jobs::Mode::Single));
  Animation& anim = engine.add_plugin<AnimationPlugin>().animation();
  const Assets a = add_assets(anim, c);
  const MeshId coarse_mesh = anim.add_mesh(coarse.mesh, a.skeleton).value();
  core::World& world = engine.world();
  const auto spawn = [&](std::uint32_t every) {
    const core::Entity e = world.create();
    world.add<AnimationPlayer>(e, two_clip_player(a, 0.25f, 0.3f));
    world.add<SkinnedMeshInstance>(e, SkinnedMeshInstance{a.mesh});
    world.add<SkinnedBounds>(e, SkinnedBounds{});
    if (every != 1) world.add<AnimationLod>(e, AnimationLod{every});
    return e;
  };
  const core::Entity always = spawn(1), third = spawn(3), third_too = spawn(3);
  std::vector<int> updates(2, 0);
  std::uint64_t held = 0;
  for (int f = 0; f < 12; ++f) {
    if (f == 7) world.get<SkinnedMeshInstance>(third)->mesh = coarse_mesh;
    engine.step();
    const std::uint64_t now = hash_view(anim.view(third));
    const bool updated = f == 0 || f == 7 || (static_cast<std::uint32_t>(f) + third.index) % 3 == 0;
    if (f == 7) {
      EXPECT_EQ(anim.view(third).positions.x.size(), coarse.mesh.vertex_count()) << "at once";
    } else if (updated) {
      ++updates[0];
      // The same pose (after frame 7 over another mesh: the palettes agree).
      const CharacterView v = anim.view(third), w = anim.view(always);
      ASSERT_EQ(v.palette.size(), w.palette.size());
      EXPECT_EQ(std::memcmp(v.palette.data(), w.palette.data(), v.palette.size_bytes()), 0)
          << "frame " << f;
      if (f < 7) {
        EXPECT_EQ(now, hash_view(w)) << "frame " << f;
      }
    } else {
      EXPECT_EQ(now, held) << "frame " << f << ": held";
    }
    held = now;
    // The two every-3rd characters sit at consecutive indices: never due in the same frame
    // (but both in the first, when they are new).
    const bool other = f == 0 || (static_cast<std::uint32_t>(f) + third_too.index) % 3 == 0;
    updates[1] += other ? 1 : 0;
    EXPECT_EQ(anim.stats().updated, 1u + (updated ? 1u : 0u) + (other ? 1u : 0u)) << f;
    EXPECT_EQ(anim.stats().characters, 3u);
  }
  EXPECT_GE(updates[0], 3);
  EXPECT_LE(updates[1], 5);
}

std::uint64_t run_lod_crowd(jobs::Mode mode, std::uint32_t workers) {
  core::Engine engine(config(mode, workers));
  AnimationConfig ac;
  ac.skin_batch_vertices = 128;
  Animation& anim = engine.add_plugin<AnimationPlugin>(ac).animation();
  const Assets a = add_assets(anim, make(41, 30, 500));
  core::World& world = engine.world();
  std::vector<core::Entity> es;
  for (int i = 0; i < 60; ++i) {
    const core::Entity e = world.create();
    world.add<AnimationPlayer>(e, two_clip_player(a, 0.05f * static_cast<float>(i), 0.5f));
    world.add<SkinnedMeshInstance>(e, SkinnedMeshInstance{a.mesh});
    world.add<SkinnedBounds>(e, SkinnedBounds{});
    world.add<AnimationLod>(e, AnimationLod{static_cast<std::uint32_t>(i % 4)});
    es.push_back(e);
  }
  for (int f = 0; f < 11; ++f) engine.step();
  core::Hasher h;
  h.add(world.state_hash());
  for (core::Entity e : es) h.add(hash_view(anim.view(e)));
  return h.value();
}

TEST(AnimationLod, SameOutputInEveryModeAndWorkerCount) {
  ::spindle::test::expect_same_in_every_mode(
      [](jobs::Mode mode, std::uint32_t workers) { return run_lod_crowd(mode, workers); });
}

// A foot contact on the walk: down (1) from the start to 40% of the clip, lifting to 0 by 45%,
// down again from 90% to 95%: with threshold 0.5 it falls at 42.5% and rises at 92.5%. The other
// foot is the opposite, as a step track (edges at 40% and 90%).
FloatTrack contact_track(float duration, bool other_foot = false) {
  std::vector<FloatKey> keys;
  const float at[] = {0.0f, 0.4f, 0.45f, 0.9f, 0.95f, 1.0f};
  const float value[] = {1, 1, 0, 0, 1, 1};
  for (int i = 0; i < 6; ++i) keys.push_back({at[i] * duration, value[i]});
  if (other_foot)
    for (FloatKey& k : keys) k.value = 1.0f - k.value;
  core::Result<FloatTrack> r =
      FloatTrack::create("contact", duration, std::move(keys),
                         other_foot ? FloatInterpolation::Step : FloatInterpolation::Linear);
  EXPECT_TRUE(r) << r.message();
  return std::move(r.value());
}

bool operator==(const AnimationEvent& a, const AnimationEvent& b) {
  return a.entity == b.entity && a.track == b.track && a.time == b.time && a.layer == b.layer &&
         a.rising == b.rising;
}

// Two walkers with foot-contact tracks, stepped `steps` times; per step, the events the game
// reads after it (those raised in the step before).
struct Footsteps {
  std::vector<std::vector<AnimationEvent>> per_step;
  std::vector<core::Entity> entities;
  FloatTrackId left{}, right{};
  ClipId walk{};
  float duration = 0.0f;
  AnimationStats stats{};
};

Footsteps run_footsteps(jobs::Mode mode, std::uint32_t workers, int steps, int extra = 0) {
  const Character c = make(31, 20, 64);
  core::Engine engine(config(mode, workers));
  Animation& anim = engine.add_plugin<AnimationPlugin>().animation();
  const Assets a = add_assets(anim, c);
  Footsteps out;
  out.walk = a.walk;
  out.duration = c.walk.duration();
  out.left = anim.add_float_track(contact_track(out.duration), a.walk).value();
  out.right = anim.add_float_track(contact_track(out.duration, true), a.walk, 0.5f).value();
  core::World& world = engine.world();
  for (int i = 0; i < 2 + extra; ++i) {
    AnimationPlayer p{.skeleton = a.skeleton};
    // Entity 1 plays backwards, faster; extras vary speed, phase and looping.
    p.layers[0] = {.clip = a.walk,
                   .time = 0.1f * static_cast<float>(i) * out.duration,
                   .speed = i == 1 ? -1.5f : 0.6f + 0.15f * static_cast<float>(i % 5),
                   .loop = i < 2 || i % 4 != 3};
    if (i >= 2 && i % 3 == 0) p.layers[1] = {.clip = a.walk, .time = 0.3f, .speed = 2.0f};
    const core::Entity e = world.create();
    world.add<AnimationPlayer>(e, p);
    AnimationTracks tracks;
    tracks.tracks[0] = out.left;
    if (i % 2 == 1) tracks.tracks[1] = out.right;
    world.add<AnimationTracks>(e, tracks);
    out.entities.push_back(e);
  }
  for (int s = 0; s < steps; ++s) {
    engine.step();
    const std::span<const AnimationEvent> ev = world.read_events<AnimationEvent>();
    out.per_step.emplace_back(ev.begin(), ev.end());
  }
  out.stats = anim.stats();
  return out;
}

TEST(AnimationPlugin, FootContactTracksRaiseEventsEveryStep) {
  constexpr int kSteps = 150;
  const Footsteps got = run_footsteps(jobs::Mode::Single, 1, kSteps);
  const float dt = static_cast<float>(core::ns_to_seconds(core::EngineConfig{}.fixed_step_ns));
  const float d = got.duration;
  const FloatTrack left = contact_track(d), right = contact_track(d, true);

  // By hand: each step's range per entity, the jobs run directly, ordered by playback time.
  float time[2] = {0.0f, 0.1f * d};
  const float speed[2] = {0.6f, -1.5f};
  std::size_t total = 0, rising = 0;
  for (int s = 0; s + 1 < kSteps; ++s) {
    std::vector<AnimationEvent> want;
    for (int i = 0; i < 2; ++i) {
      const float from = time[i], to = from + dt * speed[i];
      std::vector<std::pair<float, AnimationEvent>> entity;
      for (const auto& [track, id] : {std::pair{&left, got.left}, std::pair{&right, got.right}}) {
        if (i == 0 && id == got.right) continue;
        std::array<TrackEdge, 8> edges;
        std::size_t count = 0;
        bool overflowed = false;
        ASSERT_TRUE((TrackTriggeringJob{.track = track,
                                        .from = from,
                                        .to = to,
                                        .edges = edges,
                                        .count = &count,
                                        .overflowed = &overflowed})
                        .run());
        for (std::size_t k = 0; k < count; ++k) {
          float progress = to >= from ? edges[k].time - from : from - edges[k].time;
          if (progress < 0.0f) progress += d;
          entity.push_back(
              {progress,
               {got.entities[static_cast<std::size_t>(i)], id, edges[k].time, 0, edges[k].rising}});
        }
      }
      std::stable_sort(entity.begin(), entity.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [progress, e] : entity) want.push_back(e);
      float t = std::fmod(to, d);
      if (t < 0.0f) t += d;
      time[i] = t >= d ? 0.0f : t;
    }
    const std::vector<AnimationEvent>& seen = got.per_step[static_cast<std::size_t>(s) + 1];
    ASSERT_EQ(seen.size(), want.size()) << "step " << s;
    for (std::size_t k = 0; k < want.size(); ++k) {
      EXPECT_TRUE(seen[k] == want[k]) << "step " << s << " event " << k;
      rising += seen[k].rising ? 1u : 0u;
    }
    total += want.size();
  }
  EXPECT_TRUE(got.per_step[0].empty()) << "nothing raised before the first step";
  // About 1.5 s of walking at 0.6 and 1.5 clips per second: several contacts on each foot.
  EXPECT_GE(total, 6u);
  EXPECT_GT(rising, 0u);
  EXPECT_LT(rising, total);
  EXPECT_GE(got.stats.events, total) << "the last step's events are counted, not yet read";
  EXPECT_EQ(got.stats.event_overflows, 0u);
}

TEST(AnimationPlugin, FloatTracksAreCheckedAgainstTheirClip) {
  const Character c = make(32, 20, 64);
  core::Engine engine(config(jobs::Mode::Single));
  Animation& anim = engine.add_plugin<AnimationPlugin>().animation();
  const Assets a = add_assets(anim, c);
  EXPECT_FALSE(anim.add_float_track(contact_track(c.walk.duration()), ClipId{99}));
  EXPECT_FALSE(anim.add_float_track(contact_track(c.walk.duration() * 2.0f), a.walk))
      << "another duration";
  EXPECT_FALSE(anim.add_float_track(contact_track(c.walk.duration()), a.walk, NAN));
  EXPECT_FALSE(anim.add_float_track(FloatTrack{}, a.walk));
  const FloatTrackId id = anim.add_float_track(contact_track(c.walk.duration()), a.walk).value();
  EXPECT_EQ(anim.float_track_clip(id), a.walk);
  EXPECT_NE(anim.float_track(id), nullptr);
  EXPECT_EQ(anim.float_track(FloatTrackId{7}), nullptr);
}

TEST(AnimationPlugin, SameEventsInEveryModeAndWorkerCount) {
  const std::uint64_t reference =
      ::spindle::test::expect_same_in_every_mode([](jobs::Mode mode, std::uint32_t workers) {
        const Footsteps f = run_footsteps(mode, workers, 90, 30);
        core::Hasher h;
        for (const auto& step : f.per_step) {
          h.add(step.size());
          for (const AnimationEvent& e : step) {
            std::uint32_t time_bits = 0;
            std::memcpy(&time_bits, &e.time, sizeof time_bits);
            h.add(e.entity.bits());
            h.add(static_cast<std::uint64_t>(e.track) << 32 | time_bits);
            h.add(std::uint64_t{e.layer} << 1 | (e.rising ? 1u : 0u));
          }
        }
        return h.value();
      });
  EXPECT_NE(reference, core::Hasher{}.value()) << "events were raised";
}

}  // namespace
}  // namespace spindle::anim
