#include <spindle/render/ot_renderer.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>

#include <spindle/base/log.h>
#include <spindle/render/image.h>

namespace spindle::render {

using core::fixed;

namespace {

// Screen positions carry 4 bits below the pixel.
constexpr int kSub = 4;
constexpr std::int32_t kSubOne = 1 << kSub;
// Projected vertices farther than this from the screen's centre drop their triangle (the PS1
// dropped polygons past its 1,024-pixel limit): with sides of at most kMaxSide pixels, every
// edge function below stays within 32 bits.
constexpr std::int32_t kGuard = 640;
constexpr int kMaxSide = 640;

std::size_t round_up(std::size_t x, std::size_t align) {
  return (x + align - 1) & ~(align - 1);
}

std::int32_t dot_raw(const fixed (&row)[3], FixedVec3 p) {
  const std::int64_t s = std::int64_t{row[0].raw()} * p.x.raw() +
                         std::int64_t{row[1].raw()} * p.y.raw() +
                         std::int64_t{row[2].raw()} * p.z.raw();
  return static_cast<std::int32_t>((s + (1 << (fixed::kFractionBits - 1))) >> fixed::kFractionBits);
}

FixedVec3 sub(FixedVec3 a, FixedVec3 b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}
FixedVec3 cross(FixedVec3 a, FixedVec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
fixed abs_fixed(fixed v) {
  return v < fixed{} ? -v : v;
}
// Unit length, in fixed point: scaled by the largest component first, so the squares cannot
// overflow whatever the vector's length.
FixedVec3 normalize(FixedVec3 v) {
  const fixed m = std::max({abs_fixed(v.x), abs_fixed(v.y), abs_fixed(v.z)});
  if (m == fixed{}) return {fixed{}, fixed{}, fixed::one()};
  v = {v.x / m, v.y / m, v.z / m};
  const fixed len = fixed::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
  return {v.x / len, v.y / len, v.z / len};
}

std::uint32_t widen5(std::uint32_t c) {
  return (c << 3) | (c >> 2);
}

}  // namespace

// --- transforms ----------------------------------------------------------------------------

FixedTransform FixedTransform::translation(FixedVec3 t) {
  FixedTransform m;
  m.t = t;
  return m;
}

FixedTransform FixedTransform::rotation_y(fixed c, fixed s) {
  FixedTransform m;
  m.r[0][0] = c;
  m.r[0][2] = -s;
  m.r[2][0] = s;
  m.r[2][2] = c;
  return m;
}

FixedTransform operator*(const FixedTransform& a, const FixedTransform& b) {
  FixedTransform m;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const std::int64_t s = std::int64_t{a.r[i][0].raw()} * b.r[0][j].raw() +
                             std::int64_t{a.r[i][1].raw()} * b.r[1][j].raw() +
                             std::int64_t{a.r[i][2].raw()} * b.r[2][j].raw();
      m.r[i][j] = fixed::from_raw(static_cast<std::int32_t>(
          (s + (1 << (fixed::kFractionBits - 1))) >> fixed::kFractionBits));
    }
  }
  m.t = apply(a, b.t);
  return m;
}

FixedVec3 apply(const FixedTransform& m, FixedVec3 p) {
  return {fixed::from_raw(dot_raw(m.r[0], p)) + m.t.x, fixed::from_raw(dot_raw(m.r[1], p)) + m.t.y,
          fixed::from_raw(dot_raw(m.r[2], p)) + m.t.z};
}

FixedTransform look_at(FixedVec3 eye, FixedVec3 target, FixedVec3 up) {
  const FixedVec3 f = normalize(sub(target, eye));
  const FixedVec3 right = normalize(cross(f, up));
  const FixedVec3 down = cross(f, right);
  FixedTransform m;
  const FixedVec3 rows[3] = {right, down, f};
  for (int i = 0; i < 3; ++i) {
    m.r[i][0] = rows[i].x;
    m.r[i][1] = rows[i].y;
    m.r[i][2] = rows[i].z;
  }
  const FixedVec3 e = apply(m, eye);
  m.t = {-e.x, -e.y, -e.z};
  return m;
}

// --- the renderer's records ----------------------------------------------------------------

struct OtRenderer::MeshSource {
  OtMeshDesc desc;
  std::int32_t radius_raw = 0;  // of the bounding sphere about the origin
  std::size_t bytes = 0;        // in a cache slot
};

struct OtRenderer::TextureSource {
  OtTextureDesc desc;
  std::uint16_t mean = 0;  // the flat tile drawn in the panic mode
  std::uint32_t locked_frame = 0;
  std::uint8_t locked_index = 0;
};

struct OtRenderer::Projected {
  std::int32_t sx, sy;  // 1/16 pixel
  std::int32_t z;       // view depth, raw Q20.12
  bool ok;              // in front of the near plane and inside the guard band
};

