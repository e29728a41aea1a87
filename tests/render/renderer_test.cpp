// The renderer's frame as a user drives it: the same image in every job mode, worker count and
// chunk count; growing bins; bad draws and resources; the ordering table against the depth
// buffer; golden images; the RenderPlugin in an engine.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "modes.h"
#include "render_scene.h"
#include "spindle/gameplay/transform.h"
#include "spindle/jobs/job_graph.h"
#include "spindle/render/render_plugin.h"

namespace spindle::render {
namespace {

using ::spindle::test::expect_same_in_every_mode;
using ::spindle::test::job_config;

std::uint64_t render_frames(jobs::Mode mode, std::uint32_t workers, RendererConfig config,
                            std::uint32_t objects = 60, int frames = 3) {
  jobs::JobSystem js(job_config(mode, workers));
  Renderer r(config);
  const test::SceneIds ids = test::build_scene(r);
  for (int f = 0; f < frames; ++f) {
    test::submit_scene(r, ids, objects, f);
    // Chunk counts that change from frame to frame, as the dynamic allocator's do.
    const std::uint32_t chunks = 1 + static_cast<std::uint32_t>(f * 5 + workers) % 11;
    r.prepare(js, chunks);
    r.geometry(js, chunks + 2);
    r.raster(js, chunks);
  }
  return r.image_hash();
}

TEST(Renderer, SameImageInEveryModeWorkerAndChunkCount) {
  const RendererConfig config{.width = 200, .height = 130};
  const std::uint64_t hash = expect_same_in_every_mode(
      [&](jobs::Mode m, std::uint32_t w) { return render_frames(m, w, config); });
  EXPECT_NE(hash, 0u);
  // The ordering-table path is just as deterministic.
  RendererConfig ot = config;
  ot.path = RenderPath::OrderingTable;
  expect_same_in_every_mode([&](jobs::Mode m, std::uint32_t w) { return render_frames(m, w, ot); });
}

TEST(Renderer, DrawsSomethingOfEveryMaterial) {
  jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
  Renderer r({.width = 160, .height = 120});
  const test::SceneIds ids = test::build_scene(r);
  test::submit_scene(r, ids, 60, 0);
  r.render(js);
  const Renderer::Stats s = r.stats();
  EXPECT_EQ(s.draws, 60u);
  EXPECT_LT(s.draws_visible, 60u);  // the one far to the side is culled
  EXPECT_GT(s.triangles_binned, 100u);
  EXPECT_LT(s.triangles_binned, s.triangles_in);  // back faces rejected
  EXPECT_GT(s.pixels, 160u * 120u / 4);
  // Pixels of the clear colour, the unlit red and something textured-orange are all present.
  int clear = 0, red = 0, orange = 0;
  const Image& img = r.image();
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x) {
      const std::uint32_t p = img.at(x, y);
      clear += p == rgba(26, 26, 31) ? 1 : 0;
      red += red_of(p) > 200 && green_of(p) < 80 && blue_of(p) < 100 ? 1 : 0;
      orange += red_of(p) > 100 && green_of(p) > 60 && blue_of(p) < 50 ? 1 : 0;
    }
  EXPECT_GT(clear, 100);
  EXPECT_GT(red, 50);
  EXPECT_GT(orange, 20);
}

TEST(Renderer, EmptyFrameIsTheClearColour) {
  jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
  Renderer r({.width = 70, .height = 70, .clear_color = {1.0f, 0.0f, 0.5f, 1.0f}});
  r.begin_frame(0);
  r.render(js);
  for (int y = 0; y < 70; ++y)
    for (int x = 0; x < 70; ++x) ASSERT_EQ(r.image().at(x, y), rgba(255, 0, 128, 255));
}

// The first frame leaves triangles' planes to the tiles; later frames do so only while a third or
// more of the triangles the tiles tested were hidden. A static scene must give the same image on
// either path, and the choice must follow the counts.
TEST(Renderer, PlanesLeftToTheTilesOrNotGiveTheSameImage) {
  jobs::JobSystem js(job_config(jobs::Mode::Dynamic, 2));
  for (std::uint32_t objects : {12u, 60u, 400u}) {
    Renderer r({.width = 200, .height = 130});
    const test::SceneIds ids = test::build_scene(r);
    std::uint64_t first = 0;
    bool deferred = true;  // the first frame's choice
    int frames_each[2] = {0, 0};
    for (int f = 0; f < 4; ++f) {
      test::submit_scene(r, ids, objects, 0);
      r.render(js);
      const Renderer::Stats s = r.stats();
      ++frames_each[deferred ? 1 : 0];
      if (f == 0) first = r.image_hash();
      EXPECT_EQ(r.image_hash(), first) << objects << " objects, frame " << f;
      ASSERT_GT(s.tile_triangles, 0u);
      EXPECT_LE(s.tile_triangles_hidden, s.tile_triangles);
      deferred = 3 * s.tile_triangles_hidden >= s.tile_triangles;
    }
    if (objects == 12) {
      EXPECT_EQ(frames_each[0], 3) << "a shallow scene sets planes up at once";
    }
    if (objects == 400) {
      EXPECT_EQ(frames_each[1], 4) << "a deep scene leaves them to the tiles";
    }
  }
}

TEST(Renderer, SmallBinsGrowAndGiveTheSameImage) {
  const RendererConfig big{.width = 200, .height = 130};
  RendererConfig small = big;
  small.triangles_per_batch = 64;  // far too few: every batch overflows on the first frame
  jobs::JobSystem js(job_config(jobs::Mode::Dynamic, 2));
  const std::uint64_t expected = render_frames(jobs::Mode::Single, 1, big);
  EXPECT_EQ(render_frames(jobs::Mode::Single, 1, small), expected);
  SPINDLE_REQUIRE_MODE(jobs::Mode::Dynamic);
  EXPECT_EQ(render_frames(jobs::Mode::Dynamic, 2, small), expected);

  Renderer r(small);
  const test::SceneIds ids = test::build_scene(r);
  test::submit_scene(r, ids, 60, 0);
  r.render(js);
  EXPECT_GT(r.stats().grows, 0u);
  const std::uint64_t grows = r.stats().grows;
  test::submit_scene(r, ids, 60, 0);
  r.render(js);
  EXPECT_EQ(r.stats().grows, grows) << "grown once, the same frame needs no more";
}

// This process's resident memory in bytes (Linux), or 0 where /proc does not say.
std::uint64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int read = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return read == 2 ? resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

// A default renderer has room for a million set-up triangles (64 batches of 16,384), but memory
// follows what it draws: a few hundred triangles must not make the process touch the whole room.
// Zeroed at construction, it was 250 MiB resident for any scene, and seconds to start on a
// machine with slow page faults.
TEST(Renderer, ASmallSceneTouchesLittleOfTheBatchesRoom) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer writes shadow memory for every byte allocated";
#endif
  if (resident_bytes() == 0) GTEST_SKIP() << "no /proc/self/statm here";
  jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
  const std::uint64_t before = resident_bytes();
  {
    Renderer r(RendererConfig{});
    ASSERT_EQ(r.config().max_batches, 64u);
    ASSERT_EQ(r.config().triangles_per_batch, 16384u);
    const test::SceneIds ids = test::build_scene(r);
    for (int f = 0; f < 3; ++f) {
      test::submit_scene(r, ids, 60, f);
      r.render(js);
    }
    EXPECT_GT(r.stats().triangles_binned, 100u);
    const std::uint64_t grew = resident_bytes() - before;
    EXPECT_LT(grew, std::uint64_t{48} << 20) << grew / 1024 << " KiB";
  }
}

