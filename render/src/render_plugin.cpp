#include "spindle/render/render_plugin.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "spindle/algorithms/chunks.h"

#include "spindle/gameplay/transform.h"
#include "spindle/render/debug_draw.h"

namespace spindle::render {

namespace {

constexpr std::uint32_t kMaxSubmitChunks = 256;

// One draw per visible instance, in the instances' dense order: chunks count their matches,
// then write from their offsets (no shared counter).
template <class Q>
void submit_instances(core::StageContext& ctx, const Q& query, Renderer& r,
                      std::vector<std::uint32_t>& counts) {
  const std::uint32_t n = query.size();
  const std::uint32_t chunks =
      std::clamp<std::uint32_t>(std::min(ctx.split(), n / 1024 + 1), 1, kMaxSubmitChunks);
  core::for_each_chunk(ctx.jobs(), chunks, {"render_count", ctx.tag()}, [&](std::uint32_t c) {
    const core::ChunkRange range = core::chunk_range(n, chunks, c);
    std::uint32_t k = 0;
    query.each_range(static_cast<std::uint32_t>(range.begin), static_cast<std::uint32_t>(range.end),
                     [&](core::Entity, const core::WorldTransform&, const MeshInstance& m) {
                       k += m.visible ? 1 : 0;
                     });
    counts[c + 1] = k;
  });
  counts[0] = 0;
  for (std::uint32_t c = 0; c < chunks; ++c) counts[c + 1] += counts[c];
  // Every draw taken is written below, in parallel: no serial clearing first.
  const std::span<DrawCommand> draws = r.begin_frame(counts[chunks], false);
  core::for_each_chunk(ctx.jobs(), chunks, {"render_submit", ctx.tag()}, [&](std::uint32_t c) {
    const core::ChunkRange range = core::chunk_range(n, chunks, c);
    std::uint32_t i = counts[c];
    query.each_range(
        static_cast<std::uint32_t>(range.begin), static_cast<std::uint32_t>(range.end),
        [&](core::Entity, const core::WorldTransform& w, const MeshInstance& m) {
          if (!m.visible) return;
          if (i < draws.size())  // past max_draws: refused and counted
            draws[i] = {
                .mesh = m.mesh, .material = m.material, .model = w.matrix, .layer = m.layer};
          ++i;
        });
  });
}

}  // namespace

RenderPlugin::RenderPlugin(RenderPluginConfig config)
    : config_(std::move(config)), renderer_(std::make_unique<Renderer>(config_.renderer)) {}
RenderPlugin::~RenderPlugin() = default;

void RenderPlugin::build(core::Engine& engine) {
  core::World& world = engine.world();
  world.register_component<MeshInstance>("mesh_instance");
  Renderer* r = renderer_.get();
  const RenderPluginConfig* cfg = &config_;

  // The renderer is reached through the plugin, not the world; this type stands for it in the
  // stages' access sets so the frame graph orders them.
  struct RendererAccess {};
  engine.add_stage({.name = "render_submit",
                    .phase = kRenderPrepPhase,
                    .access = core::Access(config_.submit_access)
                                  .read<core::WorldTransform, MeshInstance>()
                                  .write<RendererAccess>(),
                    .run =
                        [r, cfg, counts = std::vector<std::uint32_t>(kMaxSubmitChunks + 1)](
                            core::StageContext& ctx) mutable {
                          const auto query =
                              ctx.world().query<const core::WorldTransform, const MeshInstance>();
                          submit_instances(ctx, query, *r, counts);
                          if (cfg->submit) cfg->submit(ctx, *r);
                        },
                    .simulation = false});
  engine.add_stage(
      {.name = "render_prep",
       .phase = kRenderPrepPhase,
       .access = core::Access{}.write<RendererAccess>(),
       .after = {"render_submit"},
       .run = [r](core::StageContext& ctx) { r->prepare(ctx.jobs(), ctx.split(), ctx.tag()); },
       .simulation = false});
  engine.add_stage({.name = "render_geometry",
                    .phase = kRenderPhase,
                    .access = core::Access(config_.geometry_access).write<RendererAccess>(),
                    .run =
                        [r, cfg](core::StageContext& ctx) {
                          if (cfg->overlay)
                            draw_frame_overlay(*r, ctx.engine(), ctx.engine().last_frame());
                          r->geometry(ctx.jobs(), ctx.split(), ctx.tag());
                        },
                    .simulation = false});
  engine.add_stage(
      {.name = "render_raster",
       .phase = kRenderPhase,
       .access = core::Access{}.write<RendererAccess>(),
       .after = {"render_geometry"},
       .run = [r](core::StageContext& ctx) { r->raster(ctx.jobs(), ctx.split(), ctx.tag()); },
       .simulation = false});
}

void draw_frame_overlay(Renderer& r, const core::Engine& engine, const core::FrameStats& stats) {
  DebugDraw& dbg = r.debug();
  char line[128];
  const double ms = static_cast<double>(stats.frame_ns) * 1e-6;
  std::snprintf(line, sizeof line, "%.1f FPS  %.2f ms  frame %llu", ms > 0 ? 1000.0 / ms : 0.0, ms,
                static_cast<unsigned long long>(stats.frame));
  const std::uint32_t white = rgba(255, 255, 255), grey = rgba(190, 190, 200),
                      bar = rgba(90, 200, 120, 220), back = rgba(0, 0, 0, 150);
  const float x = 8.0f;
  float y = 8.0f;
  const float h = 10.0f;
  const std::uint32_t stages = std::min<std::uint32_t>(
      engine.stage_count(), static_cast<std::uint32_t>(stats.stages.size()));
  dbg.screen_rect({4.0f, 4.0f},
                  {300.0f, 4.0f + h * static_cast<float>(2 + stages + stats.worker_busy_ns.size())},
                  back, true);
  dbg.text({x, y}, line, white);
  y += h;
  for (std::uint32_t s = 0; s < stages; ++s, y += h) {
    const core::StageTiming& t = stats.stages[s];
    std::snprintf(line, sizeof line, "%-18.18s %7.3f ms %4u jobs", engine.stage_name(s),
                  static_cast<double>(t.wall_ns) * 1e-6, t.jobs);
    dbg.text({x, y}, line, grey);
  }
  for (std::size_t w = 0; w < stats.worker_busy_ns.size(); ++w, y += h) {
    const double share =
        stats.frame_ns > 0 ? static_cast<double>(stats.worker_busy_ns[w]) / stats.frame_ns : 0.0;
    std::snprintf(line, sizeof line, "worker %2zu %3.0f%%", w, 100.0 * std::min(share, 1.0));
    dbg.text({x, y}, line, grey);
    const float left = x + 110.0f;
    dbg.screen_rect({left, y + 1.0f},
                    {left + 160.0f * static_cast<float>(std::min(share, 1.0)), y + h - 2.0f}, bar,
                    true);
  }
}

}  // namespace spindle::render