namespace {

// A mesh in its cache slot: counts, positions, triangles (three indices and a colour), then
// with a texture its (u, v) pairs.
struct PackedMesh {
  std::uint32_t vertices;
  std::uint32_t triangles;
  bool cull_back;
  bool textured;
};
std::size_t packed_mesh_bytes(std::size_t vertices, std::size_t triangles, bool textured) {
  return round_up(sizeof(PackedMesh), 16) + vertices * sizeof(FixedVec3) +
         triangles * 4 * sizeof(std::uint16_t) + (textured ? 2 * vertices : 0);
}

struct PackedTexture {
  std::uint16_t width;
  std::uint16_t height;
};

core::CacheConfig mesh_cache_config(const OtConfig& c) {
  return {.name = "ot meshes",
          .slots = c.mesh_slots,
          .slot_bytes = c.mesh_slot_bytes,
          .panic_mode = "none: a mesh is used inside draw() and never stays locked"};
}
core::CacheConfig texture_cache_config(const OtConfig& c) {
  return {.name = "ot textures",
          .slots = c.texture_slots,
          .slot_bytes = c.texture_slot_bytes,
          .panic_mode =
              "sprites drawn as flat tiles of their texture's mean colour, meshes "
              "with their flat colours"};
}

const char* check_config(const OtConfig& c) {
  if (c.width < 1 || c.height < 1 || c.width > kMaxSide || c.height > kMaxSide)
    return "OtConfig: width and height must be 1 to 640 pixels";
  if (c.focal < 1 || c.focal > 511) return "OtConfig: focal must be 1 to 511 pixels";
  if (c.ot_buckets < 1 || c.ot_buckets > 65535) return "OtConfig: ot_buckets must be 1 to 65,535";
  if (c.max_primitives < 1 || c.max_primitives > 65535)
    return "OtConfig: max_primitives must be 1 to 65,535";
  if (c.near_z.raw() < 256) return "OtConfig: near_z must be at least 1/16";
  if (c.far_z <= c.near_z) return "OtConfig: far_z must lie beyond near_z";
  if (c.max_mesh_vertices < 3 || c.max_mesh_vertices > 65535)
    return "OtConfig: max_mesh_vertices must be 3 to 65,535";
  if (c.texture_slots > 255) return "OtConfig: at most 255 texture slots";
  return nullptr;
}

}  // namespace

// --- construction --------------------------------------------------------------------------

OtRenderer::OtRenderer(const OtConfig& config, core::BudgetArena* arena)
    : config_(config),
      arena_(arena),
      mesh_cache_(mesh_cache_config(config), arena),
      texture_cache_(texture_cache_config(config), arena) {
  footprint_ = mesh_cache_.footprint() + texture_cache_.footprint();
  if ((error_ = check_config(config)) != nullptr) {
    SPINDLE_LOG_ERROR(Render, "%s", error_);
    return;
  }
  if (mesh_cache_.capacity() == 0 || texture_cache_.capacity() == 0) {
    error_ = "OtRenderer: the caches do not fit the arena";
    SPINDLE_LOG_ERROR(Render, "%s", error_);
    return;
  }
  const std::size_t pixels = static_cast<std::size_t>(config.width) * config.height;
  const std::size_t sizes[] = {round_up(pixels * sizeof(std::uint16_t), 16),
                               round_up(config.ot_buckets * sizeof(std::uint16_t), 16),
                               round_up(config.max_primitives * sizeof(Prim), 16),
                               round_up(config.max_mesh_vertices * sizeof(Projected), 16),
                               round_up(config.max_meshes * sizeof(MeshSource), 16),
                               round_up(config.max_textures * sizeof(TextureSource), 16),
                               round_up(config.texture_slots * sizeof(core::CacheEntry*), 16)};
  std::size_t total = 0;
  for (const std::size_t s : sizes) total += s;
  std::byte* block = nullptr;
  if (arena != nullptr) {
    block = static_cast<std::byte*>(arena->allocate(total, 16));
  } else {
    owned_.reset(new (std::nothrow) std::byte[total]);
    block = owned_.get();
  }
  if (block == nullptr) {
    error_ = "OtRenderer: its buffers do not fit the arena";
    SPINDLE_LOG_ERROR(Render, "%s (%zu bytes)", error_, total);
    return;
  }
  footprint_ += total;
  std::byte* at = block;
  const auto carve = [&](std::size_t i) {
    std::byte* p = at;
    at += sizes[i];
    return p;
  };
  pixels_ = reinterpret_cast<std::uint16_t*>(carve(0));
  heads_ = reinterpret_cast<std::uint16_t*>(carve(1));
  prims_ = reinterpret_cast<Prim*>(carve(2));
  scratch_ = reinterpret_cast<Projected*>(carve(3));
  meshes_ = reinterpret_cast<MeshSource*>(carve(4));
  for (std::uint32_t i = 0; i < config.max_meshes; ++i) ::new (&meshes_[i]) MeshSource();
  textures_ = reinterpret_cast<TextureSource*>(carve(5));
  for (std::uint32_t i = 0; i < config.max_textures; ++i) ::new (&textures_[i]) TextureSource();
  locked_ = reinterpret_cast<core::CacheEntry**>(carve(6));
  std::fill_n(pixels_, pixels, config.clear_color);
  std::fill_n(heads_, config.ot_buckets, std::uint16_t{0});

  const auto range = static_cast<std::uint64_t>(config.far_z.raw() - config.near_z.raw());
  ot_mul_ = (std::uint64_t{config.ot_buckets} << 32) / range;
  ot_mul3_ = ot_mul_ / 3;
  focal_shifted_ = std::int64_t{config.focal} << 20;
  half_width16_ = config.width * kSubOne / 2;
  half_height16_ = config.height * kSubOne / 2;
  if (config.fog_start < config.far_z) {
    fog_mul_ = (std::uint64_t{32} << 32) /
               static_cast<std::uint64_t>(config.far_z.raw() - config.fog_start.raw());
  }
}