// The per-draw vertex pass rejects most tiny triangles before setup, from each vertex's outcode
// and snapped position. It must keep exactly the triangles that classify, clip_triangle and
// setup_triangle keep (raster.h): random triangles from sub-pixel slivers to ones crossing the
// near plane and the guard band, drawn from a mesh and again through a VertexOverride.
TEST(Renderer, VertexPassKeepsExactlyWhatSetupKeeps) {
  constexpr int kW = 200, kH = 150;
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_real_distribution<float> log_size(-4.0f, 1.7f);  // 1e-4 to 50 units
  std::vector<Vertex> vertices;
  std::vector<std::uint32_t> indices;
  for (std::uint32_t t = 0; t < 4000; ++t) {
    const glm::vec3 centre{30.0f * unit(rng), 20.0f * unit(rng),
                           -100.0f * (0.5f + 0.5f * unit(rng))};
    const float size = std::pow(10.0f, log_size(rng));
    for (int k = 0; k < 3; ++k) {
      Vertex v;
      v.position = centre + size * glm::vec3(unit(rng), unit(rng), unit(rng));
      v.color = {0.5f + 0.5f * unit(rng), 0.5f + 0.5f * unit(rng), 0.5f, 1.0f};
      indices.push_back(static_cast<std::uint32_t>(vertices.size()));
      vertices.push_back(v);
    }
  }
  Camera cam;
  cam.aspect = static_cast<float>(kW) / kH;
  const glm::mat4 vp = cam.view_projection();

  // The reference: each triangle through the public building blocks, counting what setup keeps.
  // Positions as the renderer computes them, (m0 x + m1 y) + (m2 z + m3) per row.
  const raster::Viewport viewport{kW, kH};
  raster::DrawState state;
  state.cull = raster::CullMode::None;
  std::uint64_t kept = 0;
  const auto clip_vertex = [&](const Vertex& v) {
    raster::ClipVertex c;
    for (int r = 0; r < 4; ++r)
      c.position[r] =
          vp[0][r] * v.position.x + vp[1][r] * v.position.y + (vp[2][r] * v.position.z + vp[3][r]);
    c.color = v.color;
    return c;
  };
  int clipped = 0;
  for (std::size_t t = 0; t < indices.size(); t += 3) {
    const raster::ClipVertex a = clip_vertex(vertices[t]), b = clip_vertex(vertices[t + 1]),
                             c = clip_vertex(vertices[t + 2]);
    raster::Triangle tri;
    switch (raster::classify(a, b, c)) {
      case raster::ClipClass::Outside:
        break;
      case raster::ClipClass::Inside:
        kept += raster::setup_triangle(a, b, c, viewport, state, tri) ? 1 : 0;
        break;
      case raster::ClipClass::Clip: {
        ++clipped;
        raster::ClipVertex out[3 * raster::kMaxClippedTriangles];
        const int n = raster::clip_triangle(a, b, c, out);
        for (int k = 0; k < n; ++k)
          kept += raster::setup_triangle(out[3 * k], out[3 * k + 1], out[3 * k + 2], viewport,
                                         state, tri)
                      ? 1
                      : 0;
      }
    }
  }
  ASSERT_GT(clipped, 20) << "the scene must exercise clipping";
  ASSERT_GT(kept, 200u);
  ASSERT_LT(kept, 3000u) << "the scene must have triangles that setup rejects";

  jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
  std::vector<float> px, py, pz;
  for (const Vertex& v : vertices) {
    px.push_back(v.position.x);
    py.push_back(v.position.y);
    pz.push_back(v.position.z);
  }
  const VertexOverride over{px.data(), py.data(), pz.data()};
  std::uint64_t hash[2] = {};
  for (int overridden = 0; overridden < 2; ++overridden) {
    Renderer r({.width = kW, .height = kH});
    const MeshId mesh =
        r.add_mesh(
             Mesh::create({.name = "slivers", .vertices = vertices, .indices = indices}).value())
            .value();
    const MaterialId mat =
        r.add_material({.name = "unlit", .shading = Shading::Unlit, .cull_back = false}).value();
    r.set_camera(cam);
    r.submit({.mesh = mesh, .material = mat, .vertices = overridden ? &over : nullptr});
    r.render(js);
    EXPECT_EQ(r.stats().triangles_binned, kept) << (overridden ? "override" : "mesh");
    hash[overridden] = r.image_hash();
  }
  EXPECT_EQ(hash[0], hash[1]);
}

