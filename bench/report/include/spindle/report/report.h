// spindle::report: turns the load-test program's per-frame data into one output folder
// (run.json, summary.csv, report.md, report.html) with statistics and inline SVG charts.
//
// Usage:
//
//   spindle::report::Run run;                       // filled by the load-test program
//   run.series.push_back({.scene = "swarm", .mode = "single", .objects = 1000, ...});
//   if (auto s = spindle::report::write_report(run, "out/2024-05-01"); !s) puts(s.c_str());
//
// Statistics (all drop NaN and +-inf samples first and count them in Summary::dropped):
// - percentiles interpolate linearly between the closest ranks: the q-quantile of sorted x[0..n-1]
//   is x[h] with h = q*(n-1), interpolated between floor(h) and ceil(h) (numpy's default);
// - stddev is the sample standard deviation (divides by n-1; NaN for n < 2);
// - the 95% CI of the median uses the binomial order statistics: 1-based ranks
//   floor(n/2 - 1.96*sqrt(n)/2) and ceil(1 + n/2 + 1.96*sqrt(n)/2), clamped to [1, n];
// - rank_sum_test is the Mann-Whitney U test: average ranks for ties, tie-corrected variance,
//   normal approximation without continuity correction, two-sided p = erfc(|z|/sqrt(2));
//   u is U of sample a (number of pairs with a > b, ties counting 1/2);
// - speedup is median(baseline)/median(other), its CI the 2.5/97.5 percentiles of 2000 bootstrap
//   resamples drawn from std::mt19937_64 with a fixed seed, so reports are reproducible.
// Empty inputs give NaN fields, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <spindle/base/result.h>

