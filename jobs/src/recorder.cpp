#include "recorder.h"

#include <algorithm>

#include "spindle/jobs/detail/counter_state.h"

namespace spindle::jobs::detail {
namespace {

// Process-wide, so a recorder built where a destroyed one was never takes a stale binding.
std::atomic<std::uint64_t> g_sessions{0};

struct Binding {
  std::uint64_t session = 0;
  std::uint32_t index = 0;
  void* buffer = nullptr;
};
thread_local Binding t_binding;

constexpr std::uint32_t kIdShift = 24;
constexpr std::uint32_t kSeqMask = (1u << kIdShift) - 1;
constexpr std::uint64_t kAddressMask = (1ull << CounterState::kEpochShift) - 1;

}  // namespace

// One thread's open strand while converting: a job (or the thread's code outside jobs).
struct Recorder::Strand {
  std::uint32_t node = JobGraph::kNone;  // kNone: not in the graph (begun before the recording)
  std::uint64_t mark = 0;                // own time accrues from here
  bool in_wait = false;
  std::uint32_t wait = 0;          // the wait being recorded
  std::uint32_t last_item = ~0u;   // its last item in Scratch::items
  std::uint32_t last_event = ~0u;  // its last item other than own time
  std::uint64_t own = 0;           // own time so far
  std::uint64_t piece_own = 0;     // own time when its piece began
  std::uint64_t piece_begin = 0, piece_end = 0;
  std::uint32_t piece_range = JobGraph::kNone;
};

struct Recorder::Scratch {
  struct TempItem {
    std::uint32_t node;
    JobGraph::Item item;
    std::uint64_t ticks;  // Compute: own time in ticks
  };
  struct Wait {
    std::uint32_t node;
    std::uint64_t key;   // the counter's address
    std::uint64_t end;   // tick
    std::uint64_t from;  // tick: the previous wait on the same address ended then
  };
  struct NodeDep {
    std::uint32_t node;
    std::uint64_t key;  // a counter's key, or with `job` the node it starts after
    bool job = false;
  };
  struct Keyed {
    std::uint64_t key;
    std::uint64_t submit;
    std::uint32_t node;
  };
  struct Generation {
    std::uint64_t key;
    std::uint64_t first_submit;
    std::uint32_t begin, end;  // into keyed
  };
  struct NodeInfo {
    std::uint64_t key = 0;
    std::uint64_t submit = 0, begin = 0, end = 0;
    std::uint64_t idle_since = 0;  // the executing thread's last event before the start
    bool idle_at_start = false;    // it was outside jobs or waiting then
    bool submitted = false, begun = false, pure = true;
    bool queuable = false;    // ran at once only for lack of another active participant
    std::uint32_t after = 0;  // of its deps, those from record_after() (released at submission)
    std::uint16_t submit_thread = 0;
  };
  std::vector<TempItem> items;
  std::vector<Wait> waits;
  std::vector<NodeDep> node_deps;
  std::vector<NodeInfo> info;
  std::vector<std::uint32_t> job_base, range_base;
  std::vector<Strand> stack;
  std::vector<Keyed> keyed;
  std::vector<Keyed> by_address;
  std::vector<std::uint32_t> wait_order;
  std::vector<Generation> generations;
  std::vector<std::uint32_t> counts;
  std::vector<std::uint32_t> range_stamp;
  std::vector<std::uint32_t> orphans;
  std::vector<std::uint64_t> latencies;
  std::vector<std::uint8_t> range_seen;
};

Recorder::Recorder(std::uint32_t participants)
    : max_buffers_(2 * participants + 8),
      buffers_(std::make_unique<std::unique_ptr<Buffer>[]>(max_buffers_)),
      scratch_(std::make_unique<Scratch>()) {}

Recorder::~Recorder() = default;

std::uint64_t Recorder::key(const void* counter, std::uint64_t word, bool done_generation) {
  if (counter == nullptr) return 0;
  std::uint64_t epoch = word >> CounterState::kEpochShift;
  if (done_generation) epoch = (epoch - 1) & 0xffff;
  return (reinterpret_cast<std::uintptr_t>(counter) & kAddressMask) |
         (epoch << CounterState::kEpochShift);
}

void Recorder::begin() {
  session_ = g_sessions.fetch_add(1, std::memory_order_relaxed) + 1;
  bound_.store(0, std::memory_order_relaxed);
  begin_tick_ = ticks();
  stopped_ = false;  // a recording stopped and never ended is dropped
  active_.store(true, std::memory_order_seq_cst);
  bind();  // the calling thread is buffer 0: its code outside jobs is node 0
}

Recorder::Buffer* Recorder::bind() {
  Binding& b = t_binding;
  if (b.session == session_) return static_cast<Buffer*>(b.buffer);
  const std::uint32_t index = bound_.fetch_add(1, std::memory_order_relaxed);
  b.session = session_;
  b.index = index;
  b.buffer = nullptr;
  if (index >= max_buffers_) return nullptr;  // more threads than buffers: dropped, see end()
  std::unique_ptr<Buffer>& slot = buffers_[index];
  if (!slot) slot = std::make_unique<Buffer>();
  Buffer& buffer = *slot;
  if (buffer.capacity < capacity_) {
    buffer.events = std::make_unique<Event[]>(capacity_);
    buffer.capacity = capacity_;
  }
  buffer.size = 0;
  buffer.overflowed = false;
  buffer.next_job = 0;
  buffer.next_range = 0;
  b.buffer = &buffer;
  return &buffer;
}

std::uint32_t Recorder::next_job_id() {
  Buffer* buffer = bind();
  if (buffer == nullptr || buffer->next_job >= kSeqMask) return 0;
  return ((t_binding.index + 1) << kIdShift) | ++buffer->next_job;
}

std::uint32_t Recorder::next_range_id() {
  Buffer* buffer = bind();
  if (buffer == nullptr || buffer->next_range >= kSeqMask) return 0;
  return ((t_binding.index + 1) << kIdShift) | ++buffer->next_range;
}

void Recorder::add_at(std::uint64_t tick, EventType type, std::uint64_t x, std::uint64_t y,
                      std::uint32_t a, std::uint16_t tag, std::uint8_t flags) {
  Buffer* buffer = bind();
  if (buffer == nullptr) return;
  if (buffer->size >= buffer->capacity) {
    buffer->overflowed = true;
    return;
  }
  Event& e = buffer->events[buffer->size++];
  e.tick = tick;
  e.x = x;
  e.y = y;
  e.a = a;
  e.type = type;
  e.flags = flags;
  e.tag = tag;
}

void Recorder::stop() {
  if (!active()) return;
  end_tick_ = ticks();
  active_.store(false, std::memory_order_seq_cst);
  stopped_ = true;
}

bool Recorder::end(JobGraph& out, Mode mode, std::uint32_t workers, double ns_per_tick) {
  stop();
  if (!stopped_) return false;
  stopped_ = false;
  out.clear();
  out.mode = mode;
  out.workers = workers;
  convert(out, ns_per_tick);
  return true;
}

void Recorder::convert(JobGraph& out, double ns_per_tick) {
  Scratch& s = *scratch_;
  using Item = JobGraph::Item;
  using Kind = JobGraph::Kind;
  const std::uint32_t used = std::min(bound_.load(std::memory_order_relaxed), max_buffers_);
  bool complete = bound_.load(std::memory_order_relaxed) <= max_buffers_;
  for (std::uint32_t t = 0; t < used; ++t) {
    if (buffers_[t]->overflowed) complete = false;
  }
  if (!complete) capacity_ = std::min<std::uint32_t>(capacity_ * 2, 1u << 22);

  // Node and range numbering: node 0, then each thread's jobs in id order.
  s.job_base.assign(used + 1, 0);
  s.range_base.assign(used + 1, 0);
  std::uint32_t nodes = 1, ranges = 0;
  for (std::uint32_t t = 0; t < used; ++t) {
    s.job_base[t] = nodes;
    s.range_base[t] = ranges;
    nodes += buffers_[t]->next_job;
    ranges += buffers_[t]->next_range;
  }
  auto node_of = [&](std::uint32_t id) -> std::uint32_t {
    const std::uint32_t thread = (id >> kIdShift) - 1;
    if (id == 0 || thread >= used || (id & kSeqMask) == 0 ||
        (id & kSeqMask) > buffers_[thread]->next_job)
      return JobGraph::kNone;
    return s.job_base[thread] + (id & kSeqMask) - 1;
  };
  auto range_of = [&](std::uint32_t id) -> std::uint32_t {
    const std::uint32_t thread = (id >> kIdShift) - 1;
    if (id == 0 || thread >= used || (id & kSeqMask) == 0 ||
        (id & kSeqMask) > buffers_[thread]->next_range)
      return JobGraph::kNone;
    return s.range_base[thread] + (id & kSeqMask) - 1;
  };
  out.nodes.assign(nodes, JobGraph::Node{});
  out.ranges.assign(ranges, JobGraph::Range{});
  s.info.assign(nodes, Scratch::NodeInfo{});
  s.items.clear();
  s.waits.clear();
  s.node_deps.clear();
  s.orphans.clear();
  out.pieces.clear();
  std::vector<std::uint32_t> piece_range;  // range of each piece, parallel to out.pieces
  piece_range.reserve(64);

  auto emit = [&](Strand& st, const Item& item, std::uint64_t ticks) {
    if (st.node == JobGraph::kNone) return;
    if (item.kind == Kind::Compute && st.last_item != ~0u &&
        s.items[st.last_item].item.kind == Kind::Compute) {
      s.items[st.last_item].ticks += ticks;
      return;
    }
    if (st.node < s.info.size() && out.nodes[st.node].range != JobGraph::kNone) {
      const bool own_half =
          item.kind == Kind::Spawn && out.nodes[item.ref].range == out.nodes[st.node].range;
      if (item.kind != Kind::Compute && !own_half) s.info[st.node].pure = false;
    }
    st.last_item = static_cast<std::uint32_t>(s.items.size());
    if (item.kind != Kind::Compute) st.last_event = st.last_item;
    s.items.push_back({st.node, item, ticks});
  };
  auto flush = [&](Strand& st, std::uint64_t tick) {
    if (st.in_wait) return;
    if (tick > st.mark) {
      const std::uint64_t d = tick - st.mark;
      st.own += d;
      emit(st, Item{Kind::Compute, 0, 0, 0}, d);
    }
    st.mark = tick;
  };

  // Threads 1.. first: an outside thread's code outside jobs becomes a node (an orphan) that
  // node 0 spawns at its start, so thread 0 must know them before its own strand is built.
  for (std::uint32_t pass = 0; pass < used; ++pass) {
    const std::uint32_t t = pass + 1 < used ? pass + 1 : 0;
    const Buffer& buffer = *buffers_[t];
    s.stack.clear();
    Strand bottom;
    bottom.node = t == 0 ? 0 : JobGraph::kNone;
    bottom.mark = begin_tick_;
    s.stack.push_back(bottom);
    if (t == 0) {
      for (std::uint32_t orphan : s.orphans)
        emit(s.stack.back(), Item{Kind::Spawn, orphan, 0, 0}, 0);
      s.stack.back().last_event = ~0u;  // the orphans' spawns are not a Call target
    }
    std::uint64_t previous_tick = begin_tick_;
    for (std::uint32_t i = 0; i < buffer.size; ++i) {
      const Event& e = buffer.events[i];
      const std::uint64_t tick = std::max(e.tick, begin_tick_);
      Strand* top = &s.stack.back();
      // Code outside jobs on a thread other than the recording one: a root of its own.
      if (t != 0 && s.stack.size() == 1 && top->node == JobGraph::kNone &&
          (e.type == EventType::Submit || e.type == EventType::WaitBegin ||
           e.type == EventType::Range)) {
        top->node = static_cast<std::uint32_t>(out.nodes.size());
        out.nodes.push_back(JobGraph::Node{});
        out.nodes.back().thread = static_cast<std::uint16_t>(t);
        out.nodes.back().begin_ns = tick - begin_tick_;
        s.info.push_back(Scratch::NodeInfo{});
        s.info.back().begun = true;
        s.info.back().begin = tick;
        s.orphans.push_back(top->node);
        top->mark = tick;
      }
      switch (e.type) {
        case EventType::Submit: {
          const std::uint32_t child = node_of(e.a);
          flush(*top, tick);
          if (child == JobGraph::kNone) break;
          JobGraph::Node& n = out.nodes[child];
          Scratch::NodeInfo& inf = s.info[child];
          n.tag = e.tag;
          n.range = e.y != 0 ? range_of(static_cast<std::uint32_t>(e.y)) : JobGraph::kNone;
          n.parent = top->node;
          inf.key = e.x;
          inf.submit = tick;
          inf.submitted = true;
          inf.submit_thread = static_cast<std::uint16_t>(t);
          inf.queuable = (e.flags & kSubmitQueuable) != 0;
          emit(*top, Item{Kind::Spawn, child, 0, 0}, 0);
          break;
        }
        case EventType::Dep: {
          const std::uint32_t child = node_of(e.a);
          if (child != JobGraph::kNone) s.node_deps.push_back({child, e.x});
          break;
        }
        case EventType::After: {
          const std::uint32_t child = node_of(e.a);
          const std::uint32_t earlier = node_of(static_cast<std::uint32_t>(e.x));
          if (child != JobGraph::kNone && earlier != JobGraph::kNone && earlier != child)
            s.node_deps.push_back({child, earlier, true});
          break;
        }
        case EventType::Begin: {
          flush(*top, tick);
          const std::uint32_t node = node_of(e.a);
          if (node != JobGraph::kNone) {
            Scratch::NodeInfo& inf = s.info[node];
            inf.begun = true;
            inf.begin = tick;
            inf.idle_since = previous_tick;
            inf.idle_at_start = s.stack.size() == 1 || top->in_wait;
            out.nodes[node].thread = static_cast<std::uint16_t>(t);
            if (e.x != 0) out.nodes[node].name = reinterpret_cast<const char*>(e.x);
            // Run at once by the strand that just submitted it: a call, not a spawn (unless it
            // ran there only because nobody else was active).
            if (!top->in_wait && top->last_event != ~0u && !inf.queuable) {
              Item& last = s.items[top->last_event].item;
              if (last.kind == Kind::Spawn && last.ref == node) {
                last.kind = Kind::Call;
                if (top->node != JobGraph::kNone && out.nodes[top->node].range != JobGraph::kNone)
                  s.info[top->node].pure = false;
              }
            }
          }
          Strand inner;
          inner.node = node;
          inner.mark = tick;
          s.stack.push_back(inner);
          break;
        }
        case EventType::End: {
          if (s.stack.size() <= 1) break;  // an end without its start: ignore
          flush(*top, tick);
          if (top->node != JobGraph::kNone) s.info[top->node].end = tick;
          s.stack.pop_back();
          s.stack.back().mark = tick;
          break;
        }
        case EventType::WaitBegin: {
          flush(*top, tick);
          top->in_wait = true;
          top->wait = static_cast<std::uint32_t>(s.waits.size());
          s.waits.push_back({top->node, e.x & kAddressMask, tick, 0});
          break;
        }
        case EventType::WaitEnd: {
          if (!top->in_wait) break;
          top->in_wait = false;
          s.waits[top->wait].end = tick;
          emit(*top, Item{Kind::Wait, top->wait, 0, 0}, 0);
          top->mark = tick;
          break;
        }
        case EventType::Range: {
          flush(*top, tick);
          const std::uint32_t r = range_of(e.a);
          if (r == JobGraph::kNone) break;
          out.ranges[r].begin = e.x;
          out.ranges[r].end = e.y;
          out.ranges[r].parent = top->node;
          out.ranges[r].fixed_split = (e.flags & kRangeFixed) != 0;
          out.ranges[r].in_order = (e.flags & kRangeInOrder) != 0;
          out.ranges[r].costliest_first = (e.flags & kRangeCostliestFirst) != 0;
          break;
        }
        case EventType::PieceBegin: {
          flush(*top, tick);
          top->piece_range = range_of(e.a);
          top->piece_own = top->own;
          top->piece_begin = e.x;
          top->piece_end = e.y;
          break;
        }
        case EventType::PieceEnd: {
          flush(*top, tick);
          if (top->piece_range != JobGraph::kNone) {
            out.pieces.push_back({top->piece_begin, top->piece_end, top->own - top->piece_own});
            piece_range.push_back(top->piece_range);
          }
          top->piece_range = JobGraph::kNone;
          break;
        }
      }
      previous_tick = tick;
    }
    // Whatever is still open ends with the recording (thread 0's own strand, normally alone).
    while (!s.stack.empty()) {
      Strand& st = s.stack.back();
      flush(st, end_tick_);
      if (st.node != JobGraph::kNone && st.node < s.info.size()) s.info[st.node].end = end_tick_;
      s.stack.pop_back();
    }
  }

  // Ranges: the jobs of each, its pieces, and whether it may be cut again.
  const std::size_t total_nodes = out.nodes.size();
  for (std::size_t n = 1; n < total_nodes; ++n) {
    const std::uint32_t r = out.nodes[n].range;
    if (r == JobGraph::kNone) continue;
    ++out.ranges[r].jobs;
    out.ranges[r].tag = out.nodes[n].tag;
  }
  // Pieces grouped by range, in item order (a counting sort keeps them stable).
  {
    s.counts.assign(ranges + 1, 0);
    for (std::uint32_t r : piece_range) ++s.counts[r + 1];
    for (std::uint32_t r = 0; r < ranges; ++r) s.counts[r + 1] += s.counts[r];
    for (std::uint32_t r = 0; r < ranges; ++r) {
      out.ranges[r].first_piece = s.counts[r];
      out.ranges[r].pieces = s.counts[r + 1] - s.counts[r];
    }
    std::vector<JobGraph::Piece> sorted(out.pieces.size());
    for (std::size_t p = 0; p < out.pieces.size(); ++p)
      sorted[s.counts[piece_range[p]]++] = out.pieces[p];
    out.pieces.swap(sorted);
    for (std::uint32_t r = 0; r < ranges; ++r) {
      JobGraph::Range& range = out.ranges[r];
      std::sort(
          out.pieces.begin() + range.first_piece,
          out.pieces.begin() + range.first_piece + range.pieces,
          [](const JobGraph::Piece& a, const JobGraph::Piece& b) { return a.begin < b.begin; });
    }
  }
  for (std::size_t n = 1; n < total_nodes; ++n) {
    const std::uint32_t r = out.nodes[n].range;
    if (r != JobGraph::kNone && !s.info[n].pure) out.ranges[r].jobs |= 0x80000000u;
  }
  for (std::uint32_t r = 0; r < ranges; ++r) {
    JobGraph::Range& range = out.ranges[r];
    const bool impure = (range.jobs & 0x80000000u) != 0;
    range.jobs &= 0x7fffffffu;
    // In order: each job took pieces of one item until none were left, however many.
    range.resplittable =
        !impure && range.jobs > 0 && (range.pieces == range.jobs || range.in_order);
  }
  for (const Scratch::NodeDep& d : s.node_deps) {
    const std::uint32_t r = out.nodes[d.node].range;
    if (r != JobGraph::kNone) out.ranges[r].resplittable = false;
  }

  // A resplittable range's jobs leave their caller's strand: its first one becomes the range.
  s.range_seen.assign(ranges, 0);
  out.roots.clear();
  {
    // Roots (the jobs the caller itself submitted), grouped by range.
    s.counts.assign(ranges + 1, 0);
    for (const Scratch::TempItem& ti : s.items) {
      if (ti.item.kind != Kind::Spawn && ti.item.kind != Kind::Call) continue;
      const std::uint32_t r = out.nodes[ti.item.ref].range;
      if (r != JobGraph::kNone && out.nodes[ti.node].range != r) ++s.counts[r + 1];
    }
    for (std::uint32_t r = 0; r < ranges; ++r) s.counts[r + 1] += s.counts[r];
    out.roots.assign(s.counts[ranges], 0);
    for (std::uint32_t r = 0; r < ranges; ++r) {
      out.ranges[r].first_root = s.counts[r];
      out.ranges[r].root_count = s.counts[r + 1] - s.counts[r];
    }
    std::size_t kept = 0;
    for (std::size_t k = 0; k < s.items.size(); ++k) {
      Scratch::TempItem ti = s.items[k];
      if (ti.item.kind == Kind::Spawn || ti.item.kind == Kind::Call) {
        const std::uint32_t r = out.nodes[ti.item.ref].range;
        if (r != JobGraph::kNone && out.nodes[ti.node].range != r) {
          out.roots[s.counts[r]++] = ti.item.ref;
          if (out.ranges[r].resplittable) {
            if (s.range_seen[r]) continue;  // the range is already in this strand
            s.range_seen[r] = 1;
            ti.item = Item{Kind::SpawnRange, r, 0, 0};
          }
        }
      }
      s.items[kept++] = ti;
    }
    s.items.resize(kept);
  }

  // Counter generations: the jobs of one key, split where the counter was idle in between (a
  // new counter at the address of a finished one).
  s.keyed.clear();
  for (std::size_t n = 1; n < s.info.size(); ++n) {
    if (s.info[n].submitted && s.info[n].key != 0)
      s.keyed.push_back({s.info[n].key, s.info[n].submit, static_cast<std::uint32_t>(n)});
  }
  std::sort(s.keyed.begin(), s.keyed.end(), [](const Scratch::Keyed& a, const Scratch::Keyed& b) {
    return a.key != b.key ? a.key < b.key : a.submit < b.submit;
  });
  s.generations.clear();
  for (std::uint32_t i = 0; i < s.keyed.size();) {
    std::uint32_t j = i;
    std::uint64_t latest_end = 0;
    while (j < s.keyed.size() && s.keyed[j].key == s.keyed[i].key) {
      const std::uint32_t start = j;
      latest_end = 0;
      do {
        const Scratch::NodeInfo& inf = s.info[s.keyed[j].node];
        latest_end = std::max(latest_end, inf.begun ? inf.end : end_tick_);
        ++j;
      } while (j < s.keyed.size() && s.keyed[j].key == s.keyed[i].key &&
               s.keyed[j].submit <= latest_end);
      s.generations.push_back({s.keyed[i].key, s.keyed[start].submit, start, j});
    }
    i = j;
  }
  // A run_after() dependency stands for the jobs its counter had pending when the job was
  // attached: that generation of its exact key.
  s.range_stamp.assign(ranges, 0);
  std::uint32_t stamp = 0;
  auto add_dep = [&](std::uint32_t node) {
    const std::uint32_t r = out.nodes[node].range;
    if (r != JobGraph::kNone && out.ranges[r].resplittable) {
      if (s.range_stamp[r] == stamp) return;
      s.range_stamp[r] = stamp;
      out.deps.push_back({true, r});
    } else {
      out.deps.push_back({false, node});
    }
  };
  auto resolve = [&](std::uint64_t key, std::uint64_t tick) {
    auto it = std::upper_bound(
        s.generations.begin(), s.generations.end(), std::make_pair(key, tick),
        [](const std::pair<std::uint64_t, std::uint64_t>& v, const Scratch::Generation& g) {
          return v.first != g.key ? v.first < g.key : v.second <= g.first_submit;
        });
    if (it == s.generations.begin()) return;
    --it;
    if (it->key != key) return;
    ++stamp;
    for (std::uint32_t k = it->begin; k < it->end; ++k) add_dep(s.keyed[k].node);
  };
  // A wait stands for every job counted on its counter (by address: a counter may reach zero and
  // rise again before anyone waits) submitted since the last wait on that address ended.
  s.by_address = s.keyed;
  for (Scratch::Keyed& k : s.by_address) k.key &= kAddressMask;
  std::sort(s.by_address.begin(), s.by_address.end(),
            [](const Scratch::Keyed& a, const Scratch::Keyed& b) {
              return a.key != b.key ? a.key < b.key : a.submit < b.submit;
            });
  s.wait_order.resize(s.waits.size());
  for (std::uint32_t w = 0; w < s.waits.size(); ++w) s.wait_order[w] = w;
  std::sort(s.wait_order.begin(), s.wait_order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const Scratch::Wait &wa = s.waits[a], &wb = s.waits[b];
    return wa.key != wb.key ? wa.key < wb.key : wa.end < wb.end;
  });
  for (std::size_t k = 0; k < s.wait_order.size(); ++k) {
    Scratch::Wait& w = s.waits[s.wait_order[k]];
    const bool after_another = k > 0 && s.waits[s.wait_order[k - 1]].key == w.key;
    w.from = after_another ? s.waits[s.wait_order[k - 1]].end : 0;
  }
  auto resolve_wait = [&](const Scratch::Wait& w) {
    auto by = [](const Scratch::Keyed& a, const std::pair<std::uint64_t, std::uint64_t>& v) {
      return a.key != v.first ? a.key < v.first : a.submit < v.second;
    };
    auto first = std::lower_bound(s.by_address.begin(), s.by_address.end(),
                                  std::make_pair(w.key, w.from), by);
    auto last = std::lower_bound(s.by_address.begin(), s.by_address.end(),
                                 std::make_pair(w.key, w.end), by);
    ++stamp;
    for (; first != last; ++first) add_dep(first->node);
  };
  out.deps.clear();
  std::stable_sort(
      s.node_deps.begin(), s.node_deps.end(),
      [](const Scratch::NodeDep& a, const Scratch::NodeDep& b) { return a.node < b.node; });
  for (std::size_t k = 0; k < s.node_deps.size();) {
    const std::uint32_t node = s.node_deps[k].node;
    const std::uint64_t start = s.info[node].begun ? s.info[node].begin : end_tick_;
    const std::uint32_t first = static_cast<std::uint32_t>(out.deps.size());
    for (; k < s.node_deps.size() && s.node_deps[k].node == node; ++k) {
      if (!s.node_deps[k].job) {
        resolve(s.node_deps[k].key, start);
        continue;
      }
      ++stamp;
      const std::size_t before = out.deps.size();
      add_dep(static_cast<std::uint32_t>(s.node_deps[k].key));
      s.info[node].after += static_cast<std::uint32_t>(out.deps.size() - before);
    }
    out.nodes[node].first_dep = first;
    out.nodes[node].deps = static_cast<std::uint32_t>(out.deps.size()) - first;
  }

