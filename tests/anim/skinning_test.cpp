#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <glm/gtc/matrix_transform.hpp>

#include <spindle/anim/skinning_job.h>

#include "anim_test_support.h"

namespace spindle::anim {
namespace {

using test::axis_angle;

struct Rng {
  std::uint32_t state = 12345;
  float next() {  // [0, 1)
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / 16777216.0f;
  }
};

struct Mesh {
  std::size_t n;
  std::vector<glm::mat4> palette;
  std::vector<std::uint16_t> joints;
  std::vector<float> weights;
  std::vector<float> px, py, pz, nx, ny, nz;
  std::vector<float> ox, oy, oz, onx, ony, onz;

  // `joints` palette matrices (rigid + uniform scale); the vertices use the first `used` of them
  // (all by default).
  explicit Mesh(std::size_t count, int joint_count = 6, int used_joints = 0) : n(count) {
    Rng rng;
    const float pick = static_cast<float>(used_joints > 0 ? used_joints : joint_count);
    for (int j = 0; j < joint_count; ++j) {
      const float f = static_cast<float>(j);
      palette.push_back(glm::translate(glm::mat4(1.0f), glm::vec3(f, -2.0f * f, 0.5f)) *
                        glm::mat4_cast(axis_angle(25.0f * f + 5.0f, {f, 1.0f, 2.0f - f})) *
                        glm::scale(glm::mat4(1.0f), glm::vec3(1.0f + 0.2f * f)));
    }
    for (std::size_t v = 0; v < n; ++v) {
      const int used = 1 + static_cast<int>(v % 4);  // 1 to 4 influences
      float w[4] = {0, 0, 0, 0}, sum = 0;
      for (int k = 0; k < used; ++k) sum += (w[k] = 0.1f + rng.next());
      for (int k = 0; k < 4; ++k) {
        weights.push_back(w[k] / sum);
        joints.push_back(static_cast<std::uint16_t>(rng.next() * pick));
      }
      px.push_back(rng.next() * 4 - 2);
      py.push_back(rng.next() * 4 - 2);
      pz.push_back(rng.next() * 4 - 2);
      const glm::vec3 nrm = glm::normalize(glm::vec3(rng.next() - 0.5f, rng.next() - 0.5f, 0.3f));
      nx.push_back(nrm.x);
      ny.push_back(nrm.y);
      nz.push_back(nrm.z);
    }
    for (auto* out : {&ox, &oy, &oz, &onx, &ony, &onz}) out->assign(n, -99.0f);
  }

  SkinningJob job() {
    SkinningJob j;
    j.palette = palette;
    j.joint_indices = joints;
    j.joint_weights = weights;
    j.in_positions = {px, py, pz};
    j.in_normals = {nx, ny, nz};
    j.out_positions = {ox, oy, oz};
    j.out_normals = {onx, ony, onz};
    return j;
  }

