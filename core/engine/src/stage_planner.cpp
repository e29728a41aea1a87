#include <spindle/engine/stage_planner.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include <spindle/jobs/job_graph.h>

namespace spindle::core {

namespace {
std::uint64_t bit(std::size_t i) {
  return std::uint64_t{1} << i;
}
}  // namespace

bool StagePlanner::validate() const {
  const std::size_t n = stages.size();
  if (n > kMaxStages || plans.size() != n || launch_order.size() != n) return false;
  if (workers == 0 || oversplit == 0) return false;
  if (!std::isfinite(min_chunk_us) || min_chunk_us < 0) return false;
  if (!std::isfinite(inline_below_us) || inline_below_us < 0) return false;
  for (std::size_t i = 0; i < n; ++i) {
    const StagePlanInput& s = stages[i];
    if (!std::isfinite(s.cost_ms) || s.cost_ms < 0) return false;
    // Only later stages may be reached (a topological order; no cycle, no self-edge), and only
    // stages of the group.
    const std::uint64_t later = (i + 1 >= 64 ? 0 : ~std::uint64_t{0} << (i + 1)) &
                                (n >= 64 ? ~std::uint64_t{0} : bit(n) - 1);
    if ((s.reaches & ~later) != 0) return false;
    if ((s.successors & ~s.reaches) != 0) return false;
  }
  return true;
}

bool StagePlanner::run() {
  if (!validate()) return false;
  const std::size_t n = stages.size();
  run_inline = false;
  if (n == 0) return true;

  // reached[i], bit j: stage j reaches stage i.
  std::uint64_t reached[kMaxStages] = {};
  for (std::size_t i = 0; i < n; ++i)
    for (std::uint64_t r = stages[i].reaches; r != 0; r &= r - 1)
      reached[std::countr_zero(r)] |= bit(i);

  // A cheap group runs inline (once every stage has been measured).
  double total_ms = 0;
  bool measured = true;
  for (const StagePlanInput& s : stages) {
    total_ms += s.cost_ms;
    measured = measured && s.measured;
  }
  run_inline = measured && total_ms * 1000.0 < inline_below_us;

  // Shares: each stage against the stages that may run beside it.
  const double min_chunk = jobs::min_chunk_for(min_chunk_us, workers);
  for (std::size_t i = 0; i < n; ++i) {
    const StagePlanInput& s = stages[i];
    const std::uint64_t related = s.reaches | reached[i] | bit(i);
    double concurrent = s.cost_ms;
    for (std::size_t j = 0; j < n; ++j)
      if (!((related >> j) & 1u)) concurrent += stages[j].cost_ms;
    double share = concurrent > 0 ? s.cost_ms / concurrent : 1.0;
    if (!std::isfinite(share)) share = 1.0;
    long w = std::clamp<long>(std::lround(workers * share), 1, static_cast<long>(workers));
    const auto most = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(w) * oversplit);
    // Measured stages: no chunk planned below min_chunk (min_chunk_us, less on many workers).
    const double by_cost =
        min_chunk > 0 ? s.cost_ms * 1000.0 / min_chunk : static_cast<double>(most);
    std::uint32_t split =
        !s.measured
            ? most
            : static_cast<std::uint32_t>(std::clamp<double>(std::floor(by_cost), 1.0, most));
    // One worker runs a stage's chunks one after another: cutting it only adds their overhead
    // (and a parallel algorithm's extra passes), so it runs as single mode would run it.
    if (run_inline || workers == 1) split = 1;
    w = std::min<long>(w, static_cast<long>(split));  // no more workers than chunks
    plans[i] = StagePlan{static_cast<std::uint16_t>(w), split, 0, false};
  }

  // Critical path: the chain with the largest summed cost. chain[i] = own cost plus the longest
  // chain among its successors (walked backwards: the group is in topological order).
  double chain[kMaxStages] = {};
  double best = -1;
  std::size_t start = 0;
  for (std::size_t k = n; k-- > 0;) {
    double tail = 0;
    for (std::uint64_t r = stages[k].successors; r != 0; r &= r - 1)
      tail = std::max(tail, chain[std::countr_zero(r)]);
    chain[k] = stages[k].cost_ms + tail;
    std::uint64_t predecessors = 0;
    for (std::size_t j = 0; j < k; ++j) predecessors |= stages[j].successors & bit(k);
    if (predecessors == 0 && chain[k] > best) {
      best = chain[k];
      start = k;
    }
  }
  for (std::size_t cur = start;;) {
    plans[cur].critical = true;
    const std::uint64_t succ = stages[cur].successors;
    if (succ == 0) break;
    std::size_t next = static_cast<std::size_t>(std::countr_zero(succ));
    for (std::uint64_t r = succ; r != 0; r &= r - 1) {
      const auto j = static_cast<std::size_t>(std::countr_zero(r));
      if (chain[j] > chain[next]) next = j;
    }
    cur = next;
  }

  // Launch order: most costly first, ties in group order (an insertion sort: stable, no heap).
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = static_cast<std::uint16_t>(i);
    std::size_t j = i;
    for (; j > 0 && stages[launch_order[j - 1]].cost_ms < stages[v].cost_ms; --j)
      launch_order[j] = launch_order[j - 1];
    launch_order[j] = v;
  }
  for (std::size_t r = 0; r < n; ++r)
    plans[launch_order[r]].launch_rank = static_cast<std::uint16_t>(r);
  return true;
}

}  // namespace spindle::core
