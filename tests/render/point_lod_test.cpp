// Points for small things (RendererConfig::point_pixels): a draw smaller on screen than the
// threshold is one depth-tested square of its lit mean colour, the same in every mode and worker
// count, in both render paths; bins of points grow like bins of triangles; translucent draws and
// draws near the camera keep their triangles.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include <glm/gtc/matrix_transform.hpp>

#include "modes.h"
#include "spindle/render/renderer.h"

namespace spindle::render {
namespace {

using ::spindle::test::expect_same_in_every_mode;
using ::spindle::test::job_config;

constexpr int kWidth = 160, kHeight = 120;

// A camera at the origin looking down -z, lit from behind the eye: a point facing it shows the
// whole directional light (ambient 0.2 + 0.8 = 1: the material's own colour).
void look_down_z(Renderer& r) {
  Camera cam;
  cam.position = {0.0f, 0.0f, 0.0f};
  cam.target = {0.0f, 0.0f, -1.0f};
  cam.aspect = static_cast<float>(kWidth) / static_cast<float>(kHeight);
  cam.near_plane = 0.5f;
  cam.far_plane = 500.0f;
  r.set_camera(cam);
  r.lights().ambient = glm::vec3(0.2f);
  r.lights().directional = {.direction = {0.0f, 0.0f, 1.0f}, .color = glm::vec3(0.8f)};
}

glm::mat4 at(glm::vec3 p, float scale = 1.0f) {
  return glm::scale(glm::translate(glm::mat4(1.0f), p), glm::vec3(scale));
}

// The pixel a point of the world projects to.
std::pair<int, int> pixel_of(const Renderer& r, glm::vec3 p) {
  const glm::vec4 c = r.camera().view_projection() * glm::vec4(p, 1.0f);
  return {static_cast<int>((c.x / c.w + 1.0f) * 0.5f * kWidth),
          static_cast<int>((1.0f - c.y / c.w) * 0.5f * kHeight)};
}

bool near_colour(std::uint32_t got, int r, int g, int b) {
  const auto ch = [got](int k) { return static_cast<int>((got >> (8 * k)) & 0xffu); };
  return std::abs(ch(0) - r) <= 1 && std::abs(ch(1) - g) <= 1 && std::abs(ch(2) - b) <= 1;
}

TEST(PointLod, AFarCubeIsOnePointOfItsMaterialsColourAndANearOneKeepsItsTriangles) {
  jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
  for (const float threshold : {1.5f, 0.0f}) {
    Renderer r({.width = kWidth, .height = kHeight, .point_pixels = threshold});
    look_down_z(r);
    const MeshId cube = r.add_mesh(make_cube(1.0f)).value();
    const MaterialId violet =
        r.add_material({.name = "violet", .color = {0.5f, 0.25f, 1.0f, 1.0f}}).value();
    const glm::vec3 far(0.0f, 0.0f, -150.0f), near(-1.5f, 0.0f, -6.0f);
    const std::span<DrawCommand> draws = r.begin_frame(2);
    draws[0] = {.mesh = cube, .material = violet, .model = at(far)};
    draws[1] = {.mesh = cube, .material = violet, .model = at(near)};
    r.render(js);
    const Renderer::Stats s = r.stats();
    if (threshold > 0.0f) {
      EXPECT_EQ(s.draws_as_points, 1u);
      EXPECT_EQ(s.triangles_in, 12u) << "the near cube's triangles only";
      const auto [x, y] = pixel_of(r, far);
      EXPECT_TRUE(near_colour(r.image().at(x, y), 128, 64, 255)) << std::hex << r.image().at(x, y);
    } else {
      EXPECT_EQ(s.draws_as_points, 0u);
      EXPECT_EQ(s.triangles_in, 24u);
    }
    // The near cube is drawn either way: its centre pixel is no longer the clear colour.
    const auto [nx, ny] = pixel_of(r, near);
    EXPECT_NE(r.image().at(nx, ny), r.image().at(0, 0));
  }
}

TEST(PointLod, PointsAreDepthTestedAgainstMeshes) {
  jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
  Renderer r({.width = kWidth, .height = kHeight, .point_pixels = 1.5f});
  look_down_z(r);
  const MeshId cube = r.add_mesh(make_cube(1.0f)).value();
  const MaterialId red = r.add_material({.name = "red", .color = {1, 0, 0, 1}}).value();
  const MaterialId green = r.add_material({.name = "green", .color = {0, 1, 0, 1}}).value();
  // A green block 25 to 55 units away on the left with a far red cube behind it; on the right a
  // red cube 100 away in front of a green block 120 to 140 away.
  const glm::vec3 hidden(-20.0f, 0.0f, -150.0f), shown(40.0f, 0.0f, -100.0f);
  const std::span<DrawCommand> draws = r.begin_frame(4);
  draws[0] = {.mesh = cube, .material = green, .model = at({-20.0f, 0.0f, -40.0f}, 30.0f)};
  draws[1] = {.mesh = cube, .material = red, .model = at(hidden)};
  draws[2] = {.mesh = cube, .material = green, .model = at({40.0f, 0.0f, -130.0f}, 20.0f)};
  draws[3] = {.mesh = cube, .material = red, .model = at(shown)};
  r.render(js);
  EXPECT_EQ(r.stats().draws_as_points, 2u);
  const auto [hx, hy] = pixel_of(r, hidden);
  const auto [sx, sy] = pixel_of(r, shown);
  // Seen off axis, each is lit a little less than fully: what matters is whose colour wins.
  const auto r8 = [](std::uint32_t c) { return c & 0xffu; };
  const auto g8 = [](std::uint32_t c) { return (c >> 8) & 0xffu; };
  const std::uint32_t behind = r.image().at(hx, hy), before = r.image().at(sx, sy);
  EXPECT_TRUE(r8(behind) == 0 && g8(behind) > 0) << std::hex << behind;
  EXPECT_TRUE(r8(before) > 200 && g8(before) == 0) << std::hex << before;
}

// Cubes from 3 to 300 units away: the near ones meshes, the far ones points; some translucent.
std::uint64_t draw_field(jobs::Mode mode, std::uint32_t workers, RendererConfig config,
                         Renderer::Stats* stats = nullptr) {
  jobs::JobSystem js(job_config(mode, workers));
  Renderer r(config);
  look_down_z(r);
  const MeshId cube = r.add_mesh(make_cube(1.0f)).value();
  const MeshId sphere = r.add_mesh(make_sphere(0.6f, 8, 12)).value();
  std::vector<MaterialId> mats;
  for (int i = 0; i < 5; ++i)
    mats.push_back(r.add_material({.name = "m",
                                   .color = {0.2f * i, 1.0f - 0.2f * i, 0.5f, 1.0f},
                                   .shading = i == 4 ? Shading::Unlit : Shading::Gouraud})
                       .value());
  const MaterialId glass =
      r.add_material({.name = "glass", .color = {0.6f, 0.8f, 1.0f, 0.5f}, .translucent = true})
          .value();
  r.lights().point_count = 1;
  r.lights().points[0] = {.position = {0, 5, -40}, .color = {1, 0.5f, 0.2f}, .range = 80};
  constexpr std::uint32_t kCount = 3000;
  for (int frame = 0; frame < 2; ++frame) {
    const std::span<DrawCommand> draws = r.begin_frame(kCount);
    for (std::uint32_t i = 0; i < kCount; ++i) {
      const float depth = 3.0f + 297.0f * static_cast<float>((i * 7919u) % kCount) / kCount;
      const float x = (static_cast<float>(i % 41) - 20.0f) * depth * 0.03f;
      const float y = (static_cast<float>(i % 23) - 11.0f) * depth * 0.03f + 0.1f * frame;
      draws[i] = {.mesh = i % 3 == 0 ? sphere : cube,
                  .material = i % 11 == 0 ? glass : mats[i % mats.size()],
                  .model = at({x, y, -depth})};
    }
    const std::uint32_t chunks = 1 + (workers * 3 + static_cast<std::uint32_t>(frame)) % 7;
    r.prepare(js, chunks);
    r.geometry(js, chunks + 1);
    r.raster(js, chunks);
  }
  if (stats != nullptr) *stats = r.stats();
  return r.image_hash();
}

TEST(PointLod, PointsAndMeshesGiveTheSameImageInEveryModeAndWorkerCount) {
  const RendererConfig config{.width = kWidth, .height = kHeight, .point_pixels = 1.5f};
  Renderer::Stats s;
  const std::uint64_t with_points = draw_field(jobs::Mode::Single, 1, config, &s);
  EXPECT_GT(s.draws_as_points, 500u);
  EXPECT_LT(s.draws_as_points, s.draws_visible) << "the near ones stay meshes";
  expect_same_in_every_mode(
      [&](jobs::Mode m, std::uint32_t w) { return draw_field(m, w, config); });
  RendererConfig ot = config;
  ot.path = RenderPath::OrderingTable;
  expect_same_in_every_mode([&](jobs::Mode m, std::uint32_t w) { return draw_field(m, w, ot); });
  RendererConfig off = config;
  off.point_pixels = 0.0f;
  EXPECT_NE(draw_field(jobs::Mode::Single, 1, off, &s), with_points);
  EXPECT_EQ(s.draws_as_points, 0u);
}

TEST(PointLod, FullBinsOfPointsGrowAndGiveTheSameImage) {
  const RendererConfig big{.width = kWidth, .height = kHeight, .point_pixels = 1.5f};
  RendererConfig small = big;
  small.triangles_per_batch = 64;  // room for 64 points a batch: far too few
  Renderer::Stats s;
  const std::uint64_t expected = draw_field(jobs::Mode::Single, 1, big);
  EXPECT_EQ(draw_field(jobs::Mode::Single, 1, small, &s), expected);
  EXPECT_GT(s.grows, 0u);
  SPINDLE_REQUIRE_MODE(jobs::Mode::Dynamic);
  EXPECT_EQ(draw_field(jobs::Mode::Dynamic, 2, small), expected);
}

TEST(PointLod, TranslucentDrawsAreNeverPoints) {
  jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
  Renderer r({.width = kWidth, .height = kHeight, .point_pixels = 100.0f});
  look_down_z(r);
  const MeshId cube = r.add_mesh(make_cube(1.0f)).value();
  const MaterialId glass =
      r.add_material({.name = "glass", .color = {1, 1, 1, 0.5f}, .translucent = true}).value();
  r.begin_frame(1)[0] = {.mesh = cube, .material = glass, .model = at({0, 0, -150})};
  r.render(js);
  EXPECT_EQ(r.stats().draws_as_points, 0u);
  EXPECT_EQ(r.stats().triangles_in, 12u);
}

}  // namespace
}  // namespace spindle::render
