// The swarm collision system against brute-force O(n^2) references: neighbour sets without the
// caps, the exact capped rule (scan order, first max_neighbours among the first max_candidates)
// on clustered inputs, the bound itself, overlap pushes, flock sums, bad configurations and
// input, and bit-identical outputs across job modes, worker counts and chunk counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "spindle/physics/swarm.h"
#include "swarm_test_util.h"

namespace spindle::swarm {
namespace {

using test::Agents;
using test::single_jobs;

Config<float> make_config(std::uint32_t n, float lo, float hi, float cell, float radius,
                          Boundary boundary) {
  Config<float> c;
  c.max_agents = n;
  c.min_x = c.min_y = lo;
  c.max_x = c.max_y = hi;
  c.cell_size = cell;
  c.radius = radius;
  c.boundary = boundary;
  c.min_chunk_agents = 16;  // small inputs still split into many chunks
  return c;
}

// Offset from a to b the way the swarm measures it (same float expression, so the same bits).
std::pair<float, float> offset(const Config<float>& c, float ax, float ay, float bx, float by) {
  float dx = bx - ax, dy = by - ay;
  if (c.boundary == Boundary::Wrap) {
    const float ex = c.max_x - c.min_x, ey = c.max_y - c.min_y;
    const float hx = ex / 2, hy = ey / 2;
    dx = dx > hx ? dx - ex : (dx < -hx ? dx + ex : dx);
    dy = dy > hy ? dy - ey : (dy < -hy ? dy + ey : dy);
  }
  return {dx, dy};
}

bool within(const Config<float>& c, const Agents& a, std::size_t i, std::size_t j) {
  const auto [dx, dy] = offset(c, a.x[i], a.y[i], a.x[j], a.y[j]);
  return dx * dx + dy * dy <= c.radius * c.radius;
}

// Slot of cell `cj` in the scan of cell `ci` along one axis, or -1 when not scanned: the
// documented order (c-1, c, c+1; wrapped on a torus; a torus narrower than 3 cells in index
// order).
int axis_slot(std::uint32_t ci, std::uint32_t cj, std::uint32_t cells, Boundary b) {
  if (b == Boundary::Wrap) {
    if (cells < 3) return static_cast<int>(cj);
    const std::uint32_t d = (cj + cells - ci) % cells;
    return d == 0 ? 1 : d == 1 ? 2 : d == cells - 1 ? 0 : -1;
  }
  const int d = static_cast<int>(cj) - static_cast<int>(ci);
  return d >= -1 && d <= 1 ? d + 1 : -1;
}

// The capped rule, brute force: every agent j with its scan slot, ordered by (slot, j), the
// first max_candidates of them, then those within radius (self excluded), the first
// max_neighbours. Cells come from Swarm::cell_of (the quantisation is not what is tested here).
std::vector<std::vector<std::uint32_t>> reference(const Swarm<float>& s, const Agents& a) {
  const Config<float>& c = s.config();
  const std::size_t n = a.size();
  std::vector<CellCoord> cell(n);
  for (std::size_t i = 0; i < n; ++i) cell[i] = s.cell_of(a.x[i], a.y[i]);
  std::vector<std::vector<std::uint32_t>> out(n);
  std::vector<std::pair<int, std::uint32_t>> cand;
  for (std::size_t i = 0; i < n; ++i) {
    cand.clear();
    for (std::size_t j = 0; j < n; ++j) {
      const int sx = axis_slot(cell[i].x, cell[j].x, s.cells_x(), c.boundary);
      const int sy = axis_slot(cell[i].y, cell[j].y, s.cells_y(), c.boundary);
      if (sx < 0 || sy < 0) continue;
      cand.push_back({sy * 3 + sx, static_cast<std::uint32_t>(j)});
    }
    std::sort(cand.begin(), cand.end());
    if (cand.size() > c.max_candidates) cand.resize(c.max_candidates);
    for (const auto& [slot, j] : cand) {
      if (j == i || !within(c, a, i, j)) continue;
      out[i].push_back(j);
      if (out[i].size() == c.max_neighbours) break;
    }
  }
  return out;
}

// The swarm's neighbours of agent i, as agent indices in the order they were written.
std::vector<std::uint32_t> found(const Swarm<float>& s, std::uint32_t agent) {
  std::vector<std::uint32_t> v;
  for (const std::uint32_t k : s.neighbours(s.rank()[agent])) v.push_back(s.order()[k]);
  return v;
}

class SwarmModes : public ::testing::TestWithParam<jobs::Mode> {};

TEST_P(SwarmModes, UncappedNeighboursAreEveryAgentWithinRadius) {
  SPINDLE_REQUIRE_MODE(GetParam());
  jobs::JobSystem js(test::config_for(GetParam()));
  for (const Boundary b : {Boundary::Clamp, Boundary::Wrap}) {
    for (const float radius : {1.0f, 0.7f}) {
      const Agents a = test::random_agents(3000, 0.0f, 40.0f, 7, false);
      Config<float> c = make_config(3000, 0.0f, 40.0f, 1.0f, radius, b);
      c.max_neighbours = 64;    // never reached at this density
      c.max_candidates = 1024;  // neither
      Swarm<float> s(c);
      ASSERT_TRUE(s.valid()) << s.error();
      ASSERT_TRUE(s.build(js, 8, a.spans()));
      s.find_neighbours(js, 8);
      EXPECT_EQ(s.stats().neighbour_capped, 0u);
      EXPECT_EQ(s.stats().candidate_capped, 0u);
      std::size_t total = 0;
      for (std::uint32_t i = 0; i < a.size(); ++i) {
        std::vector<std::uint32_t> want;
        for (std::uint32_t j = 0; j < a.size(); ++j)
          if (j != i && within(c, a, i, j)) want.push_back(j);
        std::vector<std::uint32_t> got = found(s, i);
        std::sort(got.begin(), got.end());
        ASSERT_EQ(got, want) << "agent " << i << " boundary " << static_cast<int>(b);
        total += want.size();
      }
      EXPECT_GT(total, a.size());  // the test saw real neighbours
    }
  }
}

TEST_P(SwarmModes, CappedNeighboursFollowTheDocumentedRule) {
  SPINDLE_REQUIRE_MODE(GetParam());
  jobs::JobSystem js(test::config_for(GetParam()));
  struct Case {
    Boundary boundary;
    float lo, hi, cell, radius;
    std::uint32_t k, m;
    float spread_lo, spread_hi;  // where agents are placed (outside the bounds: clamped)
  };
  const Case cases[] = {
      {Boundary::Clamp, 0, 20, 1.0f, 1.0f, 8, 40, 0, 20},
      {Boundary::Clamp, 0, 20, 1.0f, 0.8f, 5, 200, -3, 23},  // agents outside the bounds
      {Boundary::Wrap, 0, 20, 1.0f, 1.0f, 8, 40, 0, 20},
      {Boundary::Wrap, 0, 2.5f, 1.0f, 1.0f, 6, 30, 0, 2.5f},  // 2 x 2 cells: each visited once
      {Boundary::Wrap, 0, 3.5f, 1.0f, 1.0f, 12, 1000, 0, 3.5f},
  };
  for (const Case& t : cases) {
    const Agents a = test::random_agents(1500, t.spread_lo, t.spread_hi, 11, true);
    Config<float> c = make_config(2000, t.lo, t.hi, t.cell, t.radius, t.boundary);
    c.max_neighbours = t.k;
    c.max_candidates = t.m;
    Swarm<float> s(c);
    ASSERT_TRUE(s.valid()) << s.error();
    ASSERT_TRUE(s.build(js, 5, a.spans()));
    s.find_neighbours(js, 5);
    EXPECT_GT(s.stats().neighbour_capped, 0u);  // the caps did bite
    const auto want = reference(s, a);
    std::uint32_t capped = 0;
    for (std::uint32_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(found(s, i), want[i]) << "agent " << i << " case hi=" << t.hi;
      capped += want[i].size() == t.k ? 1u : 0u;
    }
    EXPECT_EQ(s.stats().neighbour_capped, capped);
    EXPECT_LE(s.stats().max_scanned, t.m);
  }
}

TEST_P(SwarmModes, EveryAgentInOneCellCostsTheCapsNotN) {
  SPINDLE_REQUIRE_MODE(GetParam());
  jobs::JobSystem js(test::config_for(GetParam()));
  const std::uint32_t n = 5000;
  Agents a;
  for (std::uint32_t i = 0; i < n; ++i) {
    a.x.push_back(5.25f + 0.0001f * static_cast<float>(i % 100));
    a.y.push_back(5.5f);
  }
  Config<float> c = make_config(n, 0, 10, 1, 1, Boundary::Clamp);
  c.max_neighbours = 7;
  c.max_candidates = 50;
  Swarm<float> s(c);
  ASSERT_TRUE(s.build(js, 4, a.spans()));
  s.find_neighbours(js, 4);
  // Everything is within radius, so each agent keeps the first 7 agents of the cell in index
  // order, skipping itself, after examining at most 8 of them.
  for (std::uint32_t i = 0; i < n; ++i) {
    std::vector<std::uint32_t> want;
    for (std::uint32_t j = 0; want.size() < 7; ++j)
      if (j != i) want.push_back(j);
    ASSERT_EQ(found(s, i), want) << i;
  }
  EXPECT_EQ(s.stats().neighbour_capped, n);
  EXPECT_LE(s.stats().max_scanned, 50u);
  // With only the candidate cap in reach: at most 50 examined, 49 kept.
  c.max_neighbours = 100;
  Swarm<float> t(c);
  ASSERT_TRUE(t.build(js, 4, a.spans()));
  t.find_neighbours(js, 4);
  EXPECT_EQ(t.stats().candidate_capped, n);
  EXPECT_EQ(t.stats().max_scanned, 50u);
  EXPECT_EQ(t.neighbours(t.rank()[0]).size(), 49u);
  EXPECT_EQ(t.neighbours(t.rank()[n - 1]).size(), 50u);  // not among the 50 examined
}

TEST_P(SwarmModes, OutputsAreBitIdenticalForEveryChunkAndWorkerCount) {
  SPINDLE_REQUIRE_MODE(GetParam());
  const std::pair<Boundary, Shape> kinds[] = {{Boundary::Clamp, Shape::Circle},
                                              {Boundary::Wrap, Shape::Circle},
                                              {Boundary::Wrap, Shape::Aabb}};
  for (const auto& [b, shape] : kinds) {
    const Agents a = test::random_agents(20000, 0.0f, 100.0f, 3, true);
    Config<float> c = make_config(20000, 0, 100, 1.0f, 1.0f, b);
    c.shape = shape;
    c.max_neighbours = 12;
    c.max_candidates = 48;
    c.min_chunk_agents = 64;
    std::uint64_t reference_hash = 0;
    for (const std::uint32_t workers : {1u, 2u, 3u}) {
      if (GetParam() == jobs::Mode::Single && workers > 1) continue;
      jobs::JobSystem js(test::config_for(GetParam(), workers));
      Swarm<float> s(c);
      for (const std::uint32_t chunks : {1u, 2u, 3u, 7u, 16u, 64u}) {
        ASSERT_TRUE(s.build(js, chunks, a.spans()));
        s.find_neighbours(js, chunks);
        s.resolve_overlaps(js, chunks, 0.8f);
        const std::uint64_t h = test::frame_hash(s);
        if (reference_hash == 0) reference_hash = h;
        EXPECT_EQ(h, reference_hash) << "workers " << workers << " chunks " << chunks;
      }
    }
    // The same hash as single mode with one chunk, computed afresh.
    jobs::JobSystem single(test::config_for(jobs::Mode::Single, 1));
    Swarm<float> s(c);
    ASSERT_TRUE(s.build(single, 1, a.spans()));
    s.find_neighbours(single, 1);
    s.resolve_overlaps(single, 1, 0.8f);
    EXPECT_EQ(test::frame_hash(s), reference_hash);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, SwarmModes, ::testing::ValuesIn(test::own_modes()),
                         test::mode_name);

TEST(Swarm, IndexAndSortedCopiesMatchTheInput) {
  const Agents a = test::random_agents(4000, -1.0f, 31.0f, 5, true);
  Swarm<float> s(make_config(4000, 0, 30, 1.5f, 1.0f, Boundary::Clamp));
  ASSERT_TRUE(s.build(single_jobs(), 1, a.spans()));
  ASSERT_EQ(s.count(), 4000u);
  std::vector<bool> seen(4000);
  for (std::uint32_t k = 0; k < s.count(); ++k) {
    const std::uint32_t i = s.order()[k];
    ASSERT_FALSE(seen[i]);
    seen[i] = true;
    EXPECT_EQ(s.rank()[i], k);
    EXPECT_EQ(s.x()[k], a.x[i]);
    EXPECT_EQ(s.vy()[k], a.vy[i]);
    EXPECT_EQ(s.radius()[k], a.radius[i]);
    // Sorted by Morton code, agent index within a code.
    if (k > 0) {
      const std::uint32_t prev = s.order()[k - 1];
      const std::uint32_t mk = s.morton(s.cell_of(a.x[i], a.y[i]));
      const std::uint32_t mp = s.morton(s.cell_of(a.x[prev], a.y[prev]));
      EXPECT_TRUE(mp < mk || (mp == mk && prev < i));
    }
  }
  // Every cell's range holds exactly its agents.
  std::uint32_t total = 0;
  for (std::uint32_t cy = 0; cy < s.cells_y(); ++cy) {
    for (std::uint32_t cx = 0; cx < s.cells_x(); ++cx) {
      const auto [b, e] = s.cell_range({cx, cy});
      total += e - b;
      for (std::uint32_t k = b; k < e; ++k) {
        const CellCoord c = s.cell_of(s.x()[k], s.y()[k]);
        EXPECT_EQ(c.x, cx);
        EXPECT_EQ(c.y, cy);
      }
    }
  }
  EXPECT_EQ(total, 4000u);
}

TEST(Swarm, MortonRangeOfANonSquareGridStaysSmall) {
  Config<float> c = make_config(10, 0, 1, 1, 1, Boundary::Clamp);
  c.max_x = 1000;  // 1000 x 3 cells
  c.max_y = 3;
  Swarm<float> s(c);
  ASSERT_TRUE(s.valid()) << s.error();
  EXPECT_EQ(s.cells_x(), 1000u);
  EXPECT_EQ(s.cells_y(), 3u);
  EXPECT_EQ(s.morton_range(), 1024u * 4u);
  // Distinct cells, distinct codes, all inside the range.
  std::vector<bool> used(s.morton_range());
  for (std::uint32_t y = 0; y < 3; ++y) {
    for (std::uint32_t x = 0; x < 1000; ++x) {
      const std::uint32_t m = s.morton({x, y});
      ASSERT_LT(m, s.morton_range());
      ASSERT_FALSE(used[m]);
      used[m] = true;
    }
  }
  EXPECT_EQ(s.morton({1, 0}), 1u);  // interleaved low bits
  EXPECT_EQ(s.morton({0, 1}), 2u);
  EXPECT_EQ(s.morton({4, 0}), 16u);  // x bits past y's two go on top, in order
}

TEST(Swarm, QueryAppliesTheSameRuleAroundAPoint) {
  const Agents a = test::random_agents(2000, 0.0f, 20.0f, 9, true);
  Config<float> c = make_config(2000, 0, 20, 1, 1, Boundary::Wrap);
  c.max_neighbours = 10;
  c.max_candidates = 30;
  Swarm<float> s(c);
  ASSERT_TRUE(s.build(single_jobs(), 1, a.spans()));
  s.find_neighbours(single_jobs(), 1);
  // Around an agent's own position the query examines the same candidates and excludes nobody,
  // so without the agent itself it is a prefix of the agent's neighbour list.
  std::uint32_t out[10];
  for (std::uint32_t k = 0; k < s.count(); k += 37) {
    const std::uint32_t got = s.query(s.x()[k], s.y()[k], out);
    std::vector<std::uint32_t> q(out, out + got);
    const auto self = std::find(q.begin(), q.end(), k);
    if (self != q.end()) q.erase(self);
    const auto nb = s.neighbours(k);
    ASSERT_LE(q.size(), nb.size());
    EXPECT_TRUE(std::equal(q.begin(), q.end(), nb.begin()));
  }
  EXPECT_EQ(s.query(5, 5, std::span<std::uint32_t>(out, 3)) <= 3, true);
}

TEST(Swarm, OverlapPushesSeparatePairsSymmetrically) {
  Agents a;
  a.x = {1.0f, 1.6f, 5.0f, 5.0f, 8.0f};
  a.y = {1.0f, 1.0f, 5.0f, 5.0f, 8.0f};
  a.radius = {0.5f, 0.5f, 0.25f, 0.25f, 0.5f};
  Config<float> c = make_config(8, 0, 10, 1, 1, Boundary::Clamp);
  Swarm<float> s(c);
  ASSERT_TRUE(s.build(single_jobs(), 1, a.spans()));
  s.find_neighbours(single_jobs(), 1);
  s.resolve_overlaps(single_jobs(), 1, 1.0f);
  auto push = [&](std::uint32_t i) {
    return std::pair{s.push_x()[s.rank()[i]], s.push_y()[s.rank()[i]]};
  };
  // Overlap 0.4: each moves 0.2 away from the other.
  EXPECT_NEAR(push(0).first, -0.2f, 1e-6f);
  EXPECT_NEAR(push(1).first, 0.2f, 1e-6f);
  EXPECT_EQ(push(0).second, 0.0f);
  // Coincident: apart along x by half the summed radii each, lower index to -x.
  EXPECT_NEAR(push(2).first, -0.25f, 1e-6f);
  EXPECT_NEAR(push(3).first, 0.25f, 1e-6f);
  EXPECT_EQ(push(4).first, 0.0f);
  EXPECT_EQ(push(4).second, 0.0f);
}

TEST(Swarm, BoxOverlapsPushAlongTheAxisOfLeastOverlap) {
  Agents a;
  // 0 and 1: x overlap 0.2, y overlap 0.9 -> apart along x. 2 and 3: y overlap 0.1 -> along y.
  // 4 and 5: centres level in x, overlapping in x less than in y -> along x by index order.
  // 6: touches nobody (x overlap 0.3 with 7, y overlap -0.1).
  a.x = {1.0f, 1.8f, 5.0f, 5.1f, 8.0f, 8.0f, 2.0f, 2.5f};
  a.y = {1.0f, 1.1f, 1.0f, 1.9f, 5.0f, 5.1f, 8.0f, 9.0f};
  a.radius = {0.5f, 0.5f, 0.5f, 0.5f, 0.2f, 0.2f, 0.4f, 0.4f};  // half widths
  a.half_height = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.45f, 0.45f};
  Config<float> c = make_config(8, 0, 10, 1.5f, 1.5f, Boundary::Clamp);
  c.shape = Shape::Aabb;
  Swarm<float> s(c);
  ASSERT_TRUE(s.valid()) << s.error();
  ASSERT_TRUE(s.build(single_jobs(), 1, a.spans()));
  s.find_neighbours(single_jobs(), 1);
  s.resolve_overlaps(single_jobs(), 1, 1.0f);
  auto push = [&](std::uint32_t i) {
    return std::pair{s.push_x()[s.rank()[i]], s.push_y()[s.rank()[i]]};
  };
  EXPECT_NEAR(push(0).first, -0.1f, 1e-6f);
  EXPECT_NEAR(push(1).first, 0.1f, 1e-6f);
  EXPECT_EQ(push(0).second, 0.0f);
  EXPECT_NEAR(push(2).second, -0.05f, 1e-6f);
  EXPECT_NEAR(push(3).second, 0.05f, 1e-6f);
  EXPECT_EQ(push(2).first, 0.0f);
  EXPECT_NEAR(push(4).first, -0.2f, 1e-6f);
  EXPECT_NEAR(push(5).first, 0.2f, 1e-6f);
  EXPECT_EQ(push(6).first, 0.0f);
  EXPECT_EQ(push(6).second, 0.0f);
}

TEST(Swarm, FlockSumsMatchABruteForceSum) {
  const Agents a = test::random_agents(1500, 0.0f, 15.0f, 21, false);
  Config<float> c = make_config(1500, 0, 15, 1, 1, Boundary::Wrap);
  c.max_neighbours = 64;
  c.max_candidates = 1024;
  Swarm<float> s(c);
  ASSERT_TRUE(s.build(single_jobs(), 1, a.spans()));
  s.find_neighbours(single_jobs(), 1);
  for (std::uint32_t i = 0; i < a.size(); i += 13) {
    const FlockSums<float> f = s.flock(s.rank()[i]);
    double sep_x = 0, vel_y = 0, off_x = 0;
    std::uint32_t count = 0;
    for (std::uint32_t j = 0; j < a.size(); ++j) {
      if (j == i || !within(c, a, i, j)) continue;
      const auto [dx, dy] = offset(c, a.x[i], a.y[i], a.x[j], a.y[j]);
      const double d2 = double{dx} * dx + double{dy} * dy;
      if (d2 > 0) sep_x -= dx / d2;
      vel_y += a.vy[j];
      off_x += dx;
      ++count;
    }
    EXPECT_EQ(f.count, count);
    EXPECT_NEAR(f.separation_x, sep_x, 1e-3 * (1 + std::abs(sep_x)));
    EXPECT_NEAR(f.velocity_y, vel_y, 1e-4 * (1 + count));
    EXPECT_NEAR(f.offset_x, off_x, 1e-4 * (1 + count));
  }
}

TEST(Swarm, BadConfigurationsAreReportedNotUsed) {
  const Config<float> good = make_config(100, 0, 10, 1, 1, Boundary::Clamp);
  auto with = [&](auto change) {
    Config<float> c = good;
    change(c);
    return c;
  };
  const Config<float> bad[] = {
      with([](Config<float>& c) { c.max_agents = 0; }),
      with([](Config<float>& c) { c.max_neighbours = 0; }),
      with([](Config<float>& c) { c.max_candidates = 0; }),
      with([](Config<float>& c) { c.max_candidates = 1025; }),
      with([](Config<float>& c) { c.max_chunks = 0; }),
      with([](Config<float>& c) { c.max_x = c.min_x; }),
      with([](Config<float>& c) { c.cell_size = 0; }),
      with([](Config<float>& c) { c.radius = 1.5f; }),  // beyond the 3 x 3 cells
      with([](Config<float>& c) { c.radius = std::numeric_limits<float>::quiet_NaN(); }),
      with([](Config<float>& c) { c.max_x = 1e9f; }),  // too many cells
      with([](Config<float>& c) {
        c.max_x = 10000;  // 10000 x 10000 cells: Morton range 2^28
        c.max_y = 10000;
      }),
  };
  for (const Config<float>& c : bad) {
    Swarm<float> s(c);
    EXPECT_FALSE(s.valid());
    EXPECT_STRNE(s.error(), "");
    const float xs[] = {1, 2};
    EXPECT_FALSE(s.build(single_jobs(), 1, AgentSpans<float>{xs, xs}));
    s.find_neighbours(single_jobs(), 1);
    s.resolve_overlaps(single_jobs(), 1, 1.0f);
    EXPECT_EQ(s.count(), 0u);
  }
}

TEST(Swarm, OverCapacityAndMismatchedSpansAreRefused) {
  Swarm<float> s(make_config(4, 0, 10, 1, 1, Boundary::Clamp));
  const float xs[] = {1, 2, 3, 4, 5};
  EXPECT_FALSE(s.build(single_jobs(), 1, AgentSpans<float>{xs, xs}));
  EXPECT_EQ(s.stats().rejected, 5u);
  EXPECT_EQ(s.count(), 0u);
  EXPECT_FALSE(s.build(single_jobs(), 1,
                       AgentSpans<float>{std::span(xs, 3), std::span<const float>(xs, 2)}));
  EXPECT_TRUE(s.build(single_jobs(), 1, AgentSpans<float>{std::span(xs, 4), std::span(xs, 4)}));
  EXPECT_EQ(s.count(), 4u);
  // Zero agents is a valid frame.
  EXPECT_TRUE(s.build(single_jobs(), 4, AgentSpans<float>{}));
  s.find_neighbours(single_jobs(), 4);
  EXPECT_EQ(s.count(), 0u);
  std::uint32_t out[4];
  EXPECT_EQ(s.query(1, 1, out), 0u);
}

TEST(Swarm, NonFinitePositionsNeitherCrashNorBecomeNeighbours) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const Boundary b : {Boundary::Clamp, Boundary::Wrap}) {
    Agents a;
    a.x = {nan, 0.5f, inf, -inf, 0.6f, 1e30f};
    a.y = {0.5f, 0.5f, 0.5f, nan, 0.5f, -1e30f};
    Swarm<float> s(make_config(6, 0, 10, 1, 1, b));
    ASSERT_TRUE(s.build(single_jobs(), 1, a.spans()));
    s.find_neighbours(single_jobs(), 1);
    s.resolve_overlaps(single_jobs(), 1, 1.0f);
    const std::vector<std::uint32_t> want = {4};
    EXPECT_EQ(found(s, 1), want);
    EXPECT_TRUE(found(s, 0).empty());
  }
}

