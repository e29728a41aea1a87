// The fixed-point ordering-table renderer (render/ot_renderer.h), through its public header:
// projection and coverage counted pixel by pixel, depth order from the table whatever the
// submission order, culling, affine texture mapping checked texel by texel (and wrapping), both
// panic modes (a full primitive pool drops the farthest; a texture cache held by the frame draws
// sprites and meshes flat), meshes through a cache smaller than the scene, registration errors,
// and a scene whose framebuffer hash is recorded: the same bits on x86-64 and under qemu-mipsel.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "spindle/base/budget.h"
#include "spindle/render/image.h"
#include "spindle/render/ot_renderer.h"

namespace spindle::render {
namespace {

using core::fixed;

fixed F(double v) {
  return fixed::from_double(v);
}
FixedVec3 V(double x, double y, double z) {
  return {F(x), F(y), F(z)};
}

constexpr std::uint16_t kRed = rgb555(248, 0, 0);
constexpr std::uint16_t kGreen = rgb555(0, 248, 0);
constexpr std::uint16_t kBlue = rgb555(0, 0, 248);

// A camera at the origin looking down +z (view = world), with no fog in reach.
OtConfig plain_config() {
  OtConfig c;
  c.fog_start = F(4000.0);
  c.far_z = F(4000.0);
  c.clear_color = 0;
  return c;
}

// A square of half side `h` in the plane z = `z`, facing the camera (counter-clockwise as seen).
struct Quad {
  std::array<FixedVec3, 4> p;
  std::array<std::uint16_t, 6> idx{0, 2, 1, 0, 3, 2};
  std::array<std::uint16_t, 2> col;
  Quad(double cx, double cy, double h, double z, std::uint16_t color)
      : p{V(cx - h, cy - h, z), V(cx + h, cy - h, z), V(cx + h, cy + h, z), V(cx - h, cy + h, z)},
        col{color, color} {}
  OtMeshDesc desc(bool cull = true) const { return {p, idx, col, cull}; }
};

std::size_t count_pixels(const OtRenderer& r, std::uint16_t color) {
  const auto fb = r.framebuffer();
  return static_cast<std::size_t>(std::count(fb.begin(), fb.end(), color));
}

std::uint16_t pixel(const OtRenderer& r, int x, int y) {
  return r.framebuffer()[static_cast<std::size_t>(y) * r.config().width + x];
}

TEST(OtRenderer, ProjectsAndCoversEachPixelOnce) {
  // focal 256 at z = 256: one world unit is one pixel. The quad spans x, y in [-20, 20) around
  // the centre (160, 120): 40 x 40 pixels, its two triangles sharing the diagonal.
  OtRenderer r(plain_config());
  ASSERT_TRUE(r.valid()) << r.error();
  const Quad q(0, 0, 20, 256, kRed);
  const auto mesh = r.add_mesh(q.desc());
  ASSERT_TRUE(mesh) << mesh.message();
  r.begin_frame();
  EXPECT_TRUE(r.draw(mesh.value(), FixedTransform{}));
  r.rasterize();
  EXPECT_EQ(r.stats().primitives, 2u);
  EXPECT_EQ(count_pixels(r, kRed), 1600u);
  EXPECT_EQ(r.stats().pixels, 1600u);  // none written twice along the shared edge
  EXPECT_EQ(pixel(r, 140, 100), kRed);
  EXPECT_EQ(pixel(r, 179, 139), kRed);
  EXPECT_EQ(pixel(r, 139, 100), 0);
  EXPECT_EQ(pixel(r, 180, 139), 0);
  EXPECT_EQ(pixel(r, 179, 140), 0);

  // Twice as far: half the size, 20 x 20.
  r.begin_frame();
  r.draw(mesh.value(), FixedTransform::translation(V(0, 0, 256)));
  r.rasterize();
  EXPECT_EQ(count_pixels(r, kRed), 400u);
}

TEST(OtRenderer, NearerPrimitivesWinWhateverTheSubmissionOrder) {
  OtRenderer r(plain_config());
  const Quad near_quad(0, 0, 20, 200, kRed);
  const Quad far_quad(30, 0, 20, 300, kGreen);
  const auto n = r.add_mesh(near_quad.desc());
  const auto f = r.add_mesh(far_quad.desc());
  ASSERT_TRUE(n && f);
  for (int order = 0; order < 2; ++order) {
    r.begin_frame();
    if (order == 0) {
      r.draw(n.value(), FixedTransform{});
      r.draw(f.value(), FixedTransform{});
    } else {
      r.draw(f.value(), FixedTransform{});
      r.draw(n.value(), FixedTransform{});
    }
    r.rasterize();
    EXPECT_EQ(pixel(r, 160, 120), kRed) << "order " << order;         // both cover it
    EXPECT_EQ(pixel(r, 160 + 35, 120), kGreen) << "order " << order;  // only the far one
  }
}

TEST(OtRenderer, CullsBackFacesNearPlaneAndDistance) {
  OtRenderer r(plain_config());
  Quad back(0, 0, 20, 256, kRed);
  std::swap(back.idx[1], back.idx[2]);  // clockwise as seen
  std::swap(back.idx[4], back.idx[5]);
  const auto culled = r.add_mesh(back.desc(true));
  const auto both_sides = r.add_mesh(back.desc(false));
  ASSERT_TRUE(culled && both_sides);
  r.begin_frame();
  EXPECT_FALSE(r.draw(culled.value(), FixedTransform{}));
  r.rasterize();
  EXPECT_EQ(count_pixels(r, kRed), 0u);
  EXPECT_EQ(r.stats().culled_triangles, 2u);
  r.begin_frame();
  EXPECT_TRUE(r.draw(both_sides.value(), FixedTransform{}));
  r.rasterize();
  EXPECT_EQ(count_pixels(r, kRed), 1600u);

  // Crossing the near plane (z from -5 to 5): dropped whole, as the PS1 did, not clipped.
  const std::array<FixedVec3, 3> crossing{V(-5, -5, -5), V(5, -5, 5), V(0, 5, 5)};
  const std::array<std::uint16_t, 3> tri{0, 1, 2};
  const std::array<std::uint16_t, 1> col{kBlue};
  const auto near_mesh = r.add_mesh({crossing, tri, col, false});
  ASSERT_TRUE(near_mesh);
  r.begin_frame();
  EXPECT_FALSE(r.draw(near_mesh.value(), FixedTransform::translation(V(0, 0, 0))));
  r.rasterize();
  EXPECT_EQ(count_pixels(r, kBlue), 0u);

  // Past the draw distance, and behind the camera: rejected as objects.
  r.begin_frame();
  EXPECT_FALSE(r.draw(both_sides.value(), FixedTransform::translation(V(0, 0, 5000))));
  EXPECT_FALSE(r.draw(both_sides.value(), FixedTransform::translation(V(0, 0, -600))));
  EXPECT_FALSE(r.draw(both_sides.value(), FixedTransform::translation(V(4000, 0, 0))));
  EXPECT_EQ(r.stats().culled_objects, 3u);
}

TEST(OtRenderer, AFullPoolDropsTheFarthestPrimitives) {
  core::MemoryBudget budget(1u << 20);
  core::BudgetArena& arena = budget.add_arena("render", 512u << 10, "the farthest are dropped");
  OtConfig c = plain_config();
  c.max_primitives = 4;
  OtRenderer r(c, &arena);
  ASSERT_TRUE(r.valid()) << r.error();
  // Six flat tiles in a row, at depths 100..600 in a shuffled order; the four nearest stay.
  const int depth_order[] = {3, 0, 5, 1, 4, 2};
  r.begin_frame();
  for (const int k : depth_order)
    r.draw_sprite(V(-50 + 20 * k, 0, 100 + 100 * k), F(4), kNoOtTexture, kRed);
  r.rasterize();
  EXPECT_EQ(r.stats().dropped_far, 2u);
  EXPECT_EQ(r.stats().primitives, 4u);
  EXPECT_GE(arena.panics(), 1u);
  // All of its memory came from the arena, at construction: the framebuffer and the rest.
  EXPECT_GE(r.footprint(), 320u * 240u * 2u);
  EXPECT_LE(r.footprint(), arena.high_water());
  for (int k = 0; k < 6; ++k) {
    const int x = 160 + (-50 + 20 * k) * 256 / (100 + 100 * k);  // the tile's centre
    EXPECT_EQ(pixel(r, x, 120) == kRed, k < 4) << "tile " << k;
  }
}

TEST(OtRenderer, TexturesLockedByTheFrameAndFlatSpritesWhenTheCacheIsFull) {
  OtConfig c = plain_config();
  c.texture_slots = 2;
  OtRenderer r(c);
  std::array<std::vector<std::uint16_t>, 3> texels;
  std::vector<OtTextureId> ids;
  const std::uint16_t colors[] = {kRed, kGreen, kBlue};
  for (int t = 0; t < 3; ++t) {
    texels[t].assign(16, colors[t]);
    texels[t][0] = 0;  // transparent corner
    const auto id = r.add_texture({4, 4, texels[t]});
    ASSERT_TRUE(id) << id.message();
    ids.push_back(id.value());
  }
  r.begin_frame();
  for (int t = 0; t < 3; ++t) r.draw_sprite(V(-60 + 60 * t, 0, 256), F(16), ids[t]);
  r.rasterize();
  EXPECT_EQ(r.stats().drawn_flat, 1u);  // the third: both slots held by the frame
  EXPECT_EQ(r.texture_cache().panics, 1u);
  // Textured sprites: 16 x 16 pixels less the transparent corner texel (4 x 4 pixels).
  EXPECT_EQ(count_pixels(r, kRed), 256u - 16u);
  EXPECT_EQ(count_pixels(r, kGreen), 256u - 16u);
  EXPECT_EQ(count_pixels(r, kBlue), 256u);   // flat: its mean colour, no transparency
  EXPECT_EQ(pixel(r, 100 - 8, 120 - 8), 0);  // the corner is transparent
  EXPECT_EQ(pixel(r, 100 + 7, 120 + 7), kRed);

  // The next frame releases the slots: the third is textured again.
  r.begin_frame();
  r.draw_sprite(V(60, 0, 256), F(16), ids[2]);
  r.rasterize();
  EXPECT_EQ(r.stats().drawn_flat, 0u);
  EXPECT_EQ(count_pixels(r, kBlue), 256u - 16u);
}

// Affine texture mapping: a 32 x 32 pixel square facing the camera, the 4 x 4 texture across
// it once (8 x 8 pixels a texel, exact here: no perspective to get wrong), then twice by
// wrapping; texel 0 lets the clear colour through.
TEST(OtRenderer, TexturedTrianglesMapTheirTexelsAndWrap) {
  OtRenderer r(plain_config());
  std::vector<std::uint16_t> texels(16);
  for (int i = 0; i < 16; ++i) texels[i] = rgb555(16 * i, 255 - 16 * i, 8 * i) | 0x8000;
  texels[5] = 0;  // transparent
  const auto tex = r.add_texture({4, 4, texels});
  ASSERT_TRUE(tex) << tex.message();
  Quad q(0, 0, 16, 256, kRed);
  const std::array<std::uint8_t, 8> once{0, 0, 4, 0, 4, 4, 0, 4};  // TL, TR, BR, BL
  const std::array<std::uint8_t, 8> twice{0, 0, 8, 0, 8, 8, 0, 8};
  OtMeshDesc d = q.desc();
  d.texture = tex.value();
  d.uvs = once;
  const auto mesh_once = r.add_mesh(d);
  d.uvs = twice;
  const auto mesh_twice = r.add_mesh(d);
  ASSERT_TRUE(mesh_once && mesh_twice) << mesh_once.message() << mesh_twice.message();

  r.begin_frame();
  EXPECT_TRUE(r.draw(mesh_once.value(), FixedTransform{}));
  r.rasterize();
  for (int j = 0; j < 4; ++j) {
    for (int i = 0; i < 4; ++i) {
      const std::uint16_t want = j * 4 + i == 5 ? 0 : texels[j * 4 + i];
      EXPECT_EQ(pixel(r, 144 + 8 * i + 4, 104 + 8 * j + 4), want) << i << "," << j;
      EXPECT_EQ(pixel(r, 144 + 8 * i, 104 + 8 * j), want) << i << "," << j;
      EXPECT_EQ(pixel(r, 144 + 8 * i + 7, 104 + 8 * j + 7), want) << i << "," << j;
    }
  }
  EXPECT_EQ(r.stats().pixels, 1024u - 64u);  // all but the transparent texel's 8 x 8

  r.begin_frame();
  r.draw(mesh_twice.value(), FixedTransform{});
  r.rasterize();
  for (int y = 0; y < 32; y += 3) {
    for (int x = 0; x < 16; x += 3) {
      EXPECT_EQ(pixel(r, 144 + x, 104 + y), pixel(r, 144 + x + 16, 104 + y)) << x << "," << y;
      EXPECT_EQ(pixel(r, 144 + x, 104 + y % 16), pixel(r, 144 + x, 104 + y % 16 + 16));
    }
  }
  EXPECT_EQ(pixel(r, 144 + 6, 104 + 2), texels[1]);  // 4 pixels a texel now: texel (1, 0)
  EXPECT_EQ(r.texture_cache().misses, 1u);           // one load serves both frames' draws
}

// With one texture slot, a second textured mesh in the same frame is drawn with its flat colours.
TEST(OtRenderer, TexturedMeshesAreDrawnFlatWhenNoTextureSlotIsFree) {
  OtConfig c = plain_config();
  c.texture_slots = 1;
  OtRenderer r(c);
  const std::vector<std::uint16_t> green(4, kGreen), blue(4, kBlue);
  const auto tg = r.add_texture({2, 2, green});
  const auto tb = r.add_texture({2, 2, blue});
  const std::array<std::uint8_t, 8> uv{0, 0, 2, 0, 2, 2, 0, 2};
  Quad left(-40, 0, 16, 256, kRed), right(40, 0, 16, 256, kRed);
  OtMeshDesc dl = left.desc(), dr = right.desc();
  dl.texture = tg.value();
  dr.texture = tb.value();
  dl.uvs = dr.uvs = uv;
  const auto ml = r.add_mesh(dl);
  const auto mr = r.add_mesh(dr);
  ASSERT_TRUE(ml && mr);
  r.begin_frame();
  r.draw(ml.value(), FixedTransform{});
  r.draw(mr.value(), FixedTransform{});
  r.rasterize();
  EXPECT_EQ(count_pixels(r, kGreen), 1024u);
  EXPECT_EQ(count_pixels(r, kRed), 1024u);  // the second, flat
  EXPECT_EQ(r.stats().drawn_flat, 2u);
  EXPECT_EQ(r.texture_cache().panics, 1u);
}

// Twelve small meshes drawn every frame through a cache of 3 slots: the image is the one a cache
// holding them all gives, and the misses show the reloads.
TEST(OtRenderer, MeshesThroughACacheSmallerThanTheScene) {
  std::vector<Quad> quads;
  for (int i = 0; i < 12; ++i) {
    quads.emplace_back(-110 + 20 * i, 0, 8, 256 + i, rgb555(20 * i, 255 - 20 * i, 100));
  }
  const auto run = [&](std::uint32_t slots, std::uint64_t& hash, core::CacheStats& stats) {
    OtConfig c = plain_config();
    c.mesh_slots = slots;
    OtRenderer r(c);
    std::vector<OtMeshId> ids;
    for (const Quad& q : quads) ids.push_back(r.add_mesh(q.desc()).value());
    for (int frame = 0; frame < 3; ++frame) {
      r.begin_frame();
      for (const OtMeshId id : ids) r.draw(id, FixedTransform{});
      r.rasterize();
    }
    hash = r.framebuffer_hash();
    stats = r.mesh_cache();
  };
  std::uint64_t small_hash = 0, big_hash = 0;
  core::CacheStats small{}, big{};
  run(3, small_hash, small);
  run(16, big_hash, big);
  EXPECT_EQ(small_hash, big_hash);
  EXPECT_EQ(big.misses, 12u);    // loaded once each
  EXPECT_EQ(small.misses, 36u);  // LRU over a cycle longer than the cache: every use a miss
  EXPECT_EQ(small.evictions, 33u);
  EXPECT_EQ(small.panics, 0u);
}

// A user who draws before ever calling begin_frame() gets the frame drawn all the same.
TEST(OtRenderer, DrawsBeforeTheFirstBeginFrame) {
  OtRenderer r(plain_config());
  std::vector<std::uint16_t> texels(16, kGreen);
  const auto tex = r.add_texture({4, 4, texels});
  ASSERT_TRUE(tex);
  EXPECT_TRUE(r.draw_sprite(V(0, 0, 256), F(16), tex.value()));
  r.rasterize();
  EXPECT_EQ(count_pixels(r, kGreen), 256u);
  EXPECT_EQ(r.texture_cache().misses, 1u);
}

TEST(OtRenderer, RegistrationErrorsNameTheProblem) {
  OtConfig c = plain_config();
  c.mesh_slot_bytes = 256;
  c.max_mesh_vertices = 8;
  OtRenderer r(c);
  const Quad q(0, 0, 1, 10, kRed);
  std::array<std::uint16_t, 6> bad_idx{0, 1, 2, 0, 2, 9};
  auto m = r.add_mesh({q.p, bad_idx, q.col});
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("index 5 is 9"), std::string::npos) << m.message();
  m = r.add_mesh({q.p, std::span<const std::uint16_t>(q.idx).first(4), q.col});
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("whole number of triangles"), std::string::npos) << m.message();
  std::vector<FixedVec3> many(9, V(0, 0, 0));
  m = r.add_mesh({many, q.idx, q.col});
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("max_mesh_vertices"), std::string::npos) << m.message();
  std::vector<FixedVec3> eight(8, V(0, 0, 0));
  std::vector<std::uint16_t> idx(60, 0);
  std::vector<std::uint16_t> col(20, kRed);
  m = r.add_mesh({eight, idx, col});
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("cache slot"), std::string::npos) << m.message();
  // A textured mesh: its texture registered, with power-of-two sides, a (u, v) per vertex.
  std::vector<std::uint16_t> odd(12, kRed);
  const auto t3 = r.add_texture({4, 3, odd});
  ASSERT_TRUE(t3);
  const std::array<std::uint8_t, 8> uv{};
  m = r.add_mesh({q.p, q.idx, q.col, true, t3.value(), uv});
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("power-of-two"), std::string::npos) << m.message();
  m = r.add_mesh({q.p, q.idx, q.col, true, 9, uv});
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("not registered"), std::string::npos) << m.message();
  std::vector<std::uint16_t> square(16, kRed);
  const auto t4 = r.add_texture({4, 4, square});
  m = r.add_mesh({q.p, q.idx, q.col, true, t4.value(), std::span(uv).first(6)});
  ASSERT_FALSE(m);
  EXPECT_NE(m.message().find("6 texel coordinates for 4 vertices"), std::string::npos)
      << m.message();
  std::vector<std::uint16_t> texels(15, kRed);
  const auto t = r.add_texture({4, 4, texels});
  ASSERT_FALSE(t);
  EXPECT_NE(t.message().find("15 texels for 4x4"), std::string::npos) << t.message();
  // An unknown id draws nothing and is counted.
  r.begin_frame();
  EXPECT_FALSE(r.draw(7, FixedTransform{}));
  EXPECT_FALSE(r.draw_sprite(V(0, 0, 100), F(1), 30));
  EXPECT_EQ(r.stats().invalid_draws, 2u);

  OtConfig wide = plain_config();
  wide.width = 2000;
  OtRenderer bad(wide);
  EXPECT_FALSE(bad.valid());
  EXPECT_NE(std::string(bad.error()).find("width"), std::string::npos);
  bad.begin_frame();
  EXPECT_FALSE(bad.draw_sprite(V(0, 0, 100), F(1), kNoOtTexture));
  bad.rasterize();
  EXPECT_TRUE(bad.framebuffer().empty());
}

