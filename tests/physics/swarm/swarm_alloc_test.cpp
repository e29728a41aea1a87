// Counts heap allocations: a steady-state swarm frame (build, neighbours, overlaps, a steering
// pass) allocates nothing, in every job mode and for any chunk count. This binary replaces the
// global operator new/delete, so it holds only these tests.
#include <gtest/gtest.h>

#include <vector>

#include "alloc_counter.h"
#include "spindle/physics/swarm.h"
#include "swarm_test_util.h"

namespace spindle::swarm {
namespace {

class SwarmAllocations : public ::testing::TestWithParam<jobs::Mode> {};

TEST_P(SwarmAllocations, SteadyStateFrameAllocatesNothing) {
  SPINDLE_REQUIRE_ALLOCATION_COUNTING();
  SPINDLE_REQUIRE_MODE(GetParam());
  jobs::JobSystem js(test::config_for(GetParam()));
  for (const Boundary boundary : {Boundary::Clamp, Boundary::Wrap}) {
    test::Agents a = test::random_agents(20000, 0.0f, 140.0f, 17, true);
    Config<float> c;
    c.max_agents = 20000;
    c.max_x = c.max_y = 140;
    c.max_neighbours = 12;
    c.max_candidates = 48;
    c.min_chunk_agents = 256;
    c.boundary = boundary;
    Swarm<float> s(c);
    ASSERT_TRUE(s.valid()) << s.error();
    std::vector<float> steer_x(20000);
    auto frame = [&](std::uint32_t chunks) {
      ASSERT_TRUE(s.build(js, chunks, a.spans(), 3));
      s.find_neighbours(js, chunks, 3);
      s.resolve_overlaps(js, chunks, 0.5f, 3);
      s.for_each_range(js, chunks, {"steer", 3}, [&](std::uint32_t b, std::uint32_t e) {
        for (std::uint32_t k = b; k < e; ++k) {
          const FlockSums<float> f = s.flock(k);
          steer_x[k] = f.separation_x + f.velocity_x + f.offset_x + s.push_x()[k];
        }
      });
      // Move the agents so every frame sorts a different order.
      for (std::uint32_t i = 0; i < a.size(); ++i) {
        const std::uint32_t k = s.rank()[i];
        a.x[i] = std::clamp(a.x[i] + s.push_x()[k] + 0.01f * a.vx[i], 0.0f, 139.0f);
        a.y[i] = std::clamp(a.y[i] + s.push_y()[k] + 0.01f * a.vy[i], 0.0f, 139.0f);
      }
    };
    for (int i = 0; i < 3; ++i) frame(8);  // warm-up: thread-locals, first job slots
    const long before = ::spindle::test::heap_allocations();
    for (std::uint32_t f = 0; f < 12; ++f) frame(1 + f * 5);
    EXPECT_EQ(::spindle::test::heap_allocations() - before, 0);
    EXPECT_EQ(s.count(), 20000u);
    EXPECT_GT(s.stats().neighbour_capped, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, SwarmAllocations, ::testing::ValuesIn(test::own_modes()),
                         test::mode_name);

}  // namespace
}  // namespace spindle::swarm
