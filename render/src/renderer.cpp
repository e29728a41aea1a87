#include "spindle/render/renderer.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "raster_deferred.h"
#include "raster_screen.h"
#include "raster_simd.h"
#include "raw_array.h"
#include "spindle/algorithms/chunks.h"
#include "spindle/base/log.h"
#include "spindle/jobs/job_graph.h"
#include "spindle/render/debug_draw.h"
#include "spindle/render/draw_list.h"
#include "spindle/render/font.h"
#include "spindle/render/raster.h"

// The per-vertex pass must round as setup_triangle does (see raster.cpp): no fused a * b + c.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace spindle::render {

namespace {

using raster::ClipVertex;
using raster::DrawState;
using raster::Triangle;
namespace simd = raster::simd;

// Tiles are kTile pixels a side, or kBigTile where the frame has enough of those for the
// workers (Impl::choose_tile()): a triangle 20-40 pixels across is then in fewer tiles, each of
// which costs it a set-up and a walk. The image is the same with either.
constexpr int kTile = raster::kTileSize;
constexpr int kBigTile = 2 * kTile;
constexpr int kBigTilesPerWorker = 8;
// A busy tile is drawn in strips (raster_pass()): 2, 4 or 8 of its kSubStrips rows of
// strip_rows rows each, whole 8x8 depth blocks, so that no two strips share one.
constexpr int kSubStrips = 8;
constexpr std::uint32_t kMinBusyStrips = 4;  // strips of a tile above kSplitAboveMean
constexpr std::uint64_t kSplitAboveMean = 3;
// Also split a tile that costs more than a kItemsPerLane-th of a lane's share of the pass, into
// as many strips as that takes (at most kSubStrips): with many workers and few tiles (640x360 is
// 60 tiles on 16 workers), whole tiles or quarters leave each worker three or four items of
// 100-280 us, and the last to finish keeps the frame waiting.
constexpr std::uint64_t kItemsPerLane = 4;
static_assert((kTile / kSubStrips) % raster::kDepthBlock == 0);

// A bin entry: the primitive's index in its batch (kEntryPoint set: in its points, otherwise in
// its triangles), and in the top bits the first and last of the tile's sub-strips (raster_pass())
// its rows touch, so that a strip skips the others without reading them.
constexpr std::uint32_t kEntryIndexBits = 26;
constexpr std::uint32_t kEntryPoint = 1u << (kEntryIndexBits - 1);
constexpr std::uint32_t kEntryRefMask = (1u << kEntryIndexBits) - 1;  // index and kind
constexpr std::uint32_t kEntryIndexMask = kEntryPoint - 1;
constexpr std::uint32_t kEntryFirstShift = kEntryIndexBits;
constexpr std::uint32_t kEntryLastShift = kEntryIndexBits + 3;
static_assert(kSubStrips == 8 && kEntryLastShift + 3 == 32, "3 bits for each sub-strip index");

// A raster item's part of its tile (its low byte): 0 the whole tile, or kPartStrip | first << 3
// | last, sub-strips first to last.
constexpr std::uint32_t kPartStrip = 0x80;

// What binning needs of a primitive, kept beside the order it was made in so that binning reads
// 8 bytes a primitive instead of its whole set-up triangle: its pixel rows and its tiles.
struct PrimBounds {
  std::int16_t min_y, max_y;
  std::uint8_t tx0, ty0, tx1, ty1;  // tiles, inclusive (at most 8192 / 64 a side)
};
static_assert(raster::kMaxViewportSide / raster::kTileSize <= 256);

// One batch of sorted draws: its set-up triangles and points, the order they were made in (draw
// order), and per tile the entries of those touching it (a counting sort after setup, so there
// is no shared counter).
struct Batch {
  // Not initialised (raw_array.h): a frame writes the first triangle_count triangles, and so on,
  // before anything reads them, and only the pages it writes are touched.
  RawArray<Triangle> triangles;
  RawArray<raster::CoarseBounds> coarse;  // per triangle, for the tiles' hidden test
  RawArray<raster::Point> points;
  RawArray<std::uint32_t> order;            // triangle index, or point index | kEntryPoint
  RawArray<PrimBounds> bounds;              // per entry of order
  RawArray<std::uint32_t> entries;          // order[i] | first and last sub-strip touched
  std::vector<std::uint32_t> tile_offsets;  // tiles + 1: entries of tile t in [off[t], off[t+1])
  std::uint32_t triangle_count = 0;
  std::uint32_t point_count = 0;
  std::uint32_t entry_count = 0;
  std::uint64_t triangles_in = 0;
  std::uint32_t invalid = 0;
  bool overflow = false;  // triangles, points or entries did not fit: grown and redone serially
  std::vector<raster::ScreenVertex> screen;  // per vertex of the draw being set up

  void clear() {
    triangle_count = 0;
    point_count = 0;
    entry_count = 0;
    triangles_in = 0;
    invalid = 0;
    overflow = false;
  }
  std::uint32_t made() const { return triangle_count + point_count; }
  // Pixel coordinates are in the viewport (not negative): tiles by a shift.
  PrimBounds bounds_of(int x0, int y0, int x1, int y1) const {
    return {static_cast<std::int16_t>(y0),
            static_cast<std::int16_t>(y1),
            static_cast<std::uint8_t>(x0 >> tile_shift),
            static_cast<std::uint8_t>(y0 >> tile_shift),
            static_cast<std::uint8_t>(x1 >> tile_shift),
            static_cast<std::uint8_t>(y1 >> tile_shift)};
  }
  int tile_shift = std::countr_zero(unsigned{raster::kTileSize});  // log2 of the tile size
  // Where the next triangle is set up in place (no copy of a whole Triangle each), or null when
  // the batch is full (overflow: it grows and runs again); commit_triangle() keeps it.
  Triangle* next_triangle() {
    if (triangle_count == triangles.size()) {
      overflow = true;
      return nullptr;
    }
    return &triangles[triangle_count];
  }
  // depth_tested: its state's depth_test (one that is not is never hidden: nearest depth -1).
  void commit_triangle(bool depth_tested) {
    const Triangle& t = triangles[triangle_count];
    const std::uint32_t at = made();
    bounds[at] = bounds_of(t.min_x, t.min_y, t.max_x, t.max_y);
    coarse[triangle_count] = {t.min_x, t.min_y, t.max_x, t.max_y,
                              depth_tested ? t.min_depth : -1.0f};
    order[at] = triangle_count;
    ++triangle_count;
  }
  bool push(const raster::Point& p) {
    if (point_count == points.size()) {
      overflow = true;
      return false;
    }
    const std::uint32_t at = made();
    bounds[at] = bounds_of(p.x0, p.y0, p.x1, p.y1);
    order[at] = point_count | kEntryPoint;
    points[point_count++] = p;
    return true;
  }
};

// Raster lanes at most: one per participant that draws (jobs::kMaxWorkers).
inline constexpr std::uint32_t kMaxLanes = jobs::kMaxWorkers;

// Per raster job: triangles tested against a tile's coarse depth buffer, and those hidden.
struct TileCounts {
  std::uint32_t tested = 0;
  std::uint32_t hidden = 0;
  bool away = false;     // drawn by a participant whose band it is not (raster_pass())
  std::uint64_t ns = 0;  // the item's time
};

// The frame's lights as transform_and_light uses them: lit colour = material x vertex colour x
// (ambient + lights), alpha from the two colours.
struct Lighting {
  glm::vec3 ambient{0.0f};
  glm::vec3 dir{0.0f};
  glm::vec3 dir_color{0.0f};
  PointLight points[kMaxPointLights];
  int point_count = 0;
};

// A back face seen in front of the camera, decided in clip space before any division: with every
// w > 0 the sign of det[x y w] is the sign of the projected triangle's area (y up, so a
// counter-clockwise front face gives a positive one). Triangles reaching behind the camera are
// left to setup, after clipping.
inline bool back_facing(const glm::vec4& a, const glm::vec4& b, const glm::vec4& c) {
  if (!(a.w > 0.0f && b.w > 0.0f && c.w > 0.0f)) return false;
  const double det =
      static_cast<double>(a.x) * (static_cast<double>(b.y) * c.w - static_cast<double>(c.y) * b.w) -
      static_cast<double>(a.y) * (static_cast<double>(b.x) * c.w - static_cast<double>(c.x) * b.w) +
      static_cast<double>(a.w) * (static_cast<double>(b.x) * c.y - static_cast<double>(c.x) * b.y);
  return det < 0.0;
}

// A colour as the colour buffer holds it (rgba()), each channel clamped to [0, 1] (NaN: 0).
inline std::uint32_t packed_rgba(const glm::vec4& c) {
  const auto byte = [](float v) {
    return static_cast<std::uint32_t>((v > 0.0f ? std::min(v, 1.0f) : 0.0f) * 255.0f + 0.5f);
  };
  return rgba(byte(c.r), byte(c.g), byte(c.b), byte(c.a));
}

// Four lanes from four floats (any alignment).
inline simd::v4f load4(const float* p) {
  simd::v4f r;
  std::memcpy(&r, p, sizeof r);
  return r;
}

inline simd::v4f sqrt4(simd::v4f v) {
#if SPINDLE_RASTER_SSE2
  return reinterpret_cast<simd::v4f>(_mm_sqrt_ps(reinterpret_cast<__m128>(v)));
#else
  for (int j = 0; j < 4; ++j) v[j] = std::sqrt(v[j]);
  return v;
#endif
}

// Starts fetching the cache line of p. (GCC deletes a loop whose body is only
// __builtin_prefetch, which has no side effect; the instruction itself stays.)
inline void fetch_line(const float* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*p));
#elif defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// The cache lines of a draw's own vertices (a skinned character's, written by another stage and
// often on another core) at vertices [from, to), one line of each array per 16 vertices.
void fetch_vertices(const VertexOverride* o, std::size_t from, std::size_t to) {
  if (o == nullptr) return;
  const float* const arrays[6] = {o->px, o->py, o->pz, o->nx, o->ny, o->nz};
  for (std::size_t i = from; i < to; i += 16)
    for (const float* a : arrays)
      if (a != nullptr) fetch_line(a + i);
}

