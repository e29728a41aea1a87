#include "soak.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <spindle/audio/audio_plugin.h>
#include <spindle/base/crash.h>
#include <spindle/base/file.h>
#include <spindle/base/hash.h>
#include <spindle/base/log.h>
#include <spindle/engine/engine.h>
#include <spindle/gameplay/input.h>
#include <spindle/gameplay/input_record.h>
#include <spindle/report/report.h>

#include "scene.h"
#include "scene_common.h"

namespace spindle::loadtest {

namespace {

using Clock = std::chrono::steady_clock;

// Frame and stage times, 16 buckets per octave from 1 us (about 4.4% wide) up to ~1 s: fixed
// size, so sampling allocates nothing while the soak runs.
class Histogram {
 public:
  static constexpr int kBuckets = 16 * 21;
  void add(std::uint64_t ns) {
    const double us = static_cast<double>(ns) / 1000.0;
    const int i = us < 1.0 ? 0 : static_cast<int>(std::log2(us) * 16.0);
    ++n_[static_cast<std::size_t>(std::min(i, kBuckets - 1))];
    ++count_;
  }
  // The upper edge of the bucket holding quantile q, in ms; 0 when empty.
  double quantile_ms(double q) const {
    if (count_ == 0) return 0.0;
    const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
    std::uint64_t seen = 0;
    for (int i = 0; i < kBuckets; ++i) {
      seen += n_[static_cast<std::size_t>(i)];
      if (seen >= std::max<std::uint64_t>(rank, 1)) return std::exp2((i + 1) / 16.0) / 1000.0;
    }
    return std::exp2(kBuckets / 16.0) / 1000.0;
  }
  std::uint64_t count() const { return count_; }
  void clear() {
    n_.fill(0);
    count_ = 0;
  }