  // Items grouped by node, each node's in the order it ran them.
  s.counts.assign(total_nodes + 1, 0);
  for (const Scratch::TempItem& ti : s.items) ++s.counts[ti.node + 1];
  for (std::size_t n = 0; n < total_nodes; ++n) s.counts[n + 1] += s.counts[n];
  for (std::size_t n = 0; n < total_nodes; ++n) {
    out.nodes[n].first_item = s.counts[n];
    out.nodes[n].items = s.counts[n + 1] - s.counts[n];
  }
  out.items.assign(s.items.size(), Item{});
  std::uint64_t work_ticks = 0;
  for (const Scratch::TempItem& ti : s.items) {
    Item item = ti.item;
    if (item.kind == Kind::Compute) {
      item.ns = static_cast<std::uint64_t>(static_cast<double>(ti.ticks) * ns_per_tick);
      work_ticks += ti.ticks;
    } else if (item.kind == Kind::Wait) {
      const std::uint32_t first = static_cast<std::uint32_t>(out.deps.size());
      resolve_wait(s.waits[item.ref]);
      item.ref = first;
      item.count = static_cast<std::uint32_t>(out.deps.size()) - first;
    }
    out.items[s.counts[ti.node]++] = item;
  }

  // Pieces were timed in ticks.
  for (JobGraph::Piece& piece : out.pieces)
    piece.ns = static_cast<std::uint64_t>(static_cast<double>(piece.ns) * ns_per_tick);

