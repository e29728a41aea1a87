// A frame's jobs as the job system ran them, what they add up to, and a simulator that replays
// them on any number of workers under each mode's policy.
//
// Usage:
//
//   jobs.begin_recording();                          // between frames: nothing in flight
//   run_the_frame();
//   jobs.stop_recording();                           // optional: the graph ends here, not at
//   read_timers();                                   // end_recording() (your bookkeeping)
//   spindle::jobs::JobGraph graph;                   // keep it: reused, it stops allocating
//   if (jobs.end_recording(graph)) {
//     graph.work_ns;                                 // every job's own time, summed
//     graph.span_ns;                                 // the longest chain of dependent work
//     graph.bound_ns(16);                            // max(work / 16, span with hand-offs)
//     spindle::jobs::SimConfig sim;
//     sim.policy = spindle::jobs::sim_policy(spindle::jobs::Mode::Dynamic);
//     sim.workers = 16;
//     sim.handoff_ns = graph.handoff_ns;             // as measured in this recording
//     spindle::jobs::SimResult r = spindle::jobs::simulate(graph, sim);   // r.frame_ns
//   }
//
// What a recording holds. Every job is a node: a strand of items in the order its thread ran
// them: its own time (Compute: the job's time minus the jobs it ran nested and the time it spent
// waiting), the jobs it submitted (Spawn, also in Single mode, which runs them at once), ran at
// once on its own thread (Call: run_here(), a full pool) or split over a range (SpawnRange: one
// parallel_for), and what it waited for (Wait: the jobs counted on the counter, as the counter's
// epoch tells them apart). Node 0 is the recording thread outside any job: the frame's own serial
// code. A job with run_after() dependencies starts once they are done. A parallel_for whose pieces
// only compute is a range with its per-piece times, so the simulator can cut it again for another
// worker count, as the engine's callers scale their splits with the workers; one whose pieces
// submit or wait keeps the jobs as they ran. Outside threads' jobs are recorded as they ran too,
// spawned by node 0.
//
// An order the caller keeps itself is seen only where it says so (JobSystem::record_after(): the
// engine's frame graph records that a stage launched by its last predecessor waits for the others
// too). What is not seen: a job that spins on a flag instead of waiting on a counter, and such an
// order not recorded. docs/jobs.md has the model and its measured error.
#pragma once

#include <cstdint>
#include <vector>

#include "spindle/jobs/job_system.h"

namespace spindle::jobs {

struct JobGraph {
  static constexpr std::uint32_t kNone = ~0u;

  enum class Kind : std::uint8_t { Compute, Spawn, Call, SpawnRange, Wait };
  struct Item {
    Kind kind = Kind::Compute;
    // Spawn, Call: the node; SpawnRange: the range; Wait: the first of its entries in `deps`.
    std::uint32_t ref = 0;
    // Wait: how many entries of `deps` it has.
    std::uint32_t count = 0;
    std::uint64_t ns = 0;  // Compute: the strand's own time
  };
  // A node or a whole range that something waits for.
  struct Dep {
    bool range = false;
    std::uint32_t index = 0;
  };
  struct Node {
    std::uint32_t first_item = 0, items = 0;
    // run_after() dependencies: entries of `deps`.
    std::uint32_t first_dep = 0, deps = 0;
    std::uint32_t range = kNone;   // the parallel_for this job is a piece of
    std::uint32_t parent = kNone;  // the node that submitted it (kNone: node 0, or not recorded)
    std::uint16_t tag = 0;
    std::uint16_t thread = 0;  // recording thread (0: the one that began the recording)
    const char* name = "";     // JobDesc::name (a literal: it outlives the graph)
    std::uint64_t submit_ns = 0, begin_ns = 0, end_ns = 0;  // since the recording began
  };
  struct Range {
    std::uint64_t begin = 0, end = 0;  // the items of the parallel_for
    std::uint32_t parent = 0;          // the node that called it
    std::uint32_t first_piece = 0, pieces = 0;
    // The jobs its caller submitted directly (replayed when it is not cut again): `roots`.
    std::uint32_t first_root = 0, root_count = 0;
    std::uint32_t jobs = 0;  // every job of the range
    std::uint64_t ns = 0;    // their Compute, summed
    std::uint16_t tag = 0;   // its jobs' tag
    // Every job of it computed one piece and spawned only its own halves: it may be cut again.
    bool resplittable = false;
    // JobDesc::fixed_split: its items are fixed units; never cut finer than them.
    bool fixed_split = false;
    // JobDesc::in_order: its jobs took one item at a time, in index order (its pieces are the
    // items), however many each; replayed the same way, with as many jobs as workers (also when
    // not cut again: which job took which item depended on the recording's workers), its items
    // cut again as any range's unless fixed_split.
    bool in_order = false;
    // JobDesc::costliest_first (with in_order): its jobs chose their items themselves, costliest
    // first; a replay hands its items (as cut for the replay) out in descending recorded time,
    // ties in index order.
    bool costliest_first = false;
  };
  struct Piece {
    std::uint64_t begin = 0, end = 0, ns = 0;  // a piece of items and the time fn(begin, end) took
  };