TEST(Swarm, DoubleScalarGivesTheSameNeighbours) {
  const Agents a = test::random_agents(1000, 0.0f, 12.0f, 4, true);
  Config<double> c;
  c.max_agents = 1000;
  c.max_x = c.max_y = 12;
  c.max_neighbours = 9;
  c.max_candidates = 40;
  c.boundary = Boundary::Wrap;
  Swarm<double> s(c);
  ASSERT_TRUE(s.valid()) << s.error();
  const std::vector<double> x(a.x.begin(), a.x.end()), y(a.y.begin(), a.y.end());
  ASSERT_TRUE(s.build(single_jobs(), 1, AgentSpans<double>{x, y}));
  s.find_neighbours(single_jobs(), 1);
  s.resolve_overlaps(single_jobs(), 1, 1.0);
  std::uint32_t with_neighbours = 0;
  for (std::uint32_t k = 0; k < s.count(); ++k) with_neighbours += s.neighbours(k).empty() ? 0 : 1;
  EXPECT_GT(with_neighbours, 900u);
}

// CellOrder::Rows lists a row's cells as one range; the lists, and so every output per agent,
// are those of Morton order, at both boundaries and any chunk count, with the caps biting.
TEST(Swarm, RowOrderGivesEveryAgentWhatMortonOrderGives) {
  const Agents a = test::random_agents(3000, 0.0f, 40.0f, 17, true);
  jobs::JobSystem js(test::config_for(jobs::Mode::Static, 2));
  for (const Boundary boundary : {Boundary::Clamp, Boundary::Wrap}) {
    Config<float> c;
    c.max_agents = 3000;
    c.max_x = c.max_y = 40.0f;
    c.max_neighbours = 7;
    c.max_candidates = 24;
    c.min_chunk_agents = 64;
    c.boundary = boundary;
    Swarm<float> morton(c);
    c.cell_order = CellOrder::Rows;
    Swarm<float> rows(c);
    ASSERT_TRUE(morton.valid() && rows.valid()) << rows.error();
    EXPECT_EQ(rows.morton_range(), rows.cells_x() * rows.cells_y());
    for (const std::uint32_t chunks : {1u, 5u}) {
      for (Swarm<float>* s : {&morton, &rows}) {
        ASSERT_TRUE(s->build(js, chunks, a.spans()));
        s->find_neighbours(js, chunks);
        s->resolve_overlaps(js, chunks, 0.5f);
      }
      test::expect_same_per_agent(morton, rows);
      EXPECT_GT(rows.stats().candidate_capped, 0u);  // the cap was reached: lists were cut
      // A cell's range is its agents either way.
      for (std::uint32_t y = 0; y < rows.cells_y(); y += 7) {
        for (std::uint32_t x = 0; x < rows.cells_x(); x += 5) {
          const auto [mb, me] = morton.cell_range({x, y});
          const auto [rb, re] = rows.cell_range({x, y});
          ASSERT_EQ(me - mb, re - rb);
          for (std::uint32_t i = 0; i < me - mb; ++i)
            ASSERT_EQ(morton.order()[mb + i], rows.order()[rb + i]);
        }
      }
      // And so does a query around a point.
      std::uint32_t qa[7], qb[7];
      const std::uint32_t n = morton.query(20.5f, 3.25f, qa);
      ASSERT_EQ(rows.query(20.5f, 3.25f, qb), n);
      for (std::uint32_t i = 0; i < n; ++i) EXPECT_EQ(morton.order()[qa[i]], rows.order()[qb[i]]);
    }
  }
}

}  // namespace
}  // namespace spindle::swarm
