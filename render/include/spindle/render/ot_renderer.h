// render::OtRenderer: the tiny-target profile's renderer, the PS1 way, in integers only (no FPU,
// no threads, no heap after construction). Vertices and transforms are Q20.12 (core::fixed); a
// draw rotates, translates and projects its vertices as the PS1's GTE did (one 32-bit division
// a vertex), rejects back faces and what crosses the near plane or leaves the guard band, and
// links each triangle or sprite into an ordering table: depth buckets that the rasteriser then
// draws from far to near into a 16-bit RGB555 framebuffer, with no depth buffer. Triangles are
// flat-shaded or texture-mapped affinely; flat primitives fade into the fog colour with distance
// (the GTE's depth cue), textured ones are drawn as their texels are.
//
// Memory: the framebuffer, the ordering table, the primitive pool and two resource caches
// (core::ResourceCache: meshes and sprite textures) are taken once in the constructor, from a
// BudgetArena when given. Meshes and textures are registered as sources that stay in the
// caller's memory (the ROM or disc of a console) and are loaded into the caches when drawn.
// Panic modes, each counted in Stats and logged once through the arena:
//   - primitive pool full: the farthest primitives of the frame are dropped (the draw distance
//     shrinks for that frame), nearer ones still get in;
//   - every texture slot locked by what this frame already queued: a sprite is drawn as a flat
//     tile of its texture's mean colour, a textured mesh with its flat colours.
//
// Usage:
//
//   using spindle::core::fixed;
//   spindle::render::OtRenderer ot({.width = 320, .height = 240}, budget.arena("render"));
//   static const spindle::render::FixedVec3 kPyramid[] = {...};      // lives as long as ot
//   auto mesh = ot.add_mesh({.positions = kPyramid, .indices = kTris, .colors = kFaceColours});
//   auto tex = ot.add_texture({.width = 16, .height = 16, .texels = kEnemyTexels});
//   ot.set_camera(spindle::render::look_at(eye, target, up));
//   ...every frame:
//   ot.begin_frame();
//   ot.draw(floor.value(), {}, spindle::render::OtRenderer::Order::Backdrop);  // under the rest
//   ot.draw(mesh.value(), spindle::render::FixedTransform::translation({x, y, z}));
//   ot.draw_sprite({x, y, z}, fixed::from_int(2), tex.value());
//   ot.draw_sprites(n, fixed::from_int(2), tex.value(), 0, [&](std::uint32_t i) {
//     return spindle::render::FixedVec3{enemy[i].x, fixed::one(), enemy[i].y};
//   });
//   ot.rasterize();                 // the GPU's part: counted apart from the rest
//   ot.framebuffer();               // RGB555, width x height; to_image() for a PNG
//
// Conventions: view space has x to the right, y down the screen and z into it; a triangle is
// front-facing when its vertices run counter-clockwise as seen on the screen, as in OpenGL and
// the desktop Renderer. look_at() takes a right-handed world with y up. Screen positions keep 4
// bits below the pixel; pixel centres are sampled and edges follow the top-left rule, so triangles
// sharing an edge neither overlap nor leave gaps. The image is a pure function of the registered
// resources, the camera and the draws: the same bits on every CPU.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <spindle/base/budget.h>
#include <spindle/base/cache.h>
#include <spindle/base/fixed.h>
#include <spindle/base/result.h>

namespace spindle::render {

class Image;

struct FixedVec3 {
  core::fixed x, y, z;
};

// p' = r p + t: rows of a rotation (entries in [-1, 1]) and a translation, all Q20.12.
struct FixedTransform {
  core::fixed r[3][3] = {
      {core::fixed::one(), {}, {}}, {{}, core::fixed::one(), {}}, {{}, {}, core::fixed::one()}};
  FixedVec3 t{};

