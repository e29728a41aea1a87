// The swarm on Q20.12 fixed point (spindle/base/fixed.h), the tiny-target profile's scalar: the
// same neighbours and pushes as on doubles of the same positions (up to rounding at the edges of
// the radius), bit-identical outputs for every chunk and worker count, and one recorded hash that
// every CPU must reproduce (x86-64 here, mipsel under qemu in the handheld build).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "spindle/base/hash.h"
#include "spindle/physics/swarm.h"
#include "swarm_test_util.h"

namespace spindle::swarm {
namespace {

using core::fixed;
using test::single_jobs;

// Positions from integer hashes only (no float RNG, whose results may differ between CPUs):
// raw Q20.12 values in [0, extent) with a cluster every 8th agent. Sizes are in units of a few
// (radii 1.6 to 5.6, cells of 16): squares of distances under 1/16 would lose most of their bits
// in Q20.12, so a fixed-point world is laid out in units like these, as PS1 games were.
struct FixedAgents {
  std::vector<fixed> x, y, vx, vy, radius;
};

FixedAgents hashed_agents(std::uint32_t n, std::int32_t extent, std::uint64_t seed) {
  FixedAgents a;
  const auto raw_extent = static_cast<std::uint64_t>(extent) * fixed::kOneRaw;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint64_t h = core::mix64(seed ^ (std::uint64_t{i} * 0x9e3779b97f4a7c15ull));
    std::uint64_t px = h % raw_extent, py = (h >> 32) % raw_extent;
    if (i % 8 == 0) {  // clusters, 8 units wide: crowded cells
      px = (raw_extent / 3) + (h & 0x7fff);
      py = (raw_extent / 3) + ((h >> 15) & 0x7fff);
    }
    a.x.push_back(fixed::from_raw(static_cast<std::int32_t>(px)));
    a.y.push_back(fixed::from_raw(static_cast<std::int32_t>(py)));
    a.vx.push_back(fixed::from_raw(static_cast<std::int32_t>((h >> 20) & 0xffff) - 0x8000));
    a.vy.push_back(fixed::from_raw(static_cast<std::int32_t>((h >> 36) & 0xffff) - 0x8000));
    a.radius.push_back(fixed::from_raw(16 * (410 + static_cast<std::int32_t>((h >> 52) & 0x3ff))));
  }
  return a;
}

Config<fixed> fixed_config(std::uint32_t n, std::int32_t extent, Boundary b) {
  Config<fixed> c;
  c.max_agents = n;
  c.max_x = c.max_y = fixed::from_int(extent);
  c.cell_size = fixed::from_int(16);
  c.radius = fixed::from_int(16);
  c.max_neighbours = 9;
  c.max_candidates = 40;
  c.min_chunk_agents = 32;
  c.boundary = b;
  return c;
}

// Outputs by their raw bits, in a layout that does not depend on the CPU (no Stats: size_t).
std::uint64_t outputs_hash(const Swarm<fixed>& s) {
  core::Hasher h;
  for (std::uint32_t k = 0; k < s.count(); ++k) {
    h.add(s.order()[k]);
    h.add(s.x()[k].raw());
    h.add(s.y()[k].raw());
    h.add(s.push_x()[k].raw());
    h.add(s.push_y()[k].raw());
    for (std::uint32_t j : s.neighbours(k)) h.add(j);
    const FlockSums<fixed> f = s.flock(k);
    for (fixed v :
         {f.separation_x, f.separation_y, f.velocity_x, f.velocity_y, f.offset_x, f.offset_y})
      h.add(v.raw());
    h.add(f.count);
  }
  return h.value();
}

TEST(SwarmFixed, FindsTheNeighboursAndPushesThatDoublesFind) {
  const std::uint32_t n = 2000;
  const FixedAgents a = hashed_agents(n, 384, 11);
  Config<fixed> cf = fixed_config(n, 384, Boundary::Wrap);
  cf.max_candidates = 1024;  // uncapped: the sets depend only on the distances
  cf.max_neighbours = 1024;
  Config<double> cd;
  cd.max_agents = n;
  cd.max_x = cd.max_y = 384;
  cd.cell_size = cd.radius = 16;
  cd.max_neighbours = cd.max_candidates = 1024;
  cd.boundary = Boundary::Wrap;
  Swarm<fixed> sf(cf);
  Swarm<double> sd(cd);
  ASSERT_TRUE(sf.valid()) << sf.error();
  ASSERT_TRUE(sd.valid()) << sd.error();
  std::vector<double> x, y, r;
  for (std::uint32_t i = 0; i < n; ++i) {
    x.push_back(a.x[i].to_double());
    y.push_back(a.y[i].to_double());
    r.push_back(a.radius[i].to_double());
  }
  ASSERT_TRUE(
      sf.build(single_jobs(), 1, AgentSpans<fixed>{.x = a.x, .y = a.y, .radius = a.radius}));
  ASSERT_TRUE(sd.build(single_jobs(), 1, AgentSpans<double>{.x = x, .y = y, .radius = r}));
  sf.find_neighbours(single_jobs(), 1);
  sd.find_neighbours(single_jobs(), 1);
  sf.resolve_overlaps(single_jobs(), 1, fixed::one());
  sd.resolve_overlaps(single_jobs(), 1, 1.0);
  std::uint32_t same_sets = 0, close_pushes = 0, with_neighbours = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t kf = sf.rank()[i], kd = sd.rank()[i];
    std::vector<std::uint32_t> nf, nd;
    for (std::uint32_t j : sf.neighbours(kf)) nf.push_back(sf.order()[j]);
    for (std::uint32_t j : sd.neighbours(kd)) nd.push_back(sd.order()[j]);
    std::sort(nf.begin(), nf.end());
    std::sort(nd.begin(), nd.end());
    same_sets += nf == nd ? 1 : 0;
    with_neighbours += nd.empty() ? 0 : 1;
    // Each neighbour's push carries a few steps of rounding (1/4096 each): the bound grows with
    // the neighbours, plus 0.1% of the push.
    const double ex = sf.push_x()[kf].to_double() - sd.push_x()[kd];
    const double ey = sf.push_y()[kf].to_double() - sd.push_y()[kd];
    const double steps = 4.0 * (1.0 + static_cast<double>(nd.size())) / 4096.0;
    const bool close = std::abs(ex) <= steps + 1e-3 * std::abs(sd.push_x()[kd]) &&
                       std::abs(ey) <= steps + 1e-3 * std::abs(sd.push_y()[kd]);
    close_pushes += close ? 1 : 0;
  }
  EXPECT_GT(with_neighbours, n / 2);  // the test has neighbours to compare
  // Only pairs within a step or two of the radius may differ.
  EXPECT_GE(same_sets, n * 99 / 100) << same_sets;
  EXPECT_GE(close_pushes, n * 99 / 100) << close_pushes;
}

