// The Renderer: meshes, textures and materials; a camera and lights; draws submitted each
// frame; and the frame drawn by jobs into an Image. Three steps, each a stage of the frame graph
// when the RenderPlugin (render_plugin.h) drives it:
//
//   prepare   cull the draws against the camera and sort them by 64-bit key (draw_list.h)
//   geometry  batches of sorted draws in parallel: vertex transform and lighting, clipping,
//             back-face and zero-area rejection, triangle setup, binning into the batch's own
//             per-tile lists
//   raster    one job per 64x64 screen tile: clear, then every batch's bin for the tile in
//             draw order (raster.h); alpha-blended draws after opaque ones, back to front.
//             With RendererConfig::occlusion_culling, geometry handles the nearest eighth of the
//             draws, raster draws them, skips later draws hidden behind them, and runs the rest
//
// Usage:
//
//   spindle::render::Renderer r({.width = 640, .height = 360});
//   auto mesh = r.add_mesh(spindle::render::make_cube());             // Result<MeshId>
//   auto tex = r.add_texture(std::move(texture));                     // Result<TextureId>
//   auto mat = r.add_material({.name = "crate", .texture = tex.value()});
//   r.set_camera(camera);
//   r.lights().directional = {.direction = {0.4f, 0.7f, 0.6f}, .color = glm::vec3(0.85f)};
//   ...every frame:
//   std::span<spindle::render::DrawCommand> draws = r.begin_frame(n);  // fill them (any thread)
//   for (i...) draws[i] = {.mesh = mesh.value(), .material = mat.value(), .model = m[i]};
//   r.debug().text({8, 8}, "hello", spindle::render::rgba(255, 255, 255));
//   r.render(jobs);                                   // or prepare/geometry/raster as stages
//   spindle::render::write_png(r.image(), "frame.png");
//
// Determinism: the image depends only on the resources, camera, lights and draws, never on the
// job mode, worker count or chunk counts: batches and tiles are pure functions of their inputs
// and bins are walked in draw order. image_hash() is what the load-test reports compare. The
// passes are cut for the workers that may run them: JobSystem::worker_count(), or in dynamic mode
// its active_workers() (one awake: cut as for single mode), or for plan_for()'s count.
//
// Memory: every buffer is sized in the constructor from RendererConfig. A frame that needs more
// (more visible triangles than a batch holds, more bin entries) finishes correctly by growing
// between steps of the frame, counted in Stats::grows and logged once; nothing is dropped.
// Steady frames allocate nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <glm/glm.hpp>

#include "spindle/base/result.h"
#include "spindle/jobs/job_system.h"
#include "spindle/render/camera.h"
#include "spindle/render/image.h"
#include "spindle/render/mesh.h"
#include "spindle/render/texture.h"

namespace spindle::render {

class DebugDraw;

using MeshId = std::uint32_t;
using TextureId = std::uint32_t;
using MaterialId = std::uint32_t;
inline constexpr TextureId kNoTexture = 0xffffffffu;

enum class Shading : std::uint8_t {
  Unlit,    // material colour x vertex colour x texture
  Flat,     // lit once per triangle (its first vertex's normal)
  Gouraud,  // lit per vertex, interpolated
};

struct Material {
  std::string name = "material";
  glm::vec4 color{1.0f};  // alpha < 1 only shows when translucent
  TextureId texture = kNoTexture;
  Shading shading = Shading::Gouraud;
  bool translucent = false;  // alpha-blended, drawn after the opaque draws, farthest first
  bool cull_back = true;     // false: both sides drawn
};

struct DirectionalLight {
  glm::vec3 direction{0.4f, 0.7f, 0.6f};  // towards the light (normalised when used)
  glm::vec3 color{0.85f};
};
struct PointLight {
  glm::vec3 position{0.0f};
  glm::vec3 color{1.0f};
  float range = 10.0f;  // intensity falls linearly... to 0 at range (smoothly: (1 - d/r)^2)
};
inline constexpr int kMaxPointLights = 4;
// Lit colour = vertex colour x material colour x (ambient + sum of lights' colour x max(n.l, 0)).
struct Lights {
  glm::vec3 ambient{0.15f};
  DirectionalLight directional{};
  PointLight points[kMaxPointLights]{};
  int point_count = 0;
};

// Which back end draws the frame.
enum class RenderPath : std::uint8_t {
  DepthBuffer,   // depth-tested, perspective-correct
  OrderingTable  // the PS1 way: depth buckets drawn back to front, no depth buffer, affine UVs
};

struct RendererConfig {
  int width = 640;
  int height = 360;
  RenderPath path = RenderPath::DepthBuffer;
  std::uint32_t max_draws = 65536;  // draws one frame takes (more: refused by begin_frame)
  std::uint32_t max_batches = 64;   // geometry batches at most
  std::uint32_t triangles_per_batch = 16384;  // initial; grows between steps when exceeded
  std::uint32_t ordering_buckets = 1024;      // OrderingTable: depth buckets
  // DepthBuffer with 256 draws or more: the nearest eighth of the sorted draws is drawn first and
  // every later draw whose bounding box is already hidden everywhere is skipped (the image is the
  // same; only the work differs). Worth it behind solid occluders (walls, terrain); it costs a
  // second pass over the tiles and a box test per draw, so it is off unless asked for.
  bool occlusion_culling = false;
  // Levels of detail for small things: an opaque draw whose bounding sphere's projection has a
  // radius under this many pixels is drawn as a point (a square of about its size in the mesh's
  // mean colour, lit as a surface facing the camera, at its nearest depth) instead of its
  // triangles. Thousands of agents a pixel or two wide then cost a pixel or two each. The choice
  // is a pure function of the draw and the camera: the image stays the same in every mode. 0: off.
  float point_pixels = 0.0f;
  glm::vec4 clear_color{0.1f, 0.1f, 0.12f, 1.0f};
  std::uint32_t debug_lines = 8192;  // debug drawing capacity (lines; text characters)
  std::uint32_t debug_chars = 8192;
};

// Positions and normals that replace a mesh's for one draw (skinned output, SoA, one entry
// per mesh vertex); the mesh gives indices, UVs and colours.
struct VertexOverride {
  const float* px = nullptr;
  const float* py = nullptr;
  const float* pz = nullptr;
  const float* nx = nullptr;  // null: the mesh's normals
  const float* ny = nullptr;
  const float* nz = nullptr;
};

struct DrawCommand {
  MeshId mesh = 0;
  MaterialId material = 0;
  glm::mat4 model{1.0f};
  const VertexOverride* vertices = nullptr;  // must stay valid until raster is done
  std::uint8_t layer = 0;                    // layers draw in increasing order
};

class Renderer {
 public:
  explicit Renderer(const RendererConfig& config = {});
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // Resources, between frames. Errors name the resource and are not kept.
  core::Result<MeshId> add_mesh(Mesh mesh);
  core::Result<MeshId> add_mesh(const MeshDesc& desc);
  core::Result<TextureId> add_texture(Texture texture);
  // Refuses an unknown texture id or a non-finite colour.
  core::Result<MaterialId> add_material(const Material& material);
  const Mesh& mesh(MeshId id) const;

