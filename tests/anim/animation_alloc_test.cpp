// A steady-state animation frame allocates nothing: 60 characters posed from two normal layers and
// a masked additive layer, skinned in batches, in every job mode. Characters appearing or
// changing their skeleton or mesh allocate their buffers once; that is not steady state.
#include <gtest/gtest.h>

#include <vector>

#include <spindle/anim/animation_plugin.h>
#include <spindle/anim/procedural.h>
#include <spindle/engine/engine.h>

#include "alloc_counter.h"

namespace spindle::anim {
namespace {

TEST(AnimationAlloc, SteadyStateFramesAllocateNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  const Character c = make_character({.seed = 5, .joint_count = 50, .vertex_count = 1500}).value();
  for (jobs::Mode mode : {jobs::Mode::Single, jobs::Mode::Static, jobs::Mode::Dynamic}) {
    if (!jobs::mode_available(mode)) continue;
    core::EngineConfig config;
    config.mode = mode;
    config.workers = mode == jobs::Mode::Single ? 1 : 2;
    config.pin_workers = false;
    config.entity_capacity = 1024;
    core::Engine engine(config);
    AnimationConfig ac;
    ac.skin_batch_vertices = 256;
    Animation& anim = engine.add_plugin<AnimationPlugin>(ac).animation();
    const SkeletonId sk = anim.add_skeleton(c.skeleton).value();
    const ClipId walk = anim.add_clip(c.walk, sk).value();
    const ClipId idle = anim.add_clip(c.idle, sk).value();
    const MeshId mesh = anim.add_mesh(c.mesh, sk).value();
    std::vector<float> upper(50, 0.0f);
    for (std::size_t j = 25; j < 50; ++j) upper[j] = 1.0f;
    const MaskId mask = anim.add_mask(upper, sk).value();
    core::World& world = engine.world();
    for (int i = 0; i < 60; ++i) {
      AnimationPlayer p{.skeleton = sk};
      const float f = static_cast<float>(i);
      p.layers[0] = {.clip = walk, .time = 0.01f * f, .speed = 1.0f + 0.01f * f, .weight = 0.6f};
      p.layers[1] = {.clip = idle, .time = 0.05f * f, .weight = 0.4f};
      p.layers[2] = {.clip = idle, .time = 0.5f, .weight = 0.3f, .mask = mask, .additive = true};
      const core::Entity e = world.create();
      world.add<AnimationPlayer>(e, p);
      world.add<SkinnedMeshInstance>(e, SkinnedMeshInstance{mesh});
      world.add<SkinnedBounds>(e, SkinnedBounds{});
      if (i % 4 >= 2) world.add<AnimationLod>(e, AnimationLod{2});  // half at half the rate
    }
    for (int i = 0; i < 30; ++i) engine.step();
    const long before = ::spindle::test::heap_allocations();
    for (int i = 0; i < 60; ++i) engine.step();
    EXPECT_EQ(::spindle::test::heap_allocations() - before, 0) << jobs::to_string(mode);
    EXPECT_EQ(anim.stats().characters, 60u);
    EXPECT_EQ(anim.stats().updated, 45u);  // 30 every frame, 15 of the 30 at half the rate
    EXPECT_EQ(anim.stats().vertices, 60u * 1500u);
  }
}

// Levels of detail switched every frame: once each character has had its largest mesh, moving
// between meshes allocates nothing (its buffers keep their room).
TEST(AnimationAlloc, SwitchingMeshesAfterTheLargestAllocatesNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  const Character fine =
      make_character({.seed = 6, .joint_count = 30, .vertex_count = 800}).value();
  const Character coarse =
      make_character({.seed = 6, .joint_count = 30, .vertex_count = 200}).value();
  core::EngineConfig config;
  config.mode = jobs::Mode::Single;
  config.workers = 1;
  config.entity_capacity = 256;
  core::Engine engine(config);
  Animation& anim = engine.add_plugin<AnimationPlugin>().animation();
  const SkeletonId sk = anim.add_skeleton(fine.skeleton).value();
  const ClipId walk = anim.add_clip(fine.walk, sk).value();
  const MeshId meshes[2] = {anim.add_mesh(fine.mesh, sk).value(),
                            anim.add_mesh(coarse.mesh, sk).value()};
  core::World& world = engine.world();
  std::vector<core::Entity> es;
  for (int i = 0; i < 40; ++i) {
    AnimationPlayer p{.skeleton = sk};
    p.layers[0] = {.clip = walk, .time = 0.02f * static_cast<float>(i)};
    const core::Entity e = world.create();
    world.add<AnimationPlayer>(e, p);
    world.add<SkinnedMeshInstance>(e, SkinnedMeshInstance{meshes[0]});
    world.add<AnimationLod>(e, AnimationLod{static_cast<std::uint32_t>(1 + i % 3)});
    es.push_back(e);
  }
  const auto switch_meshes = [&](int frame) {
    for (std::size_t i = 0; i < es.size(); ++i)
      world.get<SkinnedMeshInstance>(es[i])->mesh = meshes[(i + frame) % 3 == 0 ? 0 : 1];
  };
  for (int f = 0; f < 5; ++f) {
    switch_meshes(f);
    engine.step();
  }
  const long before = ::spindle::test::heap_allocations();
  for (int f = 5; f < 30; ++f) {
    switch_meshes(f);
    engine.step();
  }
  EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
  EXPECT_GT(anim.stats().rebuilds, 40u * 20u);
  EXPECT_EQ(anim.view(es[0]).positions.x.size(),
            anim.mesh(world.get<SkinnedMeshInstance>(es[0])->mesh)->vertex_count());
}

}  // namespace
}  // namespace spindle::anim
