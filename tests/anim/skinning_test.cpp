#include <gtest/gtest.h>

#include <cstdint>
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

  explicit Mesh(std::size_t count) : n(count) {
    Rng rng;
    for (int j = 0; j < 6; ++j) {  // rigid + uniform scale
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
        joints.push_back(static_cast<std::uint16_t>(rng.next() * 6.0f));
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

TEST(SkinningJob, MatchesPerVertexFormula) {
  Mesh m(3 * 64 + 5);  // several 64-vertex blocks and a partial one
  SkinningJob job = m.job();
  glm::vec3 lo(0.0f), hi(0.0f);
  job.out_min = &lo;
  job.out_max = &hi;
  ASSERT_TRUE(job.run());
  glm::vec3 expect_lo(INFINITY), expect_hi(-INFINITY);
  for (std::size_t v = 0; v < m.n; ++v) {
    expect_lo = glm::min(expect_lo, glm::vec3(m.ox[v], m.oy[v], m.oz[v]));
    expect_hi = glm::max(expect_hi, glm::vec3(m.ox[v], m.oy[v], m.oz[v]));
  }
  EXPECT_EQ(lo, expect_lo) << "the bounds are exactly those of the outputs";
  EXPECT_EQ(hi, expect_hi);
  for (std::size_t v = 0; v < m.n; ++v) {
    SCOPED_TRACE(v);
    test::expect_near({m.ox[v], m.oy[v], m.oz[v]}, m.position(v), 1e-4f);
    test::expect_near({m.onx[v], m.ony[v], m.onz[v]}, glm::normalize(m.normal(v)), 1e-5f);
  }
}

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

}  // namespace
}  // namespace spindle::anim
