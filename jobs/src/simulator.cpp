// The job-graph simulator (job_graph.h): a discrete-event replay of a recorded frame on simulated
// workers, with each mode's policy for where a runnable job goes and who may run it.
//
// Workers run strands: a recorded job's items, or a generated piece of a range cut again for the
// simulated worker count. A strand's Compute advances the clock; Spawn queues a job (Dynamic: the
// worker's own deque; Static: the next mailbox round-robin; Serial: runs it at once); Call runs
// one nested at once; Wait blocks the strand until its dependencies are done, and a blocked
// worker helps as the real one does (its own queue first, newest first, then stealing the oldest
// job of another worker in Dynamic; its mailbox only in Static), resuming the strand once the
// job it took finishes. An idle worker woken for a queued job starts it handoff_ns later. With
// unbounded workers every queued job gets a fresh worker: the span. A worker that is free (or
// waits) before a fresh one starts a job it queued runs that job itself, as with its own queue.
#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <utility>
#include <vector>

#include "spindle/jobs/job_graph.h"

namespace spindle::jobs {

SimPolicy sim_policy(Mode mode) {
  switch (mode) {
    case Mode::Single:
      return SimPolicy::Serial;
    case Mode::Static:
      return SimPolicy::Static;
    case Mode::Dynamic:
    case Mode::Tbb:
      return SimPolicy::Dynamic;
  }
  return SimPolicy::Dynamic;
}

const char* to_string(SimPolicy policy) {
  switch (policy) {
    case SimPolicy::Serial:
      return "serial";
    case SimPolicy::Static:
      return "static";
    case SimPolicy::Dynamic:
      return "dynamic";
  }
  return "?";
}

void JobGraph::clear() {
  nodes.clear();
  items.clear();
  deps.clear();
  ranges.clear();
  pieces.clear();
  roots.clear();
  mode = Mode::Single;
  workers = 1;
  wall_ns = work_ns = span_ns = span_handoff_ns = handoff_ns = 0;
  handoffs_seen = 0;
  jobs = 0;
  complete = true;
}

std::uint64_t JobGraph::bound_ns(std::uint32_t w) const {
  const std::uint64_t spread = work_ns / std::max<std::uint32_t>(w, 1);
  return std::max(spread, span_handoff_ns);
}

std::uint64_t JobGraph::serial_ns() const {
  if (nodes.empty()) return 0;
  std::uint64_t own = 0;
  for (std::uint32_t i = nodes[0].first_item; i < nodes[0].first_item + nodes[0].items; ++i)
    if (items[i].kind == JobGraph::Kind::Compute) own += items[i].ns;
  return own;
}

namespace {

constexpr std::uint32_t kNone = JobGraph::kNone;
using Kind = JobGraph::Kind;

class Simulation {
 public:
  Simulation(const JobGraph& graph, const SimConfig& config)
      : g_(graph),
        c_(config),
        unbounded_(config.workers == 0),
        serial_(config.policy == SimPolicy::Serial) {
    const std::size_t n = g_.nodes.size();
    node_done_.assign(n, 0);
    start_pending_.assign(n, 0);
    node_task_.assign(n, kNone);
    watch_head_.assign(n + g_.ranges.size(), kNone);
    for (std::size_t i = 0; i < n; ++i) {
      // Not yet spawned (1) plus every dependency; node 0 starts the frame.
      start_pending_[i] = i == 0 ? 0 : 1 + g_.nodes[i].deps;
    }
    // A stage's own time, by tag: the planner plans a stage's split from the stage's whole cost
    // (EngineConfig::min_chunk_us against all of its jobs), and every parallel_for of the stage
    // uses that split, short passes included.
    std::vector<std::uint64_t> tag_ns(kMaxTags, 0);
    for (const JobGraph::Range& range : g_.ranges)
      tag_ns[std::min<std::uint32_t>(range.tag, kMaxTags - 1)] += range.ns;
    for (std::size_t i = 1; i < n; ++i) {  // jobs outside ranges (a range's are in its ns)
      const JobGraph::Node& node = g_.nodes[i];
      if (node.range != kNone) continue;
      for (std::uint32_t k = node.first_item; k < node.first_item + node.items; ++k)
        if (g_.items[k].kind == Kind::Compute)
          tag_ns[std::min<std::uint32_t>(node.tag, kMaxTags - 1)] += g_.items[k].ns;
    }
    range_done_.assign(g_.ranges.size(), 0);
    range_left_.assign(g_.ranges.size(), 0);
    leaves_.assign(g_.ranges.size(), 1);
    next_leaf_.assign(g_.ranges.size(), 0);
    order_first_.assign(g_.ranges.size(), kNone);
    for (std::size_t r = 0; r < g_.ranges.size(); ++r) {
      const JobGraph::Range& range = g_.ranges[r];
      // An in-order range is replayed item by item even as recorded: its jobs took whatever
      // items were left, so how many each took depends on the workers, not on the program.
      const bool cut = range.resplittable && (c_.resplit || range.in_order);
      if (!cut) {
        leaves_[r] = 0;
        range_left_[r] = range.jobs;
        continue;
      }
      const std::uint32_t cut_for = c_.cut_workers != 0 ? c_.cut_workers : c_.workers;
      std::uint64_t k = range.pieces;
      if (serial_) {
        k = 1;
      } else if (cut_for != 0 && c_.resplit) {
        const double scaled = std::round(static_cast<double>(range.pieces) * cut_for /
                                         std::max<std::uint32_t>(g_.workers, 1));
        k = static_cast<std::uint64_t>(std::max(1.0, scaled));
        if (k > range.pieces) {
          // Untagged work has no stage: its own cost.
          const std::uint64_t stage_ns =
              range.tag == 0 ? range.ns : tag_ns[std::min<std::uint32_t>(range.tag, kMaxTags - 1)];
          const double chunk = min_chunk_for(c_.min_chunk_ns, cut_for);
          const double by_cost = chunk > 0 ? std::floor(static_cast<double>(stage_ns) / chunk)
                                           : static_cast<double>(k);
          k = std::min<std::uint64_t>(
              k, std::max<std::uint64_t>(range.pieces, static_cast<std::uint64_t>(by_cost)));
          if (range.fixed_split)
            k = std::min<std::uint64_t>(
                k, std::max<std::uint64_t>(range.pieces, range.end - range.begin));
        }
      }
      leaves_[r] = static_cast<std::uint32_t>(std::max<std::uint64_t>(k, 1));
      range_left_[r] = leaves_[r];
      if (range.in_order) {
        // Its leaves (its items, or parts of them where its caller would cut more), handed out
        // in order to as many jobs as there are workers (every leaf its own, unbounded).
        const std::uint32_t jobs = serial_      ? 1
                                   : unbounded_ ? leaves_[r]
                                                : std::max<std::uint32_t>(c_.workers, 1);
        range_left_[r] = std::min(jobs, leaves_[r]);
        if (range.costliest_first) {
          // Its leaves by descending time (ties in index order): handed out in that order.
          order_first_[r] = static_cast<std::uint32_t>(leaf_order_.size());
          for (std::uint32_t i = 0; i < leaves_[r]; ++i) leaf_order_.push_back(i);
          const auto first = leaf_order_.begin() + order_first_[r];
          std::vector<std::uint64_t> ns(leaves_[r]);
          for (std::uint32_t i = 0; i < leaves_[r]; ++i) ns[i] = piece_ns(r, i, i + 1);
          std::stable_sort(first, leaf_order_.end(),
                           [&](std::uint32_t a, std::uint32_t b) { return ns[a] > ns[b]; });
        }
      }
    }
    // Nodes that start after run_after() dependencies: watch them.
    for (std::size_t i = 0; i < n; ++i) {
      const JobGraph::Node& node = g_.nodes[i];
      for (std::uint32_t d = node.first_dep; d < node.first_dep + node.deps; ++d) {
        if (done(g_.deps[d])) {
          --start_pending_[i];
        } else {
          watch(g_.deps[d], Watcher{true, static_cast<std::uint32_t>(i)});
        }
      }
    }
    const std::uint32_t w = unbounded_ ? 1 : (serial_ ? 1 : std::max<std::uint32_t>(1, c_.workers));
    workers_.resize(w);
  }

