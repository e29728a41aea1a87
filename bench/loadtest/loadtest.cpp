#include "loadtest.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <spindle/base/crash.h>
#include <spindle/base/log.h>
#include <spindle/base/profiler.h>
#include <spindle/engine/engine.h>
#include <spindle/jobs/job_graph.h>
#include <spindle/render/renderer.h>
#include <spindle/report/report.h>

#include "background.h"
#include "scene.h"
#include "scene_common.h"

#ifndef SPINDLE_BUILD_TYPE
#define SPINDLE_BUILD_TYPE "unknown"
#endif
#ifndef SPINDLE_CXX_FLAGS
#define SPINDLE_CXX_FLAGS ""
#endif

namespace spindle::loadtest {

namespace {

// Every measured frame is kept until the report is written, about 8 KB each at that point (most
// of it run.json's tree): a million is about 8 GB, a third of the 24 GiB machine.
constexpr std::uint64_t kMaxMeasuredFrames = 1'000'000;

struct Options {
  std::vector<std::string> scenes{"boids"};
  std::vector<std::uint32_t> objects;  // --objects; empty: each scene's default_objects
  std::vector<std::string> mode_names{"single", "static", "dynamic", "tbb"};
  std::vector<jobs::Mode> modes;
  std::uint32_t workers = 0;
  std::uint32_t frames = 200;
  std::uint32_t warmup = 20;
  std::uint32_t repeats = 3;
  std::uint64_t seed = 1;
  std::string out = "out/loadtest";
  std::uint32_t trace_frames = 8;
  std::uint32_t planned_frames = 3;  // --planned-frames: per predicted count above the workers
  bool pin = true;
  double cpu_weight = 1.0;               // --cpu-weight: EngineConfig::worker_cpu_weight
  bool unpin_when_busy = true;           // !--pin-when-busy: EngineConfig::unpin_when_cores_busy
  std::uint32_t unpin_when_busy_cores =  // --unpin-when-busy-cores
      core::EngineConfig{}.unpin_when_busy_max_cores;
  std::uint32_t width = 640;  // the rendered image
  std::uint32_t height = 360;
  std::string screenshot_dir;  // --screenshot: one PNG per scene and count
  BackgroundSpec background;   // --background: busy threads beside the measured frames
  bool graph = true;           // record each measured frame's job graph (--no-graph: off)
  // Scene parameters given on the command line (--joints 80), by name.
  std::map<std::string, std::int64_t> params;
  bool objects_given = false;
  bool dry_run = false;  // --dry-run: check the command line, say what would run, stop
};

// The object counts a scene runs: --objects, or the scene's own default list.
const std::vector<std::uint32_t>& scene_objects(const SceneDef& scene, const Options& o) {
  return o.objects_given ? o.objects : scene.default_objects;
}

// The counts some scene accepts: what --objects takes before the scenes run are known.
ObjectRange any_scene_objects() {
  ObjectRange any{std::numeric_limits<std::uint32_t>::max(), 0};
  for (const std::string& name : scene_names()) {
    const ObjectRange r = find_scene(name)->objects;
    any = {std::min(any.min, r.min), std::max(any.max, r.max)};
  }
  return any;
}

// The scene table at the end of --help: name, object range, description.
std::string scene_table() {
  std::string table = "Scenes (--objects: the counts each accepts):\n";
  for (const std::string& name : scene_names()) {
    const SceneDef& scene = *find_scene(name);
    char row[64];
    std::snprintf(row, sizeof row, "  %-11s %7u to %-8u ", name.c_str(), scene.objects.min,
                  scene.objects.max);
    table += row + scene.description + "\n";
  }
  return table;
}

// The scene's parameters: its defaults, overridden by the command line.
std::vector<SceneParam> scene_params(const SceneDef& scene, const Options& o) {
  std::vector<SceneParam> params = scene.params;
  for (SceneParam& p : params)
    if (auto it = o.params.find(p.name); it != o.params.end()) p.value = it->second;
  return params;
}

// CLI11 2.1 reads unsigned values with strtoull (-1 becomes 2^64-1, 2^64 becomes 0) and takes the
// argument after a flag as its value even when that is another flag. These validators see the
// text before CLI11 converts it, so every refusal names the flag and says what it expected.

// Empty when `text` may be a value; else the complaint. "-5" is a (negative) value, "--out" and
// "-x" are flags.
std::string flag_instead_of_value(const std::string& text) {
  const bool flag =
      text.size() > 1 && text[0] == '-' && !std::isdigit(static_cast<unsigned char>(text[1]));
  return flag ? "expected a value, got the flag '" + text + "'" : std::string();
}

CLI::Validator any_value() {
  return CLI::Validator([](std::string& text) { return flag_instead_of_value(text); }, "");
}

// Decimal digits (and a sign where T has one) that fit T and lie in [min, max]. A refusal says
// "expected an integer from `min` to `shown_max`": --objects passes counts above every scene's
// maximum on to the per-scene check, whose message names the scene.
template <class T>
CLI::Validator integer_in(T min, T max, T shown_max) {
  const std::string expected =
      "expected an integer from " + std::to_string(min) + " to " + std::to_string(shown_max);
  return CLI::Validator(
      [min, max, expected](std::string& text) {
        if (std::string flag = flag_instead_of_value(text); !flag.empty()) return flag;
        T value{};
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ec != std::errc() || stop != end || value < min || value > max)
          return expected + ", got '" + text + "'";
        return std::string();
      },
      "");
}

// A finite decimal number in [min, max] ("0.5", "2"; not "nan", "1e9" or "0x1").
CLI::Validator number_in(double min, double max, const std::string& shown) {
  const std::string expected = "expected a number from " + shown;
  return CLI::Validator(
      [min, max, expected](std::string& text) {
        if (std::string flag = flag_instead_of_value(text); !flag.empty()) return flag;
        double value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value, std::chars_format::fixed);
        if (text.empty() || ec != std::errc() || stop != end || !std::isfinite(value) ||
            value < min || value > max)
          return expected + ", got '" + text + "'";
        return std::string();
      },
      "");
}