OtRenderer::~OtRenderer() {
  begin_frame();  // unlocks the textures before the cache goes
}

// --- registration --------------------------------------------------------------------------

core::Result<OtMeshId> OtRenderer::add_mesh(const OtMeshDesc& desc) {
  if (!valid()) return core::Status::error(error_);
  if (mesh_count_ == config_.max_meshes)
    return core::Status::error("OtRenderer::add_mesh: all " + std::to_string(config_.max_meshes) +
                               " mesh registrations are taken (OtConfig::max_meshes)");
  const std::size_t v = desc.positions.size(), n = desc.indices.size();
  if (v < 3 || v > config_.max_mesh_vertices)
    return core::Status::error("OtRenderer::add_mesh: " + std::to_string(v) +
                               " vertices; a mesh has 3 to " +
                               std::to_string(config_.max_mesh_vertices) + " (max_mesh_vertices)");
  if (n == 0 || n % 3 != 0)
    return core::Status::error("OtRenderer::add_mesh: " + std::to_string(n) +
                               " indices is not a whole number of triangles");
  if (desc.colors.size() != n / 3)
    return core::Status::error("OtRenderer::add_mesh: " + std::to_string(desc.colors.size()) +
                               " colours for " + std::to_string(n / 3) + " triangles");
  for (std::size_t i = 0; i < n; ++i) {
    if (desc.indices[i] >= v)
      return core::Status::error("OtRenderer::add_mesh: index " + std::to_string(i) + " is " +
                                 std::to_string(desc.indices[i]) + ", past the " +
                                 std::to_string(v) + " vertices");
  }
  const bool textured = desc.texture != kNoOtTexture;
  if (textured) {
    if (desc.texture >= texture_count_)
      return core::Status::error("OtRenderer::add_mesh: texture " + std::to_string(desc.texture) +
                                 " is not registered (add_texture() first)");
    const OtTextureDesc& t = textures_[desc.texture].desc;
    if ((t.width & (t.width - 1)) != 0 || (t.height & (t.height - 1)) != 0)
      return core::Status::error("OtRenderer::add_mesh: texture " + std::to_string(desc.texture) +
                                 " is " + std::to_string(t.width) + "x" + std::to_string(t.height) +
                                 "; a mesh's texture has power-of-two sides (it wraps)");
    if (desc.uvs.size() != 2 * v)
      return core::Status::error("OtRenderer::add_mesh: " + std::to_string(desc.uvs.size()) +
                                 " texel coordinates for " + std::to_string(v) +
                                 " vertices (a u and a v each)");
  }
  const std::size_t bytes = packed_mesh_bytes(v, n / 3, textured);
  if (bytes > mesh_cache_.config().slot_bytes)
    return core::Status::error(
        "OtRenderer::add_mesh: " + std::to_string(bytes) + " bytes do not fit a cache slot of " +
        std::to_string(mesh_cache_.config().slot_bytes) + " (OtConfig::mesh_slot_bytes)");
  std::int64_t r2 = 0;
  for (const FixedVec3& p : desc.positions) {
    const std::int64_t x = p.x.raw(), y = p.y.raw(), z = p.z.raw();
    r2 = std::max(r2, x * x + y * y + z * z);
  }
  // The radius rounded up: an integer square root of the raw squared length.
  auto r = static_cast<std::int64_t>(fixed::sqrt(fixed::from_raw(static_cast<std::int32_t>(
                                                     std::min<std::int64_t>(r2 >> 12, 0x7fffffff))))
                                         .raw());
  while (r * r < r2) ++r;
  MeshSource& m = meshes_[mesh_count_];
  m.desc = desc;
  m.radius_raw = static_cast<std::int32_t>(r);
  m.bytes = bytes;
  return mesh_count_++;
}