// Clip-space positions, UVs and lit colours of one draw's vertices into out, four vertices at a
// time, all of them: every vertex costs a quarter of the per-vertex formula, which beats lighting
// only the vertices of front faces. Each lane does Lighting::light's and GLM's operations in
// their order (no fused multiply-adds on the baseline target), so a colour does not depend on
// which lane computed it. Positions and normals come from `over` where it gives them.
// `next` (next_n vertices) is the next draw's own vertices: fetched a line of each array per 16
// vertices of this draw, so that the next starts in cache without a burst of misses that would
// stall this one.
void transform_and_light(std::span<const Vertex> in, const VertexOverride* over,
                         const glm::mat4& mvp, const glm::mat4& model, const Material& mat,
                         const Lighting& light, const raster::Viewport& viewport, ClipVertex* out,
                         raster::ScreenVertex* screen, const VertexOverride* next = nullptr,
                         std::size_t next_n = 0) {
  using simd::splat;
  using simd::v4f;
  const std::size_t n = in.size();
  const bool lit = mat.shading != Shading::Unlit;
  const bool own_positions = over != nullptr;
  const bool own_normals = own_positions && over->nx != nullptr;
  const bool points = lit && light.point_count > 0;
  alignas(16) float lane[10][4];  // px py pz nx ny nz, then clip x y z w out
  for (std::size_t i = 0; i < n; i += 4) {
    const std::size_t lanes = std::min<std::size_t>(4, n - i);
    if (i % 16 == 0 && i < next_n) fetch_vertices(next, i, i + 1);
    if (own_positions && lanes == 4) {
      std::memcpy(lane[0], over->px + i, sizeof lane[0]);
      std::memcpy(lane[1], over->py + i, sizeof lane[1]);
      std::memcpy(lane[2], over->pz + i, sizeof lane[2]);
    } else {
      for (std::size_t j = 0; j < 4; ++j) {  // a short last group repeats its last vertex
        const std::size_t v = i + std::min(j, lanes - 1);
        const glm::vec3 p =
            own_positions ? glm::vec3(over->px[v], over->py[v], over->pz[v]) : in[v].position;
        lane[0][j] = p.x, lane[1][j] = p.y, lane[2][j] = p.z;
      }
    }
    const v4f px = load4(lane[0]), py = load4(lane[1]), pz = load4(lane[2]);
    // mvp x (p, 1): per row, columns scaled by x, y, z plus the last.
    const auto row = [&](int r) {
      return splat(mvp[0][r]) * px + splat(mvp[1][r]) * py +
             (splat(mvp[2][r]) * pz + splat(mvp[3][r]));
    };
    const v4f cx = row(0), cy = row(1), cz = row(2), cw = row(3);
    simd::store_f(lane[6], cx);
    simd::store_f(lane[7], cy);
    simd::store_f(lane[8], cz);
    simd::store_f(lane[9], cw);
    for (std::size_t j = 0; j < lanes; ++j) {
      out[i + j].position = {lane[6][j], lane[7][j], lane[8][j], lane[9][j]};
      out[i + j].uv = in[i + j].uv;
    }
    raster::project(cx, cy, cz, cw, viewport, screen + i, lanes);
    v4f sum_r = splat(1.0f), sum_g = splat(1.0f), sum_b = splat(1.0f);
    if (lit) {
      if (own_normals && lanes == 4) {
        std::memcpy(lane[3], over->nx + i, sizeof lane[3]);
        std::memcpy(lane[4], over->ny + i, sizeof lane[4]);
        std::memcpy(lane[5], over->nz + i, sizeof lane[5]);
      } else {
        for (std::size_t j = 0; j < 4; ++j) {
          const std::size_t v = i + std::min(j, lanes - 1);
          const glm::vec3 nv =
              own_normals ? glm::vec3(over->nx[v], over->ny[v], over->nz[v]) : in[v].normal;
          lane[3][j] = nv.x, lane[4][j] = nv.y, lane[5][j] = nv.z;
        }
      }
      const v4f nx = load4(lane[3]), ny = load4(lane[4]), nz = load4(lane[5]);
      // normal matrix (the model's upper 3x3) x n, then normalised unless zero.
      v4f wx = splat(model[0][0]) * nx + splat(model[1][0]) * ny + splat(model[2][0]) * nz;
      v4f wy = splat(model[0][1]) * nx + splat(model[1][1]) * ny + splat(model[2][1]) * nz;
      v4f wz = splat(model[0][2]) * nx + splat(model[1][2]) * ny + splat(model[2][2]) * nz;
      const v4f len = sqrt4(wx * wx + wy * wy + wz * wz);
      const simd::v4i nonzero = len > splat(0.0f);
      wx = simd::select(nonzero, wx / len, wx);
      wy = simd::select(nonzero, wy / len, wy);
      wz = simd::select(nonzero, wz / len, wz);
      const auto clamp0 = [](v4f x) { return simd::select(x < splat(0.0f), splat(0.0f), x); };
      const v4f facing =
          clamp0(wx * splat(light.dir.x) + wy * splat(light.dir.y) + wz * splat(light.dir.z));
      sum_r = splat(light.ambient.r) + splat(light.dir_color.r) * facing;
      sum_g = splat(light.ambient.g) + splat(light.dir_color.g) * facing;
      sum_b = splat(light.ambient.b) + splat(light.dir_color.b) * facing;
      if (points) {
        // The world position, model x (p, 1), summed in GLM's pairs.
        const auto world = [&](int r) {
          return (splat(model[0][r]) * px + splat(model[1][r]) * py) +
                 (splat(model[2][r]) * pz + splat(model[3][r]));
        };
        const v4f qx = world(0), qy = world(1), qz = world(2);
        for (int l = 0; l < light.point_count; ++l) {
          const PointLight& pl = light.points[l];
          const v4f tx = splat(pl.position.x) - qx, ty = splat(pl.position.y) - qy,
                    tz = splat(pl.position.z) - qz;
          const v4f dist = sqrt4(tx * tx + ty * ty + tz * tz);
          const simd::v4i near = (dist < splat(pl.range)) & (dist > splat(0.0f));
          const v4f f = splat(1.0f) - dist / splat(pl.range);
          const v4f ff = f * f;
          const v4f toward = clamp0(wx * (tx / dist) + wy * (ty / dist) + wz * (tz / dist));
          sum_r += simd::select(near, splat(pl.color.r) * ff * toward, splat(0.0f));
          sum_g += simd::select(near, splat(pl.color.g) * ff * toward, splat(0.0f));
          sum_b += simd::select(near, splat(pl.color.b) * ff * toward, splat(0.0f));
        }
      }
    }
    alignas(16) float sum[3][4];
    simd::store_f(sum[0], sum_r);
    simd::store_f(sum[1], sum_g);
    simd::store_f(sum[2], sum_b);
    for (std::size_t j = 0; j < lanes; ++j) {
      const glm::vec4 c = in[i + j].color * mat.color;
      out[i + j].color =
          lit ? glm::vec4(c.r * sum[0][j], c.g * sum[1][j], c.b * sum[2][j], c.a) : c;
    }
  }
  fetch_vertices(next, (n + 15) / 16 * 16, next_n);  // what a larger next draw has beyond n
}
}  // namespace

struct Renderer::Impl {
  RendererConfig config;
  raster::Viewport viewport;
  int tile = kTile;                   // kTile or kBigTile (choose_tile())
  std::uint32_t planned_workers = 0;  // plan_for()

  // The threads the passes are cut for: plan_for()'s count, or in dynamic mode those the frame
  // may wake (JobSystem::active_workers()), not every participant. One active worker runs the
  // chunks one after another, so the passes are cut as for single mode: each further batch of
  // the geometry pass is one more list every tile's raster job walks.
  std::uint32_t split_workers(const jobs::JobSystem& jobs) const {
    if (planned_workers > 0) return planned_workers;
    return std::max<std::uint32_t>(1, std::min(jobs.worker_count(), jobs.active_workers()));
  }

  int strip_rows = kTile / kSubStrips;
  int tiles_x = 0;
  int tiles_y = 0;
  int tile_count = 0;
  int max_tile_count = 0;  // what the per-tile arrays are sized for

  std::vector<Mesh> meshes;
  std::vector<glm::vec4> mesh_mean;  // per mesh: its mean vertex colour (a point's colour)
  std::vector<std::unique_ptr<Texture>> textures;  // stable addresses: states point at views
  std::vector<glm::vec4> texture_mean;             // per texture: its smallest level's mean
  std::vector<Material> materials;
  std::vector<DrawState> states;  // per material, then the debug states
  std::uint32_t max_mesh_vertices = 0;

  Camera camera;
  Lights lights;
  DebugDraw debug;
  std::unique_ptr<Texture> font;

  std::vector<DrawCommand> draws;
  std::uint32_t draw_count = 0;
  std::vector<Renderable> renderables;
  std::vector<std::uint32_t> chunk_invalid;
  RenderPrep prep;

  std::vector<Batch> batches;
  std::uint32_t batch_count = 0;                        // used this frame
  std::vector<std::vector<ClipVertex>> batch_vertices;  // per batch: one draw's vertices
  std::vector<std::uint64_t> draw_triangles;            // prefix sums over the sorted list
  std::vector<std::uint64_t> scan_sums;                 // per chunk of the prefix scan
  Batch debug_batch;
  std::vector<ClipVertex> debug_world, debug_screen, debug_text;