  void set_camera(const Camera& camera);
  const Camera& camera() const;
  Lights& lights();
  DebugDraw& debug();  // cleared after each frame is drawn

  // Starts a frame with `count` draws to fill (clamped to max_draws; the clamp is counted in
  // Stats::draws_refused and logged once). The span is valid until the next begin_frame().
  // The draws come cleared (DrawCommand{}: a draw left alone draws nothing), one thread writing
  // them all; `clear = false` skips that for a caller that writes every draw itself, in parallel
  // (the render plugin's submit pass: 200,000 draws are 19 MB to clear).
  std::span<DrawCommand> begin_frame(std::uint32_t count, bool clear = true);
  // `count` more draws to fill after those already taken (clamped and counted the same way).
  std::span<DrawCommand> append_draws(std::uint32_t count, bool clear = true);
  // Or one at a time (not thread-safe); false when max_draws is reached.
  bool submit(const DrawCommand& draw);

  // The three steps (each blocks until its jobs are done; the calling thread helps).
  // chunks: culling/sorting chunks and geometry batches; tag: the job tag they are booked under.
  void prepare(jobs::JobSystem& jobs, std::uint32_t chunks, std::uint16_t tag = 0);
  void geometry(jobs::JobSystem& jobs, std::uint32_t chunks, std::uint16_t tag = 0);
  void raster(jobs::JobSystem& jobs, std::uint32_t chunks, std::uint16_t tag = 0);
  // All three with chunks = 4 per participant.
  void render(jobs::JobSystem& jobs, std::uint16_t tag = 0);
  // Cut the passes as for `workers` threads, whatever the job system has (0, the default: for
  // those it has, as above), from the next frame on. The image stays the same. For a recording
  // that shows what the frame would be on more cores than this machine has: the tile size and
  // the batch count depend on the workers in a way a replay cannot cut again (the load test's
  // predicted scaling).
  void plan_for(std::uint32_t workers);
  std::uint32_t planned_workers() const;  // plan_for()'s count (0: none)

  const Image& image() const;                              // the last frame drawn (width x height)
  std::uint64_t image_hash() const;                        // image().hash()
  core::Status screenshot(const std::string& path) const;  // write_png(image())

  struct Stats {
    std::uint64_t frames = 0;
    std::uint32_t draws = 0;             // submitted this frame
    std::uint32_t draws_refused = 0;     // past max_draws, this frame
    std::uint32_t draws_visible = 0;     // after culling
    std::uint64_t triangles_in = 0;      // of the visible draws
    std::uint64_t triangles_binned = 0;  // after clipping and rejection
    std::uint64_t bin_entries = 0;       // triangle x tile references
    std::uint32_t batches = 0;
    std::uint32_t tiles = 0;
    std::uint32_t tile_strips = 0;  // raster jobs that drew a strip of a busy tile, this frame
    // Raster jobs, this frame, that drew a tile (or strip) of another participant's band: each
    // participant draws a band of the tiles of about equal cost, in raster order, then helps
    // with the others'.
    std::uint32_t tiles_away = 0;
    std::uint64_t pixels = 0;           // pixels written by the rasteriser
    std::uint64_t grows = 0;            // buffers grown since construction
    std::uint64_t invalid_draws = 0;    // unknown mesh/material: skipped (logged once)
    std::uint32_t draws_occluded = 0;   // skipped this frame: hidden behind nearer draws
    std::uint32_t draws_as_points = 0;  // drawn as points this frame (point_pixels)
    // Triangle x tile (or strip) tests this frame, and those the coarse depth buffer found hidden
    // before any pixel. When over a third were hidden, the next frame leaves each triangle's
    // attribute planes to the tiles that draw it (the image is the same either way).
    std::uint64_t tile_triangles = 0;
    std::uint64_t tile_triangles_hidden = 0;
  };
  Stats stats() const;
  const RendererConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spindle::render