  SimResult run() {
    const std::uint32_t root = new_task(Task::NodeTask, 0);
    workers_[0].stack.push_back(root);
    tasks_[root].worker = 0;
    schedule(0, 0);
    while (!node_done_[0]) {
      if (events_.empty()) {
        // Nothing can move: a wait on something the recording never finished. Let it go.
        if (!unblock_one()) break;
        continue;
      }
      const Event e = events_.top();
      events_.pop();
      if (e.version != workers_[e.worker].version) continue;
      now_ = e.time;
      step(e.worker);
    }
    SimResult out;
    if (c_.critical_path) out.critical_ns = critical_path(root, out.critical_node_ns);
    out.frame_ns = now_;
    out.busy_ns = busy_;
    out.handoffs = handoffs_;
    out.workers = static_cast<std::uint32_t>(workers_.size());
    return out;
  }

 private:
  struct Task {
    // PullerTask: a job of an in-order range, taking its next item until none are left.
    enum Type : std::uint8_t { NodeTask, PieceTask, PullerTask };
    Type type = NodeTask;
    bool computing = false;  // inside a Compute item, which ends at the worker's next event
    bool blocked = false;    // at a Wait with dependencies outstanding
    std::uint32_t node = kNone;
    std::uint32_t range = kNone;
    std::uint32_t lo = 0, hi = 0;  // PieceTask: the leaves it covers
    std::uint32_t cursor = 0;      // NodeTask: next item
    std::uint32_t outstanding = 0;
    std::uint32_t worker = kNone;     // running (or blocked) on
    std::uint32_t queued_by = kNone;  // the worker that queued it
    // Critical-path tracing: the task that made it runnable and when, the dependency whose end
    // let its wait go, when it ended, and its timeline (its last segment in trace_).
    std::uint32_t released_by = kNone;
    std::uint64_t released_at = 0;
    std::uint32_t last_dep = kNone;
    std::uint64_t ended_at = 0;
    std::uint32_t first_segment = kNone;
  };
  // A piece of a task's timeline, when tracing: own time (tag) or a wait let go by `dep`.
  struct Segment {
    std::uint64_t begin, end;
    std::uint32_t dep;  // kNone: own time
    std::uint16_t tag;
    std::uint32_t previous;  // the task's segment before this one
    std::uint32_t node;      // whose own time
  };
  struct Worker {
    std::vector<std::uint32_t> stack;  // back() runs; below it, strands blocked in a wait
    std::deque<std::uint32_t> queue;   // Dynamic: a deque; Static: a mailbox
    std::uint32_t claimed = kNone;     // taken by a wake-up, starts at the next event
    std::uint32_t version = 0;         // events of older versions are stale
    std::uint32_t next_victim = 0;
    std::uint32_t deal = 0;  // Static: round-robin position
    bool pending = false;    // an event is scheduled
    // Unbounded workers with hand-offs: the jobs it queued, each claimed by a fresh worker that
    // starts it a hand-off later (task, that worker), newest last.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> handed;
  };
  struct Event {
    std::uint64_t time;
    std::uint64_t seq;
    std::uint32_t worker;
    std::uint32_t version;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  struct Watcher {
    bool node_start;    // true: a node's start; false: a blocked task
    std::uint32_t who;  // node or task
  };
  struct WatchLink {
    Watcher watcher;
    std::uint32_t next;
  };

