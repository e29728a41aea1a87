// Grouping, run.json, summary.csv, report.md and write_report.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <system_error>
#include <tuple>

#include <nlohmann/json.hpp>

#include "model.h"

namespace spindle::report {
namespace detail {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string make_slug(const std::string& name) {
  std::string out;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) && u < 128)
      out += static_cast<char>(std::tolower(u));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "scene" : out;
}

}  // namespace

int mode_rank(const std::string& mode) {
  static const char* const kOrder[] = {"single", "static", "dynamic", "tbb"};
  for (int i = 0; i < 4; ++i)
    if (mode == kOrder[i]) return i;
  return 4;
}

std::string unpin_when_busy_scope(const Run& run) {
  return run.unpin_when_busy_cores == 0 ? "it stops on machines of any size"
                                        : "it stops on machines of at most " +
                                              std::to_string(run.unpin_when_busy_cores) + " cores";
}

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "";
  char buf[400];  // fits the longest double (1.8e308) in fixed notation
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  return std::string(buf, r.ptr);
}

std::string tick_label(double v) {
  if (!std::isfinite(v)) return "";
  if (v == 0) return "0";
  char buf[64];
  const double a = std::abs(v);
  std::to_chars_result r;
  if (a >= 1e6 || a < 1e-3)
    r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, 2);
  else
    r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 6);
  return std::string(buf, r.ptr);
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string series_label(const Model& m, const Scene& s, const Group& g) {
  std::set<std::uint32_t> workers;
  for (std::size_t gi : s.groups)
    if (m.groups[gi].mode == g.mode) workers.insert(m.groups[gi].workers);
  if (workers.size() <= 1) return g.mode;
  return g.mode + " x" + std::to_string(g.workers);
}