template <class T>
CLI::Validator integer_in(T min, T max) {
  return integer_in(min, max, max);
}

// The type shown by --help: "N in [1, 1000]".
template <class T>
std::string integer_type(T min, T max) {
  return "N in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

template <class T>
CLI::Option* add_integer(CLI::App& app, const std::string& flag, T& value, T min, T max,
                         const std::string& description) {
  return app.add_option(flag, value, description)
      ->check(integer_in(min, max))
      ->type_name(integer_type(min, max));
}

// CLI11's count errors in words a user can act on: "--frames: 1 required N in [1, 1000000]
// missing" (the line ends at the flag) and "--frames: At Most 1 required but received 2".
std::string plain_parse_error(const std::string& message) {
  const std::size_t colon = message.find(": ");
  if (colon == std::string::npos) return message;
  const std::string flag = message.substr(0, colon);
  if (message.find(" required ", colon) != std::string::npos && message.ends_with(" missing"))
    return flag + ": expected a value, got none";
  if (message.find(": At Most 1 required but received ") == colon)
    return flag + ": given more than once, expected once";
  return message;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

report::Machine machine_facts(int argc, const char* const* argv) {
  report::Machine m;
  m.cores = std::thread::hardware_concurrency();
  m.cpu = read_cpu_model();
#if defined(__clang__)
  m.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  m.compiler = std::string("g++ ") + __VERSION__;
#endif
  m.flags = SPINDLE_CXX_FLAGS;
  m.build_type = SPINDLE_BUILD_TYPE;
  utsname u{};
  if (uname(&u) == 0) m.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  m.date = date;
  for (int i = 0; i < argc; ++i) m.command_line += (i ? " " : "") + std::string(argv[i]);
  return m;
}

core::EngineConfig engine_config(const SceneDef& scene, const Options& o, jobs::Mode mode,
                                 std::uint32_t objects, bool profile) {
  core::EngineConfig c;
  c.mode = mode;
  c.workers = mode == jobs::Mode::Single ? 1 : o.workers;
  c.pin_workers = o.pin;
  c.worker_cpu_weight = o.cpu_weight;
  c.unpin_when_cores_busy = o.unpin_when_busy;
  c.unpin_when_busy_max_cores = o.unpin_when_busy_cores;
  c.entity_capacity = scene.capacity ? scene.capacity(objects) : objects + 1024;
  c.profile = profile;
  c.record_job_graph = o.graph && !profile;
  return c;
}

// Copies the engine's view of the last frame into the report's.
void record_frame(core::Engine& engine, report::Frame& f) {
  const core::FrameStats& s = engine.last_frame();
  f.frame_ms = static_cast<double>(s.frame_ns) * 1e-6;
  f.stages.resize(s.stages.size());
  for (std::size_t i = 0; i < s.stages.size(); ++i) {
    f.stages[i].wall_ms = static_cast<double>(s.stages[i].wall_ns) * 1e-6;
    f.stages[i].cpu_ms = static_cast<double>(s.stages[i].cpu_ns) * 1e-6;
    f.stages[i].jobs = s.stages[i].jobs;
  }
  f.job_overflows = s.job_overflows;
  f.cpu_ms = static_cast<double>(s.cpu_ns) * 1e-6;
  f.active_workers = s.active_workers;
  f.pinned = s.pinned;
  f.cores_busy = s.cores_busy;
  if (s.span_ns > 0) {
    f.work_ms = static_cast<double>(s.work_ns + s.serial_ns) * 1e-6;
    f.span_ms = static_cast<double>(s.span_ns) * 1e-6;
    f.span_handoff_ms = static_cast<double>(s.span_handoff_ns) * 1e-6;
    f.handoff_us = static_cast<double>(s.handoff_ns) * 1e-3;
    f.jobs = s.jobs;
  }
  f.worker_busy_ms.resize(s.worker_busy_ns.size());
  for (std::size_t w = 0; w < s.worker_busy_ns.size(); ++w)
    f.worker_busy_ms[w] = static_cast<double>(s.worker_busy_ns[w]) * 1e-6;
  const auto decisions = engine.last_decisions();
  f.decisions.resize(decisions.size());
  for (std::size_t k = 0; k < decisions.size(); ++k) {
    const core::Decision& d = decisions[k];
    f.decisions[k] = report::Decision{d.stage, d.workers, d.split, d.order, d.predicted_ms};
  }
}

// The worker counts every series is replayed on (and its own).
constexpr std::uint32_t kPredictedWorkers[] = {1, 2, 4, 8, 16, 32, 64};
// Recorded frames replayed per series, spread over its measured frames.
constexpr std::uint32_t kReplayedFrames = 7;
// For each count above the series' workers, `--planned-frames` frames (3) are recorded after the
// measured ones with the renderer's passes cut for that count (Renderer::plan_for()), after one
// that settles the new cut (its tile times are those of the old tiles). Replays of the measured
// frames cannot cut the geometry into the batches more workers would get (crowd at 1,000: 8 on
// 2 workers, 64 on 16), nor the tiles smaller (128 pixels on one awake worker, or at 1280x720 on
// up to 7, 64 beyond).

// Replays of one recorded frame on each worker count, by the index of the counts, and what is on
// the span of the frame cut for 16 workers, by job tag.
struct Replays {
  std::vector<std::vector<double>> with, free, bound;  // ms
  std::vector<std::vector<double>> critical16;         // ms, by tag
  explicit Replays(std::size_t counts)
      : with(counts), free(counts), bound(counts), critical16(jobs::kMaxTags) {}
};

// Replays `graph` under its mode's policy on `workers`: with the measured hand-off, with free
// hand-offs, and the bound max(work / workers, span with the hand-offs).
report::Prediction replay_on(const jobs::JobGraph& graph, std::uint32_t workers) {
  jobs::SimConfig sim;
  sim.policy = jobs::sim_policy(graph.mode);
  sim.workers = workers;
  sim.handoff_ns = graph.handoff_ns;
  report::Prediction p;
  p.workers = workers;
  p.frame_ms = static_cast<double>(jobs::simulate(graph, sim).frame_ns) * 1e-6;
  sim.handoff_ns = 0;
  p.free_handoff_ms = static_cast<double>(jobs::simulate(graph, sim).frame_ns) * 1e-6;
  p.bound_ms = std::max(static_cast<double>(graph.work_ns) / std::max<std::uint32_t>(workers, 1),
                        static_cast<double>(graph.span_handoff_ns)) *
               1e-6;
  return p;
}

// Replays `graph` under its mode's policy on each count: with the measured hand-off, with free
// hand-offs, and the bound (max(work / count, span of the frame cut for count)).
// `only`: the index of the one count to replay on (counts.size(): every count).
void replay(const jobs::JobGraph& graph, std::span<const std::uint32_t> counts, Replays& out,
            std::size_t only) {
  jobs::SimConfig sim;
  sim.policy = jobs::sim_policy(graph.mode);
  const double work = static_cast<double>(graph.work_ns);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (only < counts.size() && i != only) continue;
    const report::Prediction on = replay_on(graph, counts[i]);
    out.with[i].push_back(on.frame_ms);
    out.free[i].push_back(on.free_handoff_ms);
    sim.workers = 0;  // unbounded: the span
    sim.cut_workers = counts[i];
    sim.handoff_ns = graph.handoff_ns;
    sim.critical_path = counts[i] == 16;
    const jobs::SimResult spanned = jobs::simulate(graph, sim);
    sim.critical_path = false;
    out.bound[i].push_back(std::max(work / counts[i], static_cast<double>(spanned.frame_ns)) *
                           1e-6);
    for (std::size_t t = 0; t < spanned.critical_ns.size(); ++t)
      out.critical16[t].push_back(static_cast<double>(spanned.critical_ns[t]) * 1e-6);
  }
}

SceneParams scene_setup_params(const Options& o, const SceneDef& scene, std::uint32_t objects) {
  SceneParams p{objects, o.seed, scene_params(scene, o)};
  p.width = o.width;
  p.height = o.height;
  return p;
}

// The scene's rendered image of the last frame, if it renders (nullptr otherwise).
render::Renderer* scene_renderer(core::Engine& engine) {
  const SceneRendering* r = engine.world().resource<SceneRendering>();
  return r != nullptr && r->drawn ? r->renderer : nullptr;
}

// What the report counts per frame: the renderer's draws by how they were drawn, then the
// scene's own counts (SceneCounts).
std::vector<std::string> count_names(core::Engine& engine) {
  std::vector<std::string> names;
  if (scene_renderer(engine) != nullptr)
    names = {"draws visible", "drawn as meshes", "drawn as points", "hidden (occlusion)"};
  if (const SceneCounts* c = engine.world().resource<SceneCounts>())
    names.insert(names.end(), c->names.begin(), c->names.end());
  return names;
}
void record_counts(core::Engine& engine, report::Frame& f) {
  f.counts.clear();
  if (const render::Renderer* r = scene_renderer(engine)) {
    const render::Renderer::Stats s = r->stats();
    f.counts = {static_cast<double>(s.draws_visible),
                static_cast<double>(s.draws_visible - s.draws_as_points - s.draws_occluded),
                static_cast<double>(s.draws_as_points), static_cast<double>(s.draws_occluded)};
  }
  if (const SceneCounts* c = engine.world().resource<SceneCounts>())
    f.counts.insert(f.counts.end(), c->values.begin(), c->values.end());
}

// Thumbnails and strip frames are at most this wide: the factor an image of `width` shrinks by.
constexpr int kThumbWidth = 320;
int thumb_shrink(int width) {
  return (width + kThumbWidth - 1) / kThumbWidth;
}

// Frames in a scene's strip, and game time between them.
constexpr int kStripFrames = 6;
constexpr std::int64_t kStripStepNs = 100'000'000;

// `kStripFrames` frames `kStripStepNs` of game time apart, run after everything measured, each
// at most kThumbWidth pixels wide, side by side with 2-pixel gaps, as one PNG at `path`.
void write_strip(core::Engine& engine, const render::Renderer& renderer, const std::string& path) {
  const int shrink = thumb_shrink(renderer.image().width());
  const std::int64_t step = engine.config().fixed_step_ns;
  const std::int64_t steps = std::max<std::int64_t>(1, (kStripStepNs + step / 2) / step);
  std::vector<render::Image> frames;
  for (int f = 0; f < kStripFrames; ++f) {
    for (std::int64_t s = 0; s < steps; ++s) engine.step();
    frames.push_back(render::downscale(renderer.image(), shrink));
  }
  const int w = frames[0].width(), h = frames[0].height(), gap = 2;
  render::Image strip(kStripFrames * w + (kStripFrames - 1) * gap, h, render::rgba(255, 255, 255));
  for (int f = 0; f < kStripFrames; ++f)
    for (int y = 0; y < h; ++y)
      std::copy_n(frames[static_cast<std::size_t>(f)].row(y), w, strip.row(y) + f * (w + gap));
  if (core::Status s = render::write_png(strip, path); !s) throw std::runtime_error(s.message());
}

// `screenshot`: where to write the last frame's image, `shrink` times smaller on each side
// (empty: nowhere; nothing either when the scene draws nothing); the path is kept in the series
// when written. `strip`: where to write frames after the measured ones (write_strip; empty:
// none). `background` runs during the warm-up and the measured frames
// only.
report::Series run_series(const SceneDef& scene, const Options& o, jobs::Mode mode,
                          std::uint32_t objects, std::uint32_t repeat, Background& background,
                          const std::string& screenshot = {}, int shrink = 1,
                          const std::string& strip = {}) {
  report::Series r;
  core::Engine engine(engine_config(scene, o, mode, objects, false));
  scene.setup(engine, scene_setup_params(o, scene, objects));
  struct Running {
    Background& load;
    explicit Running(Background& b) : load(b) { load.resume(); }
    ~Running() { load.pause(); }
  } running(background);
  for (std::uint32_t i = 0; i < o.warmup; ++i) engine.step();
  r.scene = scene.name;
  r.mode = jobs::to_string(engine.mode());
  r.workers = engine.jobs().worker_count();
  r.objects = objects;
  r.repeat = repeat;
  for (std::uint32_t i = 0; i < engine.stage_count(); ++i)
    r.stage_names.emplace_back(engine.stage_name(static_cast<core::StageId>(i)));
  r.count_names = count_names(engine);
  r.frames.resize(o.frames);
  std::vector<std::uint32_t> counts(std::begin(kPredictedWorkers), std::end(kPredictedWorkers));
  if (std::find(counts.begin(), counts.end(), r.workers) == counts.end())
    counts.push_back(r.workers);
  Replays replays(counts.size());
  // An odd stride, so frames that alternate in cost (a mix every other frame) are sampled in
  // both phases.
  const std::uint32_t every = std::max<std::uint32_t>(1, o.frames / kReplayedFrames) | 1u;
  std::vector<jobs::JobGraph> kept;  // replayed after the series: nothing runs between frames
  for (std::uint32_t i = 0; i < o.frames; ++i) {
    engine.step();
    record_frame(engine, r.frames[i]);
    record_counts(engine, r.frames[i]);
    const jobs::JobGraph* graph = engine.last_job_graph();
    if (graph != nullptr && graph->complete && i % every == every / 2) {
      kept.push_back(*graph);
      r.replayed.push_back(i);
    }
  }
  background.pause();
  // Each kept frame on the workers it had (dynamic mode may have woken fewer than r.workers): the
  // model check compares these with the frames as measured.
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const std::uint32_t active = r.frames[r.replayed[k]].active_workers;
    r.replayed_own.push_back(replay_on(kept[k], active > 0 ? active : r.workers));
  }
  r.world_hash = engine.world().state_hash();
  // The mixed audio joins the world's hash: the determinism check covers every sample too.
  if (const SceneAudio* a = engine.world().resource<SceneAudio>())
    r.world_hash ^= core::mix64(a->plugin->output_hash());
  if (const render::Renderer* renderer = scene_renderer(engine)) {
    r.image_hash = renderer->image_hash();
    if (!screenshot.empty()) {
      const core::Status s =
          shrink > 1 ? render::write_png(render::downscale(renderer->image(), shrink), screenshot)
                     : renderer->screenshot(screenshot);
      if (!s) throw std::runtime_error(s.message());
      r.screenshot = screenshot;
    }
    // After every hash: the strip's frames move the world on.
    if (!strip.empty()) {
      write_strip(engine, *renderer, strip);
      r.strip = strip;
    }
  }
  // The predictions (after every hash and the strip: the planned frames move the world on too).
  // On counts above the series' own, a renderer's frames are replayed as cut for that count
  // (o.planned_frames of them), beside the same background as the measured ones.
  std::vector<std::uint32_t> planned(counts.size(), 0);
  render::Renderer* renderer = scene_renderer(engine);
  if (renderer != nullptr && !kept.empty() && engine.mode() != jobs::Mode::Single &&
      o.planned_frames > 0) {
    background.resume();
    for (std::size_t k = 0; k < counts.size(); ++k) {
      if (counts[k] <= r.workers) continue;
      renderer->plan_for(counts[k]);
      engine.step();  // settles the new cut
      for (std::uint32_t f = 0; f < o.planned_frames; ++f) {
        engine.step();
        const jobs::JobGraph* graph = engine.last_job_graph();
        if (graph == nullptr || !graph->complete) continue;
        replay(*graph, counts, replays, k);
        ++planned[k];
      }
    }
    renderer->plan_for(0);
    background.pause();
  }
  for (const jobs::JobGraph& graph : kept)
    for (std::size_t k = 0; k < counts.size(); ++k)
      if (planned[k] == 0) replay(graph, counts, replays, k);
  for (std::size_t k = 0; k < counts.size() && !kept.empty(); ++k)
    r.predictions.push_back({counts[k], report::quantile(replays.with[k], 0.5),
                             report::quantile(replays.free[k], 0.5),
                             report::quantile(replays.bound[k], 0.5), planned[k]});
  std::sort(r.predictions.begin(), r.predictions.end(),
            [](const report::Prediction& a, const report::Prediction& b) {
              return a.workers < b.workers;
            });
  // Stage i books its jobs under tag i + 1; tag 0 is the frame's own code and untagged jobs.
  for (std::size_t t = 0; t < replays.critical16.size(); ++t) {
    if (replays.critical16[t].empty()) continue;
    const double ms = report::quantile(replays.critical16[t], 0.5);
    if (!(ms > 0)) continue;
    const std::string name =
        t == 0 ? "outside stages"
               : (t - 1 < r.stage_names.size() ? r.stage_names[t - 1] : "tag " + std::to_string(t));
    r.critical16_ms.emplace_back(name, ms);
  }
  return r;
}

