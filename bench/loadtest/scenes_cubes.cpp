// The rendering anchor as a load-test scene.
//
// cubes  N textured, Gouraud-lit unit cubes (1 to 100,000) on the anchor's grid, each turning
//        about its own axes at its own phase (bench/render/cubes_scene.h, the scene
//        spindle_bench_render also draws through llvmpipe). Each cube is an entity: `spin` sets
//        its rotation from the tick, the TransformPlugin makes its matrix, the RenderPlugin draws
//        it (render_submit, render_prep, render_geometry, render_raster) at --width x --height.
#include <cmath>
#include <memory>
#include <vector>

#include <glm/gtc/quaternion.hpp>

#include <spindle/gameplay/transform.h>
#include <spindle/render/render_plugin.h>

#include "cubes_look.h"
#include "scene.h"
#include "scene_common.h"

namespace spindle::loadtest {
namespace {

struct Cube {
  std::uint32_t index = 0;
};

void setup_cubes(core::Engine& engine, const SceneParams& p) {
  core::World& world = engine.world();
  world.register_component<Cube>("cube");
  use_transforms(engine);
  const auto scene = std::make_shared<cubes::Scene>(
      cubes::make_scene(p.objects, static_cast<int>(p.width), static_cast<int>(p.height)));

  render::Renderer& r = add_scene_renderer(engine, p, render::Camera{}, p.objects);
  const core::Result<cubes::CubesLook> look = cubes::add_cubes_look(r, *scene);
  SPINDLE_ASSERTF(look.ok(), "cubes: %s", look.status().c_str());
  const render::MeshId cube = look.value().mesh;
  const render::MaterialId material = look.value().material;

  for (std::uint32_t i = 0; i < p.objects; ++i) {
    const core::Entity e = world.create();
    world.add<Cube>(e, Cube{i});
    world.add<core::Transform>(e, core::Transform::from(scene->offsets[i], glm::quat(1, 0, 0, 0)));
    world.add<core::WorldTransform>(e);
    world.add<render::MeshInstance>(e, render::MeshInstance{.mesh = cube, .material = material});
  }
  // The anchor's vertex shader turns each cube by R(uTime + w_i), uTime = frame / 60.
  engine.add_system<const Cube, core::Transform>(
      "spin",
      [scene](core::StageContext& ctx, core::Entity, const Cube& c, core::Transform& t) {
        const auto frame = static_cast<std::uint32_t>(ctx.tick());
        t.set_rotation(
            glm::quat_cast(cubes::rotation(cubes::time_of_frame(frame) + scene->phases[c.index])));
      },
      core::Phase::Gameplay);
}

}  // namespace

void register_cubes_scene() {
  SceneDef def{.name = "cubes",
               .description =
                   "the rendering anchor: textured, lit, turning cubes on a grid (1-100,000), "
                   "drawn by the software rasteriser's job stages",
               .objects = {1, 100'000},
               .setup = setup_cubes};
  def.default_objects = {1000, 10000, 50000};
  register_scene(std::move(def));
}

}  // namespace spindle::loadtest