  bool done(const JobGraph::Dep& d) const {
    return d.range ? range_done_[d.index] != 0 : node_done_[d.index] != 0;
  }
  std::uint32_t target(const JobGraph::Dep& d) const {
    return d.range ? static_cast<std::uint32_t>(g_.nodes.size()) + d.index : d.index;
  }
  void watch(const JobGraph::Dep& d, Watcher w) {
    const std::uint32_t t = target(d);
    links_.push_back({w, watch_head_[t]});
    watch_head_[t] = static_cast<std::uint32_t>(links_.size() - 1);
  }

  std::uint32_t new_task(Task::Type type, std::uint32_t node) {
    Task t;
    t.type = type;
    t.node = node;
    t.released_by = running_;
    t.released_at = now_;
    tasks_.push_back(t);
    return static_cast<std::uint32_t>(tasks_.size() - 1);
  }

  void trace(std::uint32_t task, std::uint64_t begin, std::uint64_t end, std::uint32_t dep,
             std::uint16_t tag) {
    if (!c_.critical_path) return;
    const Task& t = tasks_[task];
    const std::uint32_t node =
        t.type == Task::NodeTask
            ? t.node
            : (g_.ranges[t.range].root_count > 0 ? g_.roots[g_.ranges[t.range].first_root] : 0);
    trace_.push_back({begin, end, dep, tag, tasks_[task].first_segment, node});
    tasks_[task].first_segment = static_cast<std::uint32_t>(trace_.size() - 1);
  }

