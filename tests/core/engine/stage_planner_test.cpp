// The stage planner with exact inputs: shares, splits, the inline decision, the critical path and
// the launch order follow from the numbers alone, with no clocks involved. Then the engine's own
// decisions are checked against the planner run on the engine's estimates and graph.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <spindle/engine/engine.h>
#include <spindle/engine/stage_planner.h>
#include <spindle/jobs/job_graph.h>

#include "modes.h"
#include "test_support.h"

namespace spindle::core {
namespace {

constexpr std::uint64_t bit(int i) {
  return std::uint64_t{1} << i;
}

StagePlanInput stage(double cost_ms, std::uint64_t reaches = 0, std::uint64_t successors = 0,
                     bool measured = true) {
  return StagePlanInput{cost_ms, measured, reaches, successors};
}

// A planner over `in` with its outputs in this object.
struct Plan {
  explicit Plan(std::vector<StagePlanInput> stages, std::uint32_t workers = 4)
      : in(std::move(stages)), out(in.size()), order(in.size()) {
    planner.stages = in;
    planner.workers = workers;
    planner.oversplit = 4;
    planner.min_chunk_us = 20;
    planner.inline_below_us = 30;
    planner.plans = out;
    planner.launch_order = order;
  }
  std::vector<StagePlanInput> in;
  std::vector<StagePlan> out;
  std::vector<std::uint16_t> order;
  StagePlanner planner;
};

TEST(StagePlanner, HeavyStageGetsMostWorkersAndStartsFirst) {
  // heavy (4 ms) beside light (0.2 ms) -> after_light (0.2 ms), on 4 workers.
  Plan p({stage(4.0), stage(0.2, bit(2), bit(2)), stage(0.2)});
  ASSERT_TRUE(p.planner.validate());
  ASSERT_TRUE(p.planner.run());
  EXPECT_FALSE(p.planner.run_inline);
  // heavy: share 4 / 4.4 of 4 workers -> 4; split min(4000 us / 20 us, 4 x 4) = 16.
  EXPECT_EQ(p.out[0].workers, 4);
  EXPECT_EQ(p.out[0].split, 16u);
  // light and after_light: share 0.2 / 4.2 -> 1 worker; split min(200 / 20, 1 x 4) = 4.
  EXPECT_EQ(p.out[1].workers, 1);
  EXPECT_EQ(p.out[1].split, 4u);
  EXPECT_EQ(p.out[2].workers, 1);
  EXPECT_EQ(p.out[2].split, 4u);
  // The critical path is heavy alone (4 ms against 0.4 ms for the chain).
  EXPECT_TRUE(p.out[0].critical);
  EXPECT_FALSE(p.out[1].critical);
  EXPECT_FALSE(p.out[2].critical);
  EXPECT_EQ(p.order, (std::vector<std::uint16_t>{0, 1, 2}));
  EXPECT_EQ(p.out[0].launch_rank, 0);
  EXPECT_EQ(p.out[1].launch_rank, 1);
  EXPECT_EQ(p.out[2].launch_rank, 2);
}

TEST(StagePlanner, CriticalPathFollowsTheLongestChain) {
  // a (1) -> b (1) -> c (5), beside d (3): the chain a-b-c (7 ms) is critical.
  Plan p({stage(1, bit(1) | bit(2), bit(1)), stage(1, bit(2), bit(2)), stage(5), stage(3)});
  ASSERT_TRUE(p.planner.run());
  EXPECT_TRUE(p.out[0].critical);
  EXPECT_TRUE(p.out[1].critical);
  EXPECT_TRUE(p.out[2].critical);
  EXPECT_FALSE(p.out[3].critical);
  // Launch: c (5), d (3), then a and b (1 each) in group order.
  EXPECT_EQ(p.order, (std::vector<std::uint16_t>{2, 3, 0, 1}));
  // A chain's stages never run beside each other: each is weighed against d alone.
  // c: 5 / 8 of 4 workers = 2.5 -> 3 (lround), d: 3 / (3 + 7) -> 1.2 -> 1.
  EXPECT_EQ(p.out[2].workers, 3);
  EXPECT_EQ(p.out[3].workers, 1);
}

TEST(StagePlanner, AMeasuredCheapGroupRunsInlineInOneChunkEach) {
  Plan p({stage(0.010), stage(0.015)});  // 25 us in all, under 30 us
  ASSERT_TRUE(p.planner.run());
  EXPECT_TRUE(p.planner.run_inline);
  for (const StagePlan& s : p.out) {
    EXPECT_EQ(s.split, 1u);
    EXPECT_EQ(s.workers, 1);
  }
  // The same costs not yet measured: no inline run, and the widest split.
  Plan fresh({stage(0.010, 0, 0, false), stage(0.015, 0, 0, false)});
  ASSERT_TRUE(fresh.planner.run());
  EXPECT_FALSE(fresh.planner.run_inline);
  EXPECT_EQ(fresh.out[0].split, fresh.out[0].workers * 4u);
}

TEST(StagePlanner, NoChunkBelowTheMinimumAndNoMoreWorkersThanChunks) {
  Plan p({stage(0.050)}, 4);  // alone: all 4 workers by share, but 50 us / 20 us = 2 chunks
  p.planner.inline_below_us = 0;
  ASSERT_TRUE(p.planner.run());
  EXPECT_EQ(p.out[0].split, 2u);
  EXPECT_EQ(p.out[0].workers, 2);
  p.planner.min_chunk_us = 0;  // no minimum: workers x oversplit
  ASSERT_TRUE(p.planner.run());
  EXPECT_EQ(p.out[0].split, 16u);
  EXPECT_EQ(p.out[0].workers, 4);
}

// On more than 4 workers the smallest chunk shrinks as 1 / sqrt(W - 1): a short stage on 16
// workers is cut finer than on 4, where its last chunk would hold 15 workers up.
TEST(StagePlanner, ManyWorkersPlanSmallerChunksOfAShortStage) {
  EXPECT_DOUBLE_EQ(jobs::min_chunk_for(20, 2), 20);
  EXPECT_DOUBLE_EQ(jobs::min_chunk_for(20, 4), 20);
  EXPECT_NEAR(jobs::min_chunk_for(20, 16), 8.944, 0.001);
  EXPECT_NEAR(jobs::min_chunk_for(20, 64), 4.364, 0.001);
  const auto split_on = [](std::uint32_t workers) {
    Plan p({stage(0.060)}, workers);  // 60 us, alone
    p.planner.inline_below_us = 0;
    EXPECT_TRUE(p.planner.run());
    EXPECT_EQ(p.out[0].workers, std::min<std::uint32_t>(workers, p.out[0].split));
    return p.out[0].split;
  };
  EXPECT_EQ(split_on(2), 3u);    // 60 / 20
  EXPECT_EQ(split_on(4), 3u);    // 60 / 20
  EXPECT_EQ(split_on(8), 4u);    // 60 / 13.1
  EXPECT_EQ(split_on(16), 6u);   // 60 / 8.94
  EXPECT_EQ(split_on(64), 13u);  // 60 / 4.36
}

// One worker (dynamic mode with one awake) runs a stage's chunks one after another: every stage,
// measured or not, is one chunk, as in single mode. The critical path is still marked.
TEST(StagePlanner, OneWorkerCutsNoStage) {
  Plan p({stage(2.0, bit(1), bit(1)), stage(3.0), stage(0.5, 0, 0, false)}, 1);
  ASSERT_TRUE(p.planner.run());
  EXPECT_FALSE(p.planner.run_inline) << "5.5 ms is no cheap group";
  for (const StagePlan& s : p.out) {
    EXPECT_EQ(s.split, 1u);
    EXPECT_EQ(s.workers, 1);
  }
  EXPECT_TRUE(p.out[0].critical);
  EXPECT_TRUE(p.out[1].critical);
  // Two workers cut the 3 ms stage again.
  Plan two({stage(2.0, bit(1), bit(1)), stage(3.0), stage(0.5, 0, 0, false)}, 2);
  ASSERT_TRUE(two.planner.run());
  EXPECT_GT(two.out[1].split, 1u);
}

TEST(StagePlanner, EqualCostsLaunchInGroupOrder) {
  Plan p({stage(2), stage(3), stage(2), stage(3)});
  ASSERT_TRUE(p.planner.run());
  EXPECT_EQ(p.order, (std::vector<std::uint16_t>{1, 3, 0, 2}));
}

TEST(StagePlanner, AnEmptyGroupIsValidAndPlansNothing) {
  Plan p({});
  EXPECT_TRUE(p.planner.run());
  EXPECT_FALSE(p.planner.run_inline);
}

TEST(StagePlanner, ValidateRefusesWhatRunCannotPlan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto refused = [](Plan& p) {
    p.out.assign(p.out.size(), StagePlan{7, 7, 7, true});
    const std::vector<StagePlan> before = p.out;
    EXPECT_FALSE(p.planner.validate());
    EXPECT_FALSE(p.planner.run());
    for (std::size_t i = 0; i < before.size(); ++i) EXPECT_EQ(p.out[i].split, before[i].split);
  };
  {
    Plan p({stage(1), stage(1, bit(0))});  // reaches an earlier stage: not topological (a cycle)
    refused(p);
  }
  {
    Plan p({stage(1, bit(0))});  // reaches itself
    refused(p);
  }
  {
    Plan p({stage(1, bit(5))});  // reaches past the group
    refused(p);
  }
  {
    Plan p({stage(1, 0, bit(1)), stage(1)});  // a successor it does not reach
    refused(p);
  }
  {
    Plan p({stage(-1)});
    refused(p);
  }
  {
    Plan p({stage(nan)});
    refused(p);
  }
  {
    Plan p({stage(1)}, 0);  // no workers
    refused(p);
  }
  {
    Plan p({stage(1), stage(1)});
    p.planner.plans = std::span<StagePlan>(p.out.data(), 1);  // outputs too small
    EXPECT_FALSE(p.planner.validate());
  }
  {
    Plan p(std::vector<StagePlanInput>(StagePlanner::kMaxStages + 1, stage(1)));
    EXPECT_FALSE(p.planner.validate());
  }
}

// The engine's decisions are the planner's, on the engine's estimates and graph.
TEST(StagePlanner, TheEngineDecidesWhatThePlannerSays) {
  SPINDLE_REQUIRE_MODE(jobs::Mode::Dynamic);
  EngineConfig config = test::engine_config(jobs::Mode::Dynamic, 4);
  config.inline_below_us = 0;
  config.adapt_workers = false;  // the planner gets all four workers every frame
  Engine engine(config);
  struct A {};
  struct B {};
  struct C {};
  auto work = [](std::uint32_t n) {
    return [n](StageContext& ctx) {
      ctx.parallel_for(n, [](std::uint32_t b, std::uint32_t e) {
        volatile double x = 0;
        for (std::uint32_t i = b * 2000; i < e * 2000; ++i) x = x + std::sqrt(double(i));
      });
    };
  };
  engine.add_stage({.name = "a", .access = Access{}.write<A>(), .run = work(256)});
  const StageId b = engine.add_stage({.name = "b", .access = Access{}.write<B>(), .run = work(16)});
  engine.add_stage(
      {.name = "c", .access = Access{}.write<C>().read<B>(), .after = {b}, .run = work(16)});
  for (int frame = 0; frame < 6; ++frame) {
    // The planner's inputs as the engine sees them before this frame.
    const std::span<const StageId> order = engine.stage_order();
    std::vector<StagePlanInput> in(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      in[i].cost_ms = engine.stage_estimate_ms(order[i]);
      in[i].measured = frame > 0;
      for (std::size_t j = i + 1; j < order.size(); ++j)
        if (engine.depends_on(order[j], order[i])) in[i].reaches |= bit(static_cast<int>(j));
    }
    in[1].successors = bit(2);  // b -> c, the one edge
    std::vector<StagePlan> out(in.size());
    std::vector<std::uint16_t> launch(in.size());
    StagePlanner planner;
    planner.stages = in;
    planner.workers = 4;
    planner.oversplit = config.oversplit;
    planner.min_chunk_us = config.min_chunk_us;
    planner.inline_below_us = config.inline_below_us;
    planner.plans = out;
    planner.launch_order = launch;
    ASSERT_TRUE(planner.run());

    engine.step();
    const std::span<const Decision> decisions = engine.last_decisions();
    ASSERT_EQ(decisions.size(), order.size());
    for (const Decision& d : decisions) {
      const auto i =
          static_cast<std::size_t>(std::find(order.begin(), order.end(), d.stage) - order.begin());
      ASSERT_LT(i, order.size());
      EXPECT_EQ(d.workers, out[i].workers) << "frame " << frame << " stage " << i;
      EXPECT_EQ(d.split, out[i].split) << "frame " << frame << " stage " << i;
      EXPECT_EQ(d.order, out[i].launch_rank) << "frame " << frame << " stage " << i;
      EXPECT_EQ(d.critical, out[i].critical) << "frame " << frame << " stage " << i;
      EXPECT_DOUBLE_EQ(d.predicted_ms, in[i].cost_ms);
    }
  }
}

}  // namespace
}  // namespace spindle::core