TEST(Renderer, BadDrawsAreSkippedAndCounted) {
  jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
  Renderer r({.width = 120, .height = 90, .max_draws = 64});
  const test::SceneIds ids = test::build_scene(r);
  test::submit_scene(r, ids, 20, 0);
  r.render(js);
  const std::uint64_t good = r.image_hash();

  test::submit_scene(r, ids, 20, 0);
  ASSERT_TRUE(r.submit({.mesh = 99, .material = ids.flat}));    // no such mesh
  ASSERT_TRUE(r.submit({.mesh = ids.cube, .material = 1234}));  // no such material
  r.render(js);
  EXPECT_EQ(r.stats().invalid_draws, 2u);
  EXPECT_EQ(r.image_hash(), good);

  const std::span<DrawCommand> all = r.begin_frame(100);  // 36 past max_draws
  EXPECT_EQ(all.size(), 64u);
  EXPECT_EQ(r.stats().draws_refused, 36u);
  EXPECT_FALSE(r.submit({}));
}

TEST(Renderer, BadResourcesAreRefusedWithTheirName) {
  Renderer r({.width = 64, .height = 64});
  const auto m = r.add_material({.name = "ghost", .texture = 3});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("ghost"), std::string::npos) << m.status().message();
  const auto nan = r.add_material({.name = "nan", .color = {std::nanf(""), 0, 0, 1}});
  ASSERT_FALSE(nan.ok());
  EXPECT_NE(nan.status().message().find("nan"), std::string::npos);
  const std::uint32_t idx[3] = {0, 1, 5};
  const Vertex v[3] = {};
  const auto mesh = r.add_mesh(MeshDesc{.name = "broken", .vertices = v, .indices = idx});
  ASSERT_FALSE(mesh.ok());
  EXPECT_NE(mesh.status().message().find("broken"), std::string::npos);
  // Nothing was kept: the first good material gets id 0.
  EXPECT_EQ(r.add_material({.name = "good"}).value(), 0u);
}

// Opaque, untextured cubes at distinct depths: drawn back to front without a depth buffer they
// look like the depth-buffered picture except along edges where depth buckets disagree.
TEST(Renderer, OrderingTableDrawsTheSameSceneRecognisably) {
  jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
  const auto draw = [&](RenderPath path) {
    Renderer r({.width = 320, .height = 240, .path = path});
    const MeshId cube = r.add_mesh(make_cube(1.0f)).value();
    const MaterialId a = r.add_material({.name = "a", .color = {0.9f, 0.3f, 0.2f, 1}}).value();
    const MaterialId b = r.add_material({.name = "b", .color = {0.2f, 0.5f, 0.9f, 1}}).value();
    Camera cam;
    cam.position = {0, 0.5f, 5};
    cam.aspect = 320.0f / 240.0f;
    cam.near_plane = 0.5f;
    cam.far_plane = 30.0f;
    r.set_camera(cam);
    for (int i = 0; i < 12; ++i) {
      const glm::vec3 at(static_cast<float>(i % 4) - 1.5f + 0.3f * static_cast<float>(i / 4),
                         static_cast<float>(i / 4) * 0.5f - 0.5f,
                         -2.0f * static_cast<float>(i / 4));
      r.submit({.mesh = cube,
                .material = i % 2 ? a : b,
                .model = glm::rotate(glm::translate(glm::mat4(1.0f), at),
                                     0.4f * static_cast<float>(i), glm::vec3(0.2f, 1.0f, 0.1f))});
    }
    r.render(js);
    return Image(r.image());
  };
  const Image depth = draw(RenderPath::DepthBuffer);
  const Image table = draw(RenderPath::OrderingTable);
  const auto diff = diff_images(depth, table).value();
  const double share = static_cast<double>(diff.pixels_differing) / (320.0 * 240.0);
  // Stated tolerance: at most 3% of the pixels differ, and they differ only where an edge or a
  // bucket tie is; the two images must not be identical either (the paths really differ).
  EXPECT_LT(share, 0.03) << diff.pixels_differing << " pixels differ";
  EXPECT_GT(diff.pixels_differing, 0u);
}