Model build_model(const Run& run) {
  Model m;
  std::map<std::string, std::size_t> scene_index;
  using Key = std::tuple<std::string, std::string, std::uint32_t, std::uint32_t>;
  std::map<Key, std::size_t> group_index;
  for (const Series& se : run.series) {
    auto [sit, new_scene] = scene_index.try_emplace(se.scene, m.scenes.size());
    if (new_scene) m.scenes.push_back(Scene{se.scene, {}, {}, {}, {}, {}});
    Scene& sc = m.scenes[sit->second];
    for (const std::string& st : se.stage_names)
      if (std::find(sc.stage_names.begin(), sc.stage_names.end(), st) == sc.stage_names.end())
        sc.stage_names.push_back(st);
    for (const std::string& c : se.count_names)
      if (std::find(sc.count_names.begin(), sc.count_names.end(), c) == sc.count_names.end())
        sc.count_names.push_back(c);
    auto [git, new_group] =
        group_index.try_emplace(Key{se.scene, se.mode, se.workers, se.objects}, m.groups.size());
    if (new_group) {
      Group g;
      g.scene = se.scene;
      g.mode = se.mode;
      g.workers = se.workers;
      g.objects = se.objects;
      m.groups.push_back(std::move(g));
      sc.groups.push_back(git->second);
    }
    m.groups[git->second].series.push_back(&se);
  }
  // Unique slugs for element ids.
  std::set<std::string> used;
  for (Scene& sc : m.scenes) {
    std::string base = make_slug(sc.name), slug = base;
    for (int i = 2; used.count(slug); ++i) slug = base + "-" + std::to_string(i);
    used.insert(slug);
    sc.slug = slug;
  }
  for (Group& g : m.groups) {
    std::stable_sort(g.series.begin(), g.series.end(),
                     [](const Series* a, const Series* b) { return a->repeat < b->repeat; });
    std::vector<double> all;
    for (const Series* se : g.series) {
      for (const Frame& f : se->frames) {
        all.push_back(f.frame_ms);
        g.job_overflows += f.job_overflows;
      }
    }
    g.summary = summarize(all);
    m.dropped += g.summary.dropped;
    for (double x : all)
      if (std::isfinite(x)) g.frame_ms.push_back(x);
  }
  for (Group& g : m.groups) {
    std::vector<double> work, span, bound, bound_free, eff, handoff, cpu, replayed;
    double active_sum = 0, active_frames = 0;
    struct Replayed {
      std::vector<double> with, free, bound;
    };
    std::map<std::uint32_t, Replayed> predicted;
    Replayed own;
    for (const Series* se : g.series) {
      for (const Frame& f : se->frames) {
        if (f.cpu_ms > 0) cpu.push_back(f.cpu_ms);
        if (f.active_workers > 0) active_sum += f.active_workers, active_frames += 1;
        if (!(f.span_ms > 0) || !(f.frame_ms > 0)) continue;
        // The bound on the workers the frame had: dynamic mode may leave some asleep (the
        // speedup and "workers woken" show that choice; the bound and efficiency show what the
        // frame lost with the workers it woke).
        const double w = f.active_workers > 0
                             ? std::min(f.active_workers, std::max<std::uint32_t>(g.workers, 1))
                             : std::max<std::uint32_t>(g.workers, 1);
        const double b = std::max(f.work_ms / w, f.span_handoff_ms);
        work.push_back(f.work_ms);
        span.push_back(f.span_ms);
        bound.push_back(b);
        bound_free.push_back(std::max(f.work_ms / w, f.span_ms));
        eff.push_back(b / f.frame_ms);
        handoff.push_back(f.handoff_us);
      }
      for (std::uint32_t i : se->replayed)
        if (i < se->frames.size()) replayed.push_back(se->frames[i].frame_ms);
      for (const Prediction& p : se->replayed_own) {
        own.with.push_back(p.frame_ms);
        own.free.push_back(p.free_handoff_ms);
      }
      for (const Prediction& p : se->predictions) {
        predicted[p.workers].with.push_back(p.frame_ms);
        predicted[p.workers].free.push_back(p.free_handoff_ms);
        predicted[p.workers].bound.push_back(p.bound_ms);
      }
    }
    g.work_ms = quantile(work, 0.5);
    g.span_ms = quantile(span, 0.5);
    g.bound_ms = quantile(bound, 0.5);
    g.bound_free_ms = quantile(bound_free, 0.5);
    g.replayed_ms = quantile(replayed, 0.5);
    g.efficiency = quantile(eff, 0.5);
    g.handoff_us = quantile(handoff, 0.5);
    g.cpu_ms = quantile(cpu, 0.5);
    g.active = active_frames > 0 ? active_sum / active_frames : NAN;
    for (const auto& [workers, v] : predicted) {
      const Prediction p{workers, quantile(v.with, 0.5), quantile(v.free, 0.5),
                         quantile(v.bound, 0.5)};
      g.predictions.push_back(p);
      if (workers == g.workers) {
        g.predicted_ms = p.frame_ms;
        g.predicted_free_ms = p.free_handoff_ms;
      }
    }
    // The replays on the workers each frame had, where the run has them (else the series' own
    // count, as runs without replayed_own were made).
    if (!own.with.empty()) {
      g.predicted_ms = quantile(own.with, 0.5);
      g.predicted_free_ms = quantile(own.free, 0.5);
    }
  }
  for (Scene& sc : m.scenes) {
    std::sort(sc.groups.begin(), sc.groups.end(), [&](std::size_t a, std::size_t b) {
      const Group &ga = m.groups[a], &gb = m.groups[b];
      return std::make_tuple(ga.objects, mode_rank(ga.mode), ga.mode, ga.workers) <
             std::make_tuple(gb.objects, mode_rank(gb.mode), gb.mode, gb.workers);
    });
    std::set<std::uint32_t> counts;
    for (std::size_t gi : sc.groups) counts.insert(m.groups[gi].objects);
    sc.object_counts.assign(counts.begin(), counts.end());
    for (std::size_t gi : sc.groups) {
      Group& g = m.groups[gi];
      // Every frame's value of the column called `name` in each series' own `names` (series of
      // a group may name their columns in other orders, or lack one).
      const auto column = [&g](const std::string& name, std::vector<std::string> Series::*names,
                               const auto& value) {
        std::vector<double> out;
        for (const Series* se : g.series) {
          const std::vector<std::string>& own = se->*names;
          const auto it = std::find(own.begin(), own.end(), name);
          if (it == own.end()) continue;
          const auto idx = static_cast<std::size_t>(it - own.begin());
          for (const Frame& f : se->frames) value(f, idx, out);
        }
        return out;
      };
      // Per-stage median wall time.
      g.stage_median_ms.assign(sc.stage_names.size(), kNaN);
      for (std::size_t st = 0; st < sc.stage_names.size(); ++st)
        g.stage_median_ms[st] =
            quantile(column(sc.stage_names[st], &Series::stage_names,
                            [](const Frame& f, std::size_t i, std::vector<double>& out) {
                              if (i < f.stages.size()) out.push_back(f.stages[i].wall_ms);
                            }),
                     0.5);
      // The scene's counts: median, least and most.
      g.count_median.assign(sc.count_names.size(), kNaN);
      g.count_min = g.count_max = g.count_median;
      for (std::size_t c = 0; c < sc.count_names.size(); ++c) {
        const std::vector<double> values =
            column(sc.count_names[c], &Series::count_names,
                   [](const Frame& f, std::size_t i, std::vector<double>& out) {
                     if (i < f.counts.size()) out.push_back(f.counts[i]);
                   });
        if (values.empty()) continue;
        g.count_median[c] = quantile(values, 0.5);
        g.count_min[c] = *std::min_element(values.begin(), values.end());
        g.count_max[c] = *std::max_element(values.begin(), values.end());
      }
      // Baseline: the first `single` group of the same objects.
      const Group* base = nullptr;
      for (std::size_t bi : sc.groups)
        if (m.groups[bi].mode == "single" && m.groups[bi].objects == g.objects) {
          base = &m.groups[bi];
          break;
        }
      if (!base) continue;
      g.has_baseline = true;
      if (base == &g) {
        g.speedup = {1, 1, 1};
        g.p_vs_single = g.frame_ms.empty() ? kNaN : 1;
      } else {
        g.speedup = speedup(base->frame_ms, g.frame_ms);
        g.p_vs_single = rank_sum_test(base->frame_ms, g.frame_ms).p_two_sided;
      }
    }
  }
  return m;
}