// A few frames with every job recorded by the profiler, plus the allocator's decisions as
// counter tracks, in Chrome trace-event format.
core::Status write_trace(const SceneDef& scene, const Options& o, jobs::Mode mode,
                         std::uint32_t objects, const std::string& path) {
  namespace prof = core::profiler;
  std::vector<std::vector<core::Decision>> decisions;
  std::vector<std::string> names;
  {
    core::Engine engine(engine_config(scene, o, mode, objects, true));
    scene.setup(engine, scene_setup_params(o, scene, objects));
    for (std::uint32_t i = 0; i < std::max<std::uint32_t>(o.warmup, 5); ++i) engine.step();
    for (std::uint32_t i = 0; i < engine.stage_count(); ++i)
      names.emplace_back(engine.stage_name(static_cast<core::StageId>(i)));
    prof::set_thread_name("main");
    prof::clear();
    for (std::uint32_t i = 0; i < o.trace_frames; ++i) {
      prof::begin_frame();
      engine.step();
      prof::end_frame();
      const auto d = engine.last_decisions();
      decisions.emplace_back(d.begin(), d.end());
    }
  }
  if (core::Status s = prof::write_chrome_trace(path.c_str()); !s) return s;
  // Add the decisions: one counter track per stage for workers and one for the split, at the
  // start of each frame.
  nlohmann::json trace;
  {
    std::ifstream in(path);
    trace = nlohmann::json::parse(in, nullptr, false);
  }
  if (trace.is_discarded())
    return core::Status::error(path + ": trace written but not readable back");
  nlohmann::json& events = trace.is_array() ? trace : trace["traceEvents"];
  std::vector<double> frame_ts;
  int pid = 0;
  for (const auto& e : events) {
    if (e.value("name", "") == "frame" && e.value("ph", "") == "X") {
      frame_ts.push_back(e.value("ts", 0.0));
      pid = e.value("pid", 0);
    }
  }
  std::sort(frame_ts.begin(), frame_ts.end());
  for (std::size_t f = 0; f < frame_ts.size() && f < decisions.size(); ++f) {
    nlohmann::json workers = nlohmann::json::object(), split = nlohmann::json::object();
    for (const core::Decision& d : decisions[f]) {
      workers[names[d.stage]] = d.workers;
      split[names[d.stage]] = d.split;
    }
    if (workers.empty()) continue;
    events.push_back({{"name", "allocator: workers"},
                      {"ph", "C"},
                      {"ts", frame_ts[f]},
                      {"pid", pid},
                      {"args", workers}});
    events.push_back({{"name", "allocator: split"},
                      {"ph", "C"},
                      {"ts", frame_ts[f]},
                      {"pid", pid},
                      {"args", split}});
  }
  std::ofstream out(path, std::ios::trunc);
  out << trace.dump();
  if (!out) return core::Status::error(path + ": cannot write the trace");
  return {};
}

