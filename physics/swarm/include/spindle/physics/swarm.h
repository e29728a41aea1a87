// The swarm collision system: neighbour queries, overlap resolution and boids-style steering
// for tens of thousands of simple agents (circles or axis-aligned boxes in 2D), fully
// data-parallel, deterministic and allocation-free per frame. Header-only; templates over the
// scalar type. What Bullet cannot scale to (DESIGN.md, "Physics"); also the tiny-target
// profile's collision system.
//
// Usage:
//
//   spindle::swarm::Config<float> cfg;
//   cfg.max_agents = 100000;                     // everything is allocated here, once
//   cfg.min_x = 0; cfg.min_y = 0; cfg.max_x = 400; cfg.max_y = 400;
//   cfg.cell_size = 1.0f;                        // >= radius
//   cfg.radius = 1.0f;                           // neighbour query radius
//   cfg.max_neighbours = 16;                     // k: neighbours kept per agent
//   cfg.max_candidates = 64;                     // M: agents examined per agent
//   cfg.boundary = spindle::swarm::Boundary::Clamp;   // or Wrap (a torus)
//   cfg.shape = spindle::swarm::Shape::Circle;        // or Aabb (radius = half width)
//   spindle::swarm::Swarm<float> swarm(cfg);     // swarm.valid(), else swarm.error()
//   // (or Swarm<spindle::core::fixed>: Q20.12, for targets without an FPU)
//   ...every frame:
//   swarm.build(jobs, chunks, {x, y, vx, vy, radius}, tag);   // spans in your agent order, or
//   swarm.build(jobs, chunks, n, [&](std::uint32_t i) { return Agent<float>{...}; }, tag);
//   swarm.find_neighbours(jobs, chunks, tag);
//   swarm.resolve_overlaps(jobs, chunks, 1.0f, tag);          // push_x()/push_y(), sorted order
//   for (std::uint32_t k = 0; k < swarm.count(); ++k) {       // or swarm.for_each_range()
//     const std::uint32_t agent = swarm.order()[k];           // sorted position -> your index
//     for (std::uint32_t j : swarm.neighbours(k)) ...         // sorted positions, scan order
//     auto f = swarm.flock(k);                                // separation/alignment/cohesion
//   }
//   swarm.rank()[agent]                                       // your index -> sorted position
//
// How a frame works, what bounds its cost, boundaries, determinism and memory:
// physics/swarm/README.md.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "spindle/algorithms/chunks.h"
#include "spindle/algorithms/radix_sort.h"
#include "spindle/base/fixed.h"
#include "spindle/jobs/job_system.h"