core::Result<OtTextureId> OtRenderer::add_texture(const OtTextureDesc& desc) {
  if (!valid()) return core::Status::error(error_);
  if (texture_count_ == config_.max_textures)
    return core::Status::error("OtRenderer::add_texture: all " +
                               std::to_string(config_.max_textures) +
                               " texture registrations are taken (OtConfig::max_textures)");
  if (desc.width < 1 || desc.height < 1 || desc.width > 256 || desc.height > 256)
    return core::Status::error("OtRenderer::add_texture: " + std::to_string(desc.width) + "x" +
                               std::to_string(desc.height) + "; sides are 1 to 256 texels");
  const std::size_t n = static_cast<std::size_t>(desc.width) * desc.height;
  if (desc.texels.size() != n)
    return core::Status::error("OtRenderer::add_texture: " + std::to_string(desc.texels.size()) +
                               " texels for " + std::to_string(desc.width) + "x" +
                               std::to_string(desc.height));
  const std::size_t bytes = round_up(sizeof(PackedTexture), 16) + n * sizeof(std::uint16_t);
  if (bytes > texture_cache_.config().slot_bytes)
    return core::Status::error(
        "OtRenderer::add_texture: " + std::to_string(bytes) + " bytes do not fit a cache slot of " +
        std::to_string(texture_cache_.config().slot_bytes) + " (OtConfig::texture_slot_bytes)");
  std::uint32_t sum[3] = {}, opaque = 0;
  for (const std::uint16_t t : desc.texels) {
    if (t == 0) continue;
    ++opaque;
    for (int c = 0; c < 3; ++c) sum[c] += (t >> (5 * c)) & 31u;
  }
  TextureSource& s = textures_[texture_count_];
  s.desc = desc;
  s.mean = opaque == 0 ? 0
                       : static_cast<std::uint16_t>((sum[0] / opaque) | ((sum[1] / opaque) << 5) |
                                                    ((sum[2] / opaque) << 10));
  return texture_count_++;
}

// --- a frame -------------------------------------------------------------------------------

void OtRenderer::begin_frame() {
  for (std::uint32_t i = 0; i < locked_count_; ++i) texture_cache_.unlock(locked_[i]);
  locked_count_ = 0;
  if (!valid()) return;
  ++frame_;
  std::fill_n(heads_, config_.ot_buckets, std::uint16_t{0});
  prim_count_ = 0;
  far_bucket_ = 0;
  const std::uint64_t frames = stats_.frames + 1;
  const std::uint64_t pixels = stats_.pixels;
  stats_ = Stats{};
  stats_.frames = frames;
  stats_.pixels = pixels;
}

void OtRenderer::panic(const char* what) {
  if (arena_ != nullptr) {
    arena_->panic(what);
  } else if (!logged_) {
    logged_ = true;
    SPINDLE_LOG_WARNING(Render, "OtRenderer: %s", what);
  }
}

std::uint16_t OtRenderer::fog_slow(std::uint16_t color, std::int32_t z_raw) const {
  const auto level = static_cast<std::int32_t>(std::min<std::uint64_t>(
      static_cast<std::uint64_t>(z_raw - config_.fog_start.raw()) * fog_mul_ >> 32, 32));
  std::uint32_t out = 0;
  for (int c = 0; c < 3; ++c) {
    const auto a = static_cast<std::int32_t>((color >> (5 * c)) & 31u);
    const auto b = static_cast<std::int32_t>((config_.fog_color >> (5 * c)) & 31u);
    out |= static_cast<std::uint32_t>(a + (((b - a) * level) >> 5)) << (5 * c);
  }
  return static_cast<std::uint16_t>(out);
}

OtRenderer::Prim* OtRenderer::queue_full(std::uint32_t bucket) {
  // The panic mode: the farthest primitive queued so far makes room, unless the new one is at
  // least as far.
  while (far_bucket_ > bucket && heads_[far_bucket_] == 0) --far_bucket_;
  ++stats_.dropped_far;
  panic("primitive pool full: the farthest primitives are dropped");
  if (far_bucket_ <= bucket) return nullptr;
  const std::uint32_t index = heads_[far_bucket_] - 1u;
  heads_[far_bucket_] = prims_[index].next;
  Prim* slot = &prims_[index];
  slot->next = heads_[bucket];
  heads_[bucket] = static_cast<std::uint16_t>(index + 1);
  return slot;
}

