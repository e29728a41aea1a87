#include "scene_common.h"

#include <memory>
#include <vector>

#include <spindle/base/hash.h>
#include <spindle/gameplay/transform.h>
#include <spindle/render/draw_list.h>

namespace spindle::loadtest {

float scene_unit(std::uint64_t seed, std::uint64_t index, std::uint64_t salt) {
  const auto mix = [](std::uint64_t z) { return core::mix64(z + 0x9e3779b97f4a7c15ull); };
  return static_cast<float>(mix(seed ^ mix(index * 8 + salt)) >> 40) / static_cast<float>(1 << 24);
}

namespace {
struct SceneDraw {
  std::unique_ptr<render::RenderPrep> prep;
  std::vector<render::Renderable> objects;
  render::Camera camera;
  float radius = 0.5f;
};
}  // namespace

render::Camera overview_camera(float side, float height, float distance) {
  render::Camera c;
  c.position = glm::vec3(0.0f, side * height, side * distance);
  c.target = glm::vec3(0.0f);
  c.up = glm::vec3(0, 1, 0);
  c.fov_y_radians = 1.0f;
  c.aspect = 16.0f / 9.0f;
  c.near_plane = 0.1f;
  c.far_plane = side * 3.0f;
  return c;
}

void add_render_prep_stage(core::Engine& engine, std::uint32_t capacity,
                           const render::Camera& camera, float radius) {
  SceneDraw& draw = engine.world().set_resource<SceneDraw>();
  draw.prep = std::make_unique<render::RenderPrep>(capacity, 256, 512);
  draw.objects.resize(capacity);
  draw.camera = camera;
  draw.radius = radius;
  engine.add_stage({.name = "render_prep",
                    .phase = render::kRenderPrepPhase,
                    .access = core::Access{}.read<core::WorldTransform>().write<SceneDraw>(),
                    .run = [](core::StageContext& ctx) {
                      SceneDraw& d = *ctx.world().resource<SceneDraw>();
                      const std::span<const core::WorldTransform> w =
                          ctx.world().storage<core::WorldTransform>()->data();
                      const auto count = static_cast<std::uint32_t>(
                          std::min<std::size_t>(w.size(), d.objects.size()));
                      ctx.parallel_for(count, [&](std::uint32_t b, std::uint32_t e) {
                        for (std::uint32_t i = b; i < e; ++i) {
                          render::Renderable& r = d.objects[i];
                          r.center = glm::vec3(w[i].matrix[3]);
                          r.radius = d.radius;
                          r.material = i % 7;
                          r.mesh = i % 3;
                          r.layer = 0;
                          r.translucent = (i % 16) == 0;
                        }
                      });
                      d.prep->prepare(ctx.jobs(), d.camera, std::span(d.objects.data(), count),
                                      ctx.split(), ctx.tag());
                    }});
}

}  // namespace spindle::loadtest