// Occlusion culling skips draws hidden behind nearer ones and changes nothing in the picture: a
// wall of cubes in front of a crowd of spheres, with gaps between the wall's cubes.
TEST(Renderer, OcclusionCullingSkipsHiddenDrawsAndKeepsTheImage) {
  const auto draw = [](bool occlusion, jobs::Mode mode, std::uint32_t workers) {
    jobs::JobSystem js(job_config(mode, workers));
    Renderer r({.width = 256, .height = 160, .max_draws = 4096, .occlusion_culling = occlusion});
    const test::SceneIds ids = test::build_scene(r);
    for (int f = 0; f < 2; ++f) {
      const std::span<DrawCommand> draws = r.begin_frame(2000);
      for (std::uint32_t i = 0; i < draws.size(); ++i) {
        glm::mat4 m(1.0f);
        if (i < 300) {  // the wall: big cubes, nearest, a few gaps
          const float x = static_cast<float>(i % 20) * 0.9f - 8.5f + (i % 37 == 0 ? 100.0f : 0.0f);
          const float y = static_cast<float>(i / 20) * 0.9f - 6.0f;
          m = glm::scale(glm::translate(m, {x, y, -2.0f}), glm::vec3(1.0f));
        } else {  // behind it, turning with the frame
          const float x = static_cast<float>(i % 30) * 0.6f - 9.0f;
          const float y = static_cast<float>((i / 30) % 20) * 0.6f - 6.0f;
          const float z = -6.0f - static_cast<float>(i / 600) * 2.0f;
          m = glm::rotate(glm::translate(m, {x, y, z}), 0.2f * static_cast<float>(f + i),
                          glm::vec3(0.0f, 1.0f, 0.0f));
        }
        draws[i] = {.mesh = i < 300 ? ids.cube : ids.sphere,
                    .material = i < 300 ? ids.flat : (i % 3 ? ids.textured : ids.unlit),
                    .model = m};
      }
      r.render(js);
    }
    return std::make_pair(r.image_hash(), r.stats().draws_occluded);
  };
  const auto [plain, none] = draw(false, jobs::Mode::Single, 1);
  EXPECT_EQ(none, 0u);
  const auto [culled, skipped] = draw(true, jobs::Mode::Single, 1);
  EXPECT_EQ(culled, plain);
  EXPECT_GT(skipped, 500u) << "most of the crowd is behind the wall";
  SPINDLE_REQUIRE_MODE(jobs::Mode::Dynamic);
  EXPECT_EQ(draw(true, jobs::Mode::Dynamic, 3).first, plain);
}

// Small scenes rendered and compared exactly with PNGs checked in under tests/render/golden.
// SPINDLE_UPDATE_GOLDEN=1 rewrites them (look at them before committing).
void expect_golden(const Image& img, const std::string& name) {
  const std::string path = std::string(SPINDLE_RENDER_GOLDEN_DIR) + "/" + name + ".png";
  if (std::getenv("SPINDLE_UPDATE_GOLDEN") != nullptr) {
    ASSERT_TRUE(write_png(img, path).ok());
    GTEST_SKIP() << "wrote " << path;
  }
  const auto golden = load_png(path);
  ASSERT_TRUE(golden.ok()) << golden.status().message();
  const auto diff = diff_images(golden.value(), img);
  ASSERT_TRUE(diff.ok()) << diff.status().message();
  if (diff.value().pixels_differing != 0) {
    const std::string actual =
        (std::filesystem::temp_directory_path() / (name + "_actual.png")).string();
    (void)write_png(img, actual);
    ADD_FAILURE() << name << ": " << diff.value().pixels_differing
                  << " pixels differ from the golden image (largest channel difference "
                  << diff.value().max_channel_difference << "); this run's image: " << actual;
  }
}

// The first `crowded` draws small and around the middle of the image, the rest spread wide, of
// every material; a debug box on top.
void submit_crowded(Renderer& r, const test::SceneIds& ids, std::uint32_t count,
                    std::uint32_t crowded, std::uint32_t seed, glm::vec2 centre = {0.0f, 0.0f}) {
  const MaterialId materials[] = {ids.textured, ids.flat, ids.unlit, ids.glass};
  const std::span<DrawCommand> draws = r.begin_frame(count);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> near(-0.8f, 0.8f), wide(-4.0f, 4.0f), depth(-3.0f, 1.0f);
  for (std::uint32_t i = 0; i < draws.size(); ++i) {
    const bool small = i < crowded;
    const float x = small ? centre.x + near(rng) : wide(rng);
    const float y = small ? centre.y + 0.75f * near(rng) : 0.6f * wide(rng);
    glm::mat4 m = glm::translate(glm::mat4(1.0f), {x, y, depth(rng)});
    m = glm::rotate(m, 0.7f * static_cast<float>(i), glm::normalize(glm::vec3(1.0f, 2.0f, 0.5f)));
    m = glm::scale(m, glm::vec3(small ? 0.25f : 0.6f));
    draws[i] = {.mesh = (i % 2) ? ids.sphere : ids.cube, .material = materials[i % 4], .model = m};
  }
  r.debug().box({0.0f, 0.0f, -1.0f}, {1.0f, 0.8f, 1.0f}, rgba(255, 255, 0));
}