bool OtRenderer::draw(OtMeshId id, const FixedTransform& model, Order order) {
  ++stats_.draws;
  if (!valid() || id >= mesh_count_) {
    ++stats_.invalid_draws;
    return false;
  }
  const MeshSource& source = meshes_[id];
  const FixedTransform mv = view_ * model;
  // The whole object first: its bounding sphere against the near and far planes and the sides.
  const std::int64_t cx = mv.t.x.raw(), cy = mv.t.y.raw(), cz = mv.t.z.raw(), r = source.radius_raw;
  const std::int64_t half_w = config_.width / 2 + 1, half_h = config_.height / 2 + 1;
  if (cz + r < config_.near_z.raw() || cz - r > config_.far_z.raw() ||
      ((cx < 0 ? -cx : cx) - r) * config_.focal > (cz + r) * half_w ||
      ((cy < 0 ? -cy : cy) - r) * config_.focal > (cz + r) * half_h) {
    ++stats_.culled_objects;
    return false;
  }
  const core::CacheEntry* entry = mesh_cache_.touch(id, [&](std::span<std::byte> out) {
    if (out.size() < source.bytes) return std::size_t{0};
    auto* head = reinterpret_cast<PackedMesh*>(out.data());
    const std::size_t v = source.desc.positions.size(), t = source.desc.indices.size() / 3;
    const bool textured = source.desc.texture != kNoOtTexture;
    *head = PackedMesh{static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(t),
                       source.desc.cull_back, textured};
    std::byte* at = out.data() + round_up(sizeof(PackedMesh), 16);
    std::memcpy(at, source.desc.positions.data(), v * sizeof(FixedVec3));
    auto* tris = reinterpret_cast<std::uint16_t*>(at + v * sizeof(FixedVec3));
    for (std::size_t i = 0; i < t; ++i) {
      std::memcpy(tris + 4 * i, source.desc.indices.data() + 3 * i, 3 * sizeof(std::uint16_t));
      tris[4 * i + 3] = source.desc.colors[i];
    }
    if (textured) std::memcpy(tris + 4 * t, source.desc.uvs.data(), 2 * v);
    return source.bytes;
  });
  if (entry == nullptr) {
    ++stats_.invalid_draws;
    return false;
  }
  const std::byte* data = entry->bytes().data();
  const auto& head = *reinterpret_cast<const PackedMesh*>(data);
  const auto* positions =
      reinterpret_cast<const FixedVec3*>(data + round_up(sizeof(PackedMesh), 16));
  const auto* tris = reinterpret_cast<const std::uint16_t*>(positions + head.vertices);
  const auto* uvs = reinterpret_cast<const std::uint8_t*>(tris + 4 * head.triangles);
  // A textured mesh locks its texture for the frame; without a free slot (the panic mode) its
  // triangles are drawn with their flat colours.
  int texture = -1;
  if (head.textured) {
    texture = lock_texture(source.desc.texture);
    if (texture < 0) panic("texture cache full of this frame's textures: meshes are drawn flat");
  }

  // The GTE's RTPS for every vertex: rotate, translate, project with one division.
  const std::int32_t near = config_.near_z.raw();
  const std::int32_t cx16 = (config_.width * kSubOne) / 2, cy16 = (config_.height * kSubOne) / 2;
  const std::int32_t focal = config_.focal;
  for (std::uint32_t i = 0; i < head.vertices; ++i) {
    const FixedVec3 p = positions[i];
    Projected& out = scratch_[i];
    const std::int32_t vx = dot_raw(mv.r[0], p) + mv.t.x.raw();
    const std::int32_t vy = dot_raw(mv.r[1], p) + mv.t.y.raw();
    const std::int32_t vz = dot_raw(mv.r[2], p) + mv.t.z.raw();
    out.z = vz;
    // In front, and inside the guard band: |v| * focal <= kGuard * z.
    const std::int64_t limit = std::int64_t{kGuard} * vz;
    out.ok = vz >= near && std::int64_t{vx < 0 ? -vx : vx} * focal <= limit &&
             std::int64_t{vy < 0 ? -vy : vy} * focal <= limit;
    if (!out.ok) continue;
    const std::int32_t q = (focal << 20) / (vz >> 4);  // focal / z, 16 bits below the point
    out.sx = cx16 + (((vx >> 4) * q) >> 16);
    out.sy = cy16 + (((vy >> 4) * q) >> 16);
  }

  stats_.triangles_in += head.triangles;
  std::uint32_t queued = 0;
  for (std::uint32_t t = 0; t < head.triangles; ++t) {
    const std::uint16_t* tri = tris + 4 * t;
    const Projected* a = &scratch_[tri[0]];
    const Projected* b = &scratch_[tri[1]];
    const Projected* c = &scratch_[tri[2]];
    if (!a->ok || !b->ok || !c->ok) {
      ++stats_.culled_triangles;
      continue;
    }
    // Twice the signed area in screen coordinates (y down): negative when the vertices run
    // counter-clockwise as seen, the front. The rasteriser takes them the other way round.
    const std::int64_t area = std::int64_t{b->sx - a->sx} * (c->sy - a->sy) -
                              std::int64_t{b->sy - a->sy} * (c->sx - a->sx);
    if (area == 0 || (area > 0 && head.cull_back)) {
      ++stats_.culled_triangles;
      continue;
    }
    if (area < 0) std::swap(b, c);
    const std::int32_t min_x = std::min({a->sx, b->sx, c->sx}),
                       max_x = std::max({a->sx, b->sx, c->sx});
    const std::int32_t min_y = std::min({a->sy, b->sy, c->sy}),
                       max_y = std::max({a->sy, b->sy, c->sy});
    if (max_x < 0 || max_y < 0 || min_x >= config_.width * kSubOne ||
        min_y >= config_.height * kSubOne) {
      ++stats_.culled_triangles;
      continue;
    }
    const std::int64_t z_sum = std::int64_t{a->z} + b->z + c->z;
    if (z_sum > 3 * std::int64_t{config_.far_z.raw()}) {
      ++stats_.culled_triangles;
      continue;
    }
    Prim* p = queue(order == Order::Backdrop ? config_.ot_buckets - 1
                                             : bucket_of(z_sum - 3 * std::int64_t{near}, ot_mul3_));
    ++queued;
    if (p == nullptr) continue;  // the farthest: dropped (counted by the panic)
    p->x[0] = static_cast<std::int16_t>(a->sx);
    p->y[0] = static_cast<std::int16_t>(a->sy);
    p->x[1] = static_cast<std::int16_t>(b->sx);
    p->y[1] = static_cast<std::int16_t>(b->sy);
    p->x[2] = static_cast<std::int16_t>(c->sx);
    p->y[2] = static_cast<std::int16_t>(c->sy);
    p->color = fogged(tri[3], static_cast<std::int32_t>(z_sum / 3));
    p->kind = PrimKind::Triangle;
    p->texture = 0;
    if (head.textured) {
      if (texture < 0) {
        ++stats_.drawn_flat;
        continue;
      }
      p->kind = PrimKind::TexturedTriangle;
      p->texture = static_cast<std::uint8_t>(texture);
      const std::uint16_t order[3] = {tri[0], area < 0 ? tri[2] : tri[1],
                                      area < 0 ? tri[1] : tri[2]};
      for (int k = 0; k < 3; ++k) {
        p->u[k] = uvs[2 * order[k]];
        p->v[k] = uvs[2 * order[k] + 1];
      }
    }
  }
  stats_.primitives = prim_count_;
  return queued > 0;
}