  Image color;
  std::vector<float> depth;
  std::vector<float> block_depth;  // per 8x8 block, the farthest depth in it (raster.h)
  int block_stride = 0;
  std::vector<std::uint64_t> tile_pixels;
  // Occlusion: the sorted draws before phase_split are drawn first; each later one is skipped
  // when the coarse depth buffer already hides its whole bounding box (occluded[k]).
  std::size_t phase_split = 0;
  std::uint32_t pass_chunks = 1;  // geometry()'s chunks, for the second pass
  std::vector<std::uint8_t> occluded;
  std::uint32_t occluded_count = 0;
  // Per sorted draw: drawn as one point (RendererConfig::point_pixels), decided with the batches,
  // and that point, made in the same pass (kPoint; kNoPoint: off screen, nothing to draw).
  // Geometry then reads points in order instead of each draw's data a second time.
  enum : std::uint8_t { kMesh = 0, kPoint = 1, kNoPoint = 2 };
  std::vector<std::uint8_t> as_point;
  std::vector<raster::Point> sorted_points;
  std::vector<std::uint32_t> chunk_points;
  std::uint32_t point_draws = 0;
  float point_scale = 0.0f;  // pixels per unit of radius at distance 1 along the view axis
  float depth_a = 0.0f, depth_b = 0.0f;  // the projection's P22 and P32: z/w = -P22 + P32 / w
  std::vector<std::uint32_t> chunk_occluded;
  std::vector<std::uint32_t> tile_load;   // bin entries per tile this frame
  std::vector<std::uint32_t> tile_items;  // per tile: its raster items this pass (1, or strips)
  // Per raster pass (first, second) and tile: its items' time, summed, the last time the pass ran
  // (0: not measured since the tiles last changed size). Orders the next frame's items.
  std::vector<std::uint64_t> tile_ns[2];
  // The raster pass's jobs, costliest first: tile << 8 | part (0: the whole tile; kPartStrip |
  // first << 3 | last: its rows [first strip_rows, (last + 1) strip_rows), see raster_pass()).
  std::vector<std::uint32_t> raster_items;
  std::vector<TileCounts> item_counts;   // per raster item this pass
  std::vector<std::uint64_t> item_cost;  // per raster item this pass: what the order used
  // raster_items by home lane: lane l's are [lane_begin[l], lane_begin[l + 1]), and
  // lane_next[l] is the next of them to draw (raster_pass()).
  struct alignas(64) LaneNext {
    std::atomic<std::uint32_t> value{0};
  };
  std::uint32_t lane_begin[kMaxLanes + 1] = {};
  std::vector<std::uint8_t> tile_lane;  // per tile: its home lane this pass
  LaneNext lane_next[kMaxLanes];
  // Whether geometry leaves triangles' planes to the tiles (raster_deferred.h): decided from the
  // frame before's share of hidden triangles (Stats::tile_triangles_hidden).
  bool defer_planes = true;
  // OrderingTable: per tile, its references (far-first bucket << 48 | batch << 32 | triangle)
  // and their sorted copy; ot_tile_base is the prefix sum of the tiles' entry counts.
  std::vector<std::uint64_t> ot_refs;
  std::vector<std::uint32_t> ot_tile_base;

  Stats stats;
  bool logged_grow = false, logged_invalid = false, logged_refused = false;

  explicit Impl(const RendererConfig& c)
      : config(c), debug(c.debug_lines, c.debug_chars), prep(std::max(c.max_draws, 1u), 256, 256) {
    SPINDLE_ASSERTF(c.width > 0 && c.height > 0 && c.width <= raster::kMaxViewportSide &&
                        c.height <= raster::kMaxViewportSide,
                    "renderer: %dx%d is not a viewport size (1 to %d per side)", c.width, c.height,
                    raster::kMaxViewportSide);
    config.max_batches = std::max(config.max_batches, 1u);
    config.triangles_per_batch = std::clamp(config.triangles_per_batch, 64u, kEntryIndexMask + 1);
    config.ordering_buckets = std::clamp(config.ordering_buckets, 2u, 65536u);
    viewport = {c.width, c.height};
    use_tile(kTile);
    max_tile_count = tile_count;
    draws.resize(std::max(c.max_draws, 1u));
    renderables.resize(draws.size());
    chunk_invalid.resize(256);
    scan_sums.resize(256);
    batches.resize(config.max_batches);
    batch_vertices.resize(config.max_batches);
    // Points only where draws may become points: a point per draw the batch takes, at first.
    for (Batch& b : batches)
      size_batch(b, config.triangles_per_batch,
                 config.point_pixels > 0.0f ? config.triangles_per_batch : 0);
    draw_triangles.resize(draws.size() + 1);
    color = Image(c.width, c.height, 0, (c.width + 3) & ~3);
    depth.assign(static_cast<std::size_t>(color.stride()) * c.height, 1.0f);
    block_stride = (c.width + raster::kDepthBlock - 1) / raster::kDepthBlock;
    block_depth.assign(static_cast<std::size_t>(block_stride) *
                           ((c.height + raster::kDepthBlock - 1) / raster::kDepthBlock),
                       1.0f);
    tile_pixels.resize(max_tile_count);
    tile_load.resize(max_tile_count);
    occluded.resize(draws.size());
    chunk_occluded.resize(256);
    as_point.resize(draws.size());
    if (c.point_pixels > 0.0f) sorted_points.resize(draws.size());
    chunk_points.resize(256);
    tile_items.resize(max_tile_count);
    tile_lane.resize(max_tile_count);
    for (std::vector<std::uint64_t>& ns : tile_ns) ns.assign(max_tile_count, 0);
    raster_items.resize(static_cast<std::size_t>(max_tile_count) * kSubStrips);
    item_counts.resize(raster_items.size());
    item_cost.resize(raster_items.size());
    ot_tile_base.resize(max_tile_count + 1);
    if (ordering_table()) ot_refs.resize(4 * static_cast<std::size_t>(config.triangles_per_batch));

    // The font's atlas is a texture like any other; text quads sample it texel for texel.
    auto font_texture = Texture::create(
        font_atlas(), {.name = "debug font", .mipmaps = false, .filter = Filter::Nearest});
    SPINDLE_ASSERTF(font_texture.ok(), "renderer: the built-in font: %s",
                    font_texture.status().c_str());
    font = std::make_unique<Texture>(std::move(font_texture.value()));
    const std::uint32_t debug_tris = debug.max_triangles();
    debug_world.resize(3 * static_cast<std::size_t>(debug_tris));
    debug_screen.resize(3 * static_cast<std::size_t>(debug_tris));
    debug_text.resize(3 * static_cast<std::size_t>(debug_tris));
    size_batch(debug_batch, 3 * debug_tris + 64);
    rebuild_states();
  }

  void size_batch(Batch& b, std::size_t triangles, std::size_t points = 0) {
    b.triangles.resize(triangles);
    b.coarse.resize(triangles);
    b.points.resize(points);
    b.order.resize(b.triangles.size() + b.points.size());
    b.bounds.resize(b.order.size());
    b.entries.resize(triangles * 2);
    b.tile_offsets.resize(max_tile_count + 1);
  }

  void use_tile(int size) {
    SPINDLE_ASSERT(size == kTile || size == kBigTile, "renderer: tiles are 64 or 128 pixels");
    tile = size;
    strip_rows = size / kSubStrips;
    tiles_x = (config.width + size - 1) / size;
    tiles_y = (config.height + size - 1) / size;
    tile_count = tiles_x * tiles_y;
    for (std::vector<std::uint64_t>& ns : tile_ns) std::fill(ns.begin(), ns.end(), 0);
    // Binning computes tiles with a shift (PrimBounds), not a division.
    const int shift =
        size == kTile ? std::countr_zero(unsigned{kTile}) : std::countr_zero(unsigned{kBigTile});
    for (Batch& b : batches) b.tile_shift = shift;
    debug_batch.tile_shift = shift;
  }
  // Big tiles where there are at least kBigTilesPerWorker of them per worker, so that every
  // worker still has tiles to take; the per-tile arrays are sized for small ones.
  void choose_tile(std::uint32_t workers) {
    const int big =
        ((config.width + kBigTile - 1) / kBigTile) * ((config.height + kBigTile - 1) / kBigTile);
    const bool use_big = std::uint64_t(big) >= std::uint64_t{kBigTilesPerWorker} * workers;
    const int size = use_big ? kBigTile : kTile;
    if (size != tile) use_tile(size);
  }

  bool ordering_table() const { return config.path == RenderPath::OrderingTable; }

  DrawState state_for(const Material& m) const {
    DrawState s;
    s.texture = m.texture == kNoTexture ? nullptr : &textures[m.texture]->view();
    s.cull = m.cull_back ? raster::CullMode::Back : raster::CullMode::None;
    s.blend = m.translucent ? raster::BlendMode::Alpha : raster::BlendMode::Opaque;
    s.flat = m.shading == Shading::Flat;
    s.depth_test = !ordering_table();
    s.depth_write = !ordering_table() && !m.translucent;
    s.perspective = !ordering_table();
    return s;
  }

  // Debug states follow the materials: world lines, screen shapes, text.
  std::uint32_t debug_state(int which) const {
    return static_cast<std::uint32_t>(materials.size()) + static_cast<std::uint32_t>(which);
  }

  void rebuild_states() {
    states.clear();
    for (const Material& m : materials) states.push_back(state_for(m));
    DrawState world{};
    world.cull = raster::CullMode::None;
    world.blend = raster::BlendMode::Alpha;
    world.depth_test = !ordering_table();
    world.depth_write = false;
    world.perspective = !ordering_table();
    DrawState screen = world;
    screen.depth_test = false;
    DrawState text = screen;
    text.texture = &font->view();
    text.blend = raster::BlendMode::Alpha;
    states.push_back(world);
    states.push_back(screen);
    states.push_back(text);
  }

  Lighting lighting() const {
    Lighting l;
    l.ambient = lights.ambient;
    const float len = glm::length(lights.directional.direction);
    l.dir = len > 0.0f ? lights.directional.direction / len : glm::vec3(0.0f);
    l.dir_color = lights.directional.color;
    l.point_count = std::clamp(lights.point_count, 0, kMaxPointLights);
    for (int i = 0; i < l.point_count; ++i) l.points[i] = lights.points[i];
    return l;
  }

  // Draws (and their bounds) read this many places ahead of use in sorted order.
  static constexpr std::size_t kPrefetch = 8;
  void prefetch_draw(std::uint32_t object) const {
#if defined(__GNUC__) || defined(__clang__)
    const auto* d = reinterpret_cast<const char*>(&draws[object]);
    __builtin_prefetch(d);
    __builtin_prefetch(d + sizeof(DrawCommand) - 1);
    __builtin_prefetch(&renderables[object]);
#else
    (void)object;
#endif
  }

  bool valid(const DrawCommand& d) const {
    return d.mesh < meshes.size() && d.material < materials.size();
  }

  // --- geometry ---------------------------------------------------------------------------------

  void emit(Batch& b, const ClipVertex& v0, const ClipVertex& v1, const ClipVertex& v2,
            const DrawState& state, std::uint32_t state_index) {
    Triangle* t = b.next_triangle();
    if (t == nullptr || !raster::setup_for_tiles(v0, v1, v2, viewport, state, defer_planes, *t))
      return;
    t->state = state_index;
    b.commit_triangle(state.depth_test);
  }