const char* const kHowToRead =
    "Each row pools every measured frame (warm-up excluded) of every repeat of one scene, mode, "
    "worker count and object count. Lower frame times are better. The median is robust to "
    "outliers; p95 and p99 show the slow tail (stutter). Speedup is the median frame time of "
    "`single` divided by this mode's median at the same object count: above 1 is faster than "
    "single-threaded; its 95% interval comes from a seeded bootstrap, so if it contains 1 the "
    "difference is not established. p is the two-sided Mann-Whitney rank-sum test against "
    "`single`: below 0.05 means the two frame-time distributions differ. Jobs run inline found "
    "no free job slot and ran on their submitter, serially: above 0, that mode's numbers "
    "understate it (raise the job system's jobs_per_worker). Percentiles interpolate "
    "linearly between closest ranks; the median's interval uses binomial order statistics.";

Table summary_table(const Model& m, const Scene& s) {
  Table t;
  t.header = {"objects",
              "mode",
              "workers",
              "median ms",
              "p95",
              "p99",
              "FPS",
              "speedup vs single [95% CI]",
              "p (rank-sum vs single)",
              "jobs run inline"};
  for (std::size_t gi : s.groups) {
    const Group& g = m.groups[gi];
    const Summary& su = g.summary;
    std::string sp, p;
    if (g.has_baseline && std::isfinite(g.speedup.ratio)) {
      sp = fixed(g.speedup.ratio, 2) + " [" + fixed(g.speedup.ci95_low, 2) + ", " +
           fixed(g.speedup.ci95_high, 2) + "]";
      p = g.p_vs_single < 1e-4 && g.p_vs_single >= 0 ? "<0.0001" : fixed(g.p_vs_single, 4);
    }
    t.rows.push_back({std::to_string(g.objects), g.mode, std::to_string(g.workers),
                      fixed(su.median, 3), fixed(su.p95, 3), fixed(su.p99, 3),
                      su.median > 0 ? fixed(1000.0 / su.median, 1) : "", sp, p,
                      std::to_string(g.job_overflows)});
  }
  return t;
}

const Group* single_group(const Model& m, const Scene& s, std::uint32_t objects) {
  for (std::size_t gi : s.groups)
    if (m.groups[gi].mode == "single" && m.groups[gi].objects == objects) return &m.groups[gi];
  return nullptr;
}

double measured_at(const Group& g, const Group& replayed_by) {
  std::vector<double> v;
  for (const Series* by : replayed_by.series)
    for (const Series* se : g.series)
      if (se->repeat == by->repeat)
        for (std::uint32_t i : by->replayed)
          if (i < se->frames.size()) v.push_back(se->frames[i].frame_ms);
  return quantile(v, 0.5);
}

const char* const kHowToReadLimit =
    "Every measured frame's jobs are recorded as a graph (which job started which, who waited "
    "for whom, each job's own time). Work is every job's own time plus the frame thread's code "
    "outside jobs: what one thread would have to do alone. Span is the longest chain of work that "
    "depends on itself, with as many threads as could help. Bound is the best any scheduler could "
    "do on the threads the frame had (in dynamic mode, those it woke): max(work / threads, span "
    "with the measured hand-off paid on every job another thread picks up); efficiency is bound / "
    "median frame time (1 = no time lost). CPU "
    "is what the process used per frame, every thread, spinning included: beside the frame time "
    "it shows what a mode costs the rest of the machine. Workers woken: the mean number of "
    "participants the frames could use (dynamic mode wakes only those that shorten the frame). The "
    "time beyond the bound is split by "
    "the simulator, which replays recorded frames under the mode's policy: waiting on the "
    "critical path (the replay with free hand-offs, minus the bound), hand-offs and wake-ups (the "
    "replay with the measured hand-off, minus the free one) and the rest (measured minus the "
    "replay: the OS taking a thread away, noise). Jobs slower than alone: the work's growth over "
    "single mode's, per thread (memory-bound jobs slow each other down; it is inside the bound "
    "already). Predicted scaling replays the frames on 1 to 64 threads: ranges that only compute "
    "are cut again for each count, as the engine's callers scale their splits; for more threads "
    "than the run had, the frames replayed are a few recorded after the measured ones with the "
    "renderer's passes cut for that count (its tile size and batches, which a replay cannot cut "
    "again).";