OtRenderer::SpriteBatch OtRenderer::begin_sprites(fixed size, OtTextureId texture,
                                                  std::uint16_t color) {
  SpriteBatch b;
  if (!valid() || (texture != kNoOtTexture && texture >= texture_count_)) return b;
  b.valid = true;
  b.half = size.raw() / 2;
  b.color = color;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) b.r[i][j] = view_.r[i][j].raw();
  }
  b.t[0] = view_.t.x.raw();
  b.t[1] = view_.t.y.raw();
  b.t[2] = view_.t.z.raw();
  b.near = config_.near_z.raw();
  b.far = config_.far_z.raw();
  b.width = config_.width;
  b.height = config_.height;
  b.focal_shifted = focal_shifted_;
  b.half_width16 = half_width16_;
  b.half_height16 = half_height16_;
  b.ot_mul = ot_mul_;
  if (texture == kNoOtTexture) return b;
  const int locked = lock_texture(texture);
  if (locked < 0) {
    // The panic mode: every slot is held by this frame's sprites.
    b.color = textures_[texture].mean;
    b.texture = 0xff;  // counted in end_sprites
    return b;
  }
  b.kind = PrimKind::Sprite;
  b.texture = static_cast<std::uint8_t>(locked);
  return b;
}

int OtRenderer::lock_texture(OtTextureId texture) {
  TextureSource& s = textures_[texture];
  if (s.locked_frame == frame_) return s.locked_index;
  core::CacheEntry* e = texture_cache_.lock(texture, [&](std::span<std::byte> out) {
    const std::size_t n = s.desc.texels.size();
    const std::size_t bytes = round_up(sizeof(PackedTexture), 16) + n * sizeof(std::uint16_t);
    if (out.size() < bytes) return std::size_t{0};
    *reinterpret_cast<PackedTexture*>(out.data()) = {static_cast<std::uint16_t>(s.desc.width),
                                                     static_cast<std::uint16_t>(s.desc.height)};
    std::memcpy(out.data() + round_up(sizeof(PackedTexture), 16), s.desc.texels.data(),
                n * sizeof(std::uint16_t));
    return bytes;
  });
  if (e == nullptr) return -1;
  s.locked_frame = frame_;
  s.locked_index = static_cast<std::uint8_t>(locked_count_);
  locked_[locked_count_++] = e;
  return s.locked_index;
}

void OtRenderer::end_sprites(const SpriteBatch& b, std::uint32_t count, std::uint32_t queued) {
  stats_.draws += count;
  if (!b.valid) {
    stats_.invalid_draws += count;
    return;
  }
  stats_.culled_objects += count - queued;
  stats_.primitives = prim_count_;
  if (b.kind == PrimKind::Tile && b.texture == 0xff && queued > 0) {
    stats_.drawn_flat += queued;
    panic("texture cache full of this frame's sprites: sprites are drawn flat");
  }
}

bool OtRenderer::draw_sprite(FixedVec3 position, fixed size, OtTextureId texture,
                             std::uint16_t color) {
  return draw_sprites(1, size, texture, color, [position](std::uint32_t) { return position; }) == 1;
}

// --- the rasteriser ------------------------------------------------------------------------