  // emit() for a triangle the vertex pass has projected and bounded: set up from there.
  void emit_projected(Batch& b, const ClipVertex* const (&v)[3],
                      const raster::ScreenVertex* const (&s)[3], std::int64_t area,
                      const raster::PixelBox& box, const DrawState& state,
                      std::uint32_t state_index) {
    Triangle* t = b.next_triangle();
    if (t == nullptr) return;
    raster::setup_projected(v, s, area, box, state, defer_planes, *t);
    t->state = state_index;
    b.commit_triangle(state.depth_test);
  }

  void emit_clipped(Batch& b, const ClipVertex& v0, const ClipVertex& v1, const ClipVertex& v2,
                    const DrawState& state, std::uint32_t state_index) {
    switch (raster::classify(v0, v1, v2)) {
      case raster::ClipClass::Outside:
        return;
      case raster::ClipClass::Inside:
        emit(b, v0, v1, v2, state, state_index);
        return;
      case raster::ClipClass::Clip:
        emit_clip(b, v0, v1, v2, state, state_index);
        return;
    }
  }

  void emit_clip(Batch& b, const ClipVertex& v0, const ClipVertex& v1, const ClipVertex& v2,
                 const DrawState& state, std::uint32_t state_index) {
    ClipVertex out[3 * raster::kMaxClippedTriangles];
    const int n = raster::clip_triangle(v0, v1, v2, out);
    for (int k = 0; k < n; ++k)
      emit(b, out[3 * k], out[3 * k + 1], out[3 * k + 2], state, state_index);
  }

  // The radius in pixels of a bounding sphere's projection, roughly (its centre's distance along
  // the view axis); 0 when the sphere reaches behind the camera.
  float pixel_radius(const Renderable& o, const glm::mat4& view_proj) const {
    const float w = view_proj[0][3] * o.center.x + view_proj[1][3] * o.center.y +
                    view_proj[2][3] * o.center.z + view_proj[3][3];
    if (!(w > o.radius) || !(w > camera.near_plane)) return 0.0f;
    return o.radius * point_scale / w;
  }

  // Whether sorted draw k is drawn as a point: opaque, and smaller on screen than
  // RendererConfig::point_pixels.
  bool small_on_screen(const Renderable& o, const glm::mat4& view_proj) const {
    if (o.translucent || !(config.point_pixels > 0.0f)) return false;
    const float r = pixel_radius(o, view_proj);
    return r > 0.0f && r < config.point_pixels;
  }

  // How much of a light a small thing seen from `to_eye` shows, on average over what is seen: a
  // Lambertian sphere's phase function, (sin a + (pi - a) cos a) / pi for the angle a between
  // the eye and the light: 1 lit from behind the eye, 1/pi from the side, 0 from behind it.
  static float seen_lit(glm::vec3 to_eye, glm::vec3 to_light) {
    if (glm::dot(to_light, to_light) == 0.0f) return 0.0f;  // no such light
    const float c = std::clamp(glm::dot(to_eye, to_light), -1.0f, 1.0f);
    // acos(c) to 7e-5 radians (Abramowitz and Stegun 4.4.45): a colour needs no more, and
    // std::acos was a tenth of a point's cost.
    const float x = std::abs(c);
    const float acos_x =
        std::sqrt(1.0f - x) * (1.5707288f + x * (-0.2121144f + x * (0.0742610f - 0.0187293f * x)));
    const float a = c >= 0.0f ? acos_x : 3.14159265f - acos_x;
    return std::max(0.0f, (std::sqrt(1.0f - c * c) + (3.14159265f - a) * c) / 3.14159265f);
  }

  // One draw as a point: a square about as wide as the draw's bounds look, centred on their
  // centre's pixel, at the depth of their point nearest the camera, in the colour the mesh has on
  // average (material x mean vertex colour x mean texel), lit as a round thing would look.
  // False when the square is off screen: nothing to draw.
  bool make_point(const DrawCommand& d, const Renderable& o, const glm::mat4& view_proj,
                  const Lighting& light, raster::Point& p) const {
    const glm::vec4 c = view_proj * glm::vec4(o.center, 1.0f);
    glm::vec3 to_eye = camera.position - o.center;
    const float dist = glm::length(to_eye);
    to_eye = dist > 0.0f ? to_eye / dist : glm::vec3(0.0f, 0.0f, 1.0f);
    // The sphere's nearest point is on the ray to the eye, (dist - r) / dist of the way: its w
    // (the distance along the view axis) shrinks by that much, and a perspective projection's
    // depth is -P22 + P32 / w. One multiply-add instead of a second transform.
    const float near_w = dist > 0.0f ? c.w * (1.0f - std::min(o.radius, dist) / dist) : c.w;
    if (!(c.w > 0.0f) || !(near_w > 0.0f)) return false;
    const float inv = 1.0f / c.w;
    const float cx =
        std::clamp((c.x * inv + 1.0f) * 0.5f * static_cast<float>(config.width), -1e6f, 1e6f);
    const float cy =
        std::clamp((1.0f - c.y * inv) * 0.5f * static_cast<float>(config.height), -1e6f, 1e6f);
    // A cube's outline is about 1.4 times its bounding radius across.
    const int side = std::max(1, static_cast<int>(1.4f * o.radius * point_scale * inv + 0.5f));
    const float half = 0.5f * static_cast<float>(side - 1);
    const int x0 = static_cast<int>(std::floor(cx - half)),
              y0 = static_cast<int>(std::floor(cy - half));
    p.x0 = static_cast<std::int16_t>(std::max(x0, 0));
    p.y0 = static_cast<std::int16_t>(std::max(y0, 0));
    p.x1 = static_cast<std::int16_t>(std::min(x0 + side - 1, config.width - 1));
    p.y1 = static_cast<std::int16_t>(std::min(y0 + side - 1, config.height - 1));
    if (p.x0 > p.x1 || p.y0 > p.y1) return false;
    p.depth = std::clamp((depth_b / near_w - depth_a) * 0.5f + 0.5f, 0.0f, 1.0f);
    const Material& mat = materials[d.material];
    glm::vec4 colour = mat.color * mesh_mean[d.mesh];
    if (mat.texture != kNoTexture) colour *= texture_mean[mat.texture];
    if (mat.shading != Shading::Unlit) {
      glm::vec3 sum = light.ambient + light.dir_color * seen_lit(to_eye, light.dir);
      for (int l = 0; l < light.point_count; ++l) {
        const PointLight& pl = light.points[l];
        const glm::vec3 t = pl.position - o.center;
        const float at = glm::length(t);
        if (!(at < pl.range) || !(at > 0.0f)) continue;
        const float f = 1.0f - at / pl.range;
        sum += pl.color * (f * f) * seen_lit(to_eye, t / at);
      }
      colour = glm::vec4(glm::vec3(colour) * sum, colour.a);
    }
    p.color = packed_rgba(glm::vec4(glm::vec3(colour), 1.0f));
    return true;
  }

  // Transforms, lights, clips and sets up the draws [begin, end) of the sorted list into `b`.
  void run_batch(Batch& b, std::vector<ClipVertex>& verts, std::size_t begin, std::size_t end,
                 const glm::mat4& view_proj, const Lighting& light) {
    b.clear();
    const std::span<const DrawItem> list = prep.draw_list();
    for (std::size_t k = begin; k < end && !b.overflow; ++k) {
      // Points were made with the batches' scan: only their 16 bytes are read, in order.
      if (as_point[k] != kMesh) [[unlikely]] {
        if (as_point[k] == kPoint) b.push(sorted_points[k]);
        continue;
      }
      // The sorted list reads the draws out of order: fetch a few ahead.
      if (k + kPrefetch < end) prefetch_draw(list[k + kPrefetch].object);
      const DrawCommand& d = draws[list[k].object];
      if (!valid(d)) {
        ++b.invalid;
        continue;
      }
      if (k >= phase_split && occluded[k]) continue;
      const Mesh& mesh = meshes[d.mesh];
      const Material& mat = materials[d.material];
      const DrawState& state = states[d.material];
      // The next mesh draw's own vertices are fetched while this one's are transformed.
      const VertexOverride* next = nullptr;
      std::size_t next_n = 0;
      if (k + 1 < end && as_point[k + 1] == kMesh) {
        const DrawCommand& nd = draws[list[k + 1].object];
        if (nd.vertices != nullptr && valid(nd)) {
          next = nd.vertices;
          next_n = meshes[nd.mesh].vertices().size();
        }
      }
      transform_and_light(mesh.vertices(), d.vertices, view_proj * d.model, d.model, mat, light,
                          viewport, verts.data(), b.screen.data(), next, next_n);
      const std::span<const std::uint32_t> idx = mesh.indices();
      b.triangles_in += idx.size() / 3;
      const bool cull = state.cull == raster::CullMode::Back;
      const raster::ScreenVertex* screen = b.screen.data();
      for (std::size_t t = 0; t + 2 < idx.size(); t += 3) {
        const std::uint32_t i0 = idx[t], i1 = idx[t + 1], i2 = idx[t + 2];
        // classify and setup's own early rejection from the per-vertex pass: most triangles of
        // a distant mesh cover no pixel centre and end here. A back face inside the guard band
        // ends there too (the sign of its snapped area, as setup decides); one to be clipped is
        // tested first, in clip space.
        const raster::ScreenVertex &s0 = screen[i0], &s1 = screen[i1], &s2 = screen[i2];
        switch (raster::classify_codes(s0.code, s1.code, s2.code)) {
          case raster::ClipClass::Outside:
            break;
          case raster::ClipClass::Inside: {
            if (((s0.code | s1.code | s2.code) & raster::kUnprojectable) != 0) break;
            const std::int32_t fx[3] = {s0.x, s1.x, s2.x}, fy[3] = {s0.y, s1.y, s2.y};
            std::int64_t area = 0;
            raster::PixelBox box{};
            if (raster::pixel_bounds(fx, fy, viewport, state.cull, area, box))
              emit_projected(b, {&verts[i0], &verts[i1], &verts[i2]}, {&s0, &s1, &s2}, area, box,
                             state, d.material);
            break;
          }
          case raster::ClipClass::Clip:
            if (cull && back_facing(verts[i0].position, verts[i1].position, verts[i2].position))
              break;
            emit_clip(b, verts[i0], verts[i1], verts[i2], state, d.material);
            break;
        }
      }
    }
    bin(b);
  }