Table limit_table(const Model& m, const Scene& s) {
  Table t;
  t.header = {"objects", "mode",     "workers",    "workers used",     "frame ms",   "work ms",
              "span ms", "bound ms", "efficiency", "CPU ms per frame", "CPU / wall", "hand-off us"};
  for (std::size_t gi : s.groups) {
    const Group& g = m.groups[gi];
    t.rows.push_back({std::to_string(g.objects), g.mode, std::to_string(g.workers),
                      fixed(g.active, 2), fixed(g.summary.median, 3), fixed(g.work_ms, 3),
                      fixed(g.span_ms, 3), fixed(g.bound_ms, 3), fixed(g.efficiency, 2),
                      fixed(g.cpu_ms, 3),
                      g.summary.median > 0 ? fixed(g.cpu_ms / g.summary.median, 2) : "",
                      fixed(g.handoff_us, 1)});
  }
  return t;
}

Table lost_table(const Model& m, const Scene& s) {
  Table t;
  t.header = {"objects",
              "mode",
              "workers",
              "frame ms",
              "bound, free hand-offs ms",
              "waiting on the critical path ms",
              "hand-offs and wake-ups ms",
              "other (OS, noise) ms",
              "jobs slower than alone ms"};
  for (std::size_t gi : s.groups) {
    const Group& g = m.groups[gi];
    if (g.mode == "single") continue;
    const Group* single = single_group(m, s, g.objects);
    const double slower = single != nullptr && g.workers > 0
                              ? (g.work_ms - single->work_ms) / static_cast<double>(g.workers)
                              : NAN;
    // The replays are of a few frames: their parts, scaled to the median frame.
    const double scale = g.replayed_ms > 0 ? g.summary.median / g.replayed_ms : NAN;
    t.rows.push_back({std::to_string(g.objects), g.mode, std::to_string(g.workers),
                      fixed(g.summary.median, 3), fixed(g.bound_free_ms, 3),
                      fixed(g.predicted_free_ms * scale - g.bound_free_ms, 3),
                      fixed((g.predicted_ms - g.predicted_free_ms) * scale, 3),
                      fixed(g.summary.median - g.predicted_ms * scale, 3), fixed(slower, 3)});
  }
  return t;
}

Table model_table(const Model& m, const Scene& s) {
  Table t;
  t.header = {"objects",
              "mode",
              "workers",
              "measured ms",
              "predicted ms",
              "error",
              "predicted on 1 worker ms",
              "single measured ms",
              "error on 1"};
  auto error = [](double predicted, double measured) {
    return measured > 0 && std::isfinite(predicted)
               ? fixed(100.0 * (predicted - measured) / measured, 1) + "%"
               : std::string();
  };
  for (std::size_t gi : s.groups) {
    const Group& g = m.groups[gi];
    if (g.predictions.empty()) continue;
    const Group* single = single_group(m, s, g.objects);
    double one = NAN;
    for (const Prediction& p : g.predictions)
      if (p.workers == 1) one = p.frame_ms;
    const double single_ms = single != nullptr ? measured_at(*single, g) : NAN;
    t.rows.push_back({std::to_string(g.objects), g.mode, std::to_string(g.workers),
                      fixed(g.replayed_ms, 3), fixed(g.predicted_ms, 3),
                      error(g.predicted_ms, g.replayed_ms), fixed(one, 3), fixed(single_ms, 3),
                      g.mode == "single" ? "" : error(one, single_ms)});
  }
  return t;
}