  // Walks back from node 0's end along what each step waited for: own time is the path's, a wait
  // jumps to the dependency that ended last, a task's start to the task that released it.
  std::vector<std::uint64_t> critical_path(std::uint32_t root,
                                           std::vector<std::uint64_t>& by_node) const {
    std::vector<std::uint64_t> by_tag(kMaxTags, 0);
    by_node.assign(g_.nodes.size(), 0);
    std::uint32_t task = root;
    std::uint64_t at = tasks_[root].ended_at;
    for (std::size_t guard = 0; task != kNone && guard < trace_.size() + tasks_.size() + 1;
         ++guard) {
      std::uint32_t s = tasks_[task].first_segment;
      while (s != kNone && trace_[s].begin > at) s = trace_[s].previous;
      std::uint32_t jump = kNone;
      std::uint64_t jump_at = 0;
      for (; s != kNone; s = trace_[s].previous) {
        const Segment& seg = trace_[s];
        if (seg.dep != kNone) {
          jump = seg.dep;
          jump_at = tasks_[seg.dep].ended_at;
          break;
        }
        const std::uint64_t own = std::min(seg.end, at) - std::min(seg.begin, at);
        by_tag[std::min<std::uint32_t>(seg.tag, kMaxTags - 1)] += own;
        if (seg.node < by_node.size()) by_node[seg.node] += own;
        at = seg.begin;
      }
      if (jump == kNone) {
        jump = tasks_[task].released_by;
        jump_at = tasks_[task].released_at;
      }
      task = jump;
      at = jump_at;
    }
    return by_tag;
  }

  void schedule(std::uint32_t w, std::uint64_t time) {
    Worker& worker = workers_[w];
    ++worker.version;
    worker.pending = true;
    events_.push(Event{time, seq_++, w, worker.version});
  }

  // An idle worker other than `except` (one with nothing at all first), or kNone.
  std::uint32_t idle_worker(std::uint32_t except, bool allow_blocked) {
    std::uint32_t blocked = kNone;
    for (std::uint32_t i = 0; i < workers_.size(); ++i) {
      const Worker& w = workers_[i];
      if (i == except || w.pending || w.claimed != kNone) continue;
      if (w.stack.empty()) return i;
      if (allow_blocked && blocked == kNone && tasks_[w.stack.back()].blocked) blocked = i;
    }
    return blocked;
  }

  // Makes a task runnable on behalf of worker `w` (the one that spawned it or released it).
  void push_task(std::uint32_t task, std::uint32_t w) {
    tasks_[task].queued_by = w;
    if (serial_) {
      workers_[w].stack.push_back(task);
      tasks_[task].worker = w;
      return;
    }
    if (unbounded_) {
      std::uint32_t free = idle_worker(kNone, false);
      if (free == kNone) {
        workers_.emplace_back();
        free = static_cast<std::uint32_t>(workers_.size() - 1);
      }
      workers_[free].claimed = task;
      schedule(free, now_ + c_.handoff_ns);
      if (c_.handoff_ns > 0) workers_[w].handed.emplace_back(task, free);
      return;
    }
    if (c_.policy == SimPolicy::Static) {
      const std::uint32_t count = static_cast<std::uint32_t>(workers_.size());
      // Participant 0 runs its mailbox only while it waits: others deal to it only then.
      const bool to_all = w == 0 || count == 1 || main_waiting();
      Worker& dealer = workers_[w];
      const std::uint32_t turn = dealer.deal++;
      const std::uint32_t to = to_all ? turn % count : 1 + turn % (count - 1);
      workers_[to].queue.push_back(task);
      if (to != w && !workers_[to].pending && workers_[to].claimed == kNone &&
          (workers_[to].stack.empty() || tasks_[workers_[to].stack.back()].blocked))
        schedule(to, now_ + c_.handoff_ns);
      return;
    }
    workers_[w].queue.push_back(task);
    const std::uint32_t idle = idle_worker(w, true);
    if (idle != kNone) schedule(idle, now_ + c_.handoff_ns);
  }

  bool main_waiting() const {
    const Worker& main = workers_[0];
    return !main.stack.empty() && tasks_[main.stack.back()].blocked;
  }