namespace spindle::report {

struct StageTiming {
  double wall_ms = 0;
  double cpu_ms = 0;
  std::uint32_t jobs = 0;
};

// The dynamic allocator's decision for one stage in one frame.
struct Decision {
  std::uint16_t stage = 0;
  std::uint16_t workers = 0;
  std::uint32_t split = 0;
  std::uint16_t order = 0;
  double predicted_ms = 0;
};

struct Frame {
  double frame_ms = 0;
  std::vector<StageTiming> stages;     // index = stage index (into Series::stage_names)
  std::vector<double> worker_busy_ms;  // index = worker: the own time of every job it ran
  std::vector<Decision> decisions;     // empty unless mode dynamic
  // Jobs that ran inline on their submitter for lack of a job slot (core::FrameStats).
  std::uint64_t job_overflows = 0;
  // The frame's work (every job's own time plus the frame thread's code outside jobs), its span
  // (the longest chain of dependent work) and the same with every hand-off between threads
  // paid, and the measured hand-off (us), from its recorded job graph; 0 where none was recorded.
  double work_ms = 0, span_ms = 0, span_handoff_ms = 0, handoff_us = 0;
  std::uint32_t jobs = 0;  // jobs in the recorded graph
  double cpu_ms = 0;       // CPU time the process used during the frame, every thread
  // Workers the frame could use (dynamic mode: those its worker controller woke); 0: not known.
  std::uint32_t active_workers = 0;
  bool pinned = false;      // whether they kept to their CPUs
  bool cores_busy = false;  // other programs kept every core busy (FrameStats::cores_busy)
  // What the scene counted in this frame (draws drawn as points, characters at each level of
  // detail...): index = Series::count_names.
  std::vector<double> counts;
};

// The simulator's replay of a series' recorded frames on `workers` threads under its mode's
// policy (jobs/job_graph.h): the median over the frames replayed.
struct Prediction {
  std::uint32_t workers = 0;
  double frame_ms = 0;         // with the measured hand-off cost
  double free_handoff_ms = 0;  // with hand-offs free: what the graph's shape alone costs
  // The bound on this many workers: max(work / workers, span of the frame cut for them, with
  // the measured hand-offs).
  double bound_ms = 0;
  // Frames replayed that were recorded with the renderer's passes cut for this many workers
  // (Renderer::plan_for(), after the measured frames): 0 where the measured frames were replayed.
  std::uint32_t planned_frames = 0;
};

struct Series {
  std::string scene, mode;  // mode: single, static, dynamic, tbb (others allowed)
  std::uint32_t workers = 1, objects = 0, repeat = 0;
  std::vector<std::string> stage_names;
  std::vector<std::string> count_names;  // what Frame::counts holds, in its order
  std::vector<Frame> frames;             // measured frames only, warm-up excluded
  // The world's state hash after the last frame (0: not recorded). Series of the same scene,
  // objects and frame count must agree in every mode: the report shows whether they do.
  std::uint64_t world_hash = 0;
  // A hash of the rendered image after the last frame (0: the scene renders nothing); it must
  // agree like the world hash.
  std::uint64_t image_hash = 0;
  // The last frame as a PNG (empty: none written); the HTML report shows it as a thumbnail of
  // the scene at this object count.
  std::string screenshot;
  // Frames after the measured ones, a fixed step apart, side by side in one PNG (empty: none);
  // the HTML report shows it under the thumbnails, so the scene is seen moving.
  std::string strip;
  // Replays of some of its recorded frames on 1, 2, 4 ... 64 workers and on its own count, and
  // which frames (indices into `frames`) were replayed.
  std::vector<Prediction> predictions;
  std::vector<std::uint32_t> replayed;
  // Each of those frames replayed on the workers it ran with (Frame::active_workers: dynamic mode
  // may wake fewer than `workers`; the series' own count where not known), in the order of
  // `replayed`: what the report's model check compares with the measured frames.
  std::vector<Prediction> replayed_own;
  // The span of those frames cut for 16 workers, by what is on it: own time per stage name
  // (medians over the frames; "outside stages" for the frame's own code and untagged jobs).
  std::vector<std::pair<std::string, double>> critical16_ms;
};

struct Machine {
  std::uint32_t cores = 0;
  std::string cpu, compiler, flags, build_type, os, date, command_line;
};

// Published numbers shown beside a scene's own (e.g. the thesis the engine was specified from):
// report.md and report.html get a table per reference with, for every object count in either,
// our median FPS and theirs per mode pair, and run.json keeps the rows.
struct ReferenceRow {
  std::uint32_t objects = 0;
  std::string mode;  // our mode it is compared with (single, static, dynamic, ...)
  double fps = 0;
};
struct Reference {
  std::string scene;   // the scene whose section shows it
  std::string source;  // where the numbers come from
  std::string note;    // what differs (machine, scene details)
  // Column pairs: (our mode, their name for the comparable architecture).
  std::vector<std::pair<std::string, std::string>> modes;
  std::vector<ReferenceRow> rows;
};

struct Run {
  Machine machine;
  std::vector<Reference> references;
  std::uint64_t seed = 0;
  std::uint32_t frames = 0, warmup = 0, repeats = 0;
  // Load from other programs beside the measured frames ("none", "2:steady", "1:bursty").
  std::string background = "none";
  // Dynamic mode's weight on a worker's CPU time (EngineConfig::worker_cpu_weight).
  double cpu_weight = 1.0;
  // Whether dynamic mode kept pinned workers as candidates while other programs kept every core
  // busy (EngineConfig::unpin_when_cores_busy = false; never with --no-pin, which never pins).
  bool pin_when_busy = false;
  // The most cores of a machine where dynamic mode stops pinning while every core is busy
  // (EngineConfig::unpin_when_busy_max_cores; 0: any size). pin_when_busy says what it did here.
  std::uint32_t unpin_when_busy_cores = 0;
  // Frames recorded per predicted count above a series' workers (Prediction::planned_frames).
  std::uint32_t planned_frames = 0;
  // Scene parameters of this run ("crowd.joints" -> 50), shown with the settings.
  std::vector<std::pair<std::string, std::int64_t>> parameters;
  std::vector<Series> series;
};

// ---- Statistics ----

struct Summary {
  std::size_t n = 0;  // finite samples used
  double median = 0, mean = 0, p95 = 0, p99 = 0, stddev = 0, ci95_low = 0, ci95_high = 0;
  std::size_t dropped = 0;  // NaN / inf samples left out
};
Summary summarize(std::span<const double> samples);

// Linear-interpolation quantile (q in [0, 1]) of finite samples; NaN when there are none.
double quantile(std::span<const double> samples, double q);

struct RankSum {
  double u, z, p_two_sided;
};  // Mann-Whitney U, normal approximation with tie correction
RankSum rank_sum_test(std::span<const double> a, std::span<const double> b);

struct Speedup {
  double ratio, ci95_low, ci95_high;
};  // median(baseline)/median(other), CI by a deterministic seeded bootstrap (2000 resamples)
Speedup speedup(std::span<const double> baseline, std::span<const double> other);

// ---- Output ----

// Writes into `dir` (created if missing): run.json (everything raw: machine, settings, every series
// with every frame, plus the computed summary), summary.csv, report.md, report.html. Series are
// grouped by (scene, mode, workers, objects); repeats of a group are pooled. Returns an error
// Status naming the file and the reason when a write fails.
spindle::core::Status write_report(const Run& run, const std::string& dir);

// `text` with &, <, > and " escaped, for HTML text and attribute values (other reports' pages).
std::string html_escape(std::string_view text);

}  // namespace spindle::report
