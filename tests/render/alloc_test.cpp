// Counts heap allocations: a steady-state RenderPrep::prepare and parallel radix sort allocate
// nothing. This binary replaces the global operator new/delete, so it holds only these tests.
#include <gtest/gtest.h>

#include <vector>

#include "alloc_counter.h"
#include "render_scene.h"
#include "spindle/algorithms/radix_sort.h"
#include "spindle/gameplay/transform.h"
#include "spindle/render/draw_list.h"
#include "spindle/render/ot_renderer.h"
#include "spindle/render/render_plugin.h"
#include "test_util.h"

namespace spindle::render {
namespace {

class Allocations : public ::testing::TestWithParam<jobs::Mode> {};

TEST_P(Allocations, SteadyStatePrepareAllocatesNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  SPINDLE_REQUIRE_MODE(GetParam());
  jobs::JobSystem js(::spindle::test::job_config(GetParam()));
  const auto objects = test::random_scene(20000, 9);
  Camera cam = test::test_camera();
  RenderPrep prep(static_cast<std::uint32_t>(objects.size()), 64, 256);
  for (int i = 0; i < 3; ++i) prep.prepare(js, cam, objects, 8);  // warm-up: thread-locals
  const long before = ::spindle::test::heap_allocations();
  for (int frame = 0; frame < 20; ++frame) {
    cam.position.x = static_cast<float>(frame);
    prep.prepare(js, cam, objects, 1 + frame % 16, 2);
  }
  EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
  EXPECT_GT(prep.stats().visible, 0u);
}

TEST_P(Allocations, ParallelRadixSortAllocatesNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  SPINDLE_REQUIRE_MODE(GetParam());
  jobs::JobSystem js(::spindle::test::job_config(GetParam()));
  core::RadixSortScratch scratch(16);
  std::vector<std::uint64_t> keys(10000), kt(10000);
  std::vector<std::uint32_t> values(10000), vt(10000);
  const long before = ::spindle::test::heap_allocations();
  for (int round = 0; round < 10; ++round) {
    for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = (i * 2654435761u + round) % 7919;
    ASSERT_TRUE(core::radix_sort(js, 7, scratch, keys, values, kt, vt));
    ASSERT_TRUE(core::radix_sort(keys, values, kt, vt));
  }
  EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

// A whole renderer frame (cull, sort, geometry, tiles, debug text) after warm-up, in both
// paths, with and without points: bins, vertex buffers and tiles were sized before, so nothing
// is allocated.
TEST_P(Allocations, SteadyStateRendererFrameAllocatesNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  SPINDLE_REQUIRE_MODE(GetParam());
  jobs::JobSystem js(::spindle::test::job_config(GetParam()));
  // And with most draws as points (RendererConfig::point_pixels far above their size).
  for (const auto& [path, points] : {std::pair{RenderPath::DepthBuffer, 0.0f},
                                     {RenderPath::OrderingTable, 0.0f},
                                     {RenderPath::DepthBuffer, 40.0f},
                                     {RenderPath::OrderingTable, 40.0f}}) {
    Renderer r({.width = 320, .height = 200, .path = path, .point_pixels = points});
    const test::SceneIds ids = test::build_scene(r);
    for (int f = 0; f < 3; ++f) {  // warm-up: grows, thread-locals
      test::submit_scene(r, ids, 200, f);
      r.render(js);
    }
    const long before = ::spindle::test::heap_allocations();
    for (int f = 3; f < 13; ++f) {
      test::submit_scene(r, ids, 200, f);
      r.prepare(js, 1 + static_cast<std::uint32_t>(f) % 7);
      r.geometry(js, 1 + static_cast<std::uint32_t>(f) % 5);
      r.raster(js, 4);
    }
    EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
    EXPECT_GT(r.stats().pixels, 0u);
    EXPECT_EQ(r.stats().draws_as_points > 100u, points > 0.0f);
  }
}

// The path a game takes: an engine whose frame draws entities through the RenderPlugin's stages,
// with the overlay's text and occlusion culling (300 draws: two passes). After warm-up, frames
// allocate nothing.
TEST_P(Allocations, SteadyStateEngineFrameWithRenderingAllocatesNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  SPINDLE_REQUIRE_MODE(GetParam());
  core::Engine engine(::spindle::test::engine_config(GetParam(), 2));
  engine.add_plugin<core::TransformPlugin>();
  Renderer& r = engine
                    .add_plugin<RenderPlugin>(RenderPluginConfig{
                        .renderer = {.width = 256, .height = 160, .occlusion_culling = true},
                        .overlay = true})
                    .renderer();
  const test::SceneIds ids = test::build_scene(r);
  core::World& world = engine.world();
  for (int i = 0; i < 300; ++i) {
    const core::Entity e = world.create();
    world.add<core::Transform>(e, core::Transform::from({static_cast<float>(i % 20) - 10.0f,
                                                         static_cast<float>(i / 20) - 7.0f,
                                                         -6.0f - static_cast<float>(i % 7)}));
    world.add<core::WorldTransform>(e);
    world.add<MeshInstance>(e, MeshInstance{.mesh = i % 2 ? ids.sphere : ids.cube,
                                            .material = static_cast<MaterialId>(i % 4)});
  }
  for (int f = 0; f < 5; ++f) engine.step();  // warm-up: grows, thread-locals, the planner
  const long before = ::spindle::test::heap_allocations();
  for (int f = 0; f < 10; ++f) engine.step();
  EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
  EXPECT_EQ(r.stats().draws, 300u);
  EXPECT_GT(r.stats().pixels, 0u);
}

INSTANTIATE_TEST_SUITE_P(Modes, Allocations, ::testing::ValuesIn(test::own_modes()),
                         test::mode_name);

// The tiny profile's renderer: frames of meshes (one textured) and textured sprites, with its
// caches reloading (more meshes than slots) and both panic modes firing, allocate nothing after
// construction.
TEST(OtAllocations, SteadyFramesAllocateNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  OtConfig config;
  config.mesh_slots = 2;
  config.texture_slots = 1;
  config.max_primitives = 64;
  OtRenderer r(config);
  const core::fixed one = core::fixed::one();
  const FixedVec3 tri[3] = {{-one, {}, {}}, {one, {}, {}}, {{}, -one, {}}};
  const std::uint16_t idx[3] = {0, 1, 2};
  const std::uint16_t col[1] = {rgb555(255, 0, 0)};
  const std::uint16_t texels[4] = {rgb555(0, 255, 0), 0, 0, rgb555(0, 255, 0)};
  const std::uint8_t uv[6] = {0, 0, 2, 0, 1, 2};
  const OtTextureId a = r.add_texture({2, 2, texels}).value();
  const OtTextureId b = r.add_texture({2, 2, texels}).value();
  std::vector<OtMeshId> meshes;
  for (int i = 0; i < 3; ++i) meshes.push_back(r.add_mesh({tri, idx, col, false}).value());
  meshes.push_back(r.add_mesh({tri, idx, col, false, b, uv}).value());  // textured
  const long before = ::spindle::test::heap_allocations();
  for (int frame = 0; frame < 10; ++frame) {
    r.begin_frame();
    for (int i = 0; i < 100; ++i) {
      const core::fixed x = core::fixed::from_int(i % 20 - 10), z = core::fixed::from_int(20 + i);
      r.draw(meshes[i % 4], FixedTransform::translation({x, {}, z}));
      r.draw_sprite({x, one, z}, one, i % 2 ? a : b);
    }
    r.rasterize();
  }
  EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
  EXPECT_GT(r.stats().dropped_far, 0u);
  EXPECT_GT(r.stats().drawn_flat, 0u);
  EXPECT_GT(r.mesh_cache().evictions, 0u);
}

}  // namespace
}  // namespace spindle::render