// 150 small objects crowded around the middle of the image, 10 spread wide: one or two tiles
// hold most of the triangles.
std::uint64_t render_busy_tile(jobs::Mode mode, std::uint32_t workers, Renderer::Stats* stats,
                               Image* image = nullptr) {
  jobs::JobSystem js(job_config(mode, workers));
  Renderer r({.width = 256, .height = 192});
  const test::SceneIds ids = test::build_scene(r);
  submit_crowded(r, ids, 160, 150, 7);
  r.render(js);
  if (stats != nullptr) *stats = r.stats();
  if (image != nullptr) *image = r.image();
  return r.image_hash();
}

// A tile far busier than the average is drawn in strips of rows, each a job of its own (with 16
// workers, a crowd's busiest tile alone took longer than the whole pass's share of a worker). The
// image is exactly what whole tiles gave: the golden image was written before strips existed.
TEST(Renderer, ABusyTileDrawnInStripsKeepsTheImage) {
  Renderer::Stats stats;
  Image image;
  render_busy_tile(jobs::Mode::Single, 1, &stats, &image);
  EXPECT_GT(stats.tile_strips, 0u) << "the scene must have a busy tile";
  EXPECT_LT(stats.tile_strips, 4 * stats.tiles) << "and tiles that stay whole";
  expect_golden(image, "scene_busy_tile");
  expect_same_in_every_mode(
      [&](jobs::Mode m, std::uint32_t w) { return render_busy_tile(m, w, nullptr); });
}

// Planned for 16 workers, the busy tiles are cut finer (up to 8 strips of 8 rows each, until
// none holds more than a quarter of a worker's share) and tiles of average load split too: 12
// tiles for 16 workers left a worker one item or none. The image stays the golden one.
TEST(Renderer, ManyWorkersCutBusyTilesIntoMoreStripsAndKeepTheImage) {
  std::uint32_t strips[2] = {};
  std::uint32_t tiles = 0;
  for (int k = 0; k < 2; ++k) {
    jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
    Renderer r({.width = 256, .height = 192});
    r.plan_for(k == 0 ? 2 : 16);
    const test::SceneIds ids = test::build_scene(r);
    submit_crowded(r, ids, 160, 150, 7);
    r.render(js);
    strips[k] = r.stats().tile_strips;
    tiles = r.stats().tiles;
    expect_golden(r.image(), "scene_busy_tile");
  }
  EXPECT_EQ(tiles, 12u) << "64-pixel tiles for 2 and for 16 workers";
  EXPECT_GT(strips[0], 0u);
  EXPECT_GT(strips[1], strips[0]) << "16 workers: more strips";
  EXPECT_LE(strips[1], 8 * tiles);
}

// The renderer's tiles are 128 pixels a side where there are at least 8 of those per worker, 64
// otherwise: at 512x256, one worker gets 8 big tiles and two get 32 small ones. The image must
// not depend on which: the same scene as above (busy tiles drawn in strips, translucent glass,
// debug lines), with either path.
std::uint64_t render_either_tiles(jobs::JobSystem& js, RenderPath path, Renderer::Stats& stats) {
  Renderer r({.width = 512, .height = 256, .path = path});
  const test::SceneIds ids = test::build_scene(r);
  std::uint64_t hash = 0;
  for (int frame = 0; frame < 2; ++frame) {
    // The crowd inside one big tile (a busy tile splits above 3 times the average load).
    submit_crowded(r, ids, 300, 200, 11 + static_cast<std::uint32_t>(frame), {1.6f, 0.9f});
    r.render(js);
    hash = hash * 31 + r.image_hash();
  }
  stats = r.stats();
  return hash;
}
std::uint64_t render_either_tiles(jobs::Mode mode, std::uint32_t workers, RenderPath path,
                                  Renderer::Stats& stats) {
  jobs::JobSystem js(job_config(mode, workers));
  return render_either_tiles(js, path, stats);
}

TEST(Renderer, BigAndSmallTilesGiveTheSameImage) {
  // A build without threads (the handheld profile) has one worker in every mode: big tiles only.
  if (!SPINDLE_THREADS) GTEST_SKIP() << "one worker only in this build: big tiles only";
  for (RenderPath path : {RenderPath::DepthBuffer, RenderPath::OrderingTable}) {
    Renderer::Stats big, small;
    const std::uint64_t one = render_either_tiles(jobs::Mode::Single, 1, path, big);
    const std::uint64_t two = render_either_tiles(jobs::Mode::Dynamic, 2, path, small);
    EXPECT_EQ(big.tiles, 8u) << "one worker: 128-pixel tiles";
    EXPECT_EQ(small.tiles, 32u) << "two workers: 64-pixel tiles";
    EXPECT_GT(big.pixels, 512u * 256u / 4);
    if (path == RenderPath::DepthBuffer) {
      EXPECT_GT(big.tile_strips, 0u) << "strips of a busy big tile";
      EXPECT_GT(small.tile_strips, 0u) << "strips of a busy small tile";
    }
    EXPECT_EQ(one, two) << (path == RenderPath::DepthBuffer ? "depth buffer" : "ordering table");
  }
}