  // Counting sort of the batch's triangles by tile: counts, offsets, then the indices.
  void bin(Batch& b) {
    if (b.overflow) return;
    std::uint32_t* off = b.tile_offsets.data();
    std::fill(off, off + tile_count + 1, 0u);
    std::size_t total = 0;
    const std::uint32_t made = b.made();
    const PrimBounds* bounds = b.bounds.data();
    for (std::uint32_t i = 0; i < made; ++i) {
      const PrimBounds& r = bounds[i];
      for (int ty = r.ty0; ty <= r.ty1; ++ty)
        for (int tx = r.tx0; tx <= r.tx1; ++tx) ++off[ty * tiles_x + tx + 1];
      total +=
          static_cast<std::size_t>(r.tx1 - r.tx0 + 1) * static_cast<std::size_t>(r.ty1 - r.ty0 + 1);
    }
    if (total > b.entries.size()) {
      b.overflow = true;
      b.entry_count = static_cast<std::uint32_t>(std::min<std::size_t>(total, 0xffffffffu));
      return;
    }
    for (int t = 0; t < tile_count; ++t) off[t + 1] += off[t];
    // Fill with a running cursor per tile, borrowed from the offsets (restored after).
    for (std::uint32_t i = 0; i < made; ++i) {
      const std::uint32_t ref = b.order[i];
      const PrimBounds& r = bounds[i];
      for (int ty = r.ty0; ty <= r.ty1; ++ty) {
        // The sub-strips of tile row ty that rows [min_y, max_y] touch.
        const int top = ty * tile;
        const auto first =
            static_cast<std::uint32_t>((std::max<int>(r.min_y, top) - top) / strip_rows);
        const auto last =
            static_cast<std::uint32_t>((std::min<int>(r.max_y, top + tile - 1) - top) / strip_rows);
        const std::uint32_t entry = ref | first << kEntryFirstShift | last << kEntryLastShift;
        for (int tx = r.tx0; tx <= r.tx1; ++tx) b.entries[off[ty * tiles_x + tx]++] = entry;
      }
    }
    for (int t = tile_count; t > 0; --t) off[t] = off[t - 1];
    off[0] = 0;
    b.entry_count = static_cast<std::uint32_t>(total);
  }

  void grow(Batch& b, std::size_t needed_entries) {
    const std::size_t tris = b.overflow && b.triangle_count == b.triangles.size()
                                 ? b.triangles.size() * 2
                                 : b.triangles.size();
    const std::size_t points = b.overflow && b.point_count == b.points.size()
                                   ? std::max<std::size_t>(b.points.size() * 2, 256)
                                   : b.points.size();
    SPINDLE_ASSERTF(tris <= kEntryIndexMask + 1 && points <= kEntryIndexMask + 1,
                    "renderer: a batch of %zu triangles and %zu points is more than a bin entry "
                    "can name",
                    tris, points);
    b.triangles.resize(tris);
    b.coarse.resize(tris);
    b.points.resize(points);
    b.order.resize(tris + points);
    b.bounds.resize(tris + points);
    b.entries.resize(std::max({b.entries.size(), tris * 2, points, needed_entries}));
    ++stats.grows;
    if (!logged_grow) {
      logged_grow = true;
      SPINDLE_LOG_INFO(Render,
                       "renderer: a geometry batch grew to %zu triangles, %zu points and %zu bin "
                       "entries (RendererConfig::triangles_per_batch is %u); logged once, counted "
                       "in Stats::grows",
                       b.triangles.size(), b.points.size(), b.entries.size(),
                       config.triangles_per_batch);
    }
  }

  void emit_debug(const glm::mat4& view_proj) {
    Batch& b = debug_batch;
    b.clear();
    const DebugTriangles n = debug.emit(view_proj, viewport, debug_world, debug_screen, debug_text);
    const auto group = [&](const std::vector<ClipVertex>& v, std::uint32_t count, int which) {
      const std::uint32_t index = debug_state(which);
      const DrawState& s = states[index];
      for (std::uint32_t t = 0; t < count; ++t)
        emit_clipped(b, v[3 * t], v[3 * t + 1], v[3 * t + 2], s, index);
    };
    // Sized for everything debug() can hold, so the loop runs once unless clipping multiplied
    // the triangles past that.
    for (bool first = true; first || b.overflow; first = false) {
      if (!first) {
        grow(b, b.entry_count);
        b.clear();
      }
      group(debug_world, n.world, 0);
      group(debug_screen, n.screen, 1);
      group(debug_text, n.text, 2);
      bin(b);
    }
  }