  // Its own queue, then (Dynamic) the oldest job of another worker's. True when a task is on the
  // stack to run now. With unbounded workers, the newest job it queued that the fresh worker has
  // not started yet: as the real one runs its own queue when it is free before a thief arrives.
  bool acquire(std::uint32_t w) {
    if (serial_) return false;
    if (unbounded_) {
      while (!workers_[w].handed.empty()) {
        const auto [task, claimer] = workers_[w].handed.back();
        workers_[w].handed.pop_back();
        if (workers_[claimer].claimed != task) continue;  // started there already
        workers_[claimer].claimed = kNone;
        start(task, w);
        return true;
      }
      return false;
    }
    Worker& me = workers_[w];  // acquire() adds no worker
    std::uint32_t task = kNone;
    if (!me.queue.empty()) {
      if (c_.policy == SimPolicy::Static) {
        task = me.queue.front();
        me.queue.pop_front();
      } else {
        task = me.queue.back();
        me.queue.pop_back();
      }
    } else if (c_.policy == SimPolicy::Dynamic) {
      const std::uint32_t count = static_cast<std::uint32_t>(workers_.size());
      for (std::uint32_t k = 0; k < count && task == kNone; ++k) {
        const std::uint32_t v = (me.next_victim + k) % count;
        if (v == w || workers_[v].queue.empty()) continue;
        task = workers_[v].queue.front();
        workers_[v].queue.pop_front();
        me.next_victim = v + 1;
      }
    }
    if (task == kNone) return false;
    start(task, w);
    return true;
  }

  void start(std::uint32_t task, std::uint32_t w) {
    Task& t = tasks_[task];
    if (t.queued_by != kNone && t.queued_by != w) ++handoffs_;
    t.worker = w;
    workers_[w].stack.push_back(task);
  }

  void spawn_node(std::uint32_t node, std::uint32_t w) {
    if (--start_pending_[node] != 0) return;  // waits for run_after() dependencies
    const std::uint32_t task = new_task(Task::NodeTask, node);
    node_task_[node] = task;
    push_task(task, w);
  }

  void spawn_range(std::uint32_t r, std::uint32_t w) {
    const JobGraph::Range& range = g_.ranges[r];
    if (leaves_[r] == 0) {  // replayed as recorded
      for (std::uint32_t k = range.first_root; k < range.first_root + range.root_count; ++k)
        spawn_node(g_.roots[k], w);
      if (range.jobs == 0) finish_range(r, w);
      return;
    }
    auto piece = [&](std::uint32_t lo, std::uint32_t hi) {
      const std::uint32_t task = new_task(Task::PieceTask, kNone);
      tasks_[task].range = r;
      tasks_[task].lo = lo;
      tasks_[task].hi = hi;
      return task;
    };
    if (range.in_order) {
      for (std::uint32_t i = 0; i < range_left_[r]; ++i) {
        const std::uint32_t task = new_task(Task::PullerTask, kNone);
        tasks_[task].range = r;
        push_task(task, w);
      }
    } else if (c_.policy == SimPolicy::Static && !unbounded_) {
      for (std::uint32_t i = 0; i < leaves_[r]; ++i) push_task(piece(i, i + 1), w);
    } else {
      push_task(piece(0, leaves_[r]), w);
    }
  }

  // Time of leaves [lo, hi) of range r cut into leaves_[r]: the recorded pieces' times spread
  // over the items they covered, scaled to the range's whole own time.
  std::uint64_t piece_ns(std::uint32_t r, std::uint32_t lo, std::uint32_t hi) const {
    const JobGraph::Range& range = g_.ranges[r];
    const double k = leaves_[r];
    const double span = static_cast<double>(range.end - range.begin);
    if (span <= 0 || range.pieces == 0) return range.ns * (hi - lo) / leaves_[r];
    const double x0 = static_cast<double>(range.begin) + span * lo / k;
    const double x1 = static_cast<double>(range.begin) + span * hi / k;
    double part = 0, total = 0;
    for (std::uint32_t p = range.first_piece; p < range.first_piece + range.pieces; ++p) {
      const JobGraph::Piece& piece = g_.pieces[p];
      const double b = static_cast<double>(piece.begin), e = static_cast<double>(piece.end);
      const double ns = static_cast<double>(piece.ns);
      total += ns;
      if (e <= b) continue;
      const double overlap = std::max(0.0, std::min(e, x1) - std::max(b, x0));
      part += ns * overlap / (e - b);
    }
    if (total <= 0) return range.ns * (hi - lo) / leaves_[r];
    return static_cast<std::uint64_t>(part / total * static_cast<double>(range.ns));
  }

