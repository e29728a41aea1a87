// Meshes: every refusal with its message, bounds, and the primitives' winding (each triangle's
// geometric normal agrees with its vertices' normals: counter-clockwise seen from outside).
#include <spindle/render/mesh.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace spindle::render {
namespace {

std::vector<Vertex> five_vertices() {
  std::vector<Vertex> v(5);
  for (int i = 0; i < 5; ++i) v[static_cast<std::size_t>(i)].position = {float(i), 0, float(i % 2)};
  return v;
}

std::string refusal(const std::vector<Vertex>& v, const std::vector<std::uint32_t>& idx) {
  auto m = Mesh::create({.name = "rock", .vertices = v, .indices = idx});
  EXPECT_FALSE(m);
  return m ? std::string() : m.message();
}

TEST(Mesh, RefusesEachProblemNamingIt) {
  const std::vector<Vertex> v = five_vertices();
  EXPECT_EQ(refusal({}, {0, 1, 2}), "mesh 'rock': no vertices");
  EXPECT_EQ(refusal(v, {}), "mesh 'rock': no triangles (no indices)");
  EXPECT_EQ(refusal(v, {0, 1, 2, 3}), "mesh 'rock': 4 indices is not a multiple of 3");

  std::vector<std::uint32_t> idx(15, 0);
  idx[12] = 7;
  EXPECT_EQ(refusal(v, idx), "mesh 'rock': index 7 (at position 12) is out of range (5 vertices)");

  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::uint32_t> tri = {0, 1, 2};
  std::vector<Vertex> bad = v;
  bad[3].position.y = nan;
  EXPECT_EQ(refusal(bad, tri), "mesh 'rock': vertex 3 has a non-finite position");
  bad = v;
  bad[1].normal.z = inf;
  EXPECT_EQ(refusal(bad, tri), "mesh 'rock': vertex 1 has a non-finite normal");
  bad = v;
  bad[4].uv.x = -inf;
  EXPECT_EQ(refusal(bad, tri), "mesh 'rock': vertex 4 has a non-finite UV");
  bad = v;
  bad[0].color.w = nan;
  EXPECT_EQ(refusal(bad, tri), "mesh 'rock': vertex 0 has a non-finite colour");
}

TEST(Mesh, KeepsDataAndComputesBounds) {
  std::vector<Vertex> v(3);
  v[0].position = {-1, 0, 0};
  v[1].position = {3, 2, 0};
  v[2].position = {1, -2, 4};
  auto m =
      Mesh::create({.name = "tri", .vertices = v, .indices = std::vector<std::uint32_t>{0, 1, 2}});
  ASSERT_TRUE(m) << m.message();
  EXPECT_EQ(m.value().name(), "tri");
  EXPECT_EQ(m.value().triangle_count(), 1u);
  EXPECT_EQ(m.value().vertices().size(), 3u);
  EXPECT_EQ(m.value().bounds_center(), glm::vec3(1, 0, 2));
  // From (1, 0, 2): (-1, 0, 0) and (1, -2, 4) are sqrt(8) away, (3, 2, 0) sqrt(12).
  EXPECT_FLOAT_EQ(m.value().bounds_radius(), std::sqrt(12.0f));
}

// Every triangle with area: cross(b - a, c - a) points the way its vertices' normals do.
void expect_outward_winding(const Mesh& m) {
  const auto v = m.vertices();
  const auto idx = m.indices();
  int checked = 0;
  for (std::size_t t = 0; t < idx.size(); t += 3) {
    const Vertex& a = v[idx[t]];
    const Vertex& b = v[idx[t + 1]];
    const Vertex& c = v[idx[t + 2]];
    const glm::vec3 g = glm::cross(b.position - a.position, c.position - a.position);
    ASSERT_GT(glm::length(g), 1e-7f) << m.name() << " triangle " << t / 3 << " has no area";
    const glm::vec3 n = a.normal + b.normal + c.normal;
    EXPECT_GT(glm::dot(glm::normalize(g), glm::normalize(n)), 0.5f)
        << m.name() << " triangle " << t / 3 << " winds inward";
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

void expect_uvs_in_unit_square(const Mesh& m, float max_uv = 1.0f) {
  for (const Vertex& v : m.vertices()) {
    EXPECT_GE(v.uv.x, 0.0f);
    EXPECT_LE(v.uv.x, max_uv);
    EXPECT_GE(v.uv.y, 0.0f);
    EXPECT_LE(v.uv.y, max_uv);
  }
}

TEST(Primitives, CubeLayoutAndWinding) {
  const Mesh cube = make_cube(2.0f);
  EXPECT_EQ(cube.vertices().size(), 24u);
  EXPECT_EQ(cube.indices().size(), 36u);
  expect_outward_winding(cube);
  expect_uvs_in_unit_square(cube);
  for (const Vertex& v : cube.vertices()) {
    EXPECT_FLOAT_EQ(glm::dot(v.position, v.normal), 1.0f);  // on its face, 1 from the centre
    EXPECT_FLOAT_EQ(std::abs(v.position.x), 1.0f);
    EXPECT_FLOAT_EQ(std::abs(v.position.y), 1.0f);
    EXPECT_FLOAT_EQ(std::abs(v.position.z), 1.0f);
    EXPECT_EQ(v.color, glm::vec4(1.0f));
  }
  // Each face's four UVs are the four corners of 0..1, and its normal is a face normal.
  for (int f = 0; f < 6; ++f) {
    glm::vec2 sum{0};
    for (int k = 0; k < 4; ++k) {
      const Vertex& v = cube.vertices()[static_cast<std::size_t>(4 * f + k)];
      sum += v.uv;
      EXPECT_EQ(v.normal, cube.vertices()[static_cast<std::size_t>(4 * f)].normal);
    }
    EXPECT_EQ(sum, glm::vec2(2, 2));
  }
  EXPECT_EQ(cube.bounds_center(), glm::vec3(0));
  EXPECT_FLOAT_EQ(cube.bounds_radius(), std::sqrt(3.0f));
}

// Seen from the camera (right-handed, y up, looking down -z), the +Z face winds counter-clockwise.
TEST(Primitives, CubeFrontFaceIsCounterClockwiseOnScreen) {
  const Mesh cube = make_cube(1.0f);
  int front = 0;
  for (std::size_t t = 0; t < 36; t += 3) {
    const auto& v = cube.vertices();
    const Vertex& a = v[cube.indices()[t]];
    if (a.normal != glm::vec3(0, 0, 1)) continue;
    const glm::vec3 b = v[cube.indices()[t + 1]].position, c = v[cube.indices()[t + 2]].position;
    const glm::vec2 e1 = glm::vec2(b - a.position), e2 = glm::vec2(c - a.position);
    EXPECT_GT(e1.x * e2.y - e1.y * e2.x, 0.0f);
    ++front;
  }
  EXPECT_EQ(front, 2);
}

TEST(Primitives, SphereLayoutAndWinding) {
  const Mesh s = make_sphere(2.0f, 6, 10);
  EXPECT_EQ(s.vertices().size(), 7u * 11u);
  EXPECT_EQ(s.triangle_count(), 2u * 6u * 10u - 2u * 10u);  // poles: one triangle per segment
  expect_outward_winding(s);
  expect_uvs_in_unit_square(s);
  for (const Vertex& v : s.vertices()) {
    EXPECT_NEAR(glm::length(v.position), 2.0f, 1e-5f);
    EXPECT_NEAR(glm::length(v.normal), 1.0f, 1e-5f);
  }
  EXPECT_NEAR(s.bounds_radius(), 2.0f, 1e-4f);
  const Mesh tiny = make_sphere(1.0f, 0, 0);  // clamped to 2 rings, 3 segments
  EXPECT_EQ(tiny.triangle_count(), 6u);
  expect_outward_winding(tiny);
}

TEST(Primitives, PlaneFacesUp) {
  const Mesh p = make_plane(4.0f, 3.0f);
  EXPECT_EQ(p.vertices().size(), 4u);
  EXPECT_EQ(p.triangle_count(), 2u);
  expect_outward_winding(p);
  expect_uvs_in_unit_square(p, 3.0f);
  for (const Vertex& v : p.vertices()) {
    EXPECT_EQ(v.normal, glm::vec3(0, 1, 0));
    EXPECT_EQ(v.position.y, 0.0f);
    EXPECT_EQ(std::abs(v.position.x), 2.0f);
  }
}

TEST(Primitives, DartPointsPlusXBothSides) {
  const Mesh d = make_dart(2.0f);
  expect_outward_winding(d);
  expect_uvs_in_unit_square(d);
  int up = 0, down = 0;
  float max_x = -1e9f;
  for (const Vertex& v : d.vertices()) max_x = std::max(max_x, v.position.x);
  EXPECT_FLOAT_EQ(max_x, 1.0f);
  for (std::size_t t = 0; t < d.indices().size(); t += 3)
    (d.vertices()[d.indices()[t]].normal.y > 0 ? up : down)++;
  EXPECT_EQ(up, 2);
  EXPECT_EQ(down, 2);
}

}  // namespace
}  // namespace spindle::render