namespace spindle::swarm {

// The operations the swarm needs beyond + - * / and comparisons. Specialise for a fixed-point
// type.
template <class S>
struct ScalarTraits;

template <class F>
struct FloatScalarTraits {
  static constexpr F from_int(std::int32_t v) { return static_cast<F>(v); }
  // floor(v) clamped to [lo, hi]; NaN gives lo.
  static std::int32_t floor_to_int(F v, std::int32_t lo, std::int32_t hi) {
    if (!(v >= static_cast<F>(lo))) return lo;
    if (v >= static_cast<F>(hi)) return hi;
    return static_cast<std::int32_t>(std::floor(v));
  }
  static F sqrt(F v) { return std::sqrt(v); }
  // Whether the offset (dx, dy) lies within the radius whose square is r2.
  static bool within(F dx, F dy, F r2) { return dx * dx + dy * dy <= r2; }
};
template <>
struct ScalarTraits<float> : FloatScalarTraits<float> {};
template <>
struct ScalarTraits<double> : FloatScalarTraits<double> {};
// Q20.12 (spindle/base/fixed.h), the tiny-target profile's scalar: no FPU needed, the same bits
// on every CPU. Its range (+-524288) and step (1/4096) bound the world: squared distances up to
// the query radius must fit, so keep coordinates and cell sizes in units of about 1 to 500.
template <>
struct ScalarTraits<core::fixed> {
  static constexpr core::fixed from_int(std::int32_t v) { return core::fixed::from_int(v); }
  static std::int32_t floor_to_int(core::fixed v, std::int32_t lo, std::int32_t hi) {
    return std::clamp(v.floor_to_int(), lo, hi);
  }
  static core::fixed sqrt(core::fixed v) { return core::fixed::sqrt(v); }
  // Exact: the squares in 64 bits, not rounded to Q20.12 each (and cheaper). The offsets of
  // candidates are at most two cells, far from overflowing.
  static bool within(core::fixed dx, core::fixed dy, core::fixed r2) {
    return std::int64_t{dx.raw()} * dx.raw() + std::int64_t{dy.raw()} * dy.raw() <=
           (std::int64_t{r2.raw()} << core::fixed::kFractionBits);
  }
};

enum class Boundary : std::uint8_t { Clamp, Wrap };
// What resolve_overlaps() pushes apart: circles of radius r, or axis-aligned boxes of half
// extents (r, half_height).
enum class Shape : std::uint8_t { Circle, Aabb };
// How cells are numbered, which is the order agents are sorted in. The results are the same
// either way (the same neighbours, in the same scan order); only the cost differs.
enum class CellOrder : std::uint8_t {
  Morton,  // Z-order: cells close in space are close in memory on both axes (large caches)
  Rows,    // row after row: the three cells of a scanned row are one range of the sorted
           // agents, so listing an agent's candidates takes 3 lookups, not 9 (small CPUs, the
           // tiny-target profile)
};

template <class S>
struct Config {
  // Most agents one build() takes.
  std::uint32_t max_agents = 0;
  // World bounds [min, max) per axis.
  S min_x = ScalarTraits<S>::from_int(0), min_y = ScalarTraits<S>::from_int(0);
  S max_x = ScalarTraits<S>::from_int(1), max_y = ScalarTraits<S>::from_int(1);
  // Grid cell side (> 0); at most 32768 cells per axis and a Morton range of at most 2^24.
  S cell_size = ScalarTraits<S>::from_int(1);
  // Neighbour query radius, in (0, cell_size].
  S radius = ScalarTraits<S>::from_int(1);
  // k: neighbours kept per agent (>= 1).
  std::uint32_t max_neighbours = 16;
  // M: agents examined per agent, the agent itself included, in [1, 1024]; bounds the worst
  // case.
  std::uint32_t max_candidates = 64;
  // Most chunks (jobs) one pass splits into, and the fewest agents worth a chunk.
  std::uint32_t max_chunks = 64;
  std::uint32_t min_chunk_agents = 1024;
  Boundary boundary = Boundary::Clamp;
  Shape shape = Shape::Circle;
  CellOrder cell_order = CellOrder::Morton;
};

// What build() reads, in the caller's agent order. x and y are required; the others may be
// empty (then zero in the sorted copies; an empty half_height copies the radius).
template <class S>
struct AgentSpans {
  std::span<const S> x, y;
  std::span<const S> vx{}, vy{};
  std::span<const S> radius{};       // circle radius, or a box's half width
  std::span<const S> half_height{};  // a box's half height (Shape::Aabb)
};

// One agent as a build() source functor returns it: src(i) -> Agent<S>.
template <class S>
struct Agent {
  S x = ScalarTraits<S>::from_int(0), y = ScalarTraits<S>::from_int(0);
  S vx = ScalarTraits<S>::from_int(0), vy = ScalarTraits<S>::from_int(0);
  S radius = ScalarTraits<S>::from_int(0);       // circle radius, or a box's half width
  S half_height = ScalarTraits<S>::from_int(0);  // a box's half height (Shape::Aabb)
};

// Sums over one agent's neighbours, for boids-style steering. d = p_neighbour - p_agent (the
// shortest way on a torus); divide by count for means.
template <class S>
struct FlockSums {
  S separation_x = ScalarTraits<S>::from_int(0);  // -sum d / |d|^2 (coincident ones skipped)
  S separation_y = ScalarTraits<S>::from_int(0);
  S velocity_x = ScalarTraits<S>::from_int(0);  // sum of neighbour velocities (alignment)
  S velocity_y = ScalarTraits<S>::from_int(0);
  S offset_x = ScalarTraits<S>::from_int(0);  // sum d (cohesion: offset_x / count is the centre)
  S offset_y = ScalarTraits<S>::from_int(0);
  std::uint32_t count = 0;
};

struct CellCoord {
  std::uint32_t x = 0;
  std::uint32_t y = 0;
};

// Counts of the last build() / find_neighbours(); identical for every chunk count.
struct Stats {
  std::uint32_t agents = 0;            // indexed by the last build()
  std::uint32_t rejected = 0;          // agents of a build() refused for lack of capacity
  std::uint32_t neighbour_capped = 0;  // agents that found max_neighbours (maybe more exist)
  std::uint32_t candidate_capped = 0;  // agents whose scan stopped at max_candidates
  std::uint32_t max_scanned = 0;       // most candidates listed for one agent (<= M)
};

template <class S, class Traits = ScalarTraits<S>>
class Swarm {
 public:
  // Upper limit of Config::max_candidates (the candidate list lives on the stack: 4 KiB).
  static constexpr std::uint32_t kMaxCandidates = 1024;

  explicit Swarm(const Config<S>& config) : config_(config) {
    error_ = validate_and_size();
    if (error_ != nullptr) return;
    const std::size_t n = config_.max_agents;
    keys_.resize(n);
    key_tmp_.resize(n);
    order_.resize(n);
    order_tmp_.resize(n);
    rank_.resize(n);
    x_.resize(n);
    y_.resize(n);
    vx_.resize(n);
    vy_.resize(n);
    r_.resize(n);
    h_.resize(n);
    push_x_.resize(n);
    push_y_.resize(n);
    counts_.resize(n);
    offsets_.resize(n);
    neighbours_.resize(n * config_.max_neighbours);
    cell_start_.resize(std::size_t{table_size_} + 1);
    chunk_stats_.resize(config_.max_chunks);
    sort_scratch_ = std::make_unique<core::RadixSortScratch>(config_.max_chunks);
  }