void print_summary(const report::Run& run, std::ostream& out) {
  // Pool repeats per (scene, objects, mode).
  struct Key {
    std::string scene;
    std::uint32_t objects;
    std::string mode;
    bool operator<(const Key& k) const {
      return std::tie(scene, objects, mode) < std::tie(k.scene, k.objects, k.mode);
    }
  };
  std::map<Key, std::vector<double>> pooled;
  std::vector<std::string> mode_order;
  for (const auto& s : run.series) {
    auto& v = pooled[{s.scene, s.objects, s.mode}];
    for (const auto& f : s.frames) v.push_back(f.frame_ms);
    if (std::find(mode_order.begin(), mode_order.end(), s.mode) == mode_order.end())
      mode_order.push_back(s.mode);
  }
  char line[256];
  std::snprintf(line, sizeof line, "%-11s %8s %-8s %10s %10s %10s %22s\n", "scene", "objects",
                "mode", "median ms", "p99 ms", "FPS", "speedup vs single");
  out << "\n" << line;
  std::map<std::pair<std::string, std::uint32_t>, bool> seen;
  for (const auto& [key, samples] : pooled) {
    if (seen[{key.scene, key.objects}]) continue;
    seen[{key.scene, key.objects}] = true;
    const auto single = pooled.find({key.scene, key.objects, "single"});
    for (const std::string& mode : mode_order) {
      const auto it = pooled.find({key.scene, key.objects, mode});
      if (it == pooled.end()) continue;
      const report::Summary s = report::summarize(it->second);
      std::string speed = "";
      if (single != pooled.end()) {
        const report::Speedup sp = report::speedup(single->second, it->second);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2fx [%.2f, %.2f]", sp.ratio, sp.ci95_low, sp.ci95_high);
        speed = buf;
      }
      std::snprintf(line, sizeof line, "%-11s %8u %-8s %10.3f %10.3f %10.1f %22s\n",
                    key.scene.c_str(), key.objects, mode.c_str(), s.median, s.p99,
                    s.median > 0 ? 1000.0 / s.median : 0.0, speed.c_str());
      out << line;
    }
  }
}

}  // namespace