// Dynamic mode with one worker awake (JobSystem::set_active_workers(1): the engine's choice when
// a second core does not shorten the frame) runs its chunks one after another, so the passes are
// cut as in single mode: the same tiles and geometry batches. Two awake cut them for two.
TEST(Renderer, OneActiveWorkerCutsThePassesAsSingleModeDoes) {
  if (!mode_available(jobs::Mode::Dynamic)) GTEST_SKIP() << "needs the threaded scheduler";
  Renderer::Stats single, one_awake, two_awake;
  const std::uint64_t alone =
      render_either_tiles(jobs::Mode::Single, 1, RenderPath::DepthBuffer, single);
  jobs::JobSystem js(job_config(jobs::Mode::Dynamic, 2));
  js.set_active_workers(1);
  EXPECT_EQ(render_either_tiles(js, RenderPath::DepthBuffer, one_awake), alone);
  EXPECT_EQ(one_awake.tiles, single.tiles);
  EXPECT_EQ(one_awake.batches, single.batches);
  js.set_active_workers(2);
  EXPECT_EQ(render_either_tiles(js, RenderPath::DepthBuffer, two_awake), alone);
  EXPECT_EQ(two_awake.tiles, 32u) << "two workers: 64-pixel tiles";
  EXPECT_GT(two_awake.batches, one_awake.batches);
}

// plan_for() cuts the passes as for that many workers whatever the job system has (the load
// test records frames so, to replay them on more cores than it has): one participant planned
// for 16 gets 16 workers' small tiles and batches, and the same image; plan_for(0) goes back.
// Single mode, so that it also runs in the build without threads.
TEST(Renderer, PlanForCutsThePassesAsForThatManyWorkers) {
  jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
  Renderer r({.width = 512, .height = 256});
  const test::SceneIds ids = test::build_scene(r);
  const auto frame = [&](std::uint32_t seed) {
    submit_crowded(r, ids, 300, 200, seed, {1.6f, 0.9f});
    r.render(js);
    return r.image_hash();
  };
  EXPECT_EQ(r.planned_workers(), 0u);
  const std::uint64_t alone = frame(11);
  const Renderer::Stats one = r.stats();
  r.plan_for(16);
  EXPECT_EQ(r.planned_workers(), 16u);
  EXPECT_EQ(frame(11), alone) << "the image does not depend on the cut";
  const Renderer::Stats planned = r.stats();
  EXPECT_EQ(one.tiles, 8u) << "one worker: 128-pixel tiles";
  EXPECT_EQ(planned.tiles, 32u) << "16 workers: 64-pixel tiles (8 big ones are too few)";
  EXPECT_GT(planned.batches, one.batches) << "4 batches per planned worker where triangles allow";
  r.plan_for(0);
  EXPECT_EQ(frame(11), alone);
  EXPECT_EQ(r.stats().tiles, one.tiles);
  EXPECT_EQ(r.stats().batches, one.batches);
}

// The geometry batches are fixed units to a replay: their count already follows the workers, so
// a frame cut for 16 (plan_for()) and recorded on 2 is not cut again when it is replayed on 16.
// On more than jobs::kMinChunkWorkers they are handed out in order (the costliest, nearest draws
// first); on fewer each participant takes its own band of them first.
TEST(Renderer, GeometryBatchesAreRecordedAsFixedUnitsInOrderOnManyWorkers) {
  if (!mode_available(jobs::Mode::Dynamic)) GTEST_SKIP() << "needs the threaded scheduler";
  jobs::JobSystem js(job_config(jobs::Mode::Dynamic, 2));
  Renderer r({.width = 512, .height = 256});
  const test::SceneIds ids = test::build_scene(r);
  // The batch range of one recorded frame: how many there were and whether it was fixed and in
  // order.
  struct Seen {
    int ranges = 0;
    bool fixed = false, in_order = false;
  };
  const auto record = [&](std::uint32_t seed) {
    submit_crowded(r, ids, 300, 200, seed, {1.6f, 0.9f});
    js.begin_recording();
    r.render(js);
    jobs::JobGraph graph;
    Seen seen;
    if (!js.end_recording(graph)) return seen;
    const std::uint32_t batches = r.stats().batches;
    for (const jobs::JobGraph::Range& range : graph.ranges) {
      if (range.end - range.begin != batches || range.root_count == 0) continue;
      if (std::string(graph.nodes[graph.roots[range.first_root]].name) != "render_geometry")
        continue;
      ++seen.ranges;
      seen.fixed = range.fixed_split;
      seen.in_order = range.in_order;
    }
    return seen;
  };
  r.plan_for(16);
  record(11);
  const Seen many = record(12);
  EXPECT_GT(r.stats().batches, 8u) << "cut for 16 workers";
  EXPECT_EQ(many.ranges, 1);
  EXPECT_TRUE(many.fixed) << "a replay would cut the batches again";
  EXPECT_TRUE(many.in_order) << "the costliest batches would not start first";
  r.plan_for(0);
  record(13);
  const Seen two = record(14);
  EXPECT_EQ(two.ranges, 1);
  EXPECT_TRUE(two.fixed);
  EXPECT_FALSE(two.in_order) << "on 2 workers each takes its own band of batches first";
}