  // Cuts the sorted draws [begin, end) into batches (at least four per participant: near draws
  // cost more than far ones, and neither their number nor their bounds change the image), runs
  // them in parallel, grows and reruns any that overflowed, and counts them. On up to
  // jobs::kMinChunkWorkers participants the batches hold about equal triangles and each
  // participant takes its own band of them first, frame after frame (handed out in order they
  // were 7-10% slower on 2 workers in cubes 50,000). On more, they shrink along the list (the
  // share before batch c is 1 - (1 - c / count)^kGuided) and go out in order, costliest first, so
  // the pass ends with its workers together: at crowd 1,000 on 16 workers (replayed), 1.3 and 1.6
  // put the efficiency at 0.87-0.90 and 0.89-0.91, against 0.84-0.86 with equal triangles.
  static constexpr double kGuided = 1.6;
  void build_batches(jobs::JobSystem& jobs, std::uint32_t chunks, std::uint16_t tag,
                     std::size_t begin, std::size_t end) {
    const std::span<const DrawItem> list = prep.draw_list();
    const glm::mat4 view_proj = camera.view_projection();
    const Lighting light = lighting();
    const std::size_t n = end - begin;
    // Triangles before each draw: a parallel scan (each chunk counts its draws, then adds what
    // the chunks before it counted). The draws are in sort order, so reading them jumps around
    // memory: serially, 200,000 of them were the longest serial stretch of the frame.
    std::uint64_t* prefix = draw_triangles.data();
    prefix[0] = 0;
    const std::uint32_t scan_chunks = static_cast<std::uint32_t>(
        std::clamp<std::size_t>(n / 2048, 1,
                                std::min<std::size_t>({scan_sums.size(), chunk_points.size(),
                                                       4 * std::size_t{split_workers(jobs)}})));
    // Each draw's level of detail is decided here too, and a point made: it counts as one
    // triangle.
    core::for_each_chunk(jobs, scan_chunks, {"render_geometry", tag}, [&](std::uint32_t c) {
      const core::ChunkRange r = core::chunk_range(n, scan_chunks, c);
      std::uint64_t sum = 0;
      std::uint32_t points = 0;
      for (std::size_t k = r.begin; k < r.end; ++k) {
        if (k + kPrefetch < r.end) prefetch_draw(list[begin + k + kPrefetch].object);
        const DrawCommand& d = draws[list[begin + k].object];
        const bool drawn = valid(d) && !(begin + k >= phase_split && occluded[begin + k]);
        const Renderable& o = renderables[list[begin + k].object];
        const bool point = drawn && small_on_screen(o, view_proj);
        as_point[begin + k] = !point ? kMesh
                              : make_point(d, o, view_proj, light, sorted_points[begin + k])
                                  ? kPoint
                                  : kNoPoint;
        points += point ? 1u : 0u;
        sum += !drawn ? 0 : point ? 1 : meshes[d.mesh].triangle_count();
        prefix[k + 1] = sum;
      }
      scan_sums[c] = sum;
      chunk_points[c] = points;
    });
    for (std::uint32_t c = 0; c < scan_chunks; ++c) point_draws += chunk_points[c];
    std::uint64_t before = 0;
    for (std::uint32_t c = 0; c < scan_chunks; ++c) {
      const std::uint64_t sum = scan_sums[c];
      scan_sums[c] = before;
      before += sum;
    }
    core::for_each_chunk(jobs, scan_chunks, {"render_geometry", tag}, [&](std::uint32_t c) {
      const core::ChunkRange r = core::chunk_range(n, scan_chunks, c);
      const std::uint64_t offset = scan_sums[c];
      if (offset == 0) return;
      for (std::size_t k = r.begin; k < r.end; ++k) prefix[k + 1] += offset;
    });
    const std::uint64_t total = prefix[n];
    std::uint32_t count =
        std::clamp<std::uint32_t>(std::max(chunks, 4 * split_workers(jobs)), 1, config.max_batches);
    count = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(count, std::max<std::uint64_t>(total / 256, 1)));
    batch_count = count;
    // Many workers: batches shrink along the list and are handed out in order, the costliest
    // first. The draws are sorted front to back and near ones cost more per triangle (bigger on
    // screen: clipped, binned to more tiles): at crowd 1,000, batches of equal triangles took
    // 260 us the first, 120 us the last, and the pass ended on a long one started last.
    const bool guided = split_workers(jobs) > jobs::kMinChunkWorkers;
    const auto boundary = [&](std::uint32_t c) -> std::size_t {
      if (c == 0) return begin;
      if (c == count) return end;
      std::uint64_t target = total * c / count;
      if (guided) {
        const double left = 1.0 - static_cast<double>(c) / static_cast<double>(count);
        target = static_cast<std::uint64_t>(static_cast<double>(total) *
                                            (1.0 - std::pow(left, kGuided)));
      }
      return begin +
             static_cast<std::size_t>(std::lower_bound(prefix, prefix + n + 1, target) - prefix);
    };
    // Fixed units for a replay: their count already follows the workers (split_workers()), so
    // batches cut for 16 (Renderer::plan_for()) are not cut again.
    core::for_each_chunk(
        jobs, count, {"render_geometry", tag, jobs::Priority::Normal, true, guided},
        [&](std::uint32_t c) {
          run_batch(batches[c], batch_vertices[c], boundary(c), boundary(c + 1), view_proj, light);
        });
    // A batch that did not fit grows and runs again here, so nothing is dropped.
    for (std::uint32_t c = 0; c < count; ++c) {
      Batch& b = batches[c];
      while (b.overflow) {
        grow(b, b.entry_count);
        run_batch(b, batch_vertices[c], boundary(c), boundary(c + 1), view_proj, light);
      }
    }
    stats.batches += count;
    for (std::uint32_t c = 0; c < count; ++c) {
      stats.triangles_in += batches[c].triangles_in;
      stats.triangles_binned += batches[c].triangle_count;
      stats.bin_entries += batches[c].entry_count;
    }
  }

  // Whether the coarse depth buffer hides all of draw k's bounding box: every 8x8 block its
  // projection touches already holds only nearer pixels (with a margin far above the rounding
  // of interpolated depth). Boxes reaching behind the camera are never hidden.
  bool hidden(std::size_t k, const glm::mat4& view_proj) const {
    const Renderable& o = renderables[prep.draw_list()[k].object];
    float near_depth = 1.0f;
    float lo_x = 1e30f, lo_y = 1e30f, hi_x = -1e30f, hi_y = -1e30f;
    for (int corner = 0; corner < 8; ++corner) {
      const glm::vec3 offset((corner & 1) ? o.radius : -o.radius,
                             (corner & 2) ? o.radius : -o.radius,
                             (corner & 4) ? o.radius : -o.radius);
      const glm::vec4 p = view_proj * glm::vec4(o.center + offset, 1.0f);
      if (!(p.w > 1e-6f)) return false;
      const float inv = 1.0f / p.w;
      near_depth = std::min(near_depth, p.z * inv * 0.5f + 0.5f);
      const float x = (p.x * inv + 1.0f) * 0.5f * static_cast<float>(config.width);
      const float y = (1.0f - p.y * inv) * 0.5f * static_cast<float>(config.height);
      lo_x = std::min(lo_x, x), hi_x = std::max(hi_x, x);
      lo_y = std::min(lo_y, y), hi_y = std::max(hi_y, y);
    }
    if (!(near_depth > 0.0f)) return false;
    const int x0 = std::max(0, static_cast<int>(std::floor(lo_x)) - 1);
    const int y0 = std::max(0, static_cast<int>(std::floor(lo_y)) - 1);
    const int x1 = std::min(config.width - 1, static_cast<int>(std::ceil(hi_x)) + 1);
    const int y1 = std::min(config.height - 1, static_cast<int>(std::ceil(hi_y)) + 1);
    if (x0 > x1 || y0 > y1) return false;  // culling already dropped what is off screen
    const float test = near_depth - 1e-5f;
    for (int by = y0 / raster::kDepthBlock; by <= y1 / raster::kDepthBlock; ++by)
      for (int bx = x0 / raster::kDepthBlock; bx <= x1 / raster::kDepthBlock; ++bx)
        if (test < block_depth[static_cast<std::size_t>(by) * block_stride + bx]) return false;
    return true;
  }

  // One pass over the tiles, in as many bands of about equal cost as participants draw, each
  // band the costliest first: one job per tile, handed out one at a time (JobDesc::in_order),
  // each taking the next of its participant's band or, that band done, the costliest next of
  // another's, so that the last jobs to start are short ones and the workers finish together. A
  // tile's cost is what its items took the last time this pass ran, or before any such time its
  // binned triangles. The order cannot change the image: tiles are independent. A tile with more
  // than kSplitAboveMean times the average load is drawn as kMinBusyStrips strips of rows, each a
  // job of its own: every strip draws the tile's triangles in the same order, clipped to its
  // rows, so the image cannot change either. A crowd's busiest tile took 2 ms of a 17 ms pass
  // (recorded on 2 workers), twice what the whole pass gives each of 16 workers. A tile whose
  // load is more than a kItemsPerLane-th of a lane's share is cut into 2, 4 or 8 strips, until
  // each is less or it has kSubStrips: with few tiles per lane, whole ones (or quarters) leave a
  // tail. That rule depends on the lanes, as the tile size does (split_workers(): the planned
  // count, or the awake workers); below 8 lanes at 60 tiles it adds strips only where a tile
  // holds a quarter of the pass or more. The ordering table sorts each tile's triangles: its
  // tiles stay whole.
  // Returns how many of its jobs drew a strip.
  std::uint32_t raster_pass(jobs::JobSystem& jobs, std::uint16_t tag, bool first, bool last) {
    std::uint64_t total = 0;
    for (int t = 0; t < tile_count; ++t) {
      std::uint32_t entries = 0;
      for (std::uint32_t c = 0; c < batch_count; ++c)
        entries += batches[c].tile_offsets[t + 1] - batches[c].tile_offsets[t];
      tile_load[t] = entries;
      total += entries;
    }
    std::uint32_t items = 0;
    std::uint32_t strips = 0;
    const std::uint32_t lanes = std::min(split_workers(jobs), kMaxLanes);
    for (int t = 0; t < tile_count; ++t) {
      const std::uint64_t load = tile_load[t];
      // Strips: at least kMinBusyStrips for a busy tile, and enough that none costs more than a
      // kItemsPerLane-th of a lane's share (the tile's load spread evenly over its rows).
      std::uint32_t parts = 1;
      if (!ordering_table()) {
        if (load * tile_count > kSplitAboveMean * total) parts = kMinBusyStrips;
        while (parts < kSubStrips && load * lanes * kItemsPerLane > parts * total) parts *= 2;
      }
      if (parts == 1) {
        raster_items[items++] = static_cast<std::uint32_t>(t) << 8;
        tile_items[t] = 1;
        continue;
      }
      const raster::TileTarget whole = tile_target(t);
      const std::uint32_t before = items;
      const std::uint32_t per = kSubStrips / parts;
      for (std::uint32_t first = 0;
           first < kSubStrips && static_cast<int>(first) * strip_rows < whole.y1 - whole.y0;
           first += per, ++strips)
        raster_items[items++] =
            static_cast<std::uint32_t>(t) << 8 | kPartStrip | first << 3 | (first + per - 1);
      tile_items[t] = items - before;
    }
    // Each tile has a home lane, one per participant that draws: the tiles in raster order cut
    // into as many bands as lanes, of about equal cost. A participant draws its own band first,
    // so that it draws the rows of colour and depth its cache kept from the frame before, and
    // writes whole rows of tiles: two cores writing neighbouring tiles make each other's caches
    // fetch and drop lines (the prefetchers run along a row into the neighbour's tile). Handed
    // out costliest first from one list, two workers' raster pass at boids 100 (640x360, static
    // mode, 2 cores) took 0.34 ms of CPU where one worker takes 0.17, and as long: clear_tile
    // alone 2.7x. In bands, 0.235 ms, in 0.12. Within a band, costliest first (ties in tile and
    // strip order, so the order is the data's); a participant whose band is done takes the
    // costliest next item of any band (take_raster_item()).
    std::vector<std::uint64_t>& measured = tile_ns[first ? 0 : 1];
    const bool timed = std::any_of(measured.begin(), measured.begin() + tile_count,
                                   [](std::uint64_t ns) { return ns > 0; });
    const auto tile_cost = [&](std::uint32_t t) {
      return timed ? measured[t] : std::uint64_t{tile_load[t]};
    };
    const auto cost = [&](std::uint32_t item) {
      return tile_cost(item >> 8) / tile_items[item >> 8];
    };
    {
      // Each tile counts one more than its cost, so that empty tiles are shared out too.
      const auto tiles = static_cast<std::uint32_t>(tile_count);
      std::uint64_t all = 0;
      for (std::uint32_t t = 0; t < tiles; ++t) all += tile_cost(t) + 1;
      std::uint64_t before = 0;
      for (std::uint32_t t = 0; t < tiles; ++t) {
        const std::uint64_t mid = before + (tile_cost(t) + 1) / 2;
        tile_lane[t] =
            static_cast<std::uint8_t>(std::min<std::uint64_t>(mid * lanes / all, lanes - 1));
        before += tile_cost(t) + 1;
      }
    }
    const auto lane_of = [&](std::uint32_t item) { return std::uint32_t{tile_lane[item >> 8]}; };
    std::sort(raster_items.begin(), raster_items.begin() + items,
              [&](std::uint32_t a, std::uint32_t b) {
                const std::uint32_t la = lane_of(a), lb = lane_of(b);
                if (la != lb) return la < lb;
                const std::uint64_t ca = cost(a), cb = cost(b);
                return ca != cb ? ca > cb : a < b;
              });
    for (std::uint32_t l = 0, k = 0; l <= lanes; ++l) {
      while (k < items && lane_of(raster_items[k]) < l) ++k;
      lane_begin[l] = k;
      if (l < lanes) lane_next[l].value.store(k, std::memory_order_relaxed);
    }
    for (std::uint32_t k = 0; k < items; ++k) item_cost[k] = cost(raster_items[k]);
    // The items are the split: fixed by the image and the tile size (which the worker count
    // picks), whatever the mode. The image depends on neither. Each piece draws one item: the
    // next of its participant's lane, or when that lane is done, the next of another's.
    jobs::JobDesc desc{"render_raster", tag, jobs::Priority::Normal, true};
    desc.in_order = true;
    // Each piece picks its item (its band's costliest next, or any band's): a replay of the pass
    // on more workers hands the recorded items out costliest first, not in the order that the
    // recording's few workers took them.
    desc.costliest_first = true;
    core::for_each_chunk(jobs, items, desc, [&](std::uint32_t) {
      const std::uint32_t self = jobs.current_worker();
      const std::uint32_t home = self < lanes ? self : 0;
      const std::uint32_t k = take_raster_item(home, lanes, items);
      SPINDLE_ASSERT(k < items, "renderer: every raster piece finds an item to draw");
      const std::uint32_t item = raster_items[k];
      const auto start = std::chrono::steady_clock::now();
      // Counted on the stack, stored once: neighbouring items' counts share a cache line
      // between workers.
      TileCounts counts;
      counts.away = k < lane_begin[home] || k >= lane_begin[home + 1];
      raster_tile(static_cast<int>(item >> 8), item & 0xff, first, last, counts);
      counts.ns = static_cast<std::uint64_t>(std::max<std::int64_t>(
          1, std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                  start)
                 .count()));
      item_counts[k] = counts;
    });
    std::fill(measured.begin(), measured.begin() + tile_count, 0);
    for (std::uint32_t k = 0; k < items; ++k) measured[raster_items[k] >> 8] += item_counts[k].ns;
    for (std::uint32_t k = 0; k < items; ++k) {
      stats.tile_triangles += item_counts[k].tested;
      stats.tile_triangles_hidden += item_counts[k].hidden;
      stats.tiles_away += item_counts[k].away ? 1u : 0u;
    }
    return strips;
  }

  // The next raster item for a participant whose home lane is `home`: its own lane's next, or,
  // that lane done, the next of the lane whose next costs most (each lane is costliest first), so
  // that a busy tile in a band nobody has reached yet starts before the cheap ones around it.
  // Taking the lanes in turn instead, the last of 16 workers started a crowd's 280 us strip after
  // the pass's other work was nearly done. items: when every item is taken.
  std::uint32_t take_raster_item(std::uint32_t home, std::uint32_t lanes, std::uint32_t items) {
    const auto take = [&](std::uint32_t l) {
      if (lane_next[l].value.load(std::memory_order_relaxed) >= lane_begin[l + 1]) return items;
      const std::uint32_t taken = lane_next[l].value.fetch_add(1, std::memory_order_relaxed);
      return taken < lane_begin[l + 1] ? taken : items;
    };
    if (const std::uint32_t k = take(home); k < items) return k;
    for (;;) {
      std::uint32_t best = lanes;
      std::uint64_t best_cost = 0;
      for (std::uint32_t l = 0; l < lanes; ++l) {
        const std::uint32_t next = lane_next[l].value.load(std::memory_order_relaxed);
        if (next >= lane_begin[l + 1]) continue;
        if (best == lanes || item_cost[next] > best_cost) best = l, best_cost = item_cost[next];
      }
      if (best == lanes) return items;
      if (const std::uint32_t k = take(best); k < items) return k;
    }
  }

  // --- raster -----------------------------------------------------------------------------------

  raster::TileTarget tile_target(int t) {
    const int tx = t % tiles_x, ty = t / tiles_x;
    raster::TileTarget tile;
    tile.color = color.data();
    tile.depth = depth.data();
    tile.stride = color.stride();
    tile.x0 = tx * this->tile;
    tile.y0 = ty * this->tile;
    tile.x1 = std::min(tile.x0 + this->tile, config.width);
    tile.y1 = std::min(tile.y0 + this->tile, config.height);
    if (!ordering_table()) {
      tile.block_max_depth = block_depth.data();
      tile.block_stride = block_stride;
    }
    return tile;
  }

  // part: 0 for every entry of tile t, else those touching its sub-strips (the item's low byte).
  // Counts the triangles it tests and those hidden.
  void draw_bins(const Batch& b, int t, std::uint32_t part, const raster::TileTarget& tile,
                 TileCounts& counts) {
    const std::uint32_t* e = b.entries.data();
    const std::uint32_t lo = (part >> 3) & 7u, hi = part & 7u;
    const std::uint32_t end = b.tile_offsets[t + 1];
    for (std::uint32_t k = b.tile_offsets[t]; k < end; ++k) {
      if (part != 0 &&
          (((e[k] >> kEntryFirstShift) & 7u) > hi || ((e[k] >> kEntryLastShift) & 7u) < lo))
        continue;
      if ((e[k] & kEntryPoint) != 0) {
        raster::fill_point(b.points[e[k] & kEntryIndexMask], true, tile);
        continue;
      }
      // Entries name triangles all over the batch, and in a deep scene most are hidden: test
      // those against the coarse depth buffer from 12 bytes, not a whole Triangle.
      const std::uint32_t index = e[k] & kEntryIndexMask;
      ++counts.tested;
      if (raster::hidden_in_tile(b.coarse[index], tile)) {
        ++counts.hidden;
        continue;
      }
      const Triangle& tri = b.triangles[index];
      raster::rasterize_shown(tri, states[tri.state], tile);
    }
  }

  std::uint32_t bucket(float depth) const {
    const float d = std::clamp(depth, 0.0f, 1.0f);
    return static_cast<std::uint32_t>(d * static_cast<float>(config.ordering_buckets - 1));
  }

  // first: clear the tile first (the frame's first pass); last: draw the debug batch after.
  // part: 0 for the whole tile, kPartStrip | lo << 3 | hi for its rows
  // [lo strip_rows, (hi + 1) strip_rows).
  void raster_tile(int t, std::uint32_t part, bool first, bool last, TileCounts& counts) {
    raster::take_pixel_count();
    raster::TileTarget tile = tile_target(t);
    if (part != 0) {
      const int top = tile.y0;
      tile.y0 = top + static_cast<int>((part >> 3) & 7u) * strip_rows;
      tile.y1 = std::min(tile.y1, top + static_cast<int>((part & 7u) + 1) * strip_rows);
    }
    if (first) {
      raster::clear_tile(tile, packed_rgba(config.clear_color), 1.0f);
    }
    if (!ordering_table()) {
      for (std::uint32_t k = 0; k < batch_count; ++k) draw_bins(batches[k], t, part, tile, counts);
    } else {
      // The ordering table: this tile's triangles bucketed by depth, drawn farthest first;
      // equal buckets keep draw order (a stable counting sort over a fixed bucket count).
      // Tile t's scratch is [2 base[t], 2 base[t + 1]): its references, then the sort's copy.
      const std::uint32_t n = ot_tile_base[t + 1] - ot_tile_base[t];
      std::uint64_t* refs = ot_refs.data() + 2 * static_cast<std::size_t>(ot_tile_base[t]);
      std::uint64_t* sorted = refs + n;
      std::uint32_t m = 0;
      for (std::uint32_t k = 0; k < batch_count; ++k) {
        const Batch& b = batches[k];
        for (std::uint32_t e = b.tile_offsets[t]; e < b.tile_offsets[t + 1]; ++e) {
          const std::uint32_t ref = b.entries[e] & kEntryRefMask;
          const float depth = (ref & kEntryPoint) != 0 ? b.points[ref & kEntryIndexMask].depth
                                                       : b.triangles[ref].sort_depth;
          const std::uint64_t far_first = config.ordering_buckets - 1 - bucket(depth);
          refs[m++] = far_first << 48 | std::uint64_t{k} << 32 | ref;
        }
      }
      SPINDLE_ASSERT(m == n, "ordering table: every binned triangle of the tile is sorted");
      // Radix over the 16 bucket bits in two byte passes keeps equal keys in draw order.
      std::uint32_t count[256];
      std::uint64_t* from = refs;
      std::uint64_t* to = sorted;
      for (int shift = 48; shift < 64; shift += 8) {
        std::fill(count, count + 256, 0u);
        for (std::uint32_t k = 0; k < m; ++k) ++count[(from[k] >> shift) & 0xff];
        std::uint32_t sum = 0;
        for (std::uint32_t& x : count) {
          const std::uint32_t v = x;
          x = sum;
          sum += v;
        }
        for (std::uint32_t k = 0; k < m; ++k) to[count[(from[k] >> shift) & 0xff]++] = from[k];
        std::swap(from, to);
      }
      for (std::uint32_t k = 0; k < m; ++k) {
        const Batch& b = batches[(from[k] >> 32) & 0xffff];
        const auto ref = static_cast<std::uint32_t>(from[k]);
        if ((ref & kEntryPoint) != 0) {
          raster::fill_point(b.points[ref & kEntryIndexMask], false, tile);
          continue;
        }
        const Triangle& tri = b.triangles[ref];
        raster::rasterize_triangle(tri, states[tri.state], tile);
      }
    }
    if (last) draw_bins(debug_batch, t, part, tile, counts);
    // Strips of one tile may end at the same time.
    std::atomic_ref<std::uint64_t>(tile_pixels[t])
        .fetch_add(raster::take_pixel_count(), std::memory_order_relaxed);
  }
};

