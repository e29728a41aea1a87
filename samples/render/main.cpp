// render: drawing a scene. A renderer with a textured material and a lit one, entities that carry
// a MeshInstance, a camera and a sun; the engine's frame draws them with the software rasteriser
// in job stages (render_submit, render_prep, render_geometry, render_raster), plus debug text and
// a wireframe box, and the picture is written to a PNG. The same picture, bit for bit, comes out
// in every job mode: the sample prints its hash.
//
//   spindle_sample_render [--mode single|static|dynamic|tbb] [--workers N] [--out frame.png]
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include <spindle/spindle.h>  // with <spindle/render/render_plugin.h>

#include "sample_args.h"

using namespace spindle;

// A checkerboard: 8 squares a side, cream and slate.
render::Image checker() {
  render::Image img(64, 64);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x)
      img.at(x, y) = ((x / 8 + y / 8) % 2) ? render::rgba(235, 225, 200) : render::rgba(60, 70, 90);
  return img;
}

int main(int argc, char** argv) {
  std::string out;
  // --out is this sample's own flag; the rest are every sample's.
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--out") == 0) {
      out = argv[i + 1];
      for (int k = i; k + 2 < argc; ++k) argv[k] = argv[k + 2];
      argc -= 2;
      break;
    }
  samples::SampleArgs args;
  if (!samples::parse_sample_args(argc, argv, args)) return 2;
  core::Engine engine(core::EngineConfig{.mode = args.mode, .workers = args.workers});
  engine.add_plugin<core::TransformPlugin>();
  render::Renderer& r = engine
                            .add_plugin<render::RenderPlugin>(render::RenderPluginConfig{
                                .renderer = {.width = 320, .height = 180}})
                            .renderer();

  // Resources are made once, through calls that check them.
  const render::MeshId cube = r.add_mesh(render::make_cube(1.0f)).value();
  const render::MeshId ball = r.add_mesh(render::make_sphere(0.6f, 10, 16)).value();
  const render::MeshId floor = r.add_mesh(render::make_plane(12.0f, 6.0f)).value();
  const render::TextureId tex =
      r.add_texture(render::Texture::create(checker(), {.name = "checker"}).value()).value();
  const render::MaterialId crate = r.add_material({.name = "crate", .texture = tex}).value();
  const render::MaterialId paint =
      r.add_material({.name = "paint", .color = {0.9f, 0.35f, 0.2f, 1.0f}}).value();

  render::Camera camera;
  camera.position = {0.0f, 3.0f, 7.0f};
  camera.target = {0.0f, 0.5f, 0.0f};
  camera.aspect = 320.0f / 180.0f;
  camera.near_plane = 0.5f;
  camera.far_plane = 50.0f;
  r.set_camera(camera);
  r.lights().directional = {.direction = {0.5f, 1.0f, 0.3f}, .color = glm::vec3(0.8f)};

  // Entities with a transform and a MeshInstance are drawn every frame.
  core::World& world = engine.world();
  const auto place = [&](glm::vec3 at, render::MeshId mesh, render::MaterialId material) {
    const core::Entity e = world.create();
    world.add<core::Transform>(e, core::Transform::from(at));
    world.add<core::WorldTransform>(e);
    world.add<render::MeshInstance>(e, render::MeshInstance{.mesh = mesh, .material = material});
    return e;
  };
  place({0.0f, 0.0f, 0.0f}, floor, crate);
  const core::Entity spinner = place({-1.2f, 0.8f, 0.0f}, cube, crate);
  place({1.3f, 0.6f, 0.5f}, ball, paint);

  for (int frame = 0; frame < 10; ++frame) {
    world.get<core::Transform>(spinner)->set_rotation(
        glm::angleAxis(0.15f * static_cast<float>(frame), glm::vec3(0.0f, 1.0f, 0.0f)));
    // Debug drawing goes into the same pass; it is cleared after each frame.
    r.debug().box({1.3f, 0.6f, 0.5f}, glm::vec3(0.65f), render::rgba(255, 255, 0));
    r.debug().text({6.0f, 6.0f}, "hello, spindle", render::rgba(255, 255, 255));
    engine.step();
  }

  const render::Renderer::Stats s = r.stats();
  std::printf(
      "render: %s mode, %u draws, %llu triangles drawn, %llu pixels, hash %016llx\n",
      jobs::to_string(engine.mode()), s.draws, static_cast<unsigned long long>(s.triangles_binned),
      static_cast<unsigned long long>(s.pixels), static_cast<unsigned long long>(r.image_hash()));
  if (!out.empty()) {
    if (core::Status st = r.screenshot(out); !st) {
      std::fprintf(stderr, "render: %s\n", st.c_str());
      return 1;
    }
    std::printf("render: wrote %s\n", out.c_str());
  }
  // Three objects drawn, covering a good part of the picture.
  const bool ok = s.draws == 3 && s.triangles_binned > 50 && s.pixels > 320 * 180 / 3;
  if (!ok) std::fprintf(stderr, "render: the scene was not drawn\n");
  return ok ? 0 : 1;
}
