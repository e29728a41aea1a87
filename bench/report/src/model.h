// Internal to spindle::report: series grouped and summarised once, shared by every writer.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spindle/report/report.h"

namespace spindle::report::detail {

// One (scene, mode, workers, objects) group: its repeats pooled.
struct Group {
  std::string scene, mode;
  std::uint32_t workers = 1, objects = 0;
  std::vector<const Series*> series;  // the repeats, lowest repeat first
  std::vector<double> frame_ms;       // every finite frame time of every repeat
  Summary summary;                    // of frame_ms (dropped = non-finite frame times)
  bool has_baseline = false;          // a `single` group exists for the same scene and objects
  Speedup speedup{};                  // vs that single group
  double p_vs_single = 0;
  std::vector<double> stage_median_ms;  // index = Scene::stage_names; NaN where never measured
  // Per Scene::count_names: the median, least and most over every frame (NaN: never counted).
  std::vector<double> count_median, count_min, count_max;
  std::uint64_t job_overflows = 0;  // summed over every frame of every repeat
  // Medians over every frame with a recorded job graph (NaN without one): work, span, the bound
  // max(work / workers, span with hand-offs) on the workers the frame had (Frame::active_workers),
  // efficiency (bound / frame time), hand-off (us).
  double work_ms = NAN, span_ms = NAN, bound_ms = NAN, efficiency = NAN, handoff_us = NAN;
  double cpu_ms = NAN;  // median CPU time of the process per frame
  double active = NAN;  // mean workers the frames could use (dynamic: the ones woken)
  // The simulator's replay of this group's frames (medians over its repeats), by worker count.
  std::vector<Prediction> predictions;
  // On the workers each replayed frame had (Series::replayed_own; runs without it: the group's
  // own worker count), NaN without replays: with the measured hand-off, and free; and the
  // measured median of the very frames that were replayed.
  double predicted_ms = NAN, predicted_free_ms = NAN, replayed_ms = NAN;
  // max(work / workers, span): the bound with hand-offs free, on the workers each frame had.
  double bound_free_ms = NAN;
};

struct Scene {
  std::string name;
  std::string slug;                          // for element ids: [a-z0-9-], unique
  std::vector<std::size_t> groups;           // into Model::groups, sorted by objects, mode, workers
  std::vector<std::string> stage_names;      // union over the scene's series, first-seen order
  std::vector<std::string> count_names;      // the same for Series::count_names
  std::vector<std::uint32_t> object_counts;  // ascending, distinct
};

struct Model {
  std::vector<Group> groups;
  std::vector<Scene> scenes;
  std::size_t dropped = 0;  // non-finite frame times left out over the whole run
};

Model build_model(const Run& run);

// Display order of modes: single, static, dynamic, tbb, then any other.
int mode_rank(const std::string& mode);
// Fixed, locale-independent "%.<decimals>f"; "" for NaN/inf.
std::string fixed(double v, int decimals = 4);
// Where dynamic mode stops pinning while every core is busy: "on machines of at most 4 cores",
// "on machines of any size".
std::string unpin_when_busy_scope(const Run& run);
// Short label for axis ticks (e.g. 0.25, 12, 1.5e+06).
std::string tick_label(double v);
std::string html_escape(std::string_view s);
// Label of a line in the charts: the mode, plus the worker count where a mode has several.
std::string series_label(const Model& m, const Scene& s, const Group& g);

// A table shared by report.md and report.html (cells are plain text, not escaped).
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
Table summary_table(const Model& m, const Scene& s);
Table stage_table(const Model& m, const Scene& s);
// What the scene counted per frame: median [least, most] over the frames, per count name.
Table count_table(const Model& m, const Scene& s);
// Work, span, bound, efficiency and CPU per frame; where the time beyond the bound went; and the
// simulator's replay beside what was measured.
Table limit_table(const Model& m, const Scene& s);
Table lost_table(const Model& m, const Scene& s);
Table model_table(const Model& m, const Scene& s);
// Each mode's replay on 1 to 64 workers as speedup over single, and its efficiency on 16.
Table scaling_table(const Model& m, const Scene& s);
// What is on the span of the frames cut for 16 workers, by stage: the serial stretches to make
// parallel next (dynamic and tbb, the largest object count).
Table critical_table(const Model& m, const Scene& s);
// The first `single` group of the scene at `objects`, or null.
const Group* single_group(const Model& m, const Scene& s, std::uint32_t objects);
// The median measured time of `g`'s frames at the indices another group replayed (the same
// simulation steps: every mode runs the same frames).
double measured_at(const Group& g, const Group& replayed_by);
extern const char* const kHowToReadLimit;
// Ours beside a reference's numbers, per object count and mode pair.
Table reference_table(const Model& m, const Reference& ref);
extern const char* const kHowToRead;

// `root`: the report's folder, so screenshots are linked relative to it.
std::string render_html(const Run& run, const Model& m, const std::string& root = ".");

}  // namespace spindle::report::detail