namespace {

struct Target {
  std::uint16_t* pixels;
  int width, height;
};

// The pixels of a triangle (clockwise as seen: positive area with y down), by edge functions at
// pixel centres with the top-left rule. `shade` colours them: shade.row(px, py) at the first
// pixel of each row, shade.pixel(dst) for each covered pixel (true: written), shade.step() after
// every pixel.
template <class Shade>
std::uint64_t walk_triangle(const Target& t, const std::int16_t* xs, const std::int16_t* ys,
                            Shade& shade) {
  const std::int32_t x0 = xs[0], y0 = ys[0], x1 = xs[1], y1 = ys[1], x2 = xs[2], y2 = ys[2];
  const int min_px = std::max(0, (std::min({x0, x1, x2}) + kSubOne / 2 - 1) >> kSub);
  const int max_px = std::min(t.width - 1, (std::max({x0, x1, x2}) - kSubOne / 2) >> kSub);
  const int min_py = std::max(0, (std::min({y0, y1, y2}) + kSubOne / 2 - 1) >> kSub);
  const int max_py = std::min(t.height - 1, (std::max({y0, y1, y2}) - kSubOne / 2) >> kSub);
  if (min_px > max_px || min_py > max_py) return 0;
  // Edge (a, b): E(p) = (xb - xa)(py - ya) - (yb - ya)(px - xa), >= 0 inside. An edge that is
  // neither top nor left needs > 0: a bias of -1.
  const std::int32_t ax[3] = {x0, x1, x2}, ay[3] = {y0, y1, y2};
  std::int32_t row[3], step_x[3], step_y[3];
  const std::int32_t px = min_px * kSubOne + kSubOne / 2, py = min_py * kSubOne + kSubOne / 2;
  for (int i = 0; i < 3; ++i) {
    const int j = i == 2 ? 0 : i + 1;
    const std::int32_t dx = ax[j] - ax[i], dy = ay[j] - ay[i];
    const bool top_left = dy < 0 || (dy == 0 && dx > 0);
    row[i] = dx * (py - ay[i]) - dy * (px - ax[i]) - (top_left ? 0 : 1);
    step_x[i] = -dy * kSubOne;
    step_y[i] = dx * kSubOne;
  }
  std::uint64_t written = 0;
  for (int y = min_py; y <= max_py; ++y) {
    std::int32_t e0 = row[0], e1 = row[1], e2 = row[2];
    std::uint16_t* out = t.pixels + static_cast<std::size_t>(y) * t.width;
    bool entered = false;
    shade.row(min_px, y);
    for (int x = min_px; x <= max_px; ++x) {
      if ((e0 | e1 | e2) >= 0) {
        written += shade.pixel(out + x) ? 1 : 0;
        entered = true;
      } else if (entered) {
        break;  // a triangle's row is one span
      }
      e0 += step_x[0];
      e1 += step_x[1];
      e2 += step_x[2];
      shade.step();
    }
    row[0] += step_y[0];
    row[1] += step_y[1];
    row[2] += step_y[2];
  }
  return written;
}

struct FlatShade {
  std::uint16_t color;
  void row(int, int) {}
  bool pixel(std::uint16_t* dst) const {
    *dst = color;
    return true;
  }
  void step() {}
};

// Affine texture mapping, the PS1's: u and v are linear in screen space, in 16.16 texels; each
// row starts from the exact value (64-bit), then steps. Coordinates wrap (power-of-two sides);
// texel 0 is transparent.
struct TextureShade {
  const std::uint16_t* texels;
  std::int32_t width_mask, height_mask, width_shift;
  std::int64_t x0, y0, area;            // the first vertex (1/16 pixel) and twice the area
  std::int64_t u0, v0;                  // at the first vertex, 16.16
  std::int64_t nu_x, nu_y, nv_x, nv_y;  // gradient numerators: d/dx = n_x / area (per 1/16 px)
  std::int32_t du = 0, dv = 0, u = 0, v = 0;