TEST(OtRenderer, AnArenaTooSmallLeavesARendererThatSaysSo) {
  core::MemoryBudget budget(256u << 10);
  core::BudgetArena& arena = budget.add_arena("render", 64u << 10, "nothing is drawn");
  OtRenderer r(OtConfig{}, &arena);  // 320 x 240 x 2 bytes alone is 150 KiB
  EXPECT_FALSE(r.valid());
  EXPECT_NE(std::string(r.error()).find("arena"), std::string::npos);
  EXPECT_GE(arena.refusals(), 1u);
}

TEST(OtRenderer, TransformsAndLookAt) {
  // look_at puts the eye at the origin and the target straight ahead.
  const FixedVec3 eye = V(100, 200, -50), target = V(120, 0, 150);
  const FixedTransform view = look_at(eye, target, V(0, 1, 0));
  const FixedVec3 e = apply(view, eye);
  EXPECT_LE(std::abs(e.x.raw()) + std::abs(e.y.raw()) + std::abs(e.z.raw()), 8);
  const FixedVec3 t = apply(view, target);
  // The rotation's rows are good to 12 bits: off the axis by at most 1/2048 of the distance.
  const double distance = std::sqrt(20.0 * 20 + 200 * 200 + 200 * 200);
  EXPECT_LE(std::abs(t.x.to_double()), distance / 2048);
  EXPECT_LE(std::abs(t.y.to_double()), distance / 2048);
  EXPECT_NEAR(t.z.to_double(), distance, distance / 2048);
  // World up is up on the screen (view y down): a point above the target has negative view y.
  EXPECT_LT(apply(view, V(120, 10, 150)).y, fixed{});
  // Right-handed: looking down -z, world +x is on the right; looking down +z, on the left.
  EXPECT_GT(apply(look_at(V(0, 0, 10), V(0, 0, 0), V(0, 1, 0)), V(1, 0, 0)).x, fixed{});
  EXPECT_LT(apply(look_at(V(0, 0, -10), V(0, 0, 0), V(0, 1, 0)), V(1, 0, 0)).x, fixed{});
  // rotation_y from a facing direction, composed with a translation.
  const FixedTransform m =
      FixedTransform::translation(V(10, 0, 0)) * FixedTransform::rotation_y(F(0), F(1));
  const FixedVec3 p = apply(m, V(1, 0, 0));
  EXPECT_EQ(p.x, F(10));  // model +x turns to the facing (0, 1) in x, z
  EXPECT_EQ(p.z, F(1));
}