  void finish_range(std::uint32_t r, std::uint32_t w) {
    range_done_[r] = 1;
    notify(static_cast<std::uint32_t>(g_.nodes.size()) + r, w);
  }

  void complete(std::uint32_t task, std::uint32_t w) {
    tasks_[task].ended_at = now_;
    const std::uint32_t outer = running_;
    running_ = task;  // what its end releases, it released
    struct Restore {
      std::uint32_t& slot;
      std::uint32_t value;
      ~Restore() { slot = value; }
    } restore{running_, outer};
    // By value: notify() may spawn tasks, and tasks_ moves when it grows.
    const Task t = tasks_[task];
    if (t.type == Task::NodeTask) {
      node_done_[t.node] = 1;
      notify(t.node, w);
      const std::uint32_t r = g_.nodes[t.node].range;
      if (r != kNone && leaves_[r] == 0 && --range_left_[r] == 0) finish_range(r, w);
    } else if (--range_left_[t.range] == 0) {
      finish_range(t.range, w);
    }
  }

  void notify(std::uint32_t target, std::uint32_t w) {
    for (std::uint32_t l = watch_head_[target]; l != kNone; l = links_[l].next) {
      const Watcher watcher = links_[l].watcher;
      if (watcher.node_start) {
        spawn_node(watcher.who, w);
        continue;
      }
      Task& t = tasks_[watcher.who];
      if (!t.blocked || t.outstanding == 0 || --t.outstanding != 0) continue;
      t.last_dep = running_;
      // Its worker resumes it now if it sits idle in that wait; a busy one when its job ends.
      const std::uint32_t owner = t.worker;
      Worker& ow = workers_[owner];
      if (owner != w && !ow.pending && ow.claimed == kNone && !ow.stack.empty() &&
          ow.stack.back() == watcher.who)
        schedule(owner, now_);
    }
    watch_head_[target] = kNone;
  }

  // Lets one blocked strand go as if its dependencies were done (a recording that misses them).
  bool unblock_one() {
    for (std::uint32_t w = 0; w < workers_.size(); ++w) {
      Worker& worker = workers_[w];
      for (std::uint32_t task : worker.stack) {
        if (!tasks_[task].blocked) continue;
        tasks_[task].outstanding = 0;
        schedule(w, now_);
        return true;
      }
    }
    return false;
  }