  // False when the configuration is unusable (error() says why); every call then does nothing.
  bool valid() const { return error_ == nullptr; }
  const char* error() const { return error_ == nullptr ? "" : error_; }
  const Config<S>& config() const { return config_; }
  std::uint32_t cells_x() const { return cells_x_; }
  std::uint32_t cells_y() const { return cells_y_; }
  std::uint32_t morton_range() const { return table_size_; }

  // The chunk count a pass over `items` agents uses when asked for `chunks`.
  std::uint32_t effective_chunks(std::size_t items, std::uint32_t chunks) const {
    const std::size_t worth = (items + config_.min_chunk_agents - 1) / config_.min_chunk_agents;
    const std::size_t limit =
        std::max<std::size_t>(std::min<std::size_t>(config_.max_chunks, worth), 1);
    return static_cast<std::uint32_t>(std::clamp<std::size_t>(chunks, 1, limit));
  }

  // The cell holding (x, y) (clamped or wrapped per the boundary).
  CellCoord cell_of(S x, S y) const {
    return {axis_cell(x, config_.min_x, inv_cell_x_, cells_x_),
            axis_cell(y, config_.min_y, inv_cell_y_, cells_y_)};
  }
  // The cell's code in the configured order (CellOrder; the name is from when it was only
  // Morton): agents are sorted by it, and cell_range() looks it up.
  std::uint32_t morton(CellCoord c) const { return spread_x_[c.x] + spread_y_[c.y]; }

  // Builds keys, sorts and indexes `n` agents, src(i) -> Agent<S> for i in [0, n) (called twice
  // per agent, concurrently from several jobs). Jobs are named "swarm_keys", "swarm_index" and
  // radix_sort's, booked under `tag`. Returns false, indexing nothing, when n > max_agents or
  // the swarm is not valid().
  template <class Source>
  bool build(jobs::JobSystem& jobs, std::uint32_t chunks, std::uint32_t n, const Source& src,
             std::uint16_t tag = 0) {
    count_ = 0;
    stats_ = Stats{};
    if (!valid() || n > config_.max_agents) {
      stats_.rejected = n;
      return false;
    }
    chunks = effective_chunks(n, chunks);
    core::for_each_chunk(jobs, chunks, {"swarm_keys", tag}, [&](std::uint32_t c) {
      const core::ChunkRange r = core::chunk_range(n, chunks, c);
      for (std::size_t i = r.begin; i < r.end; ++i) {
        const Agent<S> a = src(static_cast<std::uint32_t>(i));
        keys_[i] = morton(cell_of(a.x, a.y));
        order_[i] = static_cast<std::uint32_t>(i);
      }
    });
    const bool sorted = core::radix_sort(jobs, chunks, *sort_scratch_, std::span(keys_.data(), n),
                                         std::span(order_.data(), n), std::span(key_tmp_.data(), n),
                                         std::span(order_tmp_.data(), n), tag);
    if (!sorted) return false;  // not reached: the buffers hold max_agents
    core::for_each_chunk(jobs, chunks, {"swarm_index", tag}, [&](std::uint32_t c) {
      const core::ChunkRange r = core::chunk_range(n, chunks, c);
      for (std::size_t k = r.begin; k < r.end; ++k) {
        const std::uint32_t agent = order_[k];
        const Agent<S> a = src(agent);
        x_[k] = a.x;
        y_[k] = a.y;
        vx_[k] = a.vx;
        vy_[k] = a.vy;
        r_[k] = a.radius;
        h_[k] = a.half_height;
        rank_[agent] = static_cast<std::uint32_t>(k);
        // Codes in (previous key, this key] start here.
        const std::uint64_t first = k == 0 ? 0 : keys_[k - 1] + 1;
        for (std::uint64_t code = first; code <= keys_[k]; ++code)
          cell_start_[code] = static_cast<std::uint32_t>(k);
      }
      if (c + 1 == chunks) {  // codes past the last agent's, and the end sentinel
        const std::uint64_t first = n == 0 ? 0 : keys_[n - 1] + 1;
        for (std::uint64_t code = first; code <= table_size_; ++code) cell_start_[code] = n;
      }
    });
    count_ = n;
    stats_.agents = n;
    return true;
  }