// A scene with everything: meshes turned and fogged, sprites textured and flat, overlaps. Its
// framebuffer hash is recorded: the same on every CPU (CI checks it under qemu-mipsel).
TEST(OtRenderer, SceneHashIsTheSameOnEveryCpu) {
  OtConfig c;
  c.fog_start = F(60);
  c.far_z = F(300);
  OtRenderer r(c);
  ASSERT_TRUE(r.valid());
  // A pyramid, and a floor of 4 x 4 tiles.
  const std::array<FixedVec3, 5> pyr{V(0, 4, 0), V(-3, 0, -3), V(3, 0, -3), V(3, 0, 3),
                                     V(-3, 0, 3)};
  const std::array<std::uint16_t, 18> pyr_idx{0, 2, 1, 0, 3, 2, 0, 4, 3, 0, 1, 4, 1, 2, 3, 1, 3, 4};
  const std::array<std::uint16_t, 6> pyr_col{rgb555(255, 80, 40), rgb555(200, 60, 30),
                                             rgb555(160, 50, 20), rgb555(220, 70, 35),
                                             rgb555(90, 20, 10),  rgb555(90, 20, 10)};
  std::vector<FixedVec3> floor;
  std::vector<std::uint16_t> floor_idx, floor_col;
  for (int z = 0; z <= 4; ++z)
    for (int x = 0; x <= 4; ++x) floor.push_back(V(-40 + 20 * x, 0, -40 + 20 * z));
  for (int z = 0; z < 4; ++z) {
    for (int x = 0; x < 4; ++x) {
      const auto i = static_cast<std::uint16_t>(z * 5 + x);
      const std::uint16_t quad[] = {
          i, static_cast<std::uint16_t>(i + 5), static_cast<std::uint16_t>(i + 6),
          i, static_cast<std::uint16_t>(i + 6), static_cast<std::uint16_t>(i + 1)};
      floor_idx.insert(floor_idx.end(), quad, quad + 6);
      const std::uint16_t col = (x + z) % 2 ? rgb555(60, 90, 60) : rgb555(40, 70, 40);
      floor_col.push_back(col);
      floor_col.push_back(col);
    }
  }
  std::vector<std::uint16_t> tex(64), stone(256);
  for (int i = 0; i < 64; ++i) tex[i] = (i % 8 + i / 8) % 3 == 0 ? 0 : rgb555(255, 240, 0);
  for (int i = 0; i < 256; ++i)  // 16 x 16 bricks with mortar lines
    stone[i] = i % 16 == 0 || (i / 16) % 8 == 0 ? rgb555(90, 90, 80) : rgb555(150, 70, 50);
  // The floor's texture twice across each tile: texel coordinates 0..128, wrapping.
  std::vector<std::uint8_t> floor_uv;
  for (int z = 0; z <= 4; ++z) {
    for (int x = 0; x <= 4; ++x) {
      floor_uv.push_back(static_cast<std::uint8_t>(32 * x));
      floor_uv.push_back(static_cast<std::uint8_t>(32 * z));
    }
  }
  const auto tx = r.add_texture({8, 8, tex});
  const auto ts = r.add_texture({16, 16, stone});
  ASSERT_TRUE(tx && ts);
  const auto pm = r.add_mesh({pyr, pyr_idx, pyr_col});
  const auto fm = r.add_mesh({floor, floor_idx, floor_col, true, ts.value(), floor_uv});
  ASSERT_TRUE(pm && fm) << pm.message() << fm.message();
  r.set_camera(look_at(V(0, 30, -70), V(0, 0, 0), V(0, 1, 0)));
  std::uint64_t hash = 0;
  for (int frame = 0; frame < 2; ++frame) {
    r.begin_frame();
    r.draw(fm.value(), FixedTransform{}, OtRenderer::Order::Backdrop);
    for (int i = 0; i < 5; ++i) {
      const FixedTransform at = FixedTransform::translation(V(-24 + 12 * i, 0, -10 + 8 * i));
      r.draw(pm.value(), at * FixedTransform::rotation_y(F(0.8), F(0.6)));
    }
    for (int i = 0; i < 20; ++i) {
      r.draw_sprite(V(-30 + 3 * i, 6 + (i % 3), 20 - 2 * i), F(3),
                    i % 2 ? tx.value() : kNoOtTexture, rgb555(40, 200, 255));
    }
    r.rasterize();
    hash = r.framebuffer_hash();
  }
  EXPECT_EQ(r.stats().dropped_far, 0u);
  EXPECT_GT(r.stats().primitives, 40u);
  EXPECT_GT(r.stats().pixels, 20000u);
  Image img;
  r.to_image(img);
  EXPECT_EQ(img.width(), 320);
  (void)write_png(img, ::testing::TempDir() + "ot_scene.png");  // for a person to look at
  EXPECT_EQ(hash, 0x870af02ec89493ddull) << std::hex << hash;
}

}  // namespace
}  // namespace spindle::render