TEST(SwarmFixed, OutputsAreBitIdenticalForEveryChunkAndWorkerCount) {
  const std::uint32_t n = 3000;
  const FixedAgents a = hashed_agents(n, 640, 5);
  for (const Boundary b : {Boundary::Clamp, Boundary::Wrap}) {
    const Config<fixed> c = fixed_config(n, 640, b);
    std::uint64_t reference = 0;
    for (const jobs::Mode mode : ::spindle::test::available_modes()) {
      for (const std::uint32_t workers : {1u, 2u, 3u}) {
        if (mode == jobs::Mode::Single && workers > 1) continue;
        jobs::JobSystem js(test::config_for(mode, workers));
        Swarm<fixed> s(c);
        for (const std::uint32_t chunks : {1u, 3u, 16u}) {
          ASSERT_TRUE(s.build(js, chunks, AgentSpans<fixed>{a.x, a.y, a.vx, a.vy, a.radius}));
          s.find_neighbours(js, chunks);
          s.resolve_overlaps(js, chunks, fixed::from_double(0.8));
          const std::uint64_t h = outputs_hash(s);
          if (reference == 0) reference = h;
          EXPECT_EQ(h, reference) << "workers " << workers << " chunks " << chunks;
        }
      }
    }
  }
}

// The recorded hash: integer inputs, integer arithmetic, so every CPU gives these bits. The
// handheld build runs this test on mipsel under qemu; a different value there means something in
// the swarm depends on the CPU (a float, a size_t, the byte order).
TEST(SwarmFixed, OutputsHashToTheRecordedValueOnEveryCpu) {
  const std::uint32_t n = 1000;
  const FixedAgents a = hashed_agents(n, 512, 2026);
  Swarm<fixed> s(fixed_config(n, 512, Boundary::Wrap));
  ASSERT_TRUE(s.build(single_jobs(), 1, AgentSpans<fixed>{a.x, a.y, a.vx, a.vy, a.radius}));
  s.find_neighbours(single_jobs(), 1);
  s.resolve_overlaps(single_jobs(), 1, fixed::one());
  EXPECT_EQ(outputs_hash(s), 0x222de54609ad5f7full) << std::hex << outputs_hash(s);
}

// The tiny-target profile's layout (CellOrder::Rows) on fixed point: the same outputs per agent
// as Morton order, so the recorded hash above holds for either (the tiny swarm sample uses rows).
TEST(SwarmFixed, RowOrderGivesEveryAgentWhatMortonOrderGives) {
  const FixedAgents a = hashed_agents(2000, 400, 23);
  for (const Boundary boundary : {Boundary::Clamp, Boundary::Wrap}) {
    Config<fixed> c = fixed_config(2000, 400, boundary);
    Swarm<fixed> morton(c);
    c.cell_order = CellOrder::Rows;
    Swarm<fixed> rows(c);
    for (Swarm<fixed>* s : {&morton, &rows}) {
      ASSERT_TRUE(s->build(single_jobs(), 1, AgentSpans<fixed>{a.x, a.y, a.vx, a.vy, a.radius}));
      s->find_neighbours(single_jobs(), 1);
      s->resolve_overlaps(single_jobs(), 1, fixed::from_double(0.5));
    }
    test::expect_same_per_agent(morton, rows);
  }
}

}  // namespace
}  // namespace spindle::swarm
