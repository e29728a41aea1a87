// Sort keys and RenderPrep: culling against a brute-force check, key order, depth order per
// pass, identical lists for every chunk count and job mode, capacity overflow counted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "spindle/render/draw_list.h"
#include "test_util.h"

namespace spindle::render {
namespace {

TEST(SortKey, FieldsRoundTrip) {
  const std::uint64_t k = make_sort_key(9, false, 123456, 0xabcde, 0x1234);
  EXPECT_EQ(key_layer(k), 9u);
  EXPECT_FALSE(key_translucent(k));
  EXPECT_EQ(key_depth(k), 123456u);
  EXPECT_EQ(key_material(k), 0xabcdeu);
  EXPECT_EQ(key_mesh(k), 0x1234u);
  const std::uint64_t t = make_sort_key(15, true, 7, 1, 2);
  EXPECT_EQ(key_layer(t), 15u);
  EXPECT_TRUE(key_translucent(t));
  EXPECT_EQ(key_depth(t), 7u);
  EXPECT_EQ(k >> 60, 9u);                                       // layer in the top four bits
  EXPECT_EQ((t >> 59) & 1u, 1u);                                // translucent bit
  EXPECT_EQ(make_sort_key(0, false, 0, 0, 0x7fff), 0x7fffull);  // mesh at the bottom
}

TEST(SortKey, WideFieldsAreMasked) {
  const std::uint64_t k = make_sort_key(0x13, false, 0x1ffffff, 0x1fffff, 0xffff);
  EXPECT_EQ(key_layer(k), 3u);
  EXPECT_EQ(key_depth(k), 0xffffffu);
  EXPECT_EQ(key_material(k), 0xfffffu);
  EXPECT_EQ(key_mesh(k), 0x7fffu);
}

TEST(SortKey, OrderIsLayerThenOpaqueFrontToBackThenTranslucentBackToFront) {
  // Every key below must sort before the next.
  const std::uint64_t ordered[] = {
      make_sort_key(0, false, 10, 500, 9),  // layer 0 opaque, near
      make_sort_key(0, false, 10, 501, 0),  // same depth: by material
      make_sort_key(0, false, 900, 0, 0),   // farther opaque
      make_sort_key(0, true, 900, 0, 0),    // translucent after opaque; far first
      make_sort_key(0, true, 10, 0, 0),     // nearer translucent last
      make_sort_key(1, false, 0, 0, 0),     // next layer
  };
  for (std::size_t i = 1; i < std::size(ordered); ++i) EXPECT_LT(ordered[i - 1], ordered[i]) << i;
}

TEST(SortKey, QuantizeDepthClampsAndIsMonotonic) {
  EXPECT_EQ(quantize_depth(-5.0f, 1.0f, 100.0f), 0u);
  EXPECT_EQ(quantize_depth(1.0f, 1.0f, 100.0f), 0u);
  EXPECT_EQ(quantize_depth(100.0f, 1.0f, 100.0f), sort_key::kDepthMask);
  EXPECT_EQ(quantize_depth(1e9f, 1.0f, 100.0f), sort_key::kDepthMask);
  EXPECT_LT(quantize_depth(10.0f, 1.0f, 100.0f), quantize_depth(10.01f, 1.0f, 100.0f));
}

// The draw list RenderPrep must produce, built the obvious way.
std::vector<DrawItem> brute_force(const Camera& cam, const std::vector<Renderable>& objects,
                                  std::size_t limit) {
  const Frustum f = Frustum::from_matrix(cam.view_projection());
  const glm::vec3 forward = glm::normalize(cam.target - cam.position);
  std::vector<DrawItem> items;
  for (std::size_t i = 0; i < std::min(objects.size(), limit); ++i) {
    const Renderable& o = objects[i];
    if (!f.intersects_sphere(o.center, o.radius)) continue;
    const float depth = glm::dot(o.center - cam.position, forward);
    items.push_back(
        {make_sort_key(o.layer, o.translucent, quantize_depth(depth, cam.near_plane, cam.far_plane),
                       o.material, o.mesh),
         static_cast<std::uint32_t>(i)});
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const DrawItem& a, const DrawItem& b) { return a.key < b.key; });
  return items;
}

void expect_same(std::span<const DrawItem> got, const std::vector<DrawItem>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].key, want[i].key) << i;
    ASSERT_EQ(got[i].object, want[i].object) << i;
  }
}

TEST(RenderPrep, MatchesBruteForceCullingAndOrder) {
  jobs::JobSystem js(::spindle::test::job_config(jobs::Mode::Single));
  const Camera cam = test::test_camera();
  const auto objects = test::random_scene(5000, 1);
  RenderPrep prep(8000);
  prep.prepare(js, cam, objects, 4);
  const auto want = brute_force(cam, objects, objects.size());
  ASSERT_GT(want.size(), 100u);   // the scene has something to see...
  ASSERT_LT(want.size(), 4000u);  // ...and something to cull
  expect_same(prep.draw_list(), want);
  EXPECT_EQ(prep.stats().submitted, 5000u);
  EXPECT_EQ(prep.stats().visible, want.size());
  EXPECT_EQ(prep.stats().dropped, 0u);
}