  // The same from spans (x.size() agents; the other spans empty or as long).
  bool build(jobs::JobSystem& jobs, std::uint32_t chunks, const AgentSpans<S>& a,
             std::uint16_t tag = 0) {
    const auto n = static_cast<std::uint32_t>(a.x.size());
    if (a.y.size() != a.x.size() || !(a.vx.empty() || a.vx.size() == n) ||
        !(a.vy.empty() || a.vy.size() == n) || !(a.radius.empty() || a.radius.size() == n) ||
        !(a.half_height.empty() || a.half_height.size() == n)) {
      count_ = 0;
      stats_ = Stats{};
      stats_.rejected = n;
      return false;
    }
    return build(
        jobs, chunks, n,
        [&a](std::uint32_t i) {
          const S zero = Traits::from_int(0);
          const S r = a.radius.empty() ? zero : a.radius[i];
          return Agent<S>{a.x[i],
                          a.y[i],
                          a.vx.empty() ? zero : a.vx[i],
                          a.vy.empty() ? zero : a.vy[i],
                          r,
                          a.half_height.empty() ? r : a.half_height[i]};
        },
        tag);
  }

  // Fills the neighbour table of every built agent (jobs "swarm_neighbours").
  void find_neighbours(jobs::JobSystem& jobs, std::uint32_t chunks, std::uint16_t tag = 0) {
    const std::uint32_t n = count_;
    stats_.neighbour_capped = stats_.candidate_capped = stats_.max_scanned = 0;
    if (n == 0) return;
    chunks = effective_chunks(n, chunks);
    const std::uint32_t k_max = config_.max_neighbours;
    const bool wrap = config_.boundary == Boundary::Wrap;
    core::for_each_chunk(jobs, chunks, {"swarm_neighbours", tag}, [&](std::uint32_t c) {
      const core::ChunkRange r = core::chunk_range(n, chunks, c);
      ChunkStats s{};
      // Agents of one cell share their candidate list: it is listed once per cell (sorted
      // order visits a cell's agents together), not once per agent.
      CandidateList list;
      std::uint64_t listed_key = ~std::uint64_t{0};
      // The chunk packs its agents' lists one after another into its own part of the table
      // (room for k_max per agent): 4 bytes written per neighbour instead of a 64-byte row
      // per agent, which made two cores share the memory bus rather than the work.
      std::size_t out = r.begin * k_max;
      for (std::size_t k = r.begin; k < r.end; ++k) {
        if (keys_[k] != listed_key) {
          listed_key = keys_[k];
          list_candidates(cell_of_sorted(k), list);
        }
        const auto self = static_cast<std::uint32_t>(k);
        std::uint32_t* row = neighbours_.data() + out;  // out <= k * k_max: room for k_max
        const std::uint32_t found =
            wrap ? test_candidates<true>(x_[k], y_[k], self, list, row, k_max)
                 : test_candidates<false>(x_[k], y_[k], self, list, row, k_max);
        offsets_[k] = static_cast<std::uint32_t>(out);
        counts_[k] = found;
        out += found;
        s.neighbour_capped += found == k_max ? 1u : 0u;
        s.candidate_capped += list.truncated && found < k_max ? 1u : 0u;
        s.max_scanned = std::max(s.max_scanned, list.size);
      }
      chunk_stats_[c] = s;
    });
    for (std::uint32_t c = 0; c < chunks; ++c) {
      stats_.neighbour_capped += chunk_stats_[c].neighbour_capped;
      stats_.candidate_capped += chunk_stats_[c].candidate_capped;
      stats_.max_scanned = std::max(stats_.max_scanned, chunk_stats_[c].max_scanned);
    }
  }

  // Agents (sorted positions) near (x, y) under the same rule and caps as find_neighbours(),
  // excluding none; writes at most min(out.size(), max_neighbours) and returns how many.
  // Reads the last build(); safe to call from many threads at once.
  std::uint32_t query(S x, S y, std::span<std::uint32_t> out) const {
    if (count_ == 0 || out.empty()) return 0;
    CandidateList list;
    list_candidates(cell_of(x, y), list);
    const auto k_max =
        static_cast<std::uint32_t>(std::min<std::size_t>(out.size(), config_.max_neighbours));
    return config_.boundary == Boundary::Wrap
               ? test_candidates<true>(x, y, ~0u, list, out.data(), k_max)
               : test_candidates<false>(x, y, ~0u, list, out.data(), k_max);
  }