  TextureShade(const std::int16_t* xs, const std::int16_t* ys, const std::uint8_t* us,
               const std::uint8_t* vs, const std::uint16_t* t, int w, int h)
      : texels(t),
        width_mask(w - 1),
        height_mask(h - 1),
        width_shift(std::countr_zero(static_cast<unsigned>(w))) {
    x0 = xs[0];
    y0 = ys[0];
    const std::int64_t ex1 = xs[1] - xs[0], ey1 = ys[1] - ys[0];
    const std::int64_t ex2 = xs[2] - xs[0], ey2 = ys[2] - ys[0];
    area = ex1 * ey2 - ex2 * ey1;  // > 0: the rasteriser's winding
    const std::int64_t a1 = us[1] - us[0], a2 = us[2] - us[0];
    const std::int64_t b1 = vs[1] - vs[0], b2 = vs[2] - vs[0];
    nu_x = a1 * ey2 - a2 * ey1;
    nu_y = a2 * ex1 - a1 * ex2;
    nv_x = b1 * ey2 - b2 * ey1;
    nv_y = b2 * ex1 - b1 * ex2;
    u0 = std::int64_t{us[0]} << 16;
    v0 = std::int64_t{vs[0]} << 16;
    du = static_cast<std::int32_t>(nu_x * kSubOne * 65536 / area);  // signed: no shifts
    dv = static_cast<std::int32_t>(nv_x * kSubOne * 65536 / area);
  }
  void row(int px, int py) {
    const std::int64_t dx = px * kSubOne + kSubOne / 2 - x0, dy = py * kSubOne + kSubOne / 2 - y0;
    u = static_cast<std::int32_t>(u0 + (nu_x * dx + nu_y * dy) * 65536 / area);
    v = static_cast<std::int32_t>(v0 + (nv_x * dx + nv_y * dy) * 65536 / area);
  }
  bool pixel(std::uint16_t* dst) const {
    const std::uint16_t texel =
        texels[(((v >> 16) & height_mask) << width_shift) + ((u >> 16) & width_mask)];
    if (texel == 0) return false;
    *dst = texel;
    return true;
  }
  void step() {
    u += du;
    v += dv;
  }
};

std::uint64_t fill_rect(const Target& t, const std::int16_t* xs, const std::int16_t* ys,
                        std::uint16_t color, const std::uint16_t* texels, int tw, int th) {
  const int x0 = std::max<int>(xs[0], 0), x1 = std::min<int>(xs[1], t.width);
  const int y0 = std::max<int>(ys[0], 0), y1 = std::min<int>(ys[1], t.height);
  if (x0 >= x1 || y0 >= y1) return 0;
  std::uint64_t written = 0;
  if (texels == nullptr) {
    for (int y = y0; y < y1; ++y) {
      std::fill(t.pixels + static_cast<std::size_t>(y) * t.width + x0,
                t.pixels + static_cast<std::size_t>(y) * t.width + x1, color);
    }
    return static_cast<std::uint64_t>(x1 - x0) * static_cast<std::uint64_t>(y1 - y0);
  }
  // Texels scaled to the rectangle (16.16 steps), sampled at pixel centres; 0 is transparent.
  const std::int32_t w = xs[1] - xs[0], h = ys[1] - ys[0];
  const std::int32_t du = (tw << 16) / w, dv = (th << 16) / h;
  for (int y = y0; y < y1; ++y) {
    const std::int32_t v = ((y - ys[0]) * dv + dv / 2) >> 16;
    const std::uint16_t* src = texels + static_cast<std::size_t>(std::min(v, th - 1)) * tw;
    std::uint16_t* out = t.pixels + static_cast<std::size_t>(y) * t.width;
    std::int32_t u = (x0 - xs[0]) * du + du / 2;
    for (int x = x0; x < x1; ++x, u += du) {
      const std::uint16_t texel = src[std::min(u >> 16, tw - 1)];
      if (texel != 0) {
        out[x] = texel;
        ++written;
      }
    }
  }
  return written;
}

}  // namespace

void OtRenderer::rasterize() {
  if (!valid()) return;
  const Target target{pixels_, config_.width, config_.height};
  std::fill_n(pixels_, static_cast<std::size_t>(config_.width) * config_.height,
              config_.clear_color);
  std::uint64_t written = 0;
  for (std::uint32_t b = config_.ot_buckets; b-- > 0;) {
    for (std::uint32_t i = heads_[b]; i != 0; i = prims_[i - 1].next) {
      const Prim& p = prims_[i - 1];
      if (p.kind == PrimKind::Triangle) {
        FlatShade flat{p.color};
        written += walk_triangle(target, p.x, p.y, flat);
      } else if (p.kind == PrimKind::TexturedTriangle) {
        const std::byte* data = locked_[p.texture]->bytes().data();
        const auto& head = *reinterpret_cast<const PackedTexture*>(data);
        TextureShade shade(
            p.x, p.y, p.u, p.v,
            reinterpret_cast<const std::uint16_t*>(data + round_up(sizeof(PackedTexture), 16)),
            head.width, head.height);
        written += walk_triangle(target, p.x, p.y, shade);
      } else if (p.kind == PrimKind::Tile) {
        written += fill_rect(target, p.x, p.y, p.color, nullptr, 0, 0);
      } else {
        const std::byte* data = locked_[p.texture]->bytes().data();
        const auto& head = *reinterpret_cast<const PackedTexture*>(data);
        written += fill_rect(
            target, p.x, p.y, p.color,
            reinterpret_cast<const std::uint16_t*>(data + round_up(sizeof(PackedTexture), 16)),
            head.width, head.height);
      }
    }
  }
  stats_.pixels = written;
}

// --- results -------------------------------------------------------------------------------

std::span<const std::uint16_t> OtRenderer::framebuffer() const {
  if (!valid()) return {};
  return {pixels_, static_cast<std::size_t>(config_.width) * config_.height};
}

std::uint64_t OtRenderer::framebuffer_hash() const {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a over the pixels, low byte first
  for (const std::uint16_t p : framebuffer()) {
    h = (h ^ (p & 0xffu)) * 1099511628211ull;
    h = (h ^ (p >> 8)) * 1099511628211ull;
  }
  return h;
}

void OtRenderer::to_image(Image& out) const {
  out = Image(config_.width, config_.height);
  const std::span<const std::uint16_t> fb = framebuffer();
  if (fb.empty()) return;
  for (int y = 0; y < config_.height; ++y) {
    for (int x = 0; x < config_.width; ++x) {
      const std::uint32_t p = fb[static_cast<std::size_t>(y) * config_.width + x];
      out.at(x, y) = rgba(widen5(p & 31u), widen5((p >> 5) & 31u), widen5((p >> 10) & 31u), 255);
    }
  }
}

const core::CacheStats& OtRenderer::mesh_cache() const {
  return mesh_cache_.stats();
}
const core::CacheStats& OtRenderer::texture_cache() const {
  return texture_cache_.stats();
}

}  // namespace spindle::render