Table scaling_table(const Model& m, const Scene& s) {
  Table t;
  static constexpr std::uint32_t kCounts[] = {1, 2, 4, 8, 16, 32, 64};
  t.header = {"objects", "mode"};
  for (std::uint32_t w : kCounts) t.header.push_back(std::to_string(w) + " workers");
  t.header.push_back("efficiency on 16 (bound / predicted)");
  for (std::size_t gi : s.groups) {
    const Group& g = m.groups[gi];
    if (g.predictions.empty() || g.mode == "single") continue;
    const Group* single = single_group(m, s, g.objects);
    // Speedup over single's measured median; without single, over the replay on one worker.
    double base = single != nullptr ? single->summary.median : NAN;
    for (const Prediction& p : g.predictions)
      if (!std::isfinite(base) && p.workers == 1) base = p.frame_ms;
    std::vector<std::string> row = {std::to_string(g.objects), g.mode};
    double efficiency = NAN;
    for (std::uint32_t w : kCounts) {
      std::string cell;
      for (const Prediction& p : g.predictions) {
        if (p.workers != w || !(p.frame_ms > 0)) continue;
        cell = fixed(base / p.frame_ms, 2) + "x";
        if (w == 16) efficiency = p.bound_ms / p.frame_ms;
      }
      row.push_back(cell);
    }
    row.push_back(fixed(efficiency, 2));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table critical_table(const Model& m, const Scene& s) {
  Table t;
  t.header = {"objects", "mode", "on the span with 16 workers", "ms", "share of the frame on 16"};
  if (s.object_counts.empty()) return t;
  const std::uint32_t count = s.object_counts.back();
  for (std::size_t gi : s.groups) {
    const Group& g = m.groups[gi];
    if (g.objects != count || (g.mode != "dynamic" && g.mode != "tbb")) continue;
    // Medians over the repeats, by stage.
    std::map<std::string, std::vector<double>> by_stage;
    for (const Series* se : g.series)
      for (const auto& [name, ms] : se->critical16_ms) by_stage[name].push_back(ms);
    double frame16 = NAN;
    for (const Prediction& p : g.predictions)
      if (p.workers == 16) frame16 = p.frame_ms;
    std::vector<std::pair<double, std::string>> rows;
    for (const auto& [name, v] : by_stage) rows.emplace_back(quantile(v, 0.5), name);
    std::sort(rows.rbegin(), rows.rend());
    for (const auto& [ms, name] : rows) {
      const double share = frame16 > 0 ? ms / frame16 : NAN;
      if (share < 0.01) continue;
      t.rows.push_back({std::to_string(g.objects), g.mode, name, fixed(ms, 3),
                        std::isfinite(share) ? fixed(100.0 * share, 1) + "%" : ""});
    }
  }
  return t;
}

Table stage_table(const Model& m, const Scene& s) {
  Table t;
  t.header = {"objects", "mode", "workers"};
  for (const std::string& st : s.stage_names) t.header.push_back(st + " ms");
  for (std::size_t gi : s.groups) {
    const Group& g = m.groups[gi];
    std::vector<std::string> row = {std::to_string(g.objects), g.mode, std::to_string(g.workers)};
    for (double v : g.stage_median_ms) row.push_back(fixed(v, 3));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table count_table(const Model& m, const Scene& s) {
  Table t;
  t.header = {"objects", "mode", "workers"};
  for (const std::string& c : s.count_names) t.header.push_back(c);
  for (std::size_t gi : s.groups) {
    const Group& g = m.groups[gi];
    std::vector<std::string> row = {std::to_string(g.objects), g.mode, std::to_string(g.workers)};
    for (std::size_t c = 0; c < s.count_names.size(); ++c) {
      const double med = g.count_median[c], lo = g.count_min[c], hi = g.count_max[c];
      const auto whole = [](double v) { return fixed(v, v == std::floor(v) ? 0 : 1); };
      row.push_back(std::isnan(med) ? ""
                    : lo == hi      ? whole(med)
                                    : whole(med) + " [" + whole(lo) + ", " + whole(hi) + "]");
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table reference_table(const Model& m, const Reference& ref) {
  Table t;
  t.header = {"objects"};
  for (const auto& [ours, theirs] : ref.modes) {
    t.header.push_back(ours + " FPS (ours)");
    t.header.push_back(theirs + " FPS (reference)");
    t.header.push_back("ours / reference");
  }
  std::set<std::uint32_t> counts;
  for (const ReferenceRow& r : ref.rows) counts.insert(r.objects);
  for (const Group& g : m.groups)
    if (g.scene == ref.scene) counts.insert(g.objects);
  for (std::uint32_t n : counts) {
    std::vector<std::string> row = {std::to_string(n)};
    for (const auto& [ours, theirs] : ref.modes) {
      double mine = NAN, published = NAN;
      for (const Group& g : m.groups)
        if (g.scene == ref.scene && g.objects == n && g.mode == ours && g.summary.median > 0) {
          mine = 1000.0 / g.summary.median;
          break;
        }
      for (const ReferenceRow& r : ref.rows)
        if (r.objects == n && r.mode == ours) published = r.fps;
      row.push_back(std::isfinite(mine) ? fixed(mine, 0) : "-");
      row.push_back(std::isfinite(published) ? fixed(published, 0) : "-");
      row.push_back(std::isfinite(mine) && std::isfinite(published) && published > 0
                        ? fixed(mine / published, 2) + "x"
                        : "-");
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace detail

namespace {

using detail::fixed;
using nlohmann::json;

json to_json(const Run& run, const detail::Model& m) {
  json j;
  j["format"] = "spindle-loadtest-report/1";
  const Machine& mc = run.machine;
  j["machine"] = {{"cores", mc.cores},
                  {"cpu", mc.cpu},
                  {"compiler", mc.compiler},
                  {"flags", mc.flags},
                  {"build_type", mc.build_type},
                  {"os", mc.os},
                  {"date", mc.date},
                  {"command_line", mc.command_line}};
  j["settings"] = {{"seed", run.seed},
                   {"frames", run.frames},
                   {"warmup", run.warmup},
                   {"repeats", run.repeats},
                   {"background", run.background},
                   {"cpu_weight", run.cpu_weight},
                   {"pin_when_busy", run.pin_when_busy},
                   {"unpin_when_busy_cores", run.unpin_when_busy_cores},
                   {"planned_frames", run.planned_frames}};
  j["settings"]["parameters"] = json::object();
  for (const auto& [name, value] : run.parameters) j["settings"]["parameters"][name] = value;
  json series = json::array();
  for (const Series& se : run.series) {
    json frames = json::array();
    for (const Frame& f : se.frames) {
      json stages = json::array();
      for (const StageTiming& st : f.stages)
        stages.push_back({{"wall_ms", st.wall_ms}, {"cpu_ms", st.cpu_ms}, {"jobs", st.jobs}});
      json jf = {{"frame_ms", f.frame_ms},
                 {"stages", stages},
                 {"worker_busy_ms", f.worker_busy_ms},
                 {"job_overflows", f.job_overflows},
                 {"cpu_ms", f.cpu_ms},
                 {"active_workers", f.active_workers},
                 {"pinned", f.pinned},
                 {"cores_busy", f.cores_busy}};
      if (!f.counts.empty()) jf["counts"] = f.counts;
      if (f.span_ms > 0) {
        jf["work_ms"] = f.work_ms;
        jf["span_ms"] = f.span_ms;
        jf["span_handoff_ms"] = f.span_handoff_ms;
        jf["handoff_us"] = f.handoff_us;
        jf["jobs"] = f.jobs;
      }
      if (!f.decisions.empty()) {
        json dec = json::array();
        for (const Decision& d : f.decisions)
          dec.push_back({{"stage", d.stage},
                         {"workers", d.workers},
                         {"split", d.split},
                         {"order", d.order},
                         {"predicted_ms", d.predicted_ms}});
        jf["decisions"] = std::move(dec);
      }
      frames.push_back(std::move(jf));
    }
    json critical = json::object();
    for (const auto& [name, ms] : se.critical16_ms) critical[name] = ms;
    const auto replays = [](const std::vector<Prediction>& list) {
      json out = json::array();
      for (const Prediction& p : list)
        out.push_back({{"workers", p.workers},
                       {"frame_ms", p.frame_ms},
                       {"free_handoff_ms", p.free_handoff_ms},
                       {"bound_ms", p.bound_ms},
                       {"planned_frames", p.planned_frames}});
      return out;
    };
    series.push_back({{"scene", se.scene},
                      {"predictions", replays(se.predictions)},
                      {"replayed_own", replays(se.replayed_own)},
                      {"replayed_frames", se.replayed},
                      {"critical16_ms", std::move(critical)},
                      {"mode", se.mode},
                      {"workers", se.workers},
                      {"objects", se.objects},
                      {"repeat", se.repeat},
                      {"world_hash", se.world_hash},
                      {"image_hash", se.image_hash},
                      {"screenshot", se.screenshot},
                      {"strip", se.strip},
                      {"stage_names", se.stage_names},
                      {"count_names", se.count_names},
                      {"frames", std::move(frames)}});
  }
  j["series"] = std::move(series);
  nlohmann::json refs = nlohmann::json::array();
  for (const Reference& ref : run.references) {
    nlohmann::json rows = nlohmann::json::array();
    for (const ReferenceRow& r : ref.rows)
      rows.push_back({{"objects", r.objects}, {"mode", r.mode}, {"fps", r.fps}});
    nlohmann::json modes = nlohmann::json::array();
    for (const auto& [ours, theirs] : ref.modes)
      modes.push_back({{"ours", ours}, {"theirs", theirs}});
    refs.push_back({{"scene", ref.scene},
                    {"source", ref.source},
                    {"note", ref.note},
                    {"modes", std::move(modes)},
                    {"rows", std::move(rows)}});
  }
  j["references"] = std::move(refs);
  // Derived numbers, so tools need not recompute them (NaN is written as null).
  json summary = json::array();
  for (const detail::Group& g : m.groups) {
    const Summary& s = g.summary;
    json row = {{"scene", g.scene},
                {"mode", g.mode},
                {"workers", g.workers},
                {"objects", g.objects},
                {"frames", s.n},
                {"dropped", s.dropped},
                {"median_ms", s.median},
                {"mean_ms", s.mean},
                {"p95_ms", s.p95},
                {"p99_ms", s.p99},
                {"stddev_ms", s.stddev},
                {"ci95_low_ms", s.ci95_low},
                {"ci95_high_ms", s.ci95_high},
                {"work_ms", g.work_ms},
                {"span_ms", g.span_ms},
                {"bound_ms", g.bound_ms},
                {"efficiency", g.efficiency},
                {"cpu_ms", g.cpu_ms},
                {"predicted_ms", g.predicted_ms}};
    if (g.has_baseline)
      row["vs_single"] = {{"speedup", g.speedup.ratio},
                          {"ci95_low", g.speedup.ci95_low},
                          {"ci95_high", g.speedup.ci95_high},
                          {"p", g.p_vs_single}};
    summary.push_back(std::move(row));
  }
  j["summary"] = std::move(summary);
  j["dropped_non_finite_frames"] = m.dropped;
  return j;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string to_csv(const Run& run, const detail::Model& m) {
  std::string out =
      "scene,mode,workers,objects,frames,median_ms,p95_ms,p99_ms,mean_ms,stddev_ms,ci95_low_ms,"
      "ci95_high_ms,fps_median,speedup_vs_single,speedup_ci95_low,speedup_ci95_high,p_vs_single,"
      "job_overflows,work_ms,span_ms,bound_ms,efficiency,cpu_ms,predicted_ms,background\n";
  for (const detail::Scene& sc : m.scenes) {
    for (std::size_t gi : sc.groups) {
      const detail::Group& g = m.groups[gi];
      const Summary& s = g.summary;
      out += csv_field(g.scene) + ',' + csv_field(g.mode) + ',' + std::to_string(g.workers) + ',' +
             std::to_string(g.objects) + ',' + std::to_string(s.n) + ',' + fixed(s.median) + ',' +
             fixed(s.p95) + ',' + fixed(s.p99) + ',' + fixed(s.mean) + ',' + fixed(s.stddev) + ',' +
             fixed(s.ci95_low) + ',' + fixed(s.ci95_high) + ',' +
             (s.median > 0 ? fixed(1000.0 / s.median) : "") + ',';
      if (g.has_baseline)
        out += fixed(g.speedup.ratio) + ',' + fixed(g.speedup.ci95_low) + ',' +
               fixed(g.speedup.ci95_high) + ',' + fixed(g.p_vs_single, 6);
      else
        out += ",,,";
      out += ',' + std::to_string(g.job_overflows) + ',' + fixed(g.work_ms) + ',' +
             fixed(g.span_ms) + ',' + fixed(g.bound_ms) + ',' + fixed(g.efficiency) + ',' +
             fixed(g.cpu_ms) + ',' + fixed(g.predicted_ms) + ',' + csv_field(run.background) + '\n';
    }
  }
  return out;
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    if (c == '\n' || c == '\r') c = ' ';
    out += c;
  }
  return out;
}

void md_table(std::string& out, const detail::Table& t) {
  out += '|';
  for (const auto& h : t.header) out += ' ' + md_cell(h) + " |";
  out += "\n|";
  for (std::size_t i = 0; i < t.header.size(); ++i) out += i < 3 ? "---|" : "---:|";
  out += '\n';
  for (const auto& row : t.rows) {
    out += '|';
    for (const auto& c : row) out += ' ' + (c.empty() ? std::string("-") : md_cell(c)) + " |";
    out += '\n';
  }
}

std::string to_markdown(const Run& run, const detail::Model& m) {
  const Machine& mc = run.machine;
  std::string out = "# Spindle load-test report\n\n## Machine\n\n";
  out += "- cores: " + std::to_string(mc.cores) + "\n- cpu: " + md_cell(mc.cpu) +
         "\n- os: " + md_cell(mc.os) + "\n- compiler: " + md_cell(mc.compiler) + "\n- flags: `" +
         md_cell(mc.flags) + "`\n- build type: " + md_cell(mc.build_type) +
         "\n- date: " + md_cell(mc.date) + "\n- command line: `" + md_cell(mc.command_line) +
         "`\n\n## Settings\n\n";
  out += "- frames per repeat: " + std::to_string(run.frames) +
         "\n- warm-up frames (excluded): " + std::to_string(run.warmup) +
         "\n- repeats: " + std::to_string(run.repeats) + "\n- seed: " + std::to_string(run.seed) +
         "\n- background load: " + md_cell(run.background) +
         "\n- dynamic mode's weight on a worker's CPU time: " + fixed(run.cpu_weight, 2) +
         "\n- dynamic mode pins while every core is busy: " + (run.pin_when_busy ? "yes" : "no") +
         " (" + detail::unpin_when_busy_scope(run) + ")" +
         "\n- non-finite frame times dropped: " + std::to_string(m.dropped) + "\n";
  for (const auto& [name, value] : run.parameters)
    out += "- " + md_cell(name) + ": " + std::to_string(value) + "\n";
  out += "\n";
  for (const detail::Scene& sc : m.scenes) {
    out += "## Scene " + md_cell(sc.name) + "\n\n### Frame time\n\n";
    md_table(out, detail::summary_table(m, sc));
    if (!sc.stage_names.empty()) {
      out += "\n### Median stage wall time (ms)\n\n";
      md_table(out, detail::stage_table(m, sc));
    }
    if (!sc.count_names.empty()) {
      out += "\n### Counted per frame (median [least, most])\n\n";
      md_table(out, detail::count_table(m, sc));
    }
    out += "\n### The limit: work, span, bound, CPU (medians per frame)\n\n";
    md_table(out, detail::limit_table(m, sc));
    out += "\n### Where the time beyond the bound went\n\n";
    md_table(out, detail::lost_table(m, sc));
    out += "\n### The simulator beside the measurement\n\n";
    md_table(out, detail::model_table(m, sc));
    out += "\n### Predicted scaling (speedup over single, replayed frames)\n\n";
    md_table(out, detail::scaling_table(m, sc));
    out += "\n### On the span with 16 workers (serial stretches to make parallel next)\n\n";
    md_table(out, detail::critical_table(m, sc));
    for (const Reference& ref : run.references) {
      if (ref.scene != sc.name) continue;
      out += "\n### Beside " + md_cell(ref.source) + "\n\n" + md_cell(ref.note) + "\n\n";
      md_table(out, detail::reference_table(m, ref));
    }
    out += '\n';
  }
  // Determinism: every series of a scene and object count should end in the same world state.
  {
    // World and image hashes together: a pair differs when either does.
    std::map<std::pair<std::string, std::uint32_t>,
             std::set<std::pair<std::uint64_t, std::uint64_t>>>
        hashes;
    for (const Series& se : run.series)
      if (se.world_hash != 0 || se.image_hash != 0)
        hashes[{se.scene, se.objects}].insert({se.world_hash, se.image_hash});
    if (!hashes.empty()) {
      std::size_t mismatched = 0;
      for (const auto& [key, set] : hashes) mismatched += set.size() > 1 ? 1 : 0;
      out += "## Determinism\n\n";
      if (mismatched == 0) {
        out +=
            "Every mode, worker count and repeat ended with the same world state hash and the "
            "same rendered image for each scene and object count.\n\n";
      } else {
        out += "**" + std::to_string(mismatched) +
               " scene/object-count pairs ended with different world or image hashes in different "
               "series:**\n\n";
        for (const auto& [key, set] : hashes)
          if (set.size() > 1)
            out += "- " + md_cell(key.first) + ", " + std::to_string(key.second) +
                   " objects: " + std::to_string(set.size()) + " distinct hashes\n";
        out += '\n';
      }
    }
  }
  out += "## How to read this\n\n";
  out += detail::kHowToRead;
  out += "\n\n";
  out += detail::kHowToReadLimit;
  out += "\n\nFiles: `run.json` (raw data), `summary.csv`, `report.html` (charts).\n";
  return out;
}

core::Status write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f.is_open())
    return core::Status::error(path.string() +
                               ": cannot open for writing: " + std::strerror(errno));
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  f.close();
  if (!f) return core::Status::error(path.string() + ": write failed: " + std::strerror(errno));
  return {};
}

}  // namespace

core::Status write_report(const Run& run, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root(dir);
  if (dir.empty()) return core::Status::error("write_report: empty output directory name");
  if (fs::exists(root, ec) && !fs::is_directory(root, ec))
    return core::Status::error(dir + ": exists and is not a directory");
  fs::create_directories(root, ec);
  if (ec) return core::Status::error(dir + ": cannot create directory: " + ec.message());
  try {
    const detail::Model m = detail::build_model(run);
    // Invalid UTF-8 in names is replaced rather than thrown about.
    const std::string raw = to_json(run, m).dump(-1, ' ', false, json::error_handler_t::replace);
    if (auto s = write_file(root / "run.json", raw); !s) return s;
    if (auto s = write_file(root / "summary.csv", to_csv(run, m)); !s) return s;
    if (auto s = write_file(root / "report.md", to_markdown(run, m)); !s) return s;
    if (auto s = write_file(root / "report.html", detail::render_html(run, m, dir)); !s) return s;
  } catch (const std::exception& e) {
    return core::Status::error(dir + ": cannot write report: " + e.what());
  }
  return {};
}

std::string html_escape(std::string_view text) {
  return detail::html_escape(text);
}

}  // namespace spindle::report
