// The stage planner: the dynamic mode's allocator of workers to stages, as a plain job with
// inputs and outputs (no engine, no clocks), so it can be tested with exact numbers.
//
// Usage (the Engine does this for every group of stages, each frame):
//
//   spindle::core::StagePlanInput in[3] = {...};     // per stage: cost, reachability
//   spindle::core::StagePlan out[3];
//   std::uint16_t order[3];
//   spindle::core::StagePlanner planner;
//   planner.stages = in;
//   planner.workers = 4;
//   planner.plans = out;
//   planner.launch_order = order;
//   if (!planner.validate()) ...;                    // a programming error: sizes, cycles
//   planner.run();                                   // fills out, order, run_inline
//
// Stages are numbered by their position in `stages`, which is a topological order of the group
// (a stage only reaches stages after it). With W workers, stage i of cost c_i whose concurrent
// stages (no path either way) are C_i gets
//     workers_i = clamp(round(W * c_i / (c_i + sum_{j in C_i} c_j)), 1, W)
//     split_i   = clamp(floor(c_i / m_W), 1, workers_i * oversplit)   (measured stages)
//     split_i   = workers_i * oversplit                               (not yet measured)
// and workers_i is then capped by split_i. m_W is min_chunk_us on up to 4 workers and
// min_chunk_us * sqrt(3 / (W - 1)) on more (jobs::min_chunk_for(): 16 workers, 0.45x): the more
// workers wait for a stage's last chunk, the smaller its chunks should be. With one worker every
// split is 1 (its chunks would run one after another). A group whose measured total is below
// inline_below_us runs inline (run_inline, and every split 1). The critical path is the chain with
// the largest summed cost, starting at a stage with no predecessor; its stages are marked critical.
// Stages launch in descending cost, ties in group order (launch_order, and each plan's
// launch_rank). docs/engine.md explains why.
#pragma once

#include <cstdint>
#include <span>

namespace spindle::core {

// One stage of the group, as the planner sees it.
struct StagePlanInput {
  // Estimated CPU time of one run (ms): the Engine's moving average of measured job time.
  double cost_ms = 0;
  // Whether cost_ms comes from a measurement (an unmeasured stage gets the widest split).
  bool measured = false;
  // Bit j: a path leads from this stage to stage j of the group (j > this stage's index).
  std::uint64_t reaches = 0;
  // Bit j: stage j depends directly on this one (a subset of `reaches`).
  std::uint64_t successors = 0;
};

// The planner's decision for one stage.
struct StagePlan {
  std::uint16_t workers = 1;  // share of the workers (a share through the split, not a reservation)
  std::uint32_t split = 1;    // chunks its parallel work is cut into
  std::uint16_t launch_rank = 0;  // 0 starts first
  bool critical = false;          // on the critical path: high priority
};

struct StagePlanner {
  // Inputs.
  std::span<const StagePlanInput> stages;  // at most kMaxStages (64), in topological order
  std::uint32_t workers = 1;               // threads that run jobs (>= 1)
  std::uint32_t oversplit = 4;             // chunks per worker at most (>= 1)
  double min_chunk_us = 20;     // smallest planned chunk on up to 4 workers, less on more (0: none)
  double inline_below_us = 30;  // a measured group cheaper than this runs inline

  // Outputs, sized like `stages` by the caller.
  std::span<StagePlan> plans;
  std::span<std::uint16_t> launch_order;  // group indices, first to start first
  bool run_inline = false;

  static constexpr std::size_t kMaxStages = 64;

  // Whether the inputs are usable: sizes, counts, finite non-negative costs, reachability that
  // points forward and contains the successors. run() does nothing unless this holds.
  bool validate() const;
  // Fills plans, launch_order and run_inline. False (outputs untouched) if validate() fails.
  bool run();
};

}  // namespace spindle::core