 private:
  std::array<std::uint32_t, kBuckets> n_{};
  std::uint64_t count_ = 0;
};

struct Second {
  double t = 0;           // seconds since the start
  const char* mode = "";  // jobs::to_string()'s
  std::uint64_t rss_kib = 0;
  std::uint32_t open_files = 0;
  std::uint32_t voices = 0;
  std::uint32_t entities = 0;
  std::uint32_t frames = 0;
  double frame_p50_ms = 0, frame_p99_ms = 0;
  std::uint64_t errors = 0;
  double calibration_ms = 0;         // the fixed workload's time (Calibration)
  std::vector<double> stage_p99_ms;  // by StageId
};

// A fixed piece of work timed once a second on the game's thread, between frames: arithmetic and
// a walk through 8 MiB. Its time follows the machine's own speed (clock frequency, other programs,
// a virtual machine's neighbours), so a slower machine can be told apart from a slower engine.
class Calibration {
 public:
  Calibration() : memory_(std::size_t{1} << 20, 1) {}  // 8 MiB, made before the clock starts
  double run_ms() {
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t h = sink_;
    for (std::uint32_t i = 0; i < 100'000; ++i) h = core::mix64(h + i);
    for (std::size_t i = 0; i < memory_.size(); i += 8) h += memory_[i];  // a cache line each
    sink_ = h;
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  std::vector<std::uint64_t> memory_;
  volatile std::uint64_t sink_ = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::uint64_t rss_kib() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
}

std::uint32_t open_files() {
  std::uint32_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n > 0 ? n - 1 : 0;  // the iterator's own
}

// Log errors (and the first one's text) from every thread, through a log sink.
struct ErrorLog {
  std::mutex mutex;
  std::uint64_t errors = 0;
  std::uint64_t warnings = 0;
  std::string first;
  static void sink(void* user, const core::LogRecord& r) {
    auto& self = *static_cast<ErrorLog*>(user);
    if (r.level < core::LogLevel::Warning) return;
    std::lock_guard lock(self.mutex);
    if (r.level == core::LogLevel::Warning) {
      ++self.warnings;
      return;
    }
    if (self.errors++ == 0) self.first.assign(r.text, r.text_size);
  }
  std::uint64_t count() {
    std::lock_guard lock(mutex);
    return errors;
  }
};

// The built-in pilot: `burst` held in a pattern of 3,600 steps, recorded through InputRecorder
// on an engine of its own, so the soak replays a recording as a game's replay would.
std::string record_pilot() {
  core::Engine rec(
      core::EngineConfig{.mode = jobs::Mode::Single, .workers = 1, .pin_workers = false});
  core::Input& input = core::use_input(rec);
  const core::ActionId burst = input.add_action("burst").value();
  core::ScriptedInput pilot;
  pilot.hold(burst, 300, 420);
  pilot.hold(burst, 1500, 1530);
  pilot.hold(burst, 2400, 2700);
  pilot.hold(burst, 3300, 3310);
  core::InputRecorder recorder(rec, &pilot);
  core::set_input_source(rec, &recorder);
  for (int i = 0; i < 3600; ++i) rec.step();
  core::set_input_source(rec, nullptr);
  return recorder.text();
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

struct Series {
  std::string name;
  std::vector<double> values;  // one per second
};

// One line chart over the run: a series per line, the job modes as shaded bands behind them.
std::string svg_chart(const std::string& title, const std::string& unit,
                      const std::vector<Second>& seconds, const std::vector<Series>& lines,
                      bool from_zero = true) {
  static const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                   "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  const double w = 960, h = 240, left = 64, right = 180, top = 28, bottom = 30;
  const double pw = w - left - right, ph = h - top - bottom;
  double lo = from_zero ? 0.0 : 1e300, hi = 0.0;
  for (const Series& s : lines)
    for (double v : s.values) {
      hi = std::max(hi, v);
      lo = std::min(lo, v);
    }
  if (hi <= lo) hi = lo + 1.0;
  const double span = hi - lo;
  hi += 0.08 * span;
  if (!from_zero) lo = std::max(0.0, lo - 0.08 * span);
  const double tmax = seconds.empty() ? 1.0 : std::max(1.0, seconds.back().t);
  auto x = [&](double t) { return left + pw * t / tmax; };
  auto y = [&](double v) { return top + ph * (1.0 - (v - lo) / (hi - lo)); };
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h
    << "' role='img' aria-label='" << report::html_escape(title) << "'>\n<text x='" << left
    << "' y='18' font-weight='bold'>" << report::html_escape(title) << "</text>\n";
  // Mode bands.
  static const char* kBand[] = {"#f4f4f4", "#e6eef7"};
  std::size_t band = 0;
  for (std::size_t i = 0; i < seconds.size();) {
    std::size_t j = i;
    while (j < seconds.size() && std::string_view(seconds[j].mode) == seconds[i].mode) ++j;
    const double t0 = i == 0 ? 0.0 : seconds[i - 1].t, t1 = seconds[j - 1].t;
    o << "<rect x='" << x(t0) << "' y='" << top << "' width='" << std::max(0.0, x(t1) - x(t0))
      << "' height='" << ph << "' fill='" << kBand[band++ % 2] << "'/>"
      << "<text x='" << x(t0) + 2 << "' y='" << top + 11 << "' font-size='10' fill='#777'>"
      << seconds[i].mode << "</text>\n";
    i = j;
  }
  // Axes and grid, with enough digits to tell the grid lines apart.
  const int digits = hi - lo < 0.5 ? 3 : hi - lo < 5 ? 2 : hi - lo < 50 ? 1 : 0;
  for (int k = 0; k <= 4; ++k) {
    const double v = lo + (hi - lo) * k / 4.0;
    o << "<line x1='" << left << "' x2='" << left + pw << "' y1='" << y(v) << "' y2='" << y(v)
      << "' stroke='#ddd'/><text x='" << left - 6 << "' y='" << y(v) + 4
      << "' font-size='11' text-anchor='end'>" << fixed(v, digits) << "</text>\n";
  }
  o << "<text x='12' y='" << top + ph / 2 << "' font-size='11' transform='rotate(-90 12 "
    << top + ph / 2 << ")' text-anchor='middle'>" << report::html_escape(unit) << "</text>\n";
  for (int k = 0; k <= 6; ++k) {
    const double t = tmax * k / 6.0;
    o << "<text x='" << x(t) << "' y='" << h - 10 << "' font-size='11' text-anchor='middle'>"
      << fixed(t, 0) << " s</text>\n";
  }
  for (std::size_t l = 0; l < lines.size(); ++l) {
    const char* colour = kColours[l % 8];
    o << "<polyline fill='none' stroke='" << colour << "' stroke-width='1.5' points='";
    for (std::size_t i = 0; i < lines[l].values.size() && i < seconds.size(); ++i)
      o << fixed(x(seconds[i].t), 1) << ',' << fixed(y(lines[l].values[i]), 1) << ' ';
    o << "'/>\n<text x='" << left + pw + 8 << "' y='" << top + 12 + 14 * static_cast<double>(l)
      << "' font-size='11' fill='" << colour << "'>" << report::html_escape(lines[l].name)
      << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

struct Verdict {
  std::string what;
  bool met = false;
  bool gated = true;
  std::string detail;
};

}  // namespace

int run_soak(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  register_builtin_scenes();
  std::uint32_t seconds = 1800, switch_every = 60, objects = 2000, workers = 0;
  std::uint64_t seed = 1;
  std::string out_dir = "out/soak", input_path, modes_text = "single,static,dynamic,tbb";
  bool gate_timing = false, pin = true;
  CLI::App app{
      "spindle_soak: the `soak` scene run for a wall-clock time, job modes switching, input "
      "replayed; samples memory, open files, voices and stage times every second and checks "
      "them against the soak targets (soak.h)"};
  app.add_option("--seconds", seconds, "wall-clock seconds to run")
      ->check(CLI::Range(10u, 86'400u));
  app.add_option("--switch-every", switch_every, "seconds between job mode switches")
      ->check(CLI::Range(1u, 86'400u));
  app.add_option("--objects", objects, "objects of the soak scene (split among its parts)")
      ->check(CLI::Range(100u, 100'000u));
  app.add_option("--modes", modes_text, "the modes switched through, in order");
  app.add_option("--workers", workers, "participants in the threaded modes (0: one per core)")
      ->check(CLI::Range(0u, 64u));
  app.add_option("--seed", seed, "scene seed");
  app.add_option("--input", input_path,
                 "an input recording with a `burst` action to replay (default: the built-in "
                 "pilot, recorded at start and written to the --out folder)");
  app.add_option("--out", out_dir, "output folder (created; soak.json, soak.csv, soak.html)");
  app.add_flag("--gate-timing", gate_timing, "fail (exit 1) when a stage's p99 is not flat");
  app.add_flag("!--no-pin", pin, "do not pin worker threads to cores");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    err << "spindle_soak: " << e.what() << "\n";
    return 2;
  }
  std::vector<jobs::Mode> modes;
  {
    std::stringstream list(modes_text);
    for (std::string name; std::getline(list, name, ',');) {
      jobs::Mode m;
      if (!jobs::parse_mode(name, m)) {
        err << "spindle_soak: --modes: unknown mode '" << name << "'\n";
        return 2;
      }
      if (jobs::mode_available(m)) modes.push_back(m);
    }
  }
  if (modes.empty()) {
    err << "spindle_soak: --modes: none of them is available in this build\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec || !std::filesystem::is_directory(out_dir)) {
    err << "spindle_soak: --out: cannot create folder '" << out_dir << "'\n";
    return 2;
  }
  const std::filesystem::path dir(out_dir);
  if (core::Status s = core::install_crash_handler({.path = (dir / "crash.txt").string()}); !s)
    err << "spindle_soak: no crash report: " << s.message() << "\n";

  // The input: a recording (the built-in pilot's, written beside the report).
  std::string input_text;
  if (input_path.empty()) {
    input_text = record_pilot();
    input_path = (dir / "soak.input").string();
    std::ofstream(input_path) << input_text;
  } else {
    core::Result<std::string> text =
        core::read_file_capped(input_path, core::InputReplay::kMaxBytes, "an input recording");
    if (!text) {
      err << "spindle_soak: --input: " << text.message() << "\n";
      return 2;
    }
    input_text = std::move(text.value());
  }

  const SceneDef& scene = *find_scene("soak");
  SceneParams params{.objects = objects, .seed = seed, .width = 320, .height = 180};
  params.params = scene.params;
  if (workers == 0) workers = std::max(1u, std::thread::hardware_concurrency());
  core::Engine engine(core::EngineConfig{.mode = modes.front(),
                                         .workers = workers,
                                         .pin_workers = pin,
                                         .entity_capacity = scene.capacity(objects)});
  ErrorLog errors;
  const int sink = core::logger().add_sink(&ErrorLog::sink, &errors);
  std::uint64_t exceptions = 0;
  std::string first_exception;
  scene.setup(engine, params);
  auto replay_from_start = [&]() -> std::optional<core::InputReplay> {
    auto r = core::InputReplay::parse(input_text, input_path, engine);
    if (!r) {
      err << "spindle_soak: " << r.message() << "\n";
      return std::nullopt;
    }
    return std::move(r.value());
  };
  std::optional<core::InputReplay> replay = replay_from_start();
  if (!replay) {
    core::logger().remove_sink(sink);
    return 2;
  }
  core::set_input_source(engine, &*replay);
  std::uint64_t replays = 1;
  audio::AudioPlugin* audio = engine.world().resource<SceneAudio>()->plugin;

  auto step = [&] {
    try {
      engine.step();
    } catch (const std::exception& e) {
      if (exceptions++ == 0) first_exception = e.what();
    }
    if (replay && replay->finished()) {
      core::set_input_source(engine, nullptr);
      replay.reset();
      replay = replay_from_start();  // it parsed before, so only a bug fails it: counted below
      if (!replay) {
        ++exceptions;
        if (first_exception.empty()) first_exception = "the recording failed to parse again";
        return;
      }
      core::set_input_source(engine, &*replay);
      ++replays;
    }
  };
  // Every mode runs before the clock starts, so its one-time allocations (the oneTBB arena,
  // the planner's tables) are in the baseline, not counted as growth.
  for (jobs::Mode m : modes) {
    engine.set_mode(m);
    for (int i = 0; i < 60; ++i) step();
  }
  engine.set_mode(modes.front());

  const std::uint32_t stages = engine.stage_count();
  const double warm = std::min(60.0, seconds / 6.0);
  const double window = std::min(300.0, seconds / 4.0);
  Histogram frame_hist;
  // Per stage each second; per (mode, stage) in the first and the last window: p99s are compared
  // mode by mode, since a window holds whichever modes ran in it.
  std::vector<Histogram> stage_second(stages), stage_first(stages * modes.size()),
      stage_last(stages * modes.size());
  // Every second's sample is made (and its memory written) before the clock starts: the soak's
  // own bookkeeping must not show as growth of the resident set it measures.
  std::vector<Second> samples(seconds + 2);
  for (Second& s : samples) s.stage_p99_ms.assign(stages, 0.0);
  Calibration calibration;
  std::size_t sampled = 0;
  std::uint32_t frames = 0;
  std::uint64_t total_frames = 0;
  std::size_t mode_index = 0;
  out << "spindle_soak: " << seconds << " s of the soak scene (" << objects << " objects, "
      << engine.world().entity_count() << " entities), " << workers
      << " workers, modes switching every " << switch_every << " s\n";
  const Clock::time_point start = Clock::now();
  const Clock::time_point end = start + std::chrono::seconds(seconds);
  Clock::time_point next_sample = start + std::chrono::seconds(1);
  Clock::time_point next_switch = start + std::chrono::seconds(switch_every);
  for (Clock::time_point now = start; now < end;) {
    step();
    ++frames;
    ++total_frames;
    const core::FrameStats& f = engine.last_frame();
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    const bool in_first = t >= warm && t < warm + window;
    const bool in_last = t >= seconds - window;
    frame_hist.add(f.frame_ns);
    for (std::uint32_t i = 0; i < stages && i < f.stages.size(); ++i) {
      if (f.stages[i].runs == 0) continue;
      stage_second[i].add(f.stages[i].wall_ns);
      if (in_first) stage_first[mode_index * stages + i].add(f.stages[i].wall_ns);
      if (in_last) stage_last[mode_index * stages + i].add(f.stages[i].wall_ns);
    }
    now = Clock::now();
    if (now >= next_sample && sampled < samples.size()) {
      Second& s = samples[sampled++];
      s.t = std::chrono::duration<double>(now - start).count();
      s.mode = jobs::to_string(engine.mode());
      s.rss_kib = rss_kib();
      s.open_files = open_files();
      s.voices = audio->mixer().stats().voices;
      s.entities = engine.world().entity_count();
      s.frames = frames;
      s.frame_p50_ms = frame_hist.quantile_ms(0.5);
      s.frame_p99_ms = frame_hist.quantile_ms(0.99);
      s.errors = errors.count() + exceptions;
      s.calibration_ms = calibration.run_ms();
      for (std::uint32_t i = 0; i < stages; ++i) {
        s.stage_p99_ms[i] = stage_second[i].quantile_ms(0.99);
        stage_second[i].clear();
      }
      frame_hist.clear();
      frames = 0;
      next_sample += std::chrono::seconds(1);
      const Second& last = s;
      if (sampled % 60 == 0 || sampled == 1)
        out << "  " << fixed(last.t, 0) << " s: " << last.mode << ", " << last.frames
            << " frames/s, p99 " << fixed(last.frame_p99_ms, 2) << " ms, resident "
            << last.rss_kib / 1024 << " MiB, " << last.open_files << " files, " << last.voices
            << " voices, " << last.entities << " entities, errors " << last.errors << std::endl;
    }
    if (now >= next_switch) {
      mode_index = (mode_index + 1) % modes.size();
      engine.set_mode(modes[mode_index]);
      next_switch += std::chrono::seconds(switch_every);
    }
  }
  core::set_input_source(engine, nullptr);
  core::logger().remove_sink(sink);
  samples.resize(sampled);

  // The verdicts.
  std::vector<Verdict> verdicts;
  const Second* base = nullptr;
  for (const Second& s : samples)
    if (s.t >= warm) {
      base = &s;
      break;
    }
  std::uint64_t peak_after = 0;
  for (const Second& s : samples)
    if (s.t >= warm) peak_after = std::max(peak_after, s.rss_kib);
  if (base != nullptr) {
    const double growth = 100.0 *
                          (static_cast<double>(peak_after) - static_cast<double>(base->rss_kib)) /
                          static_cast<double>(base->rss_kib);
    verdicts.push_back({"resident memory growth after warm-up <= 1%", growth <= 1.0, true,
                        fixed(growth, 2) + "% (" + std::to_string(base->rss_kib) + " KiB at " +
                            fixed(base->t, 0) + " s, peak after it " + std::to_string(peak_after) +
                            " KiB)"});
    verdicts.push_back(
        {"open files at the end = after warm-up", samples.back().open_files <= base->open_files,
         true,
         std::to_string(base->open_files) + " -> " + std::to_string(samples.back().open_files)});
  }
  const std::uint64_t error_count = errors.count() + exceptions;
  verdicts.push_back({"errors (log errors and exceptions) = 0", error_count == 0, true,
                      std::to_string(errors.count()) + " log errors" +
                          (errors.first.empty() ? "" : " (first: " + errors.first + ")") + ", " +
                          std::to_string(exceptions) + " exceptions" +
                          (first_exception.empty() ? "" : " (first: " + first_exception + ")") +
                          ", " + std::to_string(errors.warnings) + " warnings"});
  // Stage p99s, mode by mode: a (stage, mode) is judged when both windows ran that mode for at
  // least 100 frames and its p99 is at least 0.1 ms (below that one bucket of the histogram is a
  // large share of the value). A stage's row shows its largest change over the modes judged.
  nlohmann::json stage_json = nlohmann::json::array();
  std::string worst_stage;
  double worst = 0.0;
  bool flat = true;
  for (std::uint32_t i = 0; i < stages; ++i) {
    nlohmann::json row = {{"stage", engine.stage_name(i)}, {"judged", false}};
    double stage_worst = 0.0;
    for (std::size_t m = 0; m < modes.size(); ++m) {
      const Histogram& first = stage_first[m * stages + i];
      const Histogram& last = stage_last[m * stages + i];
      const double a = first.quantile_ms(0.99), b = last.quantile_ms(0.99);
      const bool judged = first.count() >= 100 && last.count() >= 100 && a >= 0.1;
      const double change = a > 0 ? 100.0 * (b - a) / a : 0.0;
      row["modes"][jobs::to_string(modes[m])] = {{"p99_first_ms", a},
                                                 {"p99_last_ms", b},
                                                 {"frames_first", first.count()},
                                                 {"frames_last", last.count()},
                                                 {"change_percent", change},
                                                 {"judged", judged}};
      if (!judged) continue;
      row["judged"] = true;
      if (std::abs(change) > 10.0) flat = false;
      if (std::abs(change) >= std::abs(stage_worst)) {
        stage_worst = change;
        row["worst_mode"] = jobs::to_string(modes[m]);
        row["p99_first_ms"] = a;
        row["p99_last_ms"] = b;
        row["change_percent"] = change;
      }
      if (std::abs(change) >= std::abs(worst)) {
        worst = change;
        worst_stage = std::string(engine.stage_name(i)) + " in " + jobs::to_string(modes[m]);
      }
    }
    stage_json.push_back(std::move(row));
  }
  // The machine's own speed over the same windows: when the fixed workload slowed as much as the
  // stages, the machine slowed, not the engine.
  std::vector<double> cal_first, cal_last;
  for (const Second& s : samples) {
    if (s.t >= warm && s.t < warm + window) cal_first.push_back(s.calibration_ms);
    if (s.t >= seconds - window) cal_last.push_back(s.calibration_ms);
  }
  const double machine_first = median(cal_first), machine_last = median(cal_last);
  const double machine_change =
      machine_first > 0 ? 100.0 * (machine_last - machine_first) / machine_first : 0.0;
  std::vector<double> stage_changes;
  for (const auto& row : stage_json)
    if (row["judged"].get<bool>()) stage_changes.push_back(row["change_percent"].get<double>());
  const std::string machine_note =
      "; the fixed workload (the machine's own speed) took " + fixed(machine_first, 2) +
      " ms in the first window and " + fixed(machine_last, 2) + " ms in the last (" +
      (machine_change >= 0 ? "+" : "") + fixed(machine_change, 1) +
      "%), the judged stages' median change " + fixed(median(stage_changes), 1) + "%";
  verdicts.push_back(
      {"each stage's p99 flat within 10%, first vs last window", flat, gate_timing,
       "windows of " + fixed(window, 0) + " s from " + fixed(warm, 0) + " s and " +
           fixed(seconds - window, 0) + " s; " +
           (worst_stage.empty()
                ? std::string("nothing judged (no stage of 0.1 ms or more ran a mode for 100 "
                              "frames in both windows)")
                : "largest change " + fixed(worst, 1) + "% (" + worst_stage + ")") +
           machine_note});

  // The report.
  bool written = true;
  {
    nlohmann::json j;
    j["seconds"] = seconds;
    j["switch_every"] = switch_every;
    j["objects"] = objects;
    j["workers"] = workers;
    j["frames"] = total_frames;
    j["input"] = input_path;
    j["replays"] = replays;
    j["warm_up_s"] = warm;
    j["window_s"] = window;
    std::vector<std::string> names;
    for (std::uint32_t i = 0; i < stages; ++i) names.emplace_back(engine.stage_name(i));
    j["stages"] = names;
    for (const Second& s : samples)
      j["samples"].push_back({{"t", s.t},
                              {"mode", s.mode},
                              {"rss_kib", s.rss_kib},
                              {"open_files", s.open_files},
                              {"voices", s.voices},
                              {"entities", s.entities},
                              {"frames", s.frames},
                              {"frame_p50_ms", s.frame_p50_ms},
                              {"calibration_ms", s.calibration_ms},
                              {"frame_p99_ms", s.frame_p99_ms},
                              {"errors", s.errors},
                              {"stage_p99_ms", s.stage_p99_ms}});
    j["stage_p99"] = stage_json;
    j["machine"] = {{"calibration_first_ms", machine_first},
                    {"calibration_last_ms", machine_last},
                    {"change_percent", machine_change}};
    for (const Verdict& v : verdicts)
      j["verdicts"].push_back(
          {{"target", v.what}, {"met", v.met}, {"gated", v.gated}, {"detail", v.detail}});
    std::ofstream f(dir / "soak.json");
    f << j.dump(1) << "\n";
    written = written && static_cast<bool>(f);
  }
  {
    std::ofstream f(dir / "soak.csv");
    f << "t,mode,rss_kib,open_files,voices,entities,frames,frame_p50_ms,frame_p99_ms,errors,"
         "calibration_ms";
    for (std::uint32_t i = 0; i < stages; ++i) f << ",p99_ms:" << engine.stage_name(i);
    f << "\n";
    for (const Second& s : samples) {
      f << fixed(s.t, 2) << ',' << s.mode << ',' << s.rss_kib << ',' << s.open_files << ','
        << s.voices << ',' << s.entities << ',' << s.frames << ',' << fixed(s.frame_p50_ms, 3)
        << ',' << fixed(s.frame_p99_ms, 3) << ',' << s.errors << ',' << fixed(s.calibration_ms, 3);
      for (double v : s.stage_p99_ms) f << ',' << fixed(v, 3);
      f << "\n";
    }
    written = written && static_cast<bool>(f);
  }
  {
    auto column = [&](auto get) {
      std::vector<double> v;
      for (const Second& s : samples) v.push_back(get(s));
      return v;
    };
    // The slowest stages by mean p99 over the run.
    std::vector<std::pair<double, std::uint32_t>> by_cost;
    for (std::uint32_t i = 0; i < stages; ++i) {
      double sum = 0;
      for (const Second& s : samples) sum += s.stage_p99_ms[i];
      by_cost.emplace_back(sum, i);
    }
    std::sort(by_cost.rbegin(), by_cost.rend());
    std::vector<Series> stage_lines;
    for (std::size_t k = 0; k < by_cost.size() && k < 8; ++k) {
      const std::uint32_t i = by_cost[k].second;
      stage_lines.push_back(
          {engine.stage_name(i), column([i](const Second& s) { return s.stage_p99_ms[i]; })});
    }
    std::ofstream f(dir / "soak.html");
    f << "<!doctype html><html><head><meta charset='utf-8'><title>Spindle soak</title><style>"
         "body{font-family:sans-serif;margin:24px;max-width:1000px}table{border-collapse:"
         "collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}.met{color:"
         "#2a7}.missed{color:#c22;font-weight:bold}</style></head><body>\n<h1>Soak: "
      << seconds << " s of the soak scene</h1>\n<p>" << objects << " objects, " << workers
      << " workers, job mode switched every " << switch_every << " s (bands), input replayed "
      << replays << " times from <code>" << report::html_escape(input_path) << "</code>, "
      << total_frames << " frames. Warm-up: the first " << fixed(warm, 0)
      << " s. Command: <code>spindle_soak";
    for (int i = 1; i < argc; ++i) f << ' ' << report::html_escape(argv[i]);
    f << "</code></p>\n<table><tr><th>target</th><th>result</th><th>detail</th></tr>\n";
    for (const Verdict& v : verdicts)
      f << "<tr><td>" << report::html_escape(v.what) << "</td><td class='"
        << (v.met ? "met" : "missed") << "'>" << (v.met ? "met" : "missed")
        << (v.gated ? "" : " (reported, not gated)") << "</td><td>" << report::html_escape(v.detail)
        << "</td></tr>\n";
    f << "</table>\n";
    f << svg_chart("Resident memory", "MiB", samples,
                   {{"resident", column([](const Second& s) { return s.rss_kib / 1024.0; })}},
                   false);
    f << svg_chart("Open files", "files", samples,
                   {{"open files", column([](const Second& s) { return 1.0 * s.open_files; })}});
    f << svg_chart("Voices and entities", "count", samples,
                   {{"voices", column([](const Second& s) { return 1.0 * s.voices; })},
                    {"entities / 10", column([](const Second& s) { return s.entities / 10.0; })}});
    f << svg_chart("Frame time, per second", "ms", samples,
                   {{"p50", column([](const Second& s) { return s.frame_p50_ms; })},
                    {"p99", column([](const Second& s) { return s.frame_p99_ms; })}});
    f << svg_chart("The machine's own speed: a fixed workload timed every second", "ms", samples,
                   {{"fixed workload", column([](const Second& s) { return s.calibration_ms; })}});
    f << svg_chart("Stage time p99, per second (the 8 slowest stages)", "ms", samples, stage_lines);
    f << "<h2>Stage p99, first vs last window, mode by mode</h2><p>Each stage's largest change "
         "over the modes that ran at least 100 frames in both windows; stages under 0.1 ms are "
         "not judged.</p><table><tr><th>stage</th><th>mode</th><th>first (ms)</th>"
         "<th>last (ms)</th><th>change</th></tr>\n";
    for (const auto& s : stage_json) {
      f << "<tr><td>" << report::html_escape(s["stage"].get<std::string>()) << "</td>";
      if (s["judged"].get<bool>())
        f << "<td>" << s["worst_mode"].get<std::string>() << "</td><td>"
          << fixed(s["p99_first_ms"].get<double>(), 3) << "</td><td>"
          << fixed(s["p99_last_ms"].get<double>(), 3) << "</td><td>"
          << fixed(s["change_percent"].get<double>(), 1) << "%</td>";
      else
        f << "<td colspan='4'>not judged (under 0.1 ms, or too few frames of a mode in a "
             "window)</td>";
      f << "</tr>\n";
    }
    f << "</table></body></html>\n";
    written = written && static_cast<bool>(f);
  }

  bool ok = written;
  out << "spindle_soak: " << total_frames << " frames, input replayed " << replays << " times\n";
  for (const Verdict& v : verdicts) {
    out << "  " << (v.met ? "met    " : "MISSED ") << v.what << ": " << v.detail
        << (v.gated ? "" : " (reported, not gated)") << "\n";
    if (v.gated && !v.met) ok = false;
  }
  out << "report: " << (dir / "soak.html").string() << "\n";
  if (!written) err << "spindle_soak: could not write the report to " << out_dir << "\n";
  core::uninstall_crash_handler();
  return ok ? 0 : 1;
}

}  // namespace spindle::loadtest