// Each participant draws a band of the tiles, then helps with the others'. A participant that
// never comes (here worker 1, busy with a long job of the game's the whole frame) leaves its band
// to the others: every tile is drawn once all the same, and the image is single mode's.
TEST(Renderer, ABandWhoseParticipantIsBusyIsDrawnByAnother) {
  if (!mode_available(jobs::Mode::Dynamic)) GTEST_SKIP() << "needs the threaded scheduler";
  Renderer::Stats single, taken;
  const std::uint64_t alone =
      render_either_tiles(jobs::Mode::Single, 1, RenderPath::DepthBuffer, single);
  EXPECT_EQ(single.tiles_away, 0u) << "one participant: one band";
  jobs::JobSystem js(job_config(jobs::Mode::Dynamic, 2));
  std::atomic<bool> release{false};
  std::atomic<std::uint32_t> ran_on{jobs::kExternalThread};
  jobs::Counter busy;
  js.run(busy, {"busy"}, [&] {
    ran_on.store(js.current_worker());
    while (!release.load()) std::this_thread::yield();
  });
  while (ran_on.load() == jobs::kExternalThread) std::this_thread::yield();
  if (ran_on.load() != 1) {
    // Participant 0 took its own job: it cannot render meanwhile.
    release.store(true);
    js.wait(busy);
    GTEST_SKIP() << "the busy job ran on participant " << ran_on.load();
  }
  const std::uint64_t image = render_either_tiles(js, RenderPath::DepthBuffer, taken);
  release.store(true);
  js.wait(busy);
  EXPECT_EQ(image, alone);
  EXPECT_EQ(taken.tiles, 32u) << "two participants: 64-pixel tiles";
  EXPECT_GT(taken.tiles_away, 0u) << "participant 0 drew worker 1's band";
}

TEST(Renderer, GoldenImages) {
  jobs::JobSystem js(job_config(jobs::Mode::Single, 1));
  for (RenderPath path : {RenderPath::DepthBuffer, RenderPath::OrderingTable}) {
    Renderer r({.width = 160, .height = 120, .path = path});
    const test::SceneIds ids = test::build_scene(r);
    test::submit_scene(r, ids, 60, 2);
    r.render(js);
    expect_golden(r.image(), path == RenderPath::DepthBuffer ? "scene_depth" : "scene_ordering");
  }
}

// The plugin: entities with a transform and a MeshInstance are drawn by the frame's stages, the
// same in every mode; hiding them leaves the clear colour.
std::uint64_t plugin_frames(jobs::Mode mode, std::uint32_t workers, bool visible) {
  core::Engine engine(::spindle::test::engine_config(mode, workers));
  engine.add_plugin<core::TransformPlugin>();
  Renderer& r =
      engine.add_plugin<RenderPlugin>(RenderPluginConfig{.renderer = {.width = 96, .height = 64}})
          .renderer();
  const MeshId cube = r.add_mesh(make_cube(0.8f)).value();
  const MaterialId mat = r.add_material({.name = "m", .color = {0.8f, 0.6f, 0.2f, 1}}).value();
  Camera cam;
  cam.position = {0, 0, 12};
  cam.aspect = 1.5f;
  r.set_camera(cam);
  core::World& world = engine.world();
  for (int i = 0; i < 40; ++i) {
    const core::Entity e = world.create();
    world.add<core::Transform>(
        e, core::Transform::from(
               {static_cast<float>(i % 8) - 3.5f, static_cast<float>(i / 8) - 2.0f, 0},
               glm::angleAxis(0.3f * static_cast<float>(i), glm::vec3(0, 1, 0))));
    world.add<core::WorldTransform>(e);
    world.add<MeshInstance>(e, MeshInstance{.mesh = cube, .material = mat, .visible = visible});
  }
  for (int f = 0; f < 3; ++f) engine.step();
  EXPECT_EQ(r.stats().draws, visible ? 40u : 0u);
  return r.image_hash();
}

TEST(RenderPlugin, EntitiesAreDrawnTheSameInEveryMode) {
  const std::uint64_t shown = expect_same_in_every_mode(
      [](jobs::Mode m, std::uint32_t w) { return plugin_frames(m, w, true); });
  const std::uint64_t hidden = plugin_frames(jobs::Mode::Single, 1, false);
  EXPECT_NE(shown, hidden);
  Image clear(96, 64, rgba(26, 26, 31, 255));
  EXPECT_EQ(hidden, clear.hash());
}