  static FixedTransform translation(FixedVec3 t);
  // A turn about the y axis that takes model +x to (c, 0, s): an object facing the unit
  // direction (c, s) of the xz plane, with no trigonometry.
  static FixedTransform rotation_y(core::fixed c, core::fixed s);
};
FixedTransform operator*(const FixedTransform& a, const FixedTransform& b);  // a after b
FixedVec3 apply(const FixedTransform& m, FixedVec3 p);
// The view transform of a camera at `eye` looking at `target`, `up` roughly up (y up in the
// world; not along the view direction). Directions are normalised with fixed::sqrt.
FixedTransform look_at(FixedVec3 eye, FixedVec3 target, FixedVec3 up);

// RGB555 as the PS1 stored it: 5 bits each, red lowest.
constexpr std::uint16_t rgb555(std::uint32_t r, std::uint32_t g, std::uint32_t b) {
  return static_cast<std::uint16_t>((r >> 3) | ((g >> 3) << 5) | ((b >> 3) << 10));
}

using OtMeshId = std::uint32_t;
using OtTextureId = std::uint32_t;
inline constexpr OtTextureId kNoOtTexture = 0xffffffffu;

// A mesh in the caller's memory: positions, triangles (three indices each) and one RGB555
// colour per triangle (flat shading). With a texture (registered first, power-of-two sides) and
// a (u, v) pair of texel coordinates per vertex, the triangles are texture-mapped affinely, as
// the PS1 did, coordinates wrapping within the texture; the colours are then what is drawn in
// the panic mode, when no texture slot is free.
struct OtMeshDesc {
  std::span<const FixedVec3> positions;
  std::span<const std::uint16_t> indices;
  std::span<const std::uint16_t> colors;
  bool cull_back = true;
  OtTextureId texture = kNoOtTexture;
  std::span<const std::uint8_t> uvs{};  // u, v per vertex (0..255)
};
// A sprite texture in the caller's memory: RGB555 texels, row after row. A texel of 0 is
// transparent; opaque black is 0x8000 (bit 15, the PS1's STP bit, is ignored when shown).
struct OtTextureDesc {
  int width = 0;
  int height = 0;
  std::span<const std::uint16_t> texels;
};

struct OtConfig {
  int width = 320;
  int height = 240;
  int focal = 256;                      // the GTE's H: projection distance in pixels (<= 511)
  std::uint32_t ot_buckets = 256;       // depth buckets
  std::uint32_t max_primitives = 4096;  // a frame's triangles and sprites (<= 65,535)
  core::fixed near_z = core::fixed::one();
  core::fixed far_z = core::fixed::from_int(1024);  // the draw distance
  core::fixed fog_start = core::fixed::from_int(256);
  std::uint16_t fog_color = rgb555(16, 16, 24);
  std::uint16_t clear_color = rgb555(16, 16, 24);
  std::uint32_t max_meshes = 32;  // registrations
  std::uint32_t max_textures = 32;
  std::uint32_t max_mesh_vertices = 256;  // per mesh
  // The caches: how many meshes and textures are resident at once, and each one's most bytes.
  std::uint32_t mesh_slots = 8;
  std::size_t mesh_slot_bytes = 4096;
  std::uint32_t texture_slots = 8;
  std::size_t texture_slot_bytes = 2048;
};

class OtRenderer {
 public:
  // Takes all its memory now, from `arena` when given. Sizes that do not fit there (or a config
  // out of range: see valid()) leave a renderer that draws nothing and says why in error().
  explicit OtRenderer(const OtConfig& config = {}, core::BudgetArena* arena = nullptr);
  ~OtRenderer();
  OtRenderer(const OtRenderer&) = delete;
  OtRenderer& operator=(const OtRenderer&) = delete;

  bool valid() const { return error_ == nullptr; }
  const char* error() const { return error_ == nullptr ? "" : error_; }

  // Registration, at start-up. The source must outlive the renderer. Errors name the problem
  // (an index out of range, too many vertices, more bytes than a cache slot, ...).
  core::Result<OtMeshId> add_mesh(const OtMeshDesc& desc);
  core::Result<OtTextureId> add_texture(const OtTextureDesc& desc);

  void set_camera(const FixedTransform& view) { view_ = view; }
  const FixedTransform& camera() const { return view_; }

  // Empties the ordering table and unlocks the textures the last frame held.
  void begin_frame();
  // Where a draw's triangles go in the ordering table.
  enum class Order : std::uint8_t {
    Sorted,    // by each triangle's mean depth
    Backdrop,  // all in the farthest bucket, under everything else: a floor or a sky, whose large
               // triangles would otherwise sort in front of the small objects standing on them
  };
  // Transforms, culls and queues a mesh's triangles. false: nothing was queued (behind the
  // camera, past the draw distance, an unknown id, or the mesh could not be loaded).
  bool draw(OtMeshId mesh, const FixedTransform& model, Order order = Order::Sorted);
  // A sprite facing the camera, centred on `position`, `size` world units across; with a
  // texture, scaled texels (0 transparent), else a flat tile of `color`.
  bool draw_sprite(FixedVec3 position, core::fixed size, OtTextureId texture,
                   std::uint16_t color = rgb555(255, 255, 255));
  // Many sprites of one size and texture: draw_sprite() at position_of(i) for i < count
  // (FixedVec3 position_of(std::uint32_t)), with the texture locked once and the loop inlined,
  // the way a swarm or particles are drawn. Returns how many were queued.
  template <class PositionOf>
  std::uint32_t draw_sprites(std::uint32_t count, core::fixed size, OtTextureId texture,
                             std::uint16_t color, PositionOf&& position_of) {
    const SpriteBatch batch = begin_sprites(size, texture, color);
    std::uint32_t queued = 0;
    if (batch.valid) {
      for (std::uint32_t i = 0; i < count; ++i) queued += queue_sprite(batch, position_of(i));
    }
    end_sprites(batch, count, queued);
    return queued;
  }
  // Draws the ordering table, far to near, into the framebuffer (cleared first).
  void rasterize();