  std::vector<Node> nodes;  // nodes[0]: the recording thread's own code
  std::vector<Item> items;
  std::vector<Dep> deps;
  std::vector<Range> ranges;
  std::vector<Piece> pieces;
  std::vector<std::uint32_t> roots;  // Range::first_root indexes here

  Mode mode = Mode::Single;   // the mode it was recorded in
  std::uint32_t workers = 1;  // threads that ran jobs then (JobSystem::worker_count())
  std::uint64_t wall_ns = 0;  // begin_recording() to stop_recording() or end_recording()
  std::uint64_t work_ns = 0;  // every Compute, summed
  std::uint64_t span_ns = 0;  // the longest chain, with unbounded workers and free hand-offs
  // The same with handoff_ns paid by every job that another thread picks up: a job its submitter
  // gets to first (free, or waiting) runs there without one, newest first, as with a deque.
  std::uint64_t span_handoff_ns = 0;
  // Median time from a job's submission to its start on an idle participant other than its
  // submitter: a steal by a spinning thread, or a wake-up. 0 when no such job was seen.
  std::uint64_t handoff_ns = 0;
  std::uint32_t handoffs_seen = 0;  // the jobs that median is taken over
  std::uint32_t jobs = 0;           // nodes recorded (node 0 excluded)
  // False when an event buffer filled up: the graph holds what fit (the next recording gets
  // bigger buffers).
  bool complete = true;

  // The best a perfect scheduler could do on `workers` threads: max(work / workers,
  // span_handoff_ns).
  std::uint64_t bound_ns(std::uint32_t workers) const;
  // Node 0's own time: the recording thread's code outside any job.
  std::uint64_t serial_ns() const;
  void clear();
};

// How the simulator schedules: as each mode does.
enum class SimPolicy : std::uint8_t {
  Serial,   // Single: a job runs where and when it is submitted
  Static,   // round-robin mailboxes, even parallel_for split, no stealing
  Dynamic,  // per-worker deques, newest first, idle workers steal the oldest (also Tbb's model)
};
SimPolicy sim_policy(Mode mode);
const char* to_string(SimPolicy policy);

// The smallest chunk the engine's stage planner plans on `workers` threads, given its smallest
// chunk on a few (EngineConfig::min_chunk_us, in any unit): `min_chunk` up to kMinChunkWorkers
// workers, and min_chunk * sqrt(3 / (workers - 1)) above (4 workers: min_chunk; 16: 0.45x; 64:
// 0.22x). A stage cut into chunks of c on W workers loses about (W - 1) * c / 2 of worker time
// waiting for its last chunk, and a hand-off per chunk: the sum is least at c proportional to
// 1 / sqrt(W - 1). The planner and the simulator's cuts both use it.
inline constexpr std::uint32_t kMinChunkWorkers = 4;
double min_chunk_for(double min_chunk, std::uint32_t workers);

struct SimConfig {
  SimPolicy policy = SimPolicy::Dynamic;
  std::uint32_t workers = 1;     // threads running jobs (0: as many as ever help)
  std::uint64_t handoff_ns = 0;  // before an idle worker starts a job queued by another
  // Cut resplittable ranges again for `workers` (their piece count scaled by workers over the
  // recorded workers, as the engine's callers scale their splits), not finer than the recording
  // unless the range's stage (its jobs' tag, all of them) is worth min_chunk_for(min_chunk_ns,
  // the count it is cut for) a piece, as the stage planner plans a stage's split from the stage's
  // whole cost and every parallel_for of the stage uses it; untagged ranges from their own cost. A
  // fixed_split range not finer than its items.
  bool resplit = true;
  double min_chunk_ns = 20'000;
  // Cut ranges as for this many workers (0: `workers`): with workers = 0 (unbounded) it gives the
  // span of the frame as it would be cut for cut_workers threads.
  std::uint32_t cut_workers = 0;
  // Fill SimResult::critical_ns: the own time on the path that ended the frame, by job tag
  // (what to make parallel next). Meaningful with workers = 0, where that path is the span.
  bool critical_path = false;
};

struct SimResult {
  std::uint64_t frame_ns = 0;  // when node 0 finished
  std::uint64_t busy_ns = 0;   // Compute run, summed (the recording's work)
  std::uint64_t handoffs = 0;  // jobs started by a worker other than the one that queued them
  std::uint32_t workers = 0;   // threads used (with SimConfig::workers 0: how many helped)
  // With SimConfig::critical_path: own time on the path that ended the frame, indexed by tag
  // (kMaxTags entries); frame_ns minus their sum is time on it that no job computed (hand-offs).
  std::vector<std::uint64_t> critical_ns;
  // The same by node (JobGraph::nodes; range pieces cut again count to their range's first job).
  std::vector<std::uint64_t> critical_node_ns;
};

// Replays `graph` on config.workers simulated threads. Deterministic: the same graph and config
// give the same result.
SimResult simulate(const JobGraph& graph, const SimConfig& config);

}  // namespace spindle::jobs