  // Overlap push per agent (sorted order) into push_x()/push_y(), summed over its neighbours
  // in list order. Circles: for a neighbour j at distance d < r_k + r_j, (r_k + r_j - d) *
  // stiffness / 2 away from j. Boxes (Shape::Aabb): where both axes overlap, along the axis of
  // least overlap, that overlap * stiffness / 2 away from j (no square root: fixed-point
  // friendly). Coincident agents (or centres level on the push axis) go -x / -y for the lower
  // sorted position, + for the higher. Adding the pushes to the positions moves each
  // overlapping pair apart by stiffness times its overlap when both see each other. Overlaps
  // are only seen between neighbours: the query radius must reach r_k + r_j (circles) or the
  // diagonal of the summed half extents (boxes). Jobs "swarm_resolve".
  void resolve_overlaps(jobs::JobSystem& jobs, std::uint32_t chunks, S stiffness,
                        std::uint16_t tag = 0) {
    const S half = stiffness / Traits::from_int(2);
    const S zero = Traits::from_int(0);
    const bool boxes = config_.shape == Shape::Aabb;
    for_each_range(jobs, chunks, {"swarm_resolve", tag}, [&](std::uint32_t b, std::uint32_t e) {
      for (std::uint32_t k = b; k < e; ++k) {
        S sx = zero, sy = zero;
        const S px = x_[k], py = y_[k], rk = r_[k], hk = h_[k];
        for (const std::uint32_t j : neighbours(k)) {
          S dx = x_[j] - px, dy = y_[j] - py;
          wrap_offset(dx, dy);
          const S sign = k < j ? -half : half;  // away from j when level
          if (boxes) {
            const S ox = rk + r_[j] - (dx < zero ? -dx : dx);
            const S oy = hk + h_[j] - (dy < zero ? -dy : dy);
            if (!(ox > zero) || !(oy > zero)) continue;
            if (ox <= oy)
              sx = sx + (dx > zero ? -ox * half : dx < zero ? ox * half : ox * sign);
            else
              sy = sy + (dy > zero ? -oy * half : dy < zero ? oy * half : oy * sign);
            continue;
          }
          const S d2 = dx * dx + dy * dy;
          const S rr = rk + r_[j];
          if (!(d2 < rr * rr)) continue;
          if (d2 > zero) {
            const S d = Traits::sqrt(d2);
            const S f = (rr - d) * half / d;
            sx = sx - dx * f;
            sy = sy - dy * f;
          } else {
            sx = sx + rr * sign;
          }
        }
        push_x_[k] = sx;
        push_y_[k] = sy;
      }
    });
  }

  // Separation, alignment and cohesion sums over agent k's neighbours (sorted position k).
  FlockSums<S> flock(std::uint32_t k) const {
    FlockSums<S> f;
    const S zero = Traits::from_int(0), one = Traits::from_int(1);
    const S px = x_[k], py = y_[k];
    for (const std::uint32_t j : neighbours(k)) {
      S dx = x_[j] - px, dy = y_[j] - py;
      wrap_offset(dx, dy);
      const S d2 = dx * dx + dy * dy;
      if (d2 > zero) {
        const S inv = one / d2;
        f.separation_x = f.separation_x - dx * inv;
        f.separation_y = f.separation_y - dy * inv;
      }
      f.velocity_x = f.velocity_x + vx_[j];
      f.velocity_y = f.velocity_y + vy_[j];
      f.offset_x = f.offset_x + dx;
      f.offset_y = f.offset_y + dy;
    }
    f.count = counts_[k];
    return f;
  }

  // Calls fn(begin, end) over contiguous ranges of the sorted positions [0, count()), split as
  // every pass here is; for the caller's own per-agent passes in sorted order.
  template <class F>
  void for_each_range(jobs::JobSystem& jobs, std::uint32_t chunks, const jobs::JobDesc& desc,
                      const F& fn) const {
    const std::uint32_t n = count_;
    chunks = effective_chunks(n, chunks);
    core::for_each_chunk(jobs, chunks, desc, [&](std::uint32_t c) {
      const core::ChunkRange r = core::chunk_range(n, chunks, c);
      if (r.end > r.begin)
        fn(static_cast<std::uint32_t>(r.begin), static_cast<std::uint32_t>(r.end));
    });
  }

  // --- results of the last build() (sorted order unless said otherwise) ---
  std::uint32_t count() const { return count_; }
  std::span<const std::uint32_t> order() const { return {order_.data(), count_}; }  // k -> agent
  std::span<const std::uint32_t> rank() const { return {rank_.data(), count_}; }    // agent -> k
  std::span<const S> x() const { return {x_.data(), count_}; }
  std::span<const S> y() const { return {y_.data(), count_}; }
  std::span<const S> vx() const { return {vx_.data(), count_}; }
  std::span<const S> vy() const { return {vy_.data(), count_}; }
  std::span<const S> radius() const { return {r_.data(), count_}; }
  std::span<const S> half_height() const { return {h_.data(), count_}; }
  // Sorted positions [begin, end) of the agents in a cell.
  std::pair<std::uint32_t, std::uint32_t> cell_range(CellCoord c) const {
    const std::uint32_t code = morton(c);
    return {cell_start_[code], cell_start_[code + 1]};
  }
  // Of the last find_neighbours(): agent k's neighbours as sorted positions, in scan order.
  std::span<const std::uint32_t> neighbours(std::uint32_t k) const {
    return {neighbours_.data() + offsets_[k], counts_[k]};
  }
  // Of the last resolve_overlaps().
  std::span<const S> push_x() const { return {push_x_.data(), count_}; }
  std::span<const S> push_y() const { return {push_y_.data(), count_}; }
  const Stats& stats() const { return stats_; }