  std::span<const std::uint16_t> framebuffer() const;  // width x height RGB555
  std::uint64_t framebuffer_hash() const;              // the same on every CPU
  // The framebuffer as RGBA8 (5-bit channels widened), for a PNG or a golden image.
  void to_image(Image& out) const;

  struct Stats {
    std::uint64_t frames = 0;
    std::uint32_t draws = 0;             // meshes and sprites asked for this frame
    std::uint32_t culled_objects = 0;    // draws rejected whole (view, distance)
    std::uint32_t triangles_in = 0;      // of the meshes drawn
    std::uint32_t culled_triangles = 0;  // back faces, near plane, guard band, no pixel
    std::uint32_t primitives = 0;        // queued this frame
    std::uint32_t dropped_far = 0;       // panic: the pool was full, the farthest went
    std::uint32_t drawn_flat = 0;        // panic: no texture slot free, drawn flat (sprites
                                         // and textured triangles)
    std::uint32_t invalid_draws = 0;     // unknown ids, failed loads
    std::uint64_t pixels = 0;            // written by the last rasterize()
  };
  const Stats& stats() const { return stats_; }
  const core::CacheStats& mesh_cache() const;
  const core::CacheStats& texture_cache() const;
  const OtConfig& config() const { return config_; }
  std::size_t footprint() const { return footprint_; }  // bytes taken at construction

 private:
  enum class PrimKind : std::uint8_t { Triangle, TexturedTriangle, Tile, Sprite };
  struct Prim {
    // Triangles: the three vertices in 1/16 pixel, clockwise as seen (the rasteriser's order).
    // Tile and Sprite: the pixel rectangle [x[0], x[1]) x [y[0], y[1]), unclipped.
    std::int16_t x[3];
    std::int16_t y[3];
    std::uint16_t color;
    std::uint16_t next;  // the next primitive of the bucket + 1, 0 at its end
    PrimKind kind;
    std::uint8_t texture;  // Sprite, TexturedTriangle: its entry in locked_
    std::uint8_t u[3];     // TexturedTriangle: texel coordinates of the vertices
    std::uint8_t v[3];
  };
  // The entry in locked_ of `texture`, locked for this frame on first use; -1 in the panic mode
  // (every slot held), counted by the caller.
  int lock_texture(OtTextureId texture);
  // What the sprites of one draw_sprites() share, copied out of the renderer so that the loop
  // keeps them in registers (writes to the pool could alias the renderer's members).
  struct SpriteBatch {
    bool valid = false;
    PrimKind kind = PrimKind::Tile;
    std::uint8_t texture = 0;
    std::uint16_t color = 0;    // a flat tile's, before fog
    std::int32_t half = 0;      // half the size, raw
    std::int64_t r[3][3] = {};  // the camera, raw
    std::int64_t t[3] = {};
    std::int32_t near = 0, far = 0, width = 0, height = 0;
    std::int64_t focal_shifted = 0, half_width16 = 0, half_height16 = 0;
    std::uint64_t ot_mul = 0;
  };
  SpriteBatch begin_sprites(core::fixed size, OtTextureId texture, std::uint16_t color);
  void end_sprites(const SpriteBatch& batch, std::uint32_t count, std::uint32_t queued);
  // One sprite: the camera's transform of its centre, one division, its rectangle, its bucket.
  bool queue_sprite(const SpriteBatch& b, FixedVec3 at) {
    const std::int64_t x = at.x.raw(), y = at.y.raw(), z = at.z.raw();
    const auto vz = static_cast<std::int32_t>(
        ((b.r[2][0] * x + b.r[2][1] * y + b.r[2][2] * z + 2048) >> 12) + b.t[2]);
    if (vz < b.near || vz > b.far) return false;
    const std::int64_t vx = ((b.r[0][0] * x + b.r[0][1] * y + b.r[0][2] * z + 2048) >> 12) + b.t[0];
    const std::int64_t vy = ((b.r[1][0] * x + b.r[1][1] * y + b.r[1][2] * z + 2048) >> 12) + b.t[1];
    const std::int64_t q = b.focal_shifted / (vz >> 4);  // focal / z, 20 bits below the point
    // Centre and half size in 1/16 pixel, then the rectangle in pixels, rounded to nearest.
    const std::int64_t sx = b.half_width16 + ((vx * q) >> 20);
    const std::int64_t sy = b.half_height16 + ((vy * q) >> 20);
    const std::int64_t hs = std::max<std::int64_t>((b.half * q) >> 20, 8);  // at least a pixel
    // Far outside the screen (or absurdly large): nothing to draw, and int16 keeps the rest.
    constexpr std::int64_t kLimit = std::int64_t{8192} << 4;
    if (static_cast<std::uint64_t>(sx + kLimit) > 2 * kLimit ||
        static_cast<std::uint64_t>(sy + kLimit) > 2 * kLimit || hs > kLimit)
      return false;
    const std::int64_t x0 = (sx - hs + 8) >> 4, x1 = std::max((sx + hs + 8) >> 4, x0 + 1);
    const std::int64_t y0 = (sy - hs + 8) >> 4, y1 = std::max((sy + hs + 8) >> 4, y0 + 1);
    if (x1 <= 0 || y1 <= 0 || x0 >= b.width || y0 >= b.height) return false;
    const std::uint64_t bucket = static_cast<std::uint64_t>(vz - b.near) * b.ot_mul >> 32;
    Prim* p = queue(bucket < config_.ot_buckets ? static_cast<std::uint32_t>(bucket)
                                                : config_.ot_buckets - 1);
    if (p == nullptr) return true;  // the farthest: dropped (counted by the panic)
    p->x[0] = static_cast<std::int16_t>(x0);
    p->x[1] = static_cast<std::int16_t>(x1);
    p->y[0] = static_cast<std::int16_t>(y0);
    p->y[1] = static_cast<std::int16_t>(y1);
    p->color = b.kind == PrimKind::Tile ? fogged(b.color, vz) : b.color;
    p->kind = b.kind;
    p->texture = b.texture;
    return true;
  }
  struct MeshSource;
  struct TextureSource;
  struct Projected;

