// Draw lists: 64-bit sort keys and RenderPrep, which culls objects against the camera frustum,
// builds a key per visible object and sorts them, all in parallel jobs and without allocating.
//
// Usage:
//
//   spindle::render::RenderPrep prep(50000);           // at most 50,000 objects per prepare()
//   ...every frame:
//   prep.prepare(jobs, camera, renderables, 8, kTagRender);  // 8 chunks; 1 runs serially
//   for (const spindle::render::DrawItem& item : prep.draw_list()) {
//     const Renderable& r = renderables[item.object];   // in key order: layer, opaque before
//     draw(r);                                          // translucent, then depth, material...
//   }
//   auto s = prep.stats();                              // submitted, visible, dropped
//
// Sort key, most significant bit first (sorting keys ascending gives the draw order):
//
//   bits 63..60  layer        4 bits   draw layers in increasing order (e.g. world, effects, UI)
//   bit  59      translucent  1 bit    0 opaque, 1 translucent: opaque first within a layer
//   bits 58..35  depth       24 bits   view depth quantised linearly over [near, far]:
//                                      opaque as is (front to back, for early depth rejection),
//                                      translucent inverted (back to front, for blending)
//   bits 34..15  material    20 bits   groups equal materials at equal depth
//   bits 14..0   mesh        15 bits
//
// Fields wider than their bits are masked (layer & 0xf, material & 0xfffff, mesh & 0x7fff).
// Equal keys keep object order (the sort is stable), so the list is fully deterministic.
//
// prepare(): `chunks` contiguous ranges of the objects are culled in parallel jobs, each into
// its own slots [begin_c, end_c) of a staging buffer; the visible items are compacted in chunk
// order (i.e. object order, whatever `chunks` is) and radix-sorted (radix_sort.h) with the same
// chunk count. The draw list is therefore identical for every chunk count, job mode and worker
// count. Capacity bounds the objects one prepare() takes: objects past it are not considered
// and are counted in Stats::dropped, never allocated for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <glm/glm.hpp>

#include "spindle/algorithms/radix_sort.h"
#include "spindle/engine/phase.h"
#include "spindle/jobs/job_system.h"
#include "spindle/render/camera.h"