  // The per-vertex formula, influence by influence.
  glm::vec3 position(std::size_t v) const {
    glm::vec3 p(0.0f);
    for (int k = 0; k < 4; ++k)
      p += weights[4 * v + k] *
           glm::vec3(palette[joints[4 * v + k]] * glm::vec4(px[v], py[v], pz[v], 1.0f));
    return p;
  }
  glm::vec3 normal(std::size_t v) const {
    glm::vec3 r(0.0f);
    for (int k = 0; k < 4; ++k)
      r += weights[4 * v + k] *
           (glm::mat3(palette[joints[4 * v + k]]) * glm::vec3(nx[v], ny[v], nz[v]));
    return r;
  }
};

TEST(SkinningJob, UnnormalisedNormalsAndPositionsOnly) {
  Mesh m(21);
  SkinningJob j = m.job();
  j.normalize_normals = false;
  ASSERT_TRUE(j.run());
  for (std::size_t v = 0; v < m.n; ++v)
    test::expect_near({m.onx[v], m.ony[v], m.onz[v]}, m.normal(v), 1e-4f);

  Mesh p(21);
  SkinningJob pj = p.job();
  pj.in_normals = {};
  pj.out_normals = {};
  ASSERT_TRUE(pj.run());
  for (std::size_t v = 0; v < p.n; ++v) {
    test::expect_near({p.ox[v], p.oy[v], p.oz[v]}, p.position(v), 1e-4f);
    EXPECT_EQ(p.onx[v], -99.0f);  // untouched
  }
}

TEST(SkinningJob, BatchesGiveTheSameResultAsOneJob) {
  // Batches of 70 cross the job's 64-vertex blocks at different offsets, and write with
  // streaming stores (where the target has them); bit-identical anyway.
  constexpr std::size_t kCount = 301, kBatch = 70;
  Mesh whole(kCount), batched(kCount);
  ASSERT_TRUE(whole.job().run());
  const SkinningJob full = batched.job();
  for (std::size_t begin = 0; begin < kCount; begin += kBatch) {
    const std::size_t count = std::min(kBatch, kCount - begin);
    SkinningJob b = full.batch(begin, count);
    b.streaming_stores = true;
    ASSERT_TRUE(b.run());
  }
  EXPECT_EQ(whole.ox, batched.ox);
  EXPECT_EQ(whole.oz, batched.oz);
  EXPECT_EQ(whole.onx, batched.onx);
  EXPECT_EQ(whole.onz, batched.onz);
}

TEST(SkinningJob, ValidateRejectsBadInputs) {
  Mesh m(8);
  SkinningJob j = m.job();
  j.palette = {};
  EXPECT_EQ(j.validate().message(), "SkinningJob: empty palette");

  j = m.job();
  j.palette = std::span(m.palette).first(2);
  for (std::size_t i = 0; i < m.joints.size(); ++i) m.joints[i] = static_cast<std::uint16_t>(i % 2);
  m.joints[4 * 3 + 1] = 5;
  EXPECT_EQ(j.run().message(), "SkinningJob: vertex 3 joint index 5 out of range (palette has 2)");

  j = m.job();
  j.joint_weights = std::span(m.weights).first(31);
  EXPECT_EQ(j.validate().message(), "SkinningJob: joint_weights has 31 entries, expected 32");
  j = m.job();
  j.joint_indices = std::span(m.joints).first(4);
  EXPECT_EQ(j.validate().message(), "SkinningJob: joint_indices has 4 entries, expected 32");
  j = m.job();
  j.in_positions.y = std::span(m.py).first(7);
  EXPECT_EQ(j.validate().message(), "SkinningJob: in_positions x, y, z differ in size");
  j = m.job();
  j.out_positions.z = std::span(m.oz).first(7);
  EXPECT_EQ(j.validate().message(), "SkinningJob: out_positions must have 8 vertices");
  j = m.job();
  j.out_normals = {};
  EXPECT_EQ(j.validate().message(),
            "SkinningJob: in_normals and out_normals must both be set or both empty");
  j = m.job();
  j.in_normals.x = std::span(m.nx).first(3);
  EXPECT_EQ(j.validate().message(), "SkinningJob: normals must have 8 vertices");
}

// A vertex buffer of kStride-byte vertices: position at kPosOffset, normal at kNrmOffset, the
// rest padding that skinning must leave alone.
constexpr std::size_t kStride = 44, kPosOffset = 4, kNrmOffset = 20;
constexpr std::byte kPad{0xA5};

SkinningJob strided_job(Mesh& m, std::vector<std::byte>& vb) {
  vb.assign(m.n * kStride, kPad);
  SkinningJob j = m.job();
  j.out_positions = {};
  j.out_normals = {};
  j.out_positions_strided = {vb, kStride, kPosOffset};
  j.out_normals_strided = {vb, kStride, kNrmOffset};
  return j;
}

float at(const std::vector<std::byte>& vb, std::size_t v, std::size_t offset) {
  float f;
  std::memcpy(&f, vb.data() + v * kStride + offset, sizeof f);
  return f;
}

TEST(SkinningJob, MatchesPerVertexFormulaAtAnyVertexCount) {
  // Counts around the four-vertex groups and the portable path's 64-vertex blocks (several and a
  // partial one), with a 50-joint palette like a humanoid's.
  for (std::size_t count : {0, 1, 2, 3, 4, 5, 7, 8, 9, 63, 131, 3 * 64 + 5}) {
    SCOPED_TRACE(count);
    Mesh m(count, 50);
    SkinningJob job = m.job();
    glm::vec3 lo(0.0f), hi(0.0f);
    job.out_min = &lo;
    job.out_max = &hi;
    ASSERT_TRUE(job.run());
    glm::vec3 expect_lo(INFINITY), expect_hi(-INFINITY);
    for (std::size_t v = 0; v < m.n; ++v) {
      SCOPED_TRACE(v);
      test::expect_near({m.ox[v], m.oy[v], m.oz[v]}, m.position(v), 1e-4f);
      test::expect_near({m.onx[v], m.ony[v], m.onz[v]}, glm::normalize(m.normal(v)), 1e-5f);
      expect_lo = glm::min(expect_lo, glm::vec3(m.ox[v], m.oy[v], m.oz[v]));
      expect_hi = glm::max(expect_hi, glm::vec3(m.ox[v], m.oy[v], m.oz[v]));
    }
    EXPECT_EQ(lo, expect_lo);
    EXPECT_EQ(hi, expect_hi);
  }
}

TEST(SkinningJob, PaletteTooLargeForTheRowCopyGivesTheSameBits) {
  // 300 joints take the path that reads glm's columns; the vertices use only the first 6, so
  // the result must equal skinning with those 6 alone (the row path), bit for bit. So must a
  // batch smaller than its palette (5 vertices, 6 joints).
  constexpr std::size_t kCount = 37;
  Mesh small(kCount), large(kCount, 300, 6), tiny(kCount);
  ASSERT_EQ(small.joints, large.joints);
  ASSERT_TRUE(small.job().run());
  ASSERT_TRUE(large.job().run());
  const SkinningJob whole = tiny.job();
  for (std::size_t begin = 0; begin < kCount; begin += 5)
    ASSERT_TRUE(whole.batch(begin, std::min<std::size_t>(5, kCount - begin)).run());
  for (const Mesh* other : {&large, &tiny}) {
    EXPECT_EQ(small.ox, other->ox);
    EXPECT_EQ(small.oy, other->oy);
    EXPECT_EQ(small.oz, other->oz);
    EXPECT_EQ(small.onx, other->onx);
    EXPECT_EQ(small.ony, other->ony);
    EXPECT_EQ(small.onz, other->onz);
  }
}

TEST(SkinningJob, StridedOutputMatchesSoAAndKeepsThePadding) {
  for (std::size_t count : {0, 1, 3, 5, 8, 77}) {
    for (bool normalize : {true, false}) {
      SCOPED_TRACE(count);
      Mesh soa(count, 50), strided(count, 50);
      SkinningJob a = soa.job();
      a.normalize_normals = normalize;
      ASSERT_TRUE(a.run());
      std::vector<std::byte> vb;
      SkinningJob b = strided_job(strided, vb);
      b.normalize_normals = normalize;
      b.streaming_stores = true;  // SoA only; strided output ignores it
      ASSERT_TRUE(b.run());
      for (std::size_t v = 0; v < count; ++v) {
        SCOPED_TRACE(v);
        EXPECT_EQ(at(vb, v, kPosOffset + 0), soa.ox[v]);
        EXPECT_EQ(at(vb, v, kPosOffset + 4), soa.oy[v]);
        EXPECT_EQ(at(vb, v, kPosOffset + 8), soa.oz[v]);
        EXPECT_EQ(at(vb, v, kNrmOffset + 0), soa.onx[v]);
        EXPECT_EQ(at(vb, v, kNrmOffset + 4), soa.ony[v]);
        EXPECT_EQ(at(vb, v, kNrmOffset + 8), soa.onz[v]);
        for (std::size_t byte = 0; byte < kStride; ++byte) {
          const bool written = (byte >= kPosOffset && byte < kPosOffset + 12) ||
                               (byte >= kNrmOffset && byte < kNrmOffset + 12);
          if (!written) {
            EXPECT_EQ(vb[v * kStride + byte], kPad) << "byte " << byte;
          }
        }
      }
    }
  }
}

TEST(SkinningJob, StridedBatchesAndPositionsOnly) {
  // Batches cut the vertex buffer too; the last batch's bytes end at its last normal.
  constexpr std::size_t kCount = 301, kBatch = 70;
  Mesh soa(kCount, 50), strided(kCount, 50);
  ASSERT_TRUE(soa.job().run());
  std::vector<std::byte> vb;
  SkinningJob full = strided_job(strided, vb);
  const std::size_t used = (kCount - 1) * kStride + kNrmOffset + 12;
  full.out_positions_strided.bytes = std::span(vb).first(used);
  full.out_normals_strided.bytes = std::span(vb).first(used);
  for (std::size_t begin = 0; begin < kCount; begin += kBatch)
    ASSERT_TRUE(full.batch(begin, std::min(kBatch, kCount - begin)).run());
  for (std::size_t v = 0; v < kCount; ++v) {
    EXPECT_EQ(at(vb, v, kPosOffset + 8), soa.oz[v]);
    EXPECT_EQ(at(vb, v, kNrmOffset + 0), soa.onx[v]);
  }

  Mesh p(9);
  std::vector<std::byte> pvb;
  SkinningJob pj = strided_job(p, pvb);
  pj.in_normals = {};
  pj.out_normals_strided = {};
  ASSERT_TRUE(pj.run());
  for (std::size_t v = 0; v < p.n; ++v) {
    test::expect_near(
        {at(pvb, v, kPosOffset), at(pvb, v, kPosOffset + 4), at(pvb, v, kPosOffset + 8)},
        p.position(v), 1e-4f);
    EXPECT_EQ(pvb[v * kStride + kNrmOffset], kPad);  // no normals written
  }
}

TEST(SkinningJob, ValidateRejectsBadStrides) {
  Mesh m(8);
  std::vector<std::byte> vb;
  SkinningJob j = strided_job(m, vb);
  ASSERT_TRUE(j.validate());

  j.out_positions_strided.stride = 8;
  EXPECT_EQ(j.validate().message(),
            "SkinningJob: out_positions_strided.stride 8 is less than the 12 bytes of x, y, z");
  j = strided_job(m, vb);
  j.out_normals_strided.stride = 42;
  EXPECT_EQ(j.validate().message(),
            "SkinningJob: out_normals_strided.stride 42 and .offset 20 must be multiples of 4 "
            "(floats)");
  j = strided_job(m, vb);
  j.out_positions_strided.offset = 36;
  EXPECT_EQ(j.validate().message(),
            "SkinningJob: out_positions_strided.offset 36 leaves no room for x, y, z in a stride "
            "of 44");
  j = strided_job(m, vb);
  j.out_normals_strided.bytes = std::span(vb).subspan(1, 7 * kStride + kNrmOffset + 12);
  EXPECT_EQ(j.validate().message(), "SkinningJob: out_normals_strided.bytes is not 4-byte aligned");
  j = strided_job(m, vb);
  j.out_positions_strided.bytes = std::span(vb).first(7 * kStride + kPosOffset + 11);
  EXPECT_EQ(j.validate().message(),
            "SkinningJob: out_positions_strided.bytes has 323 bytes, 8 vertices need 324");
  j = strided_job(m, vb);
  j.out_positions = {m.ox, m.oy, m.oz};
  EXPECT_EQ(j.validate().message(),
            "SkinningJob: set out_positions or out_positions_strided, not both");
  j = strided_job(m, vb);
  j.out_normals = {m.onx, m.ony, m.onz};
  EXPECT_EQ(j.validate().message(),
            "SkinningJob: set out_normals or out_normals_strided, not both");
  j = strided_job(m, vb);
  j.out_normals_strided.offset = kPosOffset + 8;  // its x would be the positions' z
  EXPECT_EQ(j.validate().message(),
            "SkinningJob: out_positions_strided and out_normals_strided overlap");
  j = strided_job(m, vb);
  j.in_normals = {};
  EXPECT_EQ(j.validate().message(),
            "SkinningJob: in_normals and out_normals must both be set or both empty");
}

}  // namespace
}  // namespace spindle::anim