int run_loadtest(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                 bool crash_report) {
  register_builtin_scenes();
  Options o;
  CLI::App app{
      "spindle_loadtest: load-test scenes at varying object counts, compared across job "
      "modes, with a report (JSON, CSV, Markdown, HTML, Chrome trace)"};
  app.footer(scene_table());
  app.add_option("--scene", o.scenes, "scenes to run, comma-separated (listed below)")
      ->delimiter(',')
      ->check(any_value());
  const ObjectRange any_objects = any_scene_objects();
  app.add_option("--objects", o.objects,
                 "object counts, comma-separated, each within every scene's range (default: "
                 "each scene's own list)")
      ->delimiter(',')
      ->check(
          integer_in(any_objects.min, std::numeric_limits<std::uint32_t>::max(), any_objects.max))
      ->type_name(integer_type(any_objects.min, any_objects.max));
  app.add_option("--modes", o.mode_names, "job modes: single,static,dynamic,tbb")
      ->delimiter(',')
      ->check(any_value());
  add_integer(app, "--workers", o.workers, 0u, 64u,
              "participants in the threaded modes (0: one per core)");
  add_integer(app, "--frames", o.frames, 1u, 1'000'000u, "measured frames per series");
  add_integer(app, "--warmup", o.warmup, 0u, 1'000'000u, "frames run before measuring");
  add_integer(app, "--repeats", o.repeats, 1u, 1000u,
              "series per (scene, count, mode), interleaved across modes");
  add_integer(app, "--seed", o.seed, std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max(),
              "scene seed");
  app.add_option("--out", o.out, "output folder (created; files in it are replaced)")
      ->check(any_value());
  add_integer(app, "--trace-frames", o.trace_frames, 0u, 1000u,
              "frames in trace.json (0: no trace)");
  add_integer(app, "--planned-frames", o.planned_frames, 0u, 100u,
              "frames recorded per predicted worker count above the run's, with the renderer's "
              "passes cut for that count, that the prediction replays (0: the measured frames on "
              "every count; default 3)");
  app.add_flag("--dry-run", o.dry_run,
               "check the command line, print the series it asks for and stop: nothing runs and "
               "nothing is written");
  app.add_flag("!--no-pin", o.pin, "do not pin worker threads to cores");
  app.add_option("--cpu-weight", o.cpu_weight,
                 "dynamic mode: how much a worker's CPU time counts beside the frame time it "
                 "saves (EngineConfig::worker_cpu_weight): 1 wakes a worker only if it lowers "
                 "frame time x CPU time, 0 for the fastest frame whatever it costs (default 1)")
      ->check(number_in(0.0, 4.0, "0 to 4"))
      ->type_name("W in [0, 4]");
  app.add_flag("!--pin-when-busy", o.unpin_when_busy,
               "dynamic mode: keep pinned workers as candidates while other programs keep every "
               "core busy (EngineConfig::unpin_when_cores_busy = false), as before")
      ->excludes("--no-pin");
  add_integer(app, "--unpin-when-busy-cores", o.unpin_when_busy_cores, 0u, 65536u,
              "dynamic mode stops pinning while every core is busy only on machines of at most "
              "this many cores (EngineConfig::unpin_when_busy_max_cores; 0: any; default 4)")
      ->excludes("--no-pin")
      ->excludes("--pin-when-busy");
  app.add_flag("!--no-graph", o.graph,
               "do not record the measured frames' job graphs (no span, bound or predicted "
               "scaling in the report; recording costs a few ns per job)");
  std::string background_text = "none";
  app.add_option("--background", background_text,
                 "N busy threads in another process beside each series' warm-up and measured "
                 "frames: N or N:steady spins, N:bursty alternates runs and sleeps of 1-20 ms "
                 "(default: none)")
      ->check(CLI::Validator(
          [](std::string& text) {
            if (std::string flag = flag_instead_of_value(text); !flag.empty()) return flag;
            BackgroundSpec spec;
            const core::Status s = text == "none" ? core::Status{} : parse_background(text, spec);
            return s.message();
          },
          ""))
      ->type_name("N[:steady|bursty]");
  add_integer(app, "--width", o.width, 16u, 4096u, "rendered image width in pixels");
  add_integer(app, "--height", o.height, 16u, 4096u, "rendered image height in pixels");
  app.add_option("--screenshot", o.screenshot_dir,
                 "folder for one full-size PNG per scene and object count (the last frame of its "
                 "first series); without it, thumbnails at most 320 pixels wide go to OUT/thumbs. "
                 "The HTML report shows them beside the charts")
      ->check(any_value());
  // Every registered scene's parameters become flags, one per name, accepting the union of the
  // declared ranges (each scene's own range is checked below, once the scenes run are known).
  // A flag per parameter name; scenes that declare it alike (the "draw" every scene has) share
  // one line of its help.
  struct ParamFlag {
    std::vector<std::pair<std::string, std::vector<std::string>>> uses;  // meaning -> scenes
    std::int64_t min, max;
    std::string description() const {
      std::string out;
      for (const auto& [meaning, scenes] : uses)
        out += (out.empty() ? "" : "; ") + meaning.substr(0, meaning.find('\n')) +
               (scenes.size() > 1 ? " (scenes " : " (scene ") + join(scenes) +
               meaning.substr(meaning.find('\n') + 1) + ")";
      return out;
    }
  };
  std::map<std::string, ParamFlag> param_flags;
  for (const std::string& scene_name : scene_names())
    for (const SceneParam& p : find_scene(scene_name)->params) {
      if (app.get_option_no_throw("--" + p.name) != nullptr || p.name == "help") {
        err << "spindle_loadtest: scene " << scene_name << " declares parameter '" << p.name
            << "', which is a harness flag: rename it\n";
        return 2;
      }
      const std::string meaning = p.description + "\n, default " + std::to_string(p.value);
      auto [it, added] = param_flags.try_emplace(p.name, ParamFlag{{}, p.min, p.max});
      ParamFlag& flag = it->second;
      flag.min = std::min(flag.min, p.min);
      flag.max = std::max(flag.max, p.max);
      auto use = std::find_if(flag.uses.begin(), flag.uses.end(),
                              [&](const auto& u) { return u.first == meaning; });
      if (use == flag.uses.end())
        flag.uses.push_back({meaning, {scene_name}});
      else
        use->second.push_back(scene_name);
    }
  for (const auto& [name, flag] : param_flags)
    app.add_option_function<std::int64_t>(
           "--" + name, [&o, name = name](std::int64_t v) { o.params[name] = v; },
           flag.description())
        ->check(integer_in(flag.min, flag.max))
        ->type_name(integer_type(flag.min, flag.max));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "spindle_loadtest: " << plain_parse_error(e.what())
        << "\n(run with --help for the flags)\n";
    return 2;
  }
  o.objects_given = app.count("--objects") > 0;
  if (background_text != "none") (void)parse_background(background_text, o.background);
  if (app.count("--modes") == 0) {  // default: every mode this build has
    o.mode_names.clear();
    for (jobs::Mode m :
         {jobs::Mode::Single, jobs::Mode::Static, jobs::Mode::Dynamic, jobs::Mode::Tbb})
      if (jobs::mode_available(m)) o.mode_names.emplace_back(jobs::to_string(m));
  }
  if (o.scenes.empty() || (o.objects_given && o.objects.empty()) || o.mode_names.empty()) {
    err << "spindle_loadtest: --scene, --objects and --modes need at least one value\n";
    return 2;
  }
  // A repeated count or scene would run its series again and pool both into one row of the
  // report; modes and scenes keep the order given, counts run ascending (the order of the
  // report's tables), so the last is the largest, the one the trace records.
  std::sort(o.objects.begin(), o.objects.end());
  o.objects.erase(std::unique(o.objects.begin(), o.objects.end()), o.objects.end());
  std::vector<const SceneDef*> scenes;
  for (const std::string& name : o.scenes) {
    const SceneDef* s = find_scene(name);
    if (s == nullptr) {
      err << "spindle_loadtest: --scene: unknown scene '" << name
          << "' (known: " << join(scene_names()) << ")\n";
      return 2;
    }
    if (std::find(scenes.begin(), scenes.end(), s) == scenes.end()) scenes.push_back(s);
  }
  for (const auto& [name, value] : o.params) {
    bool used = false;
    for (const SceneDef* scene : scenes)
      for (const SceneParam& p : scene->params) {
        if (p.name != name) continue;
        used = true;
        if (value < p.min || value > p.max) {
          err << "spindle_loadtest: --" << name << ": expected an integer from " << p.min << " to "
              << p.max << " for scene " << scene->name << ", got " << value << "\n";
          return 2;
        }
      }
    if (!used) {
      err << "spindle_loadtest: --" << name << " is not a parameter of the scenes run ("
          << join(o.scenes) << ")\n";
      return 2;
    }
  }
  // Ranges before the scene's own check (which may assume them), and both before anything
  // allocates.
  for (const SceneDef* scene : scenes)
    for (std::uint32_t objects : scene_objects(*scene, o))
      if (objects < scene->objects.min || objects > scene->objects.max) {
        err << "spindle_loadtest: --objects: scene " << scene->name << " runs "
            << scene->objects.min << " to " << scene->objects.max << " objects, got " << objects
            << "\n";
        return 2;
      }
  for (const SceneDef* scene : scenes) {
    if (!scene->check) continue;
    for (std::uint32_t objects : scene_objects(*scene, o))
      if (core::Status s = scene->check(scene_setup_params(o, *scene, objects)); !s) {
        err << "spindle_loadtest: scene " << scene->name << " with " << objects
            << " objects: " << s.message() << "\n";
        return 2;
      }
  }
  for (const std::string& name : o.mode_names) {
    jobs::Mode m;
    if (!jobs::parse_mode(name, m)) {
      err << "spindle_loadtest: --modes: unknown mode '" << name
          << "' (known: single, static, dynamic, tbb)\n";
      return 2;
    }
    if (!jobs::mode_available(m)) {
      err << "spindle_loadtest: --modes: mode '" << name << "' is not available in this build\n";
      return 2;
    }
    if (std::find(o.modes.begin(), o.modes.end(), m) == o.modes.end()) o.modes.push_back(m);
  }
  std::uint64_t counts = 0;
  for (const SceneDef* scene : scenes) counts += scene_objects(*scene, o).size();
  if (const std::uint64_t frames = std::uint64_t{o.frames} * o.repeats * o.modes.size() * counts;
      frames > kMaxMeasuredFrames) {
    err << "spindle_loadtest: --frames " << o.frames << " x --repeats " << o.repeats << " x "
        << o.modes.size() << " modes x " << counts << " object counts = " << frames
        << " measured frames; a run keeps at most " << kMaxMeasuredFrames
        << " (about 8 KB each when the report is written): lower one of them\n";
    return 2;
  }
  if (o.workers == 0) o.workers = std::max(1u, std::thread::hardware_concurrency());
  if (o.dry_run) {
    out << "spindle_loadtest: dry run, nothing runs:";
    for (const SceneDef* scene : scenes) {
      out << "\n  scene " << scene->name << ", objects";
      for (std::uint32_t n : scene_objects(*scene, o)) out << ' ' << n;
      for (const SceneParam& p : scene_params(*scene, o)) out << ", --" << p.name << ' ' << p.value;
    }
    out << "\n  modes " << join(o.mode_names) << ", " << o.workers << " workers, " << o.repeats
        << " repeats of " << o.warmup << " warm-up + " << o.frames << " measured frames, seed "
        << o.seed << "\n  report to " << o.out << "\n";
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec || !std::filesystem::is_directory(o.out)) {
    err << "spindle_loadtest: --out: cannot create folder '" << o.out << "'"
        << (ec ? ": " + ec.message() : "") << "\n";
    return 2;
  }
  if (crash_report) {
    const std::string report = (std::filesystem::path(o.out) / "crash.txt").string();
    if (core::Status s = core::install_crash_handler({.path = report}); !s)
      err << "spindle_loadtest: no crash report: " << s.message() << "\n";
  }
  // Without --screenshot, the report still shows each scene: a thumbnail of the same frame, at
  // most 320 pixels wide, in <out>/thumbs.
  const bool thumbnails = o.screenshot_dir.empty();
  const std::string shot_dir =
      thumbnails ? (std::filesystem::path(o.out) / "thumbs").string() : o.screenshot_dir;
  const int shot_shrink = thumbnails ? thumb_shrink(static_cast<int>(o.width)) : 1;
  std::filesystem::create_directories(shot_dir, ec);
  if (ec || !std::filesystem::is_directory(shot_dir)) {
    err << "spindle_loadtest: " << (thumbnails ? "" : "--screenshot: ") << "cannot create folder '"
        << shot_dir << "'" << (ec ? ": " + ec.message() : "") << "\n";
    return 2;
  }
  // The files report::write_report writes (report.h), and the trace. Each is replaced, so one
  // that is not a regular file would be written into (a device) or block the writer (a FIFO)
  // after the whole run; the trace is read back too, which is bounded only because it is the
  // file just written.
  for (const char* name : {"run.json", "summary.csv", "report.md", "report.html", "trace.json"}) {
    const std::filesystem::path file = std::filesystem::path(o.out) / name;
    const std::filesystem::file_status status = std::filesystem::status(file, ec);
    if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
      err << "spindle_loadtest: --out: " << file.string()
          << " is not a regular file; the report replaces that file\n";
      return 2;
    }
  }
  // Job-system and engine warnings go to stderr; the info chatter stays out of the table.
  core::logger().set_level(core::kAllChannels, core::LogLevel::Warning);

  // Forked before any engine starts a thread: the child must not inherit half-held locks.
  Background background(o.background, o.seed);
  if (!background.status()) {
    err << "spindle_loadtest: " << background.status().message() << "\n";
    return 1;
  }

  report::Run run;
  run.machine = machine_facts(argc, argv);
  run.background = o.background.label();
  run.cpu_weight = o.cpu_weight;
  core::EngineConfig busy_rule;
  busy_rule.pin_workers = o.pin;
  busy_rule.unpin_when_cores_busy = o.unpin_when_busy;
  busy_rule.unpin_when_busy_max_cores = o.unpin_when_busy_cores;
  run.pin_when_busy = o.pin && !core::unpins_when_cores_busy(busy_rule);
  run.unpin_when_busy_cores = o.unpin_when_busy_cores;
  run.planned_frames = o.planned_frames;
  run.seed = o.seed;
  run.frames = o.frames;
  run.warmup = o.warmup;
  run.repeats = o.repeats;
  for (const SceneDef* scene : scenes)
    for (const SceneParam& p : scene_params(*scene, o))
      run.parameters.emplace_back(scene->name + "." + p.name, p.value);
  for (const SceneDef* scene : scenes)
    for (report::Reference ref : scene->references) {
      ref.scene = scene->name;
      run.references.push_back(std::move(ref));
    }

  std::size_t total = 0;
  for (const SceneDef* scene : scenes)
    total += scene_objects(*scene, o).size() * o.repeats * o.modes.size();
  std::size_t done = 0;
  bool deterministic = true, any_image = false;
  const auto start = std::chrono::steady_clock::now();
  for (const SceneDef* scene : scenes) {
    for (std::uint32_t objects : scene_objects(*scene, o)) {
      std::uint64_t reference = 0, reference_image = 0;
      bool have_reference = false;
      for (std::uint32_t rep = 0; rep < o.repeats; ++rep) {
        // Modes interleaved within each repeat, so slow drift of the machine hits all alike.
        for (jobs::Mode mode : o.modes) {
          report::Series r;
          // The first series of each (scene, count) leaves its last frame as a screenshot.
          std::string shot;
          std::string strip;
          if (!have_reference) {
            const std::filesystem::path base =
                std::filesystem::path(shot_dir) / (scene->name + "_" + std::to_string(objects));
            shot = base.string() + ".png";
            // The largest count is also seen moving: a strip of frames (thumbnail size).
            if (objects == scene_objects(*scene, o).back()) strip = base.string() + "_strip.png";
          }
          try {
            r = run_series(*scene, o, mode, objects, rep, background, shot, shot_shrink, strip);
          } catch (const std::exception& e) {
            err << "spindle_loadtest: " << scene->name << " " << jobs::to_string(mode) << " with "
                << objects << " objects failed: " << e.what() << "\n";
            return 1;
          }
          if (!have_reference) {
            reference = r.world_hash;
            reference_image = r.image_hash;
            have_reference = true;
          } else if (r.world_hash != reference || r.image_hash != reference_image) {
            deterministic = false;
            err << "spindle_loadtest: determinism: " << scene->name << " " << r.mode << " with "
                << objects << " objects ended with world hash " << r.world_hash
                << " and image hash " << r.image_hash << ", expected " << reference << " and "
                << reference_image << "\n";
          }
          any_image = any_image || r.image_hash != 0;
          std::vector<double> ms;
          for (const auto& f : r.frames) ms.push_back(f.frame_ms);
          const report::Summary s = report::summarize(ms);
          ++done;
          char line[200];
          std::snprintf(
              line, sizeof line,
              "[%3zu/%zu] %-10s %-7s w=%-2u n=%-7u rep %u/%u  median %8.3f ms  p99 %8.3f ms  (%.0f "
              "s)\n",
              done, total, scene->name.c_str(), r.mode.c_str(), r.workers, objects, rep + 1,
              o.repeats, s.median, s.p99,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
          out << line << std::flush;
          run.series.push_back(std::move(r));
        }
      }
    }
  }

  print_summary(run, out);
  out << "determinism: "
      << (!deterministic ? "FAILED (see above)"
          : any_image    ? "every mode ended with the same world hash and the same image"
                         : "every mode ended with the same world hash (nothing was drawn)")
      << "\n";

  if (core::Status s = report::write_report(run, o.out); !s) {
    err << "spindle_loadtest: " << s.message() << "\n";
    return 1;
  }
  if (o.trace_frames > 0) {
    const jobs::Mode trace_mode =
        std::find(o.modes.begin(), o.modes.end(), jobs::Mode::Dynamic) != o.modes.end()
            ? jobs::Mode::Dynamic
            : o.modes.front();
    const std::string path = (std::filesystem::path(o.out) / "trace.json").string();
    if (core::Status s = write_trace(*scenes.front(), o, trace_mode,
                                     scene_objects(*scenes.front(), o).back(), path);
        !s) {
      err << "spindle_loadtest: " << s.message() << "\n";
      return 1;
    }
  }
  const std::filesystem::path dir = std::filesystem::absolute(o.out);
  out << "report: " << (dir / "report.html").string() << "\n"
      << "        " << (dir / "report.md").string() << ", summary.csv, run.json"
      << (o.trace_frames > 0 ? ", trace.json (open in Perfetto or chrome://tracing)" : "") << "\n";
  return deterministic ? 0 : 1;
}

}  // namespace spindle::loadtest