TEST(RenderPrep, OpaqueFrontToBackTranslucentBackToFront) {
  jobs::JobSystem js(::spindle::test::job_config(jobs::Mode::Single));
  const Camera cam = test::test_camera();
  const auto objects = test::random_scene(4000, 2);
  RenderPrep prep(4000);
  prep.prepare(js, cam, objects, 3);
  const auto list = prep.draw_list();
  ASSERT_GT(list.size(), 100u);
  for (std::size_t i = 1; i < list.size(); ++i) {
    ASSERT_LE(list[i - 1].key, list[i].key);
    const Renderable& a = objects[list[i - 1].object];
    const Renderable& b = objects[list[i].object];
    if (a.layer != b.layer || a.translucent != b.translucent) {
      EXPECT_TRUE(a.layer < b.layer || (a.layer == b.layer && !a.translucent)) << i;
      continue;
    }
    // The camera looks down -z from the origin: view depth is -z. Spheres reaching past the far
    // plane share the clamped depth and are ordered by material instead.
    if (-a.center.z >= cam.far_plane || -b.center.z >= cam.far_plane) continue;
    if (!a.translucent) {
      EXPECT_LE(-a.center.z, -b.center.z + 1e-3f) << i;
    } else {
      EXPECT_GE(-a.center.z, -b.center.z - 1e-3f) << i;
    }
  }
}

TEST(RenderPrep, OverCapacityObjectsAreDroppedAndCounted) {
  jobs::JobSystem js(::spindle::test::job_config(jobs::Mode::Single));
  const Camera cam = test::test_camera();
  const auto objects = test::random_scene(2500, 3);
  RenderPrep prep(1000, 8, 1);
  prep.prepare(js, cam, objects, 16);  // also more chunks than max_chunks
  EXPECT_EQ(prep.stats().submitted, 2500u);
  EXPECT_EQ(prep.stats().dropped, 1500u);
  expect_same(prep.draw_list(), brute_force(cam, objects, 1000));
  prep.prepare(js, cam, {}, 4);
  EXPECT_TRUE(prep.draw_list().empty());
  EXPECT_EQ(prep.stats().submitted, 0u);
  EXPECT_EQ(prep.stats().dropped, 0u);
}

TEST(RenderPrep, ChunksAreClampedByGranularityAndMaximum) {
  const RenderPrep prep(100000, 16, 1000);
  EXPECT_EQ(prep.effective_chunks(10, 8), 1u);
  EXPECT_EQ(prep.effective_chunks(0, 8), 1u);
  EXPECT_EQ(prep.effective_chunks(2500, 8), 3u);
  EXPECT_EQ(prep.effective_chunks(50000, 8), 8u);
  EXPECT_EQ(prep.effective_chunks(50000, 100), 16u);
  EXPECT_EQ(prep.effective_chunks(50000, 0), 1u);
}

TEST(RenderPrep, ZeroCapacityDropsEverything) {
  jobs::JobSystem js(::spindle::test::job_config(jobs::Mode::Single));
  RenderPrep prep(0, 0);
  const auto objects = test::random_scene(10, 4);
  prep.prepare(js, test::test_camera(), objects, 2);
  EXPECT_TRUE(prep.draw_list().empty());
  EXPECT_EQ(prep.stats().dropped, 10u);
}

class RenderPrepModes : public ::testing::TestWithParam<jobs::Mode> {};

TEST_P(RenderPrepModes, SameDrawListForAnyChunkCount) {
  SPINDLE_REQUIRE_MODE(GetParam());
  jobs::JobSystem js(::spindle::test::job_config(GetParam()));
  Camera cam = test::test_camera();
  cam.position = {3.0f, 2.0f, 5.0f};
  cam.target = {-4.0f, 0.0f, -30.0f};
  RenderPrep prep(20000, 256, 1);       // splits as finely as asked
  RenderPrep coarse(20000, 256, 1024);  // the default granularity
  for (std::size_t n : {10u, 20000u}) {
    const auto objects = test::random_scene(n, 5 + static_cast<std::uint32_t>(n));
    const auto want = brute_force(cam, objects, objects.size());
    for (std::uint32_t chunks : {1u, 2u, 3u, 7u, 64u, 300u}) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " chunks=" << chunks);
      prep.prepare(js, cam, objects, chunks, 5);
      expect_same(prep.draw_list(), want);
      coarse.prepare(js, cam, objects, chunks, 5);
      expect_same(coarse.draw_list(), want);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, RenderPrepModes, ::testing::ValuesIn(test::own_modes()),
                         test::mode_name);

}  // namespace
}  // namespace spindle::render