Renderer::Renderer(const RendererConfig& config) : impl_(std::make_unique<Impl>(config)) {}
Renderer::~Renderer() = default;

core::Result<MeshId> Renderer::add_mesh(Mesh mesh) {
  Impl& m = *impl_;
  if (mesh.vertices().empty() || mesh.indices().empty())
    return core::Status::error("renderer: mesh '" + mesh.name() +
                               "' is empty (make meshes with Mesh::create)");
  const auto id = static_cast<MeshId>(m.meshes.size());
  m.max_mesh_vertices =
      std::max(m.max_mesh_vertices, static_cast<std::uint32_t>(mesh.vertices().size()));
  glm::vec4 mean(0.0f);
  for (const Vertex& v : mesh.vertices()) mean += v.color;
  m.mesh_mean.push_back(mean / static_cast<float>(mesh.vertices().size()));
  for (auto& v : m.batch_vertices) v.resize(m.max_mesh_vertices);
  for (auto& b : m.batches) b.screen.resize(m.max_mesh_vertices);
  m.meshes.push_back(std::move(mesh));
  return id;
}

core::Result<MeshId> Renderer::add_mesh(const MeshDesc& desc) {
  core::Result<Mesh> mesh = Mesh::create(desc);
  if (!mesh) return mesh.status();
  return add_mesh(std::move(mesh.value()));
}

core::Result<TextureId> Renderer::add_texture(Texture texture) {
  Impl& m = *impl_;
  if (texture.level_count() == 0)
    return core::Status::error("renderer: texture '" + texture.name() +
                               "' is empty (make textures with Texture::create)");
  const auto id = static_cast<TextureId>(m.textures.size());
  m.textures.push_back(std::make_unique<Texture>(std::move(texture)));
  // A point's texel: the mean of the smallest level (1x1 with mipmaps: already the mean).
  const TextureView& view = m.textures.back()->view();
  const MipLevel& level = view.levels[view.level_count - 1];
  glm::dvec4 sum(0.0);
  const std::size_t texels = static_cast<std::size_t>(level.width) * level.height;
  for (std::size_t i = 0; i < texels; ++i)
    for (int c = 0; c < 4; ++c) sum[c] += static_cast<double>((level.texels[i] >> (8 * c)) & 0xffu);
  m.texture_mean.push_back(
      glm::vec4(sum / (255.0 * static_cast<double>(std::max<std::size_t>(texels, 1)))));
  return id;
}

core::Result<MaterialId> Renderer::add_material(const Material& material) {
  Impl& m = *impl_;
  if (material.texture != kNoTexture && material.texture >= m.textures.size())
    return core::Status::error("material '" + material.name + "': texture " +
                               std::to_string(material.texture) + " does not exist (" +
                               std::to_string(m.textures.size()) + " textures)");
  for (int i = 0; i < 4; ++i)
    if (!std::isfinite(material.color[i]))
      return core::Status::error("material '" + material.name + "': colour is not finite");
  const auto id = static_cast<MaterialId>(m.materials.size());
  m.materials.push_back(material);
  m.rebuild_states();
  return id;
}

