#include "spindle/render/draw_list.h"

#include <algorithm>

#include "spindle/algorithms/chunks.h"

namespace spindle::render {

RenderPrep::RenderPrep(std::uint32_t capacity, std::uint32_t max_chunks,
                       std::uint32_t min_chunk_items)
    : capacity_(capacity),
      max_chunks_(std::max(max_chunks, 1u)),
      min_chunk_items_(std::max(min_chunk_items, 1u)),
      stage_keys_(capacity),
      stage_objects_(capacity),
      keys_(capacity),
      objects_(capacity),
      items_(capacity),
      chunk_visible_(max_chunks_),
      sort_scratch_(max_chunks_) {}

std::uint32_t RenderPrep::effective_chunks(std::size_t items, std::uint32_t chunks) const {
  const std::size_t worth = (items + min_chunk_items_ - 1) / min_chunk_items_;
  const std::size_t limit = std::min<std::size_t>(max_chunks_, worth);
  return static_cast<std::uint32_t>(
      std::clamp<std::size_t>(chunks, 1, std::max<std::size_t>(limit, 1)));
}

void RenderPrep::prepare(jobs::JobSystem& jobs, const Camera& camera,
                         std::span<const Renderable> objects, std::uint32_t chunks,
                         std::uint16_t tag) {
  const std::size_t n = std::min<std::size_t>(objects.size(), capacity_);
  stats_ = Stats{objects.size(), 0, objects.size() - n};
  count_ = 0;
  if (n == 0) return;
  // Culling and compaction split the objects, sorting and packing the visible items.
  const std::uint32_t requested = chunks;
  chunks = effective_chunks(n, requested);

  const Frustum frustum = Frustum::from_matrix(camera.view_projection());
  const glm::vec3 eye = camera.position;
  const glm::vec3 forward = glm::normalize(camera.target - camera.position);
  const float near_plane = camera.near_plane;
  const float far_plane = camera.far_plane;

  core::for_each_chunk(jobs, chunks, {"render_cull", tag}, [&](std::uint32_t c) {
    const core::ChunkRange r = core::chunk_range(n, chunks, c);
    std::size_t out = r.begin;
    for (std::size_t i = r.begin; i < r.end; ++i) {
      const Renderable& o = objects[i];
      if (!frustum.intersects_sphere(o.center, o.radius)) continue;
      const float depth = glm::dot(o.center - eye, forward);
      stage_keys_[out] = make_sort_key(
          o.layer, o.translucent, quantize_depth(depth, near_plane, far_plane), o.material, o.mesh);
      stage_objects_[out] = static_cast<std::uint32_t>(i);
      ++out;
    }
    chunk_visible_[c] = static_cast<std::uint32_t>(out - r.begin);
  });

  // Chunk order is object order, so the compacted list does not depend on `chunks`.
  std::uint32_t visible = 0;
  for (std::uint32_t c = 0; c < chunks; ++c) {
    const std::uint32_t count = chunk_visible_[c];
    chunk_visible_[c] = visible;
    visible += count;
  }
  core::for_each_chunk(jobs, chunks, {"render_compact", tag}, [&](std::uint32_t c) {
    const std::size_t begin = core::chunk_range(n, chunks, c).begin;
    const std::size_t end_out = c + 1 < chunks ? chunk_visible_[c + 1] : visible;
    const std::size_t out = chunk_visible_[c];
    std::copy(stage_keys_.begin() + begin, stage_keys_.begin() + begin + (end_out - out),
              keys_.begin() + out);
    std::copy(stage_objects_.begin() + begin, stage_objects_.begin() + begin + (end_out - out),
              objects_.begin() + out);
  });

  const std::span<std::uint64_t> keys(keys_.data(), visible);
  const std::span<std::uint32_t> objs(objects_.data(), visible);
  const std::uint32_t sort_chunks = effective_chunks(visible, requested);
  core::radix_sort(jobs, sort_chunks, sort_scratch_, keys, objs, stage_keys_, stage_objects_, tag);

  core::for_each_chunk(jobs, sort_chunks, {"render_pack", tag}, [&](std::uint32_t c) {
    const core::ChunkRange r = core::chunk_range(visible, sort_chunks, c);
    for (std::size_t i = r.begin; i < r.end; ++i) items_[i] = DrawItem{keys_[i], objects_[i]};
  });
  count_ = visible;
  stats_.visible = visible;
}

}  // namespace spindle::render
