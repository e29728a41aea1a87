// render_prep: render preparation. A camera and its frustum cull a scene of 4,000 bounding
// spheres in parallel jobs; the visible ones get 64-bit sort keys and are radix-sorted into a
// draw list: layer by layer, opaque objects front to back, then translucent ones back to front.
// The scene is built so the answer is known: only the 1,000 objects in a column in front of the
// camera are visible; the others are behind it, beyond the far plane or off to the side.
//
//   spindle_sample_render_prep [--mode single|static|dynamic|tbb] [--workers N]
#include <cstdint>
#include <cstdio>
#include <vector>

#include <spindle/spindle.h>  // with <spindle/render/camera.h>, draw_list.h

#include "sample_args.h"

using namespace spindle;

constexpr std::uint32_t kPerGroup = 1000;

// Group 0 lies in view; 1 behind the camera; 2 beyond the far plane; 3 far to the right.
std::vector<render::Renderable> make_scene() {
  std::vector<render::Renderable> objects;
  for (std::uint32_t group = 0; group < 4; ++group) {
    for (std::uint32_t i = 0; i < kPerGroup; ++i) {
      const float x = 0.5f * static_cast<float>(i % 5) - 1.0f + (group == 3 ? 500.0f : 0.0f);
      const float depth = (group == 2 ? 105.0f : 5.0f) + 0.09f * static_cast<float>(i);
      render::Renderable r;
      r.center = {x, 0.0f, group == 1 ? depth : -depth};  // the camera looks down -z
      r.radius = 0.5f;
      r.material = i % 8;
      r.mesh = i % 16;
      r.layer = i % 10 == 0 ? 1 : 0;  // e.g. effects, drawn after the world
      r.translucent = i % 4 == 0;
      objects.push_back(r);
    }
  }
  return objects;
}

int main(int argc, char** argv) {
  samples::SampleArgs args;
  if (!samples::parse_sample_args(argc, argv, args)) return 2;
  jobs::JobSystem jobs(jobs::Config{.workers = args.workers, .mode = args.mode});

  render::Camera camera;  // at the origin, looking down -z, 60 degrees vertical field of view
  camera.far_plane = 100.0f;
  const std::vector<render::Renderable> objects = make_scene();

  // Every buffer is allocated here; prepare() allocates nothing. Chunks of at least 256 objects.
  render::RenderPrep prep(4096, 256, 256);
  prep.prepare(jobs, camera, objects, 8);  // culls, keys and sorts over up to 8 jobs

  const std::span<const render::DrawItem> list = prep.draw_list();
  bool in_view = true, ordered = true;
  core::Hasher hash;
  for (std::size_t k = 0; k < list.size(); ++k) {
    const render::DrawItem& item = list[k];
    in_view = in_view && item.object < kPerGroup;
    hash.add(item.key);
    hash.add(item.object);
    if (k == 0) continue;
    // Sorted by key, and the key order is the draw order: layers in turn; in a layer, opaque
    // nearest first (early depth rejection), then translucent farthest first (blending).
    const render::DrawItem& prev = list[k - 1];
    const float z = objects[item.object].center.z, prev_z = objects[prev.object].center.z;
    const bool same_pass = render::key_layer(item.key) == render::key_layer(prev.key) &&
                           render::key_translucent(item.key) == render::key_translucent(prev.key);
    ordered = ordered && item.key >= prev.key;
    if (same_pass)
      ordered = ordered && (render::key_translucent(item.key) ? z > prev_z : z < prev_z);
  }
  for (std::size_t k = 0; k < 4 && k < list.size(); ++k) {
    const render::Renderable& r = objects[list[k].object];
    std::printf("render_prep: draw %zu: object %u (layer %u, %s, z %.2f, material %u)\n", k,
                list[k].object, r.layer, r.translucent ? "translucent" : "opaque", r.center.z,
                r.material);
  }

  // The draw list does not depend on the split: one serial chunk gives the same list.
  const std::vector<render::DrawItem> parallel(list.begin(), list.end());
  prep.prepare(jobs, camera, objects, 1);
  bool same_serial = prep.draw_list().size() == parallel.size();
  for (std::size_t k = 0; same_serial && k < parallel.size(); ++k)
    same_serial = prep.draw_list()[k].key == parallel[k].key &&
                  prep.draw_list()[k].object == parallel[k].object;

  const render::RenderPrep::Stats stats = prep.stats();
  std::printf(
      "render_prep: %s mode, %zu submitted, %zu visible, %zu dropped; in draw order: %s; same as "
      "serial: %s; hash %016llx\n",
      jobs::to_string(jobs.mode()), stats.submitted, stats.visible, stats.dropped,
      ordered ? "yes" : "NO", same_serial ? "yes" : "NO",
      static_cast<unsigned long long>(hash.value()));
  const bool ok = stats.submitted == objects.size() && stats.visible == kPerGroup &&
                  stats.dropped == 0 && in_view && ordered && same_serial;
  if (!ok) std::fprintf(stderr, "render_prep: the draw list is not the expected one\n");
  return ok ? 0 : 1;
}