  // A slot for a primitive in `bucket`, linked in; its fields are the caller's to write. When
  // the pool is full the farthest primitive makes room (queue_full), or nullptr: this one is
  // the farthest.
  Prim* queue(std::uint32_t bucket) {
    if (prim_count_ == config_.max_primitives) return queue_full(bucket);
    Prim* slot = &prims_[prim_count_++];
    slot->next = heads_[bucket];
    heads_[bucket] = static_cast<std::uint16_t>(prim_count_);
    far_bucket_ = bucket > far_bucket_ ? bucket : far_bucket_;
    return slot;
  }
  Prim* queue_full(std::uint32_t bucket);
  std::uint32_t bucket_of(std::int64_t z_from_near, std::uint64_t mul) const {
    const std::uint64_t b = static_cast<std::uint64_t>(z_from_near) * mul >> 32;
    return b < config_.ot_buckets ? static_cast<std::uint32_t>(b) : config_.ot_buckets - 1;
  }
  std::uint16_t fogged(std::uint16_t color, std::int32_t z_raw) const {
    return fog_mul_ == 0 || z_raw <= config_.fog_start.raw() ? color : fog_slow(color, z_raw);
  }
  std::uint16_t fog_slow(std::uint16_t color, std::int32_t z_raw) const;
  void panic(const char* what);

  OtConfig config_;
  core::BudgetArena* arena_ = nullptr;
  const char* error_ = nullptr;
  FixedTransform view_{};
  std::size_t footprint_ = 0;
  std::unique_ptr<std::byte[]> owned_;  // without an arena: one heap block

  std::uint16_t* pixels_ = nullptr;
  std::uint16_t* heads_ = nullptr;  // per bucket: first primitive + 1, 0 when empty
  Prim* prims_ = nullptr;
  std::uint32_t prim_count_ = 0;
  std::uint32_t far_bucket_ = 0;  // no primitive lies beyond it (a bound while the pool is full)
  Projected* scratch_ = nullptr;
  MeshSource* meshes_ = nullptr;
  std::uint32_t mesh_count_ = 0;
  TextureSource* textures_ = nullptr;
  std::uint32_t texture_count_ = 0;
  core::CacheEntry** locked_ = nullptr;  // textures locked by this frame's sprites
  std::uint32_t locked_count_ = 0;
  core::ResourceCache mesh_cache_;
  core::ResourceCache texture_cache_;
  std::int64_t focal_shifted_ = 0;  // focal << 20
  std::int64_t half_width16_ = 0;   // the screen's centre in 1/16 pixel
  std::int64_t half_height16_ = 0;
  std::uint64_t ot_mul_ = 0;   // bucket = ((z - near) * ot_mul_) >> 32, z raw
  std::uint64_t ot_mul3_ = 0;  // the same from the sum of three z
  std::uint64_t fog_mul_ = 0;  // fog level (0..32) = ((z - fog_start) * fog_mul_) >> 32
  // Textures record the frame they were locked in (0: never); starting at 1, a frame drawn
  // before any begin_frame() finds none locked.
  std::uint32_t frame_ = 1;
  Stats stats_{};
  bool logged_ = false;
};

}  // namespace spindle::render