 private:
  static constexpr std::uint32_t kListBlock = 8;
  // The candidates of one cell's agents: sorted positions in scan order, at most
  // max_candidates (the array has room for one more fixed-size block past that).
  struct CandidateList {
    std::uint32_t size = 0;
    bool truncated = false;  // more agents were in reach than max_candidates
    alignas(32) std::uint32_t index[kMaxCandidates + kListBlock];
  };
  struct alignas(64) ChunkStats {
    std::uint32_t neighbour_capped = 0;
    std::uint32_t candidate_capped = 0;
    std::uint32_t max_scanned = 0;
  };

  static constexpr std::uint32_t kMaxCellsPerAxis = 1u << 15;
  static constexpr std::uint32_t kMaxMortonBits = 24;

  static std::uint32_t bits_for(std::uint32_t cells) {
    std::uint32_t b = 0;
    while ((1u << b) < cells) ++b;
    return b;
  }

  // Cells along an axis of length `extent`: enough to cover it (Clamp) or a whole number that
  // tiles it (Wrap, cells stretched). 0: too many.
  std::uint32_t axis_cells(S extent) const {
    const S ratio = extent / config_.cell_size;
    const auto limit = static_cast<std::int32_t>(kMaxCellsPerAxis);
    std::int32_t c = Traits::floor_to_int(ratio, 0, limit + 1);
    if (config_.boundary == Boundary::Clamp && Traits::from_int(c) < ratio) ++c;
    c = std::max(c, 1);
    return c > limit ? 0u : static_cast<std::uint32_t>(c);
  }

  const char* validate_and_size() {
    const S zero = Traits::from_int(0);
    const Config<S>& c = config_;
    if (c.max_agents == 0) return "max_agents must be at least 1";
    if (c.max_neighbours == 0) return "max_neighbours must be at least 1";
    if (c.max_candidates == 0 || c.max_candidates > kMaxCandidates)
      return "max_candidates must be in [1, 1024]";
    if (c.max_chunks == 0 || c.min_chunk_agents == 0)
      return "max_chunks and min_chunk_agents must be at least 1";
    if (std::uint64_t{c.max_agents} * c.max_neighbours >= (1ull << 31))
      return "max_agents * max_neighbours must stay below 2^31";
    if (!(c.max_x > c.min_x) || !(c.max_y > c.min_y)) return "world bounds are empty";
    if (!(c.cell_size > zero)) return "cell_size must be positive";
    if (!(c.radius > zero) || c.radius > c.cell_size) return "radius must be in (0, cell_size]";
    extent_x_ = c.max_x - c.min_x;
    extent_y_ = c.max_y - c.min_y;
    cells_x_ = axis_cells(extent_x_);
    cells_y_ = axis_cells(extent_y_);
    if (cells_x_ == 0 || cells_y_ == 0) return "more than 32768 cells along an axis";
    const std::uint32_t bx = bits_for(cells_x_), by = bits_for(cells_y_);
    if (bx + by > kMaxMortonBits) return "the grid's Morton range exceeds 2^24 cells";
    spread_x_.resize(cells_x_);
    spread_y_.resize(cells_y_);
    if (c.cell_order == CellOrder::Rows) {
      table_size_ = cells_x_ * cells_y_;  // < 2^24, checked above
      for (std::uint32_t i = 0; i < cells_x_; ++i) spread_x_[i] = i;
      for (std::uint32_t i = 0; i < cells_y_; ++i) spread_y_[i] = i * cells_x_;
      return finish_sizing();
    }
    table_size_ = 1u << (bx + by);
    // Low bits of both axes interleaved (x even, y odd), the longer axis' extra bits on top.
    const std::uint32_t low = std::min(bx, by);
    auto spread = [low](std::uint32_t v, std::uint32_t odd) {
      std::uint32_t out = 0;
      for (std::uint32_t b = 0; b < 16; ++b) {
        const std::uint32_t bit = (v >> b) & 1u;
        out |= b < low ? bit << (2 * b + odd) : bit << (low + b);
      }
      return out;
    };
    for (std::uint32_t i = 0; i < cells_x_; ++i) spread_x_[i] = spread(i, 0);
    for (std::uint32_t i = 0; i < cells_y_; ++i) spread_y_[i] = spread(i, 1);
    return finish_sizing();
  }

  const char* finish_sizing() {
    const Config<S>& c = config_;
    const bool wrap = c.boundary == Boundary::Wrap;
    // Wrap stretches cells to tile the torus; Clamp keeps the asked size.
    inv_cell_x_ = wrap ? Traits::from_int(static_cast<std::int32_t>(cells_x_)) / extent_x_
                       : Traits::from_int(1) / c.cell_size;
    inv_cell_y_ = wrap ? Traits::from_int(static_cast<std::int32_t>(cells_y_)) / extent_y_
                       : Traits::from_int(1) / c.cell_size;
    half_x_ = extent_x_ / Traits::from_int(2);
    half_y_ = extent_y_ / Traits::from_int(2);
    r2_ = c.radius * c.radius;
    return nullptr;
  }