namespace spindle::render {

namespace sort_key {
inline constexpr std::uint32_t kMeshBits = 15;
inline constexpr std::uint32_t kMaterialBits = 20;
inline constexpr std::uint32_t kDepthBits = 24;
inline constexpr std::uint32_t kLayerBits = 4;

inline constexpr std::uint32_t kMeshShift = 0;
inline constexpr std::uint32_t kMaterialShift = kMeshShift + kMeshBits;       // 15
inline constexpr std::uint32_t kDepthShift = kMaterialShift + kMaterialBits;  // 35
inline constexpr std::uint32_t kTranslucentShift = kDepthShift + kDepthBits;  // 59
inline constexpr std::uint32_t kLayerShift = kTranslucentShift + 1;           // 60
static_assert(kLayerShift + kLayerBits == 64, "the key fields fill 64 bits");

inline constexpr std::uint32_t kMeshMask = (1u << kMeshBits) - 1;
inline constexpr std::uint32_t kMaterialMask = (1u << kMaterialBits) - 1;
inline constexpr std::uint32_t kDepthMask = (1u << kDepthBits) - 1;
inline constexpr std::uint32_t kLayerMask = (1u << kLayerBits) - 1;
}  // namespace sort_key

// View depth (distance along the view direction) to 24 bits: near -> 0, far -> kDepthMask,
// clamped outside; NaN gives 0.
inline std::uint32_t quantize_depth(float view_depth, float near_plane, float far_plane) {
  const float t = (view_depth - near_plane) / (far_plane - near_plane);
  if (!(t > 0.0f)) return 0;
  if (t >= 1.0f) return sort_key::kDepthMask;
  return static_cast<std::uint32_t>(t * static_cast<float>(sort_key::kDepthMask));
}

// `depth` is quantize_depth()'s value; it is inverted here for translucent objects.
constexpr std::uint64_t make_sort_key(std::uint32_t layer, bool translucent, std::uint32_t depth,
                                      std::uint32_t material, std::uint32_t mesh) {
  using namespace sort_key;
  const std::uint32_t d = depth & kDepthMask;
  return (std::uint64_t{layer & kLayerMask} << kLayerShift) |
         (std::uint64_t{translucent ? 1u : 0u} << kTranslucentShift) |
         (std::uint64_t{translucent ? kDepthMask - d : d} << kDepthShift) |
         (std::uint64_t{material & kMaterialMask} << kMaterialShift) |
         (std::uint64_t{mesh & kMeshMask} << kMeshShift);
}

constexpr std::uint32_t key_layer(std::uint64_t key) {
  return static_cast<std::uint32_t>(key >> sort_key::kLayerShift) & sort_key::kLayerMask;
}
constexpr bool key_translucent(std::uint64_t key) {
  return ((key >> sort_key::kTranslucentShift) & 1u) != 0;
}
// The quantised view depth given to make_sort_key (un-inverted for translucent keys).
constexpr std::uint32_t key_depth(std::uint64_t key) {
  const auto stored =
      static_cast<std::uint32_t>(key >> sort_key::kDepthShift) & sort_key::kDepthMask;
  return key_translucent(key) ? sort_key::kDepthMask - stored : stored;
}
constexpr std::uint32_t key_material(std::uint64_t key) {
  return static_cast<std::uint32_t>(key >> sort_key::kMaterialShift) & sort_key::kMaterialMask;
}
constexpr std::uint32_t key_mesh(std::uint64_t key) {
  return static_cast<std::uint32_t>(key >> sort_key::kMeshShift) & sort_key::kMeshMask;
}

// What the game hands in per object, in world space.
struct Renderable {
  glm::vec3 center{0.0f};  // bounding sphere
  float radius = 0.0f;
  std::uint32_t material = 0;
  std::uint32_t mesh = 0;
  std::uint8_t layer = 0;
  bool translucent = false;
};

// One entry of the sorted draw list: the key and the index into the objects span.
struct DrawItem {
  std::uint64_t key;
  std::uint32_t object;
};

// Where rendering's stages run: render preparation (culling, sorting) after animation (500),
// drawing after it.
inline constexpr core::Phase kRenderPrepPhase{"render_prep", 600};
inline constexpr core::Phase kRenderPhase{"render", 700};

class RenderPrep {
 public:
  // Counts of the last prepare().
  struct Stats {
    std::size_t submitted = 0;  // objects.size()
    std::size_t visible = 0;    // draw_list().size()
    std::size_t dropped = 0;    // objects past capacity, not considered
  };

  // capacity: most objects one prepare() takes. max_chunks: most chunks it splits into.
  // min_chunk_items: fewest objects (culling) or visible items (sorting) per chunk, so small
  // scenes do not pay for jobs that do almost nothing (a job should be worth a few thousand
  // cycles); 1 splits as finely as asked. `chunks` arguments are clamped by both; the draw list
  // does not depend on the chunk count anyway. Every buffer is allocated here.
  explicit RenderPrep(std::uint32_t capacity, std::uint32_t max_chunks = 256,
                      std::uint32_t min_chunk_items = 1024);

  // Culls, keys and sorts `objects` over up to `chunks` jobs (see effective_chunks(); 1: serial,
  // on the calling thread); the
  // jobs are named "render_cull", "render_compact", "render_pack" and radix_sort's, booked under
  // `tag`. Blocks until done; the calling thread helps. No heap allocation.
  void prepare(jobs::JobSystem& jobs, const Camera& camera, std::span<const Renderable> objects,
               std::uint32_t chunks, std::uint16_t tag = 0);

  // Sorted by key ascending; valid until the next prepare().
  std::span<const DrawItem> draw_list() const { return {items_.data(), count_}; }
  Stats stats() const { return stats_; }
  std::uint32_t capacity() const { return capacity_; }
  std::uint32_t max_chunks() const { return max_chunks_; }
  // The chunk count prepare() uses for `items` items when asked for `chunks`.
  std::uint32_t effective_chunks(std::size_t items, std::uint32_t chunks) const;

 private:
  std::uint32_t capacity_;
  std::uint32_t max_chunks_;
  std::uint32_t min_chunk_items_;
  std::size_t count_ = 0;
  Stats stats_{};
  // Culling writes here (chunk c into its own object slots); later the sort's scratch.
  std::vector<std::uint64_t> stage_keys_;
  std::vector<std::uint32_t> stage_objects_;
  // Compacted visible items, sorted in place.
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> objects_;
  std::vector<DrawItem> items_;
  std::vector<std::uint32_t> chunk_visible_;  // per chunk: visible count, then output offset
  core::RadixSortScratch sort_scratch_;
};

}  // namespace spindle::render