  void step(std::uint32_t w) {
    // By index throughout: a push may add workers (unbounded) and a spawn tasks.
    workers_[w].pending = false;
    if (workers_[w].claimed != kNone) {
      const std::uint32_t task = workers_[w].claimed;
      workers_[w].claimed = kNone;
      start(task, w);
    }
    for (;;) {
      if (workers_[w].stack.empty()) {
        if (!acquire(w)) return;  // idle until a push wakes it
        continue;
      }
      const std::uint32_t id = workers_[w].stack.back();
      running_ = id;
      if (tasks_[id].blocked) {
        if (tasks_[id].outstanding == 0) {
          tasks_[id].blocked = false;
          ++tasks_[id].cursor;
          if (tasks_[id].last_dep != kNone) trace(id, now_, now_, tasks_[id].last_dep, 0);
          continue;
        }
        if (!acquire(w)) return;  // waits, helping when a job comes its way
        continue;
      }
      if (tasks_[id].type == Task::PullerTask) {
        const std::uint32_t r = tasks_[id].range;
        tasks_[id].computing = false;
        if (next_leaf_[r] >= leaves_[r]) {
          workers_[w].stack.pop_back();
          complete(id, w);
          continue;
        }
        const std::uint32_t next = next_leaf_[r]++;
        const std::uint32_t leaf =
            order_first_[r] != kNone ? leaf_order_[order_first_[r] + next] : next;
        const std::uint64_t ns = piece_ns(r, leaf, leaf + 1);
        busy_ += ns;
        trace(id, now_, now_ + ns, kNone, g_.ranges[r].tag);
        tasks_[id].computing = true;
        schedule(w, now_ + ns);
        return;
      }
      if (tasks_[id].type == Task::PieceTask) {
        if (tasks_[id].computing) {
          tasks_[id].computing = false;
          workers_[w].stack.pop_back();
          complete(id, w);
          continue;
        }
        if (tasks_[id].hi - tasks_[id].lo > 1) {
          const std::uint32_t mid = tasks_[id].lo + (tasks_[id].hi - tasks_[id].lo) / 2;
          const std::uint32_t right = new_task(Task::PieceTask, kNone);
          tasks_[right].range = tasks_[id].range;
          tasks_[right].lo = mid;
          tasks_[right].hi = tasks_[id].hi;
          tasks_[id].hi = mid;
          push_task(right, w);
          continue;
        }
        const std::uint64_t ns = piece_ns(tasks_[id].range, tasks_[id].lo, tasks_[id].hi);
        busy_ += ns;
        trace(id, now_, now_ + ns, kNone, g_.ranges[tasks_[id].range].tag);
        tasks_[id].computing = true;
        schedule(w, now_ + ns);
        return;
      }
      const JobGraph::Node& node = g_.nodes[tasks_[id].node];
      if (tasks_[id].computing) {
        tasks_[id].computing = false;
        ++tasks_[id].cursor;
        continue;
      }
      if (tasks_[id].cursor >= node.items) {
        workers_[w].stack.pop_back();
        complete(id, w);
        continue;
      }
      const JobGraph::Item& item = g_.items[node.first_item + tasks_[id].cursor];
      switch (item.kind) {
        case Kind::Compute:
          if (item.ns == 0) {
            ++tasks_[id].cursor;
            continue;
          }
          busy_ += item.ns;
          trace(id, now_, now_ + item.ns, kNone, node.tag);
          tasks_[id].computing = true;
          schedule(w, now_ + item.ns);
          return;
        case Kind::Spawn:
          ++tasks_[id].cursor;
          spawn_node(item.ref, w);
          continue;
        case Kind::Call: {
          ++tasks_[id].cursor;
          if (start_pending_[item.ref] != 1) {  // has run_after() dependencies: as a spawn
            spawn_node(item.ref, w);
            continue;
          }
          --start_pending_[item.ref];
          const std::uint32_t task = new_task(Task::NodeTask, item.ref);
          node_task_[item.ref] = task;
          tasks_[task].queued_by = w;
          start(task, w);
          continue;
        }
        case Kind::SpawnRange:
          ++tasks_[id].cursor;
          spawn_range(item.ref, w);
          continue;
        case Kind::Wait: {
          std::uint32_t outstanding = 0;
          for (std::uint32_t d = item.ref; d < item.ref + item.count; ++d) {
            if (!done(g_.deps[d])) {
              ++outstanding;
              watch(g_.deps[d], Watcher{false, id});
            }
          }
          if (outstanding == 0) {
            ++tasks_[id].cursor;
            continue;
          }
          tasks_[id].outstanding = outstanding;
          tasks_[id].blocked = true;
          continue;
        }
      }
    }
  }

  const JobGraph& g_;
  const SimConfig& c_;
  const bool unbounded_;
  const bool serial_;
  std::vector<std::uint8_t> node_done_;
  std::vector<std::uint32_t> start_pending_;
  std::vector<std::uint32_t> node_task_;
  std::vector<std::uint8_t> range_done_;
  std::vector<std::uint32_t> range_left_;
  std::vector<std::uint32_t> leaves_;     // 0: the range replays its recorded jobs
  std::vector<std::uint32_t> next_leaf_;  // in-order ranges: the next item to hand out
  // Costliest-first in-order ranges: where their leaves' order starts in leaf_order_ (kNone: in
  // index order).
  std::vector<std::uint32_t> order_first_;
  std::vector<std::uint32_t> leaf_order_;
  std::vector<std::uint32_t> watch_head_;
  std::vector<WatchLink> links_;
  std::vector<Task> tasks_;
  std::vector<Worker> workers_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<Segment> trace_;
  std::uint32_t running_ = kNone;  // the task being stepped (it releases what it spawns)
  std::uint64_t now_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t busy_ = 0;
  std::uint64_t handoffs_ = 0;
};

}  // namespace

double min_chunk_for(double min_chunk, std::uint32_t workers) {
  if (workers <= kMinChunkWorkers) return min_chunk;
  return min_chunk * std::sqrt(static_cast<double>(kMinChunkWorkers - 1) / (workers - 1));
}

SimResult simulate(const JobGraph& graph, const SimConfig& config) {
  if (graph.nodes.empty()) return {};
  Simulation sim(graph, config);
  return sim.run();
}

}  // namespace spindle::jobs