  std::uint32_t axis_cell(S v, S min, S inv_cell, std::uint32_t cells) const {
    const S t = (v - min) * inv_cell;
    if (config_.boundary == Boundary::Clamp)
      return static_cast<std::uint32_t>(
          Traits::floor_to_int(t, 0, static_cast<std::int32_t>(cells) - 1));
    const std::int32_t i = Traits::floor_to_int(t, -(1 << 30), 1 << 30);
    const auto m = static_cast<std::int32_t>(cells);
    if (i >= 0 && i < m) [[likely]]  // positions inside the bounds: no division
      return static_cast<std::uint32_t>(i);
    return static_cast<std::uint32_t>(((i % m) + m) % m);
  }

  // The shortest offset on a torus (positions inside the bounds); nothing in Clamp mode.
  void wrap_offset(S& dx, S& dy) const {
    if (config_.boundary != Boundary::Wrap) return;
    dx = dx > half_x_ ? dx - extent_x_ : (dx < -half_x_ ? dx + extent_x_ : dx);
    dy = dy > half_y_ ? dy - extent_y_ : (dy < -half_y_ ? dy + extent_y_ : dy);
  }

  // The cells to visit along one axis, in scan order (README.md, find_neighbours).
  std::uint32_t axis_scan(std::uint32_t c, std::uint32_t cells, std::uint32_t out[3]) const {
    if (config_.boundary == Boundary::Wrap) {
      if (cells < 3) {
        for (std::uint32_t i = 0; i < cells; ++i) out[i] = i;
        return cells;
      }
      out[0] = c == 0 ? cells - 1 : c - 1;
      out[1] = c;
      out[2] = c + 1 == cells ? 0 : c + 1;
      return 3;
    }
    std::uint32_t m = 0;
    if (c > 0) out[m++] = c - 1;
    out[m++] = c;
    if (c + 1 < cells) out[m++] = c + 1;
    return m;
  }

  // Lists the agents of the 3 x 3 cells around `c` in scan order, cut at max_candidates. A cell
  // of up to kListBlock agents is one fixed-size store, so the distance tests that follow run
  // as one loop of known length rather than nine loops of 0-4 iterations each (whose exits
  // the branch predictor keeps missing).
  // The cell of sorted agent k: from its key in row order (no multiply, clamp or wrap).
  CellCoord cell_of_sorted(std::size_t k) const {
    if (config_.cell_order == CellOrder::Rows) {
      const auto key = static_cast<std::uint32_t>(keys_[k]);
      return {key % cells_x_, key / cells_x_};
    }
    return cell_of(x_[k], y_[k]);
  }

  void list_candidates(CellCoord c, CandidateList& list) const {
    if (config_.cell_order == CellOrder::Rows) {
      list_rows(c, list);
      return;
    }
    std::uint32_t cols[3], rows[3];
    const std::uint32_t ncols = axis_scan(c.x, cells_x_, cols);
    const std::uint32_t nrows = axis_scan(c.y, cells_y_, rows);
    std::uint32_t codes[9];
    std::uint32_t ncodes = 0;
    for (std::uint32_t ry = 0; ry < nrows; ++ry)
      for (std::uint32_t rx = 0; rx < ncols; ++rx)
        codes[ncodes++] = spread_y_[rows[ry]] | spread_x_[cols[rx]];
    const std::uint32_t* start = cell_start_.data();
    const std::uint32_t budget = config_.max_candidates;
    std::uint32_t* out = list.index;
    std::uint32_t size = 0;
    list.truncated = false;
    for (std::uint32_t i = 0; i < ncodes; ++i) {
      const std::uint32_t b = start[codes[i]];
      const std::uint32_t len = start[codes[i] + 1] - b;
      if (len <= kListBlock) {  // size < budget here, so the block fits
#if defined(SPINDLE_SIMD) && SPINDLE_SIMD
        for (std::uint32_t t = 0; t < kListBlock; ++t) out[size + t] = b + t;  // two stores
#else
        for (std::uint32_t t = 0; t < len; ++t) out[size + t] = b + t;  // scalar: only what is used
#endif
      } else {
        const std::uint32_t take = std::min(len, budget - size);
        for (std::uint32_t t = 0; t < take; ++t) out[size + t] = b + t;
      }
      size += len;
      if (size >= budget) {
        list.truncated = size > budget || i + 1 < ncodes;
        size = budget;
        break;
      }
    }
    list.size = size;
  }