const Mesh& Renderer::mesh(MeshId id) const {
  SPINDLE_ASSERTF(id < impl_->meshes.size(), "renderer: mesh %u does not exist", id);
  return impl_->meshes[id];
}

void Renderer::set_camera(const Camera& camera) {
  impl_->camera = camera;
}
const Camera& Renderer::camera() const {
  return impl_->camera;
}
Lights& Renderer::lights() {
  return impl_->lights;
}
DebugDraw& Renderer::debug() {
  return impl_->debug;
}
const RendererConfig& Renderer::config() const {
  return impl_->config;
}

std::span<DrawCommand> Renderer::begin_frame(std::uint32_t count, bool clear) {
  impl_->draw_count = 0;
  impl_->stats.draws_refused = 0;
  return append_draws(count, clear);
}

std::span<DrawCommand> Renderer::append_draws(std::uint32_t count, bool clear) {
  Impl& m = *impl_;
  const auto room = static_cast<std::uint32_t>(m.draws.size()) - m.draw_count;
  const std::uint32_t taken = std::min(count, room);
  m.stats.draws_refused += count - taken;
  if (taken < count && !m.logged_refused) {
    m.logged_refused = true;
    SPINDLE_LOG_WARNING(Render,
                        "renderer: %u more draws asked for, %u taken (RendererConfig::max_draws "
                        "is %zu); logged once, counted in Stats::draws_refused",
                        count, taken, m.draws.size());
  }
  DrawCommand* first = m.draws.data() + m.draw_count;
  if (clear) std::fill(first, first + taken, DrawCommand{});
  m.draw_count += taken;
  return {first, taken};
}

bool Renderer::submit(const DrawCommand& draw) {
  Impl& m = *impl_;
  if (m.draw_count == m.draws.size()) {
    ++m.stats.draws_refused;
    return false;
  }
  m.draws[m.draw_count++] = draw;
  return true;
}

void Renderer::prepare(jobs::JobSystem& jobs, std::uint32_t chunks, std::uint16_t tag) {
  Impl& m = *impl_;
  const std::uint32_t n = m.draw_count;
  const Camera& cam = m.camera;
  const glm::vec3 forward = glm::normalize(cam.target - cam.position);
  // A draw naming no mesh or material is placed behind the camera, so culling drops it.
  const glm::vec3 nowhere = cam.position - forward * (cam.far_plane + 1.0f) * 4.0f;
  chunks = std::clamp<std::uint32_t>(chunks, 1, static_cast<std::uint32_t>(m.chunk_invalid.size()));
  chunks = std::min(chunks, std::max(n / 512, 1u));
  core::for_each_chunk(jobs, chunks, {"render_bounds", tag}, [&](std::uint32_t c) {
    const core::ChunkRange r = core::chunk_range(n, chunks, c);
    std::uint32_t invalid = 0;
    for (std::size_t i = r.begin; i < r.end; ++i) {
      const DrawCommand& d = m.draws[i];
      Renderable& o = m.renderables[i];
      if (!m.valid(d)) {
        o = Renderable{nowhere, 0.0f, 0, 0, 0, false};
        ++invalid;
        continue;
      }
      const Mesh& mesh = m.meshes[d.mesh];
      // The longest axis (one square root: sqrt is monotonic and correctly rounded, so this is
      // the largest of the three lengths to the bit).
      const auto length2 = [](const glm::vec4& c) { return c.x * c.x + c.y * c.y + c.z * c.z; };
      const float scale =
          std::sqrt(std::max({length2(d.model[0]), length2(d.model[1]), length2(d.model[2])}));
      o.center = glm::vec3(d.model * glm::vec4(mesh.bounds_center(), 1.0f));
      // Skinned vertices may leave the bind pose's sphere: twice its radius covers a walk.
      o.radius = mesh.bounds_radius() * scale * (d.vertices != nullptr ? 2.0f : 1.0f);
      o.material = d.material;
      o.mesh = d.mesh;
      o.layer = d.layer;
      o.translucent = m.materials[d.material].translucent;
    }
    m.chunk_invalid[c] = invalid;
  });
  std::uint32_t invalid = 0;
  for (std::uint32_t c = 0; c < chunks; ++c) invalid += m.chunk_invalid[c];
  m.stats.invalid_draws += invalid;
  if (invalid > 0 && !m.logged_invalid) {
    m.logged_invalid = true;
    SPINDLE_LOG_WARNING(Render,
                        "renderer: %u draws name a mesh or material that does not exist; they are "
                        "skipped (logged once, counted in Stats::invalid_draws)",
                        invalid);
  }
  m.prep.prepare(jobs, cam, std::span<const Renderable>(m.renderables.data(), n), chunks, tag);
  m.stats.draws = n;
  m.stats.draws_visible = static_cast<std::uint32_t>(m.prep.draw_list().size());
}

void Renderer::geometry(jobs::JobSystem& jobs, std::uint32_t chunks, std::uint16_t tag) {
  Impl& m = *impl_;
  m.choose_tile(m.split_workers(jobs));
  const std::size_t n = m.prep.draw_list().size();
  Stats& s = m.stats;
  s.batches = 0;
  s.triangles_in = 0;
  s.triangles_binned = 0;
  s.bin_entries = 0;
  // Planes deferred to the tiles while a third or more of the triangles they tested last frame
  // were hidden (and on the first frame); the image is the same either way. The ordering table
  // has no coarse depth buffer: it never defers.
  m.defer_planes = !m.ordering_table() &&
                   (s.tile_triangles == 0 || 3 * s.tile_triangles_hidden >= s.tile_triangles);
  s.tile_triangles = 0;
  s.tile_triangles_hidden = 0;
  // With a depth buffer and enough draws, the nearest eighth goes first; raster() tests the rest
  // against the depth it leaves (draws are sorted front to back, so that is most of what hides
  // the others) and draws only what may show.
  m.phase_split = n;
  if (!m.ordering_table() && m.config.occlusion_culling && n >= 256)
    m.phase_split = std::max<std::size_t>(n / 8, 128);
  m.pass_chunks = chunks;
  m.point_draws = 0;
  const glm::mat4 projection = m.camera.projection();
  m.point_scale = 0.5f * static_cast<float>(m.config.height) * projection[1][1];
  m.depth_a = projection[2][2];
  m.depth_b = projection[3][2];
  m.build_batches(jobs, chunks, tag, 0, m.phase_split);
  m.emit_debug(m.camera.view_projection());

  if (m.ordering_table()) {
    // Each tile's scratch holds twice its entry count (the sort ping-pongs between halves).
    std::uint32_t base = 0;
    for (int t = 0; t < m.tile_count; ++t) {
      m.ot_tile_base[t] = base;
      for (std::uint32_t c = 0; c < m.batch_count; ++c)
        base += m.batches[c].tile_offsets[t + 1] - m.batches[c].tile_offsets[t];
    }
    m.ot_tile_base[m.tile_count] = base;
    if (m.ot_refs.size() < 2 * static_cast<std::size_t>(base)) {
      // Headroom, so a scene that moves a little does not grow again next frame.
      m.ot_refs.resize(3 * static_cast<std::size_t>(base));
      ++s.grows;
    }
  }
}

void Renderer::raster(jobs::JobSystem& jobs, std::uint32_t chunks, std::uint16_t tag) {
  Impl& m = *impl_;
  (void)chunks;  // one job per tile: the tiles are the split
  const std::size_t n = m.prep.draw_list().size();
  std::fill(m.tile_pixels.begin(), m.tile_pixels.end(), std::uint64_t{0});
  const bool second = m.phase_split < n;
  m.stats.tiles_away = 0;
  m.stats.tile_strips = m.raster_pass(jobs, tag, true, !second);
  m.occluded_count = 0;
  if (second) {
    // Occlusion test of the remaining draws in parallel (each writes its own flag), then their
    // geometry and a second pass over the tiles, which keeps what the first one drew.
    const glm::mat4 view_proj = m.camera.view_projection();
    const std::size_t rest = n - m.phase_split;
    const auto test_chunks =
        static_cast<std::uint32_t>(std::clamp<std::size_t>(rest / 512, 1, m.chunk_occluded.size()));
    // As many tests as the data asks for, whatever the workers: fixed units.
    core::for_each_chunk(jobs, test_chunks, {"render_occlusion", tag, jobs::Priority::Normal, true},
                         [&](std::uint32_t c) {
                           const core::ChunkRange r = core::chunk_range(rest, test_chunks, c);
                           std::uint32_t hidden = 0;
                           for (std::size_t k = m.phase_split + r.begin; k < m.phase_split + r.end;
                                ++k) {
                             const bool h = m.hidden(k, view_proj);
                             m.occluded[k] = h ? 1 : 0;
                             hidden += h ? 1u : 0u;
                           }
                           m.chunk_occluded[c] = hidden;
                         });
    for (std::uint32_t c = 0; c < test_chunks; ++c) m.occluded_count += m.chunk_occluded[c];
    m.build_batches(jobs, m.pass_chunks, tag, m.phase_split, n);
    m.stats.tile_strips += m.raster_pass(jobs, tag, false, true);
  }
  std::uint64_t pixels = 0;
  for (std::uint64_t p : m.tile_pixels) pixels += p;
  m.stats.pixels = pixels;
  m.stats.draws_occluded = m.occluded_count;
  m.stats.draws_as_points = m.point_draws;
  m.stats.tiles = static_cast<std::uint32_t>(m.tile_count);
  ++m.stats.frames;
  m.debug.clear();
}

void Renderer::plan_for(std::uint32_t workers) {
  impl_->planned_workers = workers;
}

std::uint32_t Renderer::planned_workers() const {
  return impl_->planned_workers;
}

void Renderer::render(jobs::JobSystem& jobs, std::uint16_t tag) {
  const std::uint32_t chunks = 4 * impl_->split_workers(jobs);
  prepare(jobs, chunks, tag);
  geometry(jobs, chunks, tag);
  raster(jobs, chunks, tag);
}

const Image& Renderer::image() const {
  return impl_->color;
}
std::uint64_t Renderer::image_hash() const {
  return impl_->color.hash();
}
core::Status Renderer::screenshot(const std::string& path) const {
  return write_png(impl_->color, path);
}
Renderer::Stats Renderer::stats() const {
  return impl_->stats;
}

}  // namespace spindle::render