// A game deforms a mesh's vertices each frame in a stage of its own and draws them through
// DrawCommand::vertices. render_submit only takes their address (submit_access reads what says
// where they are), so it need not wait for the deforming; geometry_access orders the geometry,
// which reads them, after it. The image is the deformed mesh's in every mode.
struct DeformedAt {};  // where the vertices are
struct Deformed {};    // what is in them
std::uint64_t deformed_frames(jobs::Mode mode, std::uint32_t workers, bool order_geometry = true) {
  core::Engine engine(::spindle::test::engine_config(mode, workers));
  const Mesh cube_mesh = make_cube(0.8f);
  const std::size_t n = cube_mesh.vertices().size();
  std::vector<float> px(n), py(n), pz(n);
  MeshId cube = 0;
  MaterialId mat = 0;
  VertexOverride where{};
  RenderPluginConfig config{.renderer = {.width = 96, .height = 64},
                            .submit =
                                [&](core::StageContext&, Renderer& r) {
                                  where = {px.data(), py.data(), pz.data()};
                                  r.submit({.mesh = cube, .material = mat, .vertices = &where});
                                },
                            .submit_access = core::Access{}.read<DeformedAt>()};
  if (order_geometry) config.geometry_access = core::Access{}.read<Deformed>();
  Renderer& r = engine.add_plugin<RenderPlugin>(std::move(config)).renderer();
  cube = r.add_mesh(make_cube(0.8f)).value();
  mat = r.add_material({.name = "m", .color = {0.8f, 0.6f, 0.2f, 1}}).value();
  Camera cam;
  cam.position = {0, 0, 4};
  cam.aspect = 1.5f;
  r.set_camera(cam);
  int frame = 0;
  const core::StageId deform =
      engine.add_stage({.name = "deform",
                        .phase = kRenderPrepPhase,
                        .access = core::Access{}.write<Deformed>(),
                        .run =
                            [&](core::StageContext&) {
                              const float s = 1.0f + 0.25f * static_cast<float>(frame++);
                              for (std::size_t i = 0; i < n; ++i) {
                                const glm::vec3 p = cube_mesh.vertices()[i].position;
                                px[i] = p.x * s;
                                py[i] = p.y;
                                pz[i] = p.z * 0.5f;
                              }
                            },
                        .simulation = false});
  const auto submit = static_cast<core::StageId>(engine.find_stage("render_submit"));
  const auto geometry = static_cast<core::StageId>(engine.find_stage("render_geometry"));
  EXPECT_FALSE(engine.depends_on(submit, deform)) << "the address does not wait";
  EXPECT_EQ(engine.depends_on(geometry, deform), order_geometry);
  if (!order_geometry) return 0;  // nothing orders the geometry after the deforming: a race
  for (int f = 0; f < 3; ++f) engine.step();
  EXPECT_EQ(r.stats().draws, 1u);
  return r.image_hash();
}

TEST(RenderPlugin, GeometryAccessOrdersTheGeometryAfterWhatTheDrawsPointAt) {
  const std::uint64_t deformed = expect_same_in_every_mode(
      [](jobs::Mode m, std::uint32_t w) { return deformed_frames(m, w); });
  deformed_frames(jobs::Mode::Single, 1, false);  // without geometry_access: no such order
  // The same last frame drawn from vertices written before any stage ran: the image the
  // ordered frames must show (frame 2's scale).
  core::Engine engine(::spindle::test::engine_config(jobs::Mode::Single, 1));
  Renderer& r =
      engine.add_plugin<RenderPlugin>(RenderPluginConfig{.renderer = {.width = 96, .height = 64}})
          .renderer();
  const Mesh cube_mesh = make_cube(0.8f);
  std::vector<Vertex> vertices(cube_mesh.vertices().begin(), cube_mesh.vertices().end());
  for (Vertex& v : vertices) v.position = {v.position.x * 1.5f, v.position.y, v.position.z * 0.5f};
  const std::vector<std::uint32_t> indices(cube_mesh.indices().begin(), cube_mesh.indices().end());
  const MeshId squashed = r.add_mesh(MeshDesc{.vertices = vertices, .indices = indices}).value();
  const MaterialId mat = r.add_material({.name = "m", .color = {0.8f, 0.6f, 0.2f, 1}}).value();
  Camera cam;
  cam.position = {0, 0, 4};
  cam.aspect = 1.5f;
  r.set_camera(cam);
  r.begin_frame(1)[0] = {.mesh = squashed, .material = mat};
  r.render(engine.jobs());
  EXPECT_EQ(deformed, r.image_hash());
}

TEST(RenderPlugin, OverlayWritesTheFrameStats) {
  const auto run = [](bool overlay) {
    core::Engine engine(::spindle::test::engine_config(jobs::Mode::Single, 1));
    Renderer& r = engine
                      .add_plugin<RenderPlugin>(RenderPluginConfig{
                          .renderer = {.width = 320, .height = 200}, .overlay = overlay})
                      .renderer();
    for (int f = 0; f < 3; ++f) engine.step();
    return Image(r.image());
  };
  const Image plain = run(false), overlay = run(true);
  const auto diff = diff_images(plain, overlay).value();
  EXPECT_GT(diff.pixels_differing, 200u) << "the overlay's text and bars are drawn";
  // Text stays in the overlay's corner.
  for (int y = 150; y < 200; ++y)
    for (int x = 0; x < 320; ++x) ASSERT_EQ(plain.at(x, y), overlay.at(x, y)) << x << "," << y;
}

}  // namespace
}  // namespace spindle::render