  // list_candidates() for CellOrder::Rows: the scanned columns of a row are one run of
  // consecutive cells (two where Wrap crosses the edge), each one range of sorted agents, so a
  // list takes 3 lookups, not 9. The list is the cell-by-cell one; `truncated` may be left unset
  // where only empty cells of the same row were left past the budget.
  void list_rows(CellCoord c, CandidateList& list) const {
    const std::uint32_t* start = cell_start_.data();
    const std::uint32_t budget = config_.max_candidates;
    std::uint32_t size = 0;
    list.truncated = false;
    list.size = budget;  // unless every range fits
    // Appends cells [first, last] of the row starting at code `row`; true once the budget is met.
    const auto append = [&](std::uint32_t row, std::uint32_t first, std::uint32_t last) {
      const std::uint32_t b = start[row + first];
      const std::uint32_t len = start[row + last + 1] - b;
      const std::uint32_t take = std::min(len, budget - size);
      for (std::uint32_t t = 0; t < take; ++t) list.index[size + t] = b + t;
      size += len;
      return size >= budget;
    };
    if (config_.boundary == Boundary::Clamp) {  // one run a row, no scan tables
      const std::uint32_t x0 = c.x > 0 ? c.x - 1 : 0, x1 = std::min(c.x + 1, cells_x_ - 1);
      const std::uint32_t y1 = std::min(c.y + 1, cells_y_ - 1);
      for (std::uint32_t y = c.y > 0 ? c.y - 1 : 0; y <= y1; ++y) {
        if (append(y * cells_x_, x0, x1)) {
          list.truncated = size > budget || y < y1;
          return;
        }
      }
    } else {
      std::uint32_t cols[3], rows[3], run_first[2], run_last[2], runs = 0;
      const std::uint32_t ncols = axis_scan(c.x, cells_x_, cols);
      const std::uint32_t nrows = axis_scan(c.y, cells_y_, rows);
      for (std::uint32_t i = 0; i < ncols; ++i) {
        if (runs > 0 && cols[i] == run_last[runs - 1] + 1) {
          run_last[runs - 1] = cols[i];
        } else {
          run_first[runs] = run_last[runs] = cols[i];
          ++runs;
        }
      }
      for (std::uint32_t ry = 0; ry < nrows; ++ry) {
        for (std::uint32_t i = 0; i < runs; ++i) {
          if (append(spread_y_[rows[ry]], run_first[i], run_last[i])) {
            list.truncated = size > budget || ry * runs + i + 1 < nrows * runs;
            return;
          }
        }
      }
    }
    list.size = size;
  }

  // Keeps, in list order, the listed agents within radius other than `self`: at most k_max,
  // written to row. Returns how many.
  template <bool Wrap>
  std::uint32_t test_candidates(S px, S py, std::uint32_t self, const CandidateList& list,
                                std::uint32_t* row, std::uint32_t k_max) const {
    const S* xs = x_.data();
    const S* ys = y_.data();
    const S r2 = r2_, hx = half_x_, hy = half_y_, ex = extent_x_, ey = extent_y_;
    std::uint32_t count = 0;
    for (std::uint32_t i = 0; i < list.size; ++i) {
      const std::uint32_t j = list.index[i];
      S dx = xs[j] - px, dy = ys[j] - py;
      if constexpr (Wrap) {
        dx = dx > hx ? dx - ex : (dx < -hx ? dx + ex : dx);
        dy = dy > hy ? dy - ey : (dy < -hy ? dy + ey : dy);
      }
      row[count] = j;  // kept only if counted; count < k_max here
      count += static_cast<std::uint32_t>(Traits::within(dx, dy, r2) & (j != self));
      if (count == k_max) break;
    }
    return count;
  }

  Config<S> config_;
  const char* error_ = nullptr;
  S extent_x_{}, extent_y_{}, half_x_{}, half_y_{}, inv_cell_x_{}, inv_cell_y_{}, r2_{};
  std::uint32_t cells_x_ = 0, cells_y_ = 0, table_size_ = 0;
  std::uint32_t count_ = 0;
  Stats stats_{};
  std::vector<std::uint32_t> spread_x_, spread_y_;  // Morton bits of a cell coordinate
  std::vector<std::uint64_t> keys_, key_tmp_;       // keys_: sorted Morton codes after build
  std::vector<std::uint32_t> order_, order_tmp_;    // sorted position -> agent
  std::vector<std::uint32_t> rank_;                 // agent -> sorted position
  std::vector<std::uint32_t> cell_start_;           // Morton code -> first sorted position
  std::vector<S> x_, y_, vx_, vy_, r_, h_;          // sorted snapshot
  std::vector<S> push_x_, push_y_;
  std::vector<std::uint32_t> counts_;   // neighbours found, per sorted position
  std::vector<std::uint32_t> offsets_;  // where they start in neighbours_
  // Room for max_neighbours per agent; each chunk packs its agents' lists from its first
  // agent's row on (so the layout depends on the chunking, the lists do not).
  std::vector<std::uint32_t> neighbours_;
  std::vector<ChunkStats> chunk_stats_;
  std::unique_ptr<core::RadixSortScratch> sort_scratch_;
};

}  // namespace spindle::swarm