  // Times in ns from the start, range totals, the hand-off latency.
  auto ns = [&](std::uint64_t tick) {
    return tick > begin_tick_
               ? static_cast<std::uint64_t>(static_cast<double>(tick - begin_tick_) * ns_per_tick)
               : 0;
  };
  s.latencies.clear();
  for (std::size_t n = 0; n < total_nodes; ++n) {
    JobGraph::Node& node = out.nodes[n];
    const Scratch::NodeInfo& inf = s.info[n];
    node.submit_ns = ns(inf.submit);
    node.begin_ns = ns(inf.begin);
    node.end_ns = ns(inf.end);
    if (n == 0) node.end_ns = ns(end_tick_);
    if (node.range != JobGraph::kNone) {
      for (std::uint32_t k = node.first_item; k < node.first_item + node.items; ++k)
        if (out.items[k].kind == Kind::Compute) out.ranges[node.range].ns += out.items[k].ns;
    }
    // A run_after() job's submission is not its release; record_after()'s are released already.
    if (n > 0 && inf.submitted && inf.begun && node.deps == inf.after && inf.idle_at_start &&
        node.thread != inf.submit_thread && inf.idle_since <= inf.submit && inf.begin >= inf.submit)
      s.latencies.push_back(ns(inf.begin) - ns(inf.submit));
  }
  if (!s.latencies.empty()) {
    auto mid = s.latencies.begin() + static_cast<std::ptrdiff_t>(s.latencies.size() / 2);
    std::nth_element(s.latencies.begin(), mid, s.latencies.end());
    out.handoff_ns = *mid;
  }
  out.handoffs_seen = static_cast<std::uint32_t>(s.latencies.size());
  out.jobs = static_cast<std::uint32_t>(total_nodes - 1);
  out.wall_ns = ns(end_tick_);
  out.work_ns = static_cast<std::uint64_t>(static_cast<double>(work_ticks) * ns_per_tick);
  out.complete = complete;
  SimConfig span;
  span.workers = 0;
  span.resplit = false;
  out.span_ns = simulate(out, span).frame_ns;
  span.handoff_ns = out.handoff_ns;
  out.span_handoff_ns = out.handoff_ns == 0 ? out.span_ns : simulate(out, span).frame_ns;
}

}  // namespace spindle::jobs::detail
