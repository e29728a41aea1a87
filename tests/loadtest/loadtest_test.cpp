// spindle_loadtest, run in-process: bad command lines exit 2 with a message naming the problem;
// a tiny run writes a report folder whose files parse and hold what they promise.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <spindle/base/assert.h>
#include <spindle/jobs/job_system.h>
#include <spindle/render/image.h>

#include "loadtest.h"
#include "scene.h"

#include "modes.h"

namespace spindle::loadtest {
namespace {

struct Result {
  int code;
  std::string out, err;
};

Result run(std::vector<std::string> args) {
  args.insert(args.begin(), "spindle_loadtest");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = run_loadtest(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

std::filesystem::path temp_dir(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) /
                   ("spindle_loadtest_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

// "single,static,dynamic", less the modes this build lacks.
std::string own_mode_list() {
  std::ostringstream list;
  const char* comma = "";
  for (jobs::Mode m : test::own_modes()) {
    if (!jobs::mode_available(m)) continue;
    list << comma << jobs::to_string(m);
    comma = ",";
  }
  return list.str();
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(LoadTestCli, BadArgumentsExitTwoWithAMessage) {
  const std::string out = temp_dir("cli").string();
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{"--scene", "nosuch", "--out", out}, "nosuch"},
      {{"--modes", "single,turbo", "--out", out}, "turbo"},
      {{"--objects", "10,0", "--out", out}, "--objects"},
      {{"--objects", "ten", "--out", out}, "--objects"},
      {{"--frames", "0", "--out", out}, "--frames"},
      {{"--workers", "-3", "--out", out}, "--workers"},
      {{"--bogus"}, "bogus"},
      {{"--repeats"}, "--repeats: expected a value, got none"},
      {{"--frames", "3", "--frames", "4", "--out", out}, "--frames: given more than once"},
      {{"--scene", "crowd", "--joints", "3", "--out", out},
       "--joints: expected an integer from 16 to 1024, got '3'"},
      {{"--scene", "crowd", "--vertices", "many", "--out", out}, "--vertices"},
      {{"--scene", "boids", "--joints", "60", "--out", out}, "not a parameter of the scenes run"},
      {{"--scene", "crowd", "--objects", "10,20000", "--out", out},
       "--objects: scene crowd runs 10 to 5000 objects, got 20000"},
      {{"--scene", "crowd", "--objects", "5000", "--vertices", "100000", "--out", out},
       "12 GB of skinned vertices"},
  };
  for (const Case& c : cases) {
    const Result r = run(c.args);
    EXPECT_EQ(r.code, 2) << c.args[0] << " " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos)
        << "message should name '" << c.expect << "': " << r.err;
  }
}

// Every numeric flag, given a negative, overflowing, malformed or missing value, or another flag
// where its value should be, is refused with the flag's name and what it expects (CLI11 alone
// wrapped -1 to 2^64-1, accepted 2^64 as 0 and said "Value abc not in range").
TEST(LoadTestCli, NumericFlagsSayWhatTheyExpect) {
  const std::string out = temp_dir("numbers").string();
  struct Flag {
    std::string name;
    std::string expected;  // "an integer from MIN to MAX"
  };
  const std::vector<Flag> flags = {
      {"--objects", "an integer from 1 to "},  // the top is the largest scene maximum
      {"--workers", "an integer from 0 to 64"},
      {"--frames", "an integer from 1 to 1000000"},
      {"--warmup", "an integer from 0 to 1000000"},
      {"--repeats", "an integer from 1 to 1000"},
      {"--seed", "an integer from 0 to 18446744073709551615"},
      {"--trace-frames", "an integer from 0 to 1000"},
      {"--planned-frames", "an integer from 0 to 100"},
      {"--joints", "an integer from 16 to 1024"},
      {"--vertices", "an integer from 1 to 100000"},
      {"--kinds", "an integer from 1 to 64"},
      {"--quantized", "an integer from 0 to 1"},
  };
  const std::vector<std::string> bad = {
      "-1", "abc", "12x", "1.5", "0x10", "1e3", "18446744073709551616", "99999999999999999999999",
      ""};
  for (const Flag& f : flags) {
    for (const std::string& value : bad) {
      const Result r = run({"--scene", "crowd", f.name, value, "--out", out});
      EXPECT_EQ(r.code, 2) << f.name << " " << value << ": " << r.err;
      const std::string want = f.name + ": expected " + f.expected;
      EXPECT_NE(r.err.find(want), std::string::npos) << "want '" << want << "': " << r.err;
      EXPECT_NE(r.err.find("got '" + value + "'"), std::string::npos) << r.err;
    }
    const Result r = run({"--scene", "crowd", f.name, "--out", out});
    EXPECT_EQ(r.code, 2) << f.name;
    EXPECT_NE(r.err.find(f.name + ": expected a value, got the flag '--out'"), std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(out)) << "refused before anything was written";
}

// --cpu-weight takes a finite decimal number from 0 to 4; anything else is refused with the flag's
// name and what it expects, before anything runs.
TEST(LoadTestCli, CpuWeightTakesAFiniteNumberInItsRange) {
  const std::string out = temp_dir("weight").string();
  for (const std::string value : {"-1", "4.5", "abc", "nan", "inf", "1e9", "0x1", "1.5x", ""}) {
    const Result r = run({"--scene", "boids", "--cpu-weight", value, "--out", out});
    EXPECT_EQ(r.code, 2) << value << ": " << r.err;
    EXPECT_NE(r.err.find("--cpu-weight: expected a number from 0 to 4, got '" + value + "'"),
              std::string::npos)
        << r.err;
  }
  const Result flag = run({"--scene", "boids", "--cpu-weight", "--out", out});
  EXPECT_EQ(flag.code, 2);
  EXPECT_NE(flag.err.find("--cpu-weight: expected a value, got the flag '--out'"),
            std::string::npos)
      << flag.err;
  EXPECT_FALSE(std::filesystem::exists(out)) << "refused before anything was written";
  for (const std::string value : {"0", "0.5", "1", "4"}) {
    const Result r = run({"--scene", "boids", "--cpu-weight", value, "--dry-run", "--out", out});
    EXPECT_EQ(r.code, 0) << value << ": " << r.err;
  }
}

// --pin-when-busy keeps dynamic mode's pinned candidates beside a busy machine; with --no-pin
// there is nothing to keep, so the two together are refused. --unpin-when-busy-cores N stops
// pinning only on machines of at most N cores (0: any), and is refused beside either. What dynamic
// mode did on this machine reaches run.json and the report's settings.
TEST(LoadTestCli, PinWhenBusyIsASettingAndExcludesNoPin) {
  const auto dir = temp_dir("pin_when_busy");
  for (const std::vector<std::string>& clash :
       {std::vector<std::string>{"--pin-when-busy", "--no-pin"},
        std::vector<std::string>{"--unpin-when-busy-cores", "2", "--no-pin"},
        std::vector<std::string>{"--unpin-when-busy-cores", "2", "--pin-when-busy"}}) {
    std::vector<std::string> args = {"--scene", "boids", "--out", dir.string()};
    args.insert(args.end(), clash.begin(), clash.end());
    const Result both = run(args);
    EXPECT_EQ(both.code, 2) << both.err;
    EXPECT_NE(both.err.find(clash[0]), std::string::npos) << both.err;
    EXPECT_NE(both.err.find(clash.back()), std::string::npos) << both.err;
    EXPECT_FALSE(std::filesystem::exists(dir)) << "refused before anything was written";
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  struct Case {
    std::vector<std::string> flags;
    bool pins;                // settings.pin_when_busy on this machine
    std::uint32_t max_cores;  // settings.unpin_when_busy_cores
  };
  std::vector<Case> cases = {{{}, cores > 4, 4},
                             {{"--pin-when-busy"}, true, 4},
                             {{"--unpin-when-busy-cores", "0"}, false, 0},
                             {{"--unpin-when-busy-cores", std::to_string(cores)}, false, cores}};
  if (cores > 1)
    cases.push_back({{"--unpin-when-busy-cores", std::to_string(cores - 1)}, true, cores - 1});
  for (const auto& [flags, pins, max_cores] : cases) {
    SCOPED_TRACE(testing::Message() << flags.size() << " flags, " << max_cores << " cores");
    std::vector<std::string> args = {"--scene",        "boids",  "--objects", "10",
                                     "--modes",        "single", "--frames",  "1",
                                     "--warmup",       "0",      "--repeats", "1",
                                     "--trace-frames", "0",      "--out",     dir.string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const Result r = run(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
    EXPECT_EQ(run_json["settings"]["pin_when_busy"].get<bool>(), pins);
    EXPECT_EQ(run_json["settings"]["unpin_when_busy_cores"].get<std::uint32_t>(), max_cores);
    const std::string scope =
        max_cores == 0 ? "any size" : "at most " + std::to_string(max_cores) + " cores";
    EXPECT_NE(slurp(dir / "report.md")
                  .find(std::string("dynamic mode pins while every core is busy: ") +
                        (pins ? "yes" : "no") + " (it stops on machines of " + scope + ")"),
              std::string::npos);
  }
}

// The values a numeric flag takes are taken whole: the top of the seed's range is not wrapped.
TEST(LoadTestCli, LargestSeedIsKept) {
  const auto dir = temp_dir("seed");
  const Result r = run({"--scene", "boids", "--objects", "10", "--modes", "single", "--frames", "1",
                        "--warmup", "0", "--repeats", "1", "--trace-frames", "0", "--seed",
                        "18446744073709551615", "--out", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
  EXPECT_EQ(run_json["settings"]["seed"].get<std::uint64_t>(), 18446744073709551615ull);
}

// A text flag's value is not another flag either (--out --frames would write into "./--frames").
TEST(LoadTestCli, TextFlagsRefuseAFlagAsTheirValue) {
  for (const char* flag : {"--scene", "--modes", "--out"}) {
    const Result r = run({flag, "--frames", "3"});
    EXPECT_EQ(r.code, 2) << flag;
    EXPECT_NE(r.err.find(std::string(flag) + ": expected a value, got the flag '--frames'"),
              std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists("--frames"));
}

// The object counts each scene accepts: a single frame at the top takes about a second in
// `single` mode on the 2-core reference machine (Bullet's step grows faster than N: 47 ms at
// 10,000 bodies, 410 ms at 40,000), and memory stays far below it (boids: 450 MB at 1,000,000).
struct SceneRange {
  std::string scene;
  std::uint32_t min, max;
};
const std::vector<SceneRange> kSceneRanges = {
    {"boids", 1, 1'000'000}, {"swarm", 1, 1'000'000}, {"imbalanced", 1, 500'000},
    {"spawn", 1, 50'000},    {"boxes", 1, 50'000},    {"boxes_r2", 1, 50'000},
    {"boxes_r4", 1, 50'000}, {"crowd", 10, 5'000},    {"orchestra", 1, 20'000},
};

// One past either end is refused with the scene's range, before the output folder is made (so
// before any scene allocates): `--scene spawn --objects 2000000` used to build two million
// Bullet bodies (6 GB) and step them for minutes.
TEST(LoadTestCli, SceneObjectRangesAreEnforcedBeforeAnythingRuns) {
  const std::string out = temp_dir("ranges").string();
  for (const SceneRange& range : kSceneRanges) {
    std::vector<std::uint32_t> outside = {range.max + 1};
    if (range.min > 1) outside.push_back(range.min - 1);
    for (std::uint32_t objects : outside) {
      // One cheap frame, should the count get through.
      const Result r = run({"--scene", range.scene, "--objects", "10," + std::to_string(objects),
                            "--modes", "single", "--frames", "1", "--warmup", "0", "--repeats", "1",
                            "--trace-frames", "0", "--out", out});
      EXPECT_EQ(r.code, 2) << range.scene << " " << objects;
      const std::string want = "--objects: scene " + range.scene + " runs " +
                               std::to_string(range.min) + " to " + std::to_string(range.max) +
                               " objects, got " + std::to_string(objects);
      EXPECT_NE(r.err.find(want), std::string::npos) << "want '" << want << "': " << r.err;
      EXPECT_FALSE(std::filesystem::exists(out)) << range.scene;
    }
  }
}

// Every registered scene, including any added later, declares a range the harness enforces.
TEST(LoadTestCli, EveryRegisteredSceneDeclaresItsObjectRange) {
  register_builtin_scenes();
  const std::string out = temp_dir("declared").string();
  ASSERT_GE(scene_names().size(), kSceneRanges.size());
  for (const std::string& name : scene_names()) {
    const SceneDef& scene = *find_scene(name);
    EXPECT_GE(scene.objects.min, 1u) << name;
    EXPECT_LE(scene.objects.min, scene.objects.max) << name;
    const Result r =
        run({"--scene", name, "--objects", std::to_string(scene.objects.max + 1), "--out", out});
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_NE(r.err.find("--objects: scene " + name + " runs "), std::string::npos) << r.err;
  }
}

struct AssertFired {};

// A scene that does not say what it accepts, or whose default counts fall outside it, is a
// programming error caught when it registers, not a run that fails halfway.
TEST(LoadTestCli, SceneWithoutAnObjectRangeIsRefusedAtRegistration) {
#if !SPINDLE_ASSERTS
  GTEST_SKIP() << "asserts compiled out";
#endif
  const core::AssertHandler previous = core::set_assert_handler(
      [](const char*, int, const char*, const char*) { throw AssertFired{}; });
  const auto setup = [](core::Engine&, const SceneParams&) {};
  EXPECT_THROW(
      register_scene({.name = "no_range", .description = "", .objects = {}, .setup = setup}),
      AssertFired);
  // The default counts run to 50,000.
  EXPECT_THROW(
      register_scene({.name = "small", .description = "", .objects = {1, 1000}, .setup = setup}),
      AssertFired);
  core::set_assert_handler(previous);
  EXPECT_EQ(find_scene("no_range"), nullptr);
  EXPECT_EQ(find_scene("small"), nullptr);
}

TEST(LoadTestCli, HelpListsEveryScenesObjectRange) {
  const Result r = run({"--help"});
  ASSERT_EQ(r.code, 0);
  for (const SceneRange& range : kSceneRanges) {
    const std::size_t line = r.out.find("\n  " + range.scene + " ");
    ASSERT_NE(line, std::string::npos) << range.scene << " not listed:\n" << r.out;
    const std::string text = r.out.substr(line + 1, r.out.find('\n', line + 1) - line - 1);
    const std::string want = std::to_string(range.min) + " to " + std::to_string(range.max);
    EXPECT_NE(text.find(want), std::string::npos) << text;
  }
}

// Every measured frame is kept until the report is written (about 8 KB each at that point), so
// the frames of a whole run are bounded like the object counts: --frames 1000000 with the
// default repeats, modes and counts asked for 84 million of them, far past 24 GiB.
TEST(LoadTestCli, RunsThatWouldKeepTooManyFramesAreRefused) {
  const std::string out = temp_dir("frames").string();
  const Result r = run({"--scene", "boids", "--objects", "10", "--modes", "single", "--frames",
                        "1000000", "--repeats", "2", "--warmup", "0", "--out", out});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("2000000 measured frames"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at most 1000000"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(LoadTestCli, OutputThatIsAFileIsRefused) {
  const auto dir = temp_dir("file");
  std::filesystem::create_directories(dir);
  const auto file = dir / "taken";
  std::ofstream(file) << "x";
  const Result r = run({"--objects", "10", "--frames", "2", "--warmup", "0", "--repeats", "1",
                        "--modes", "single", "--out", file.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(file.string()), std::string::npos) << r.err;
  EXPECT_EQ(slurp(file), "x");  // nothing overwritten
}

// The report replaces its files in --out; one there that is not a regular file is refused
// before the run: a FIFO named trace.json blocked the harness forever once the run was done.
TEST(LoadTestCli, ReportFilesThatAreNotRegularFilesAreRefused) {
  for (const char* name : {"trace.json", "run.json"}) {
    const auto dir = temp_dir(std::string("special_") + name);
    std::filesystem::create_directories(dir);
    const auto special = dir / name;
    if (std::string(name) == "trace.json") {
      ASSERT_EQ(::mkfifo(special.c_str(), 0600), 0);
    } else {
      std::filesystem::create_directories(special);
    }
    const Result r =
        run({"--scene", "boids", "--objects", "10", "--modes", "single", "--frames", "1",
             "--warmup", "0", "--repeats", "1", "--trace-frames", "1", "--out", dir.string()});
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_NE(r.err.find("--out: " + special.string() + " is not a regular file"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "report.md")) << "refused before the run";
  }
}

TEST(LoadTestCli, HelpListsTheFlags) {
  const Result r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--scene", "--objects", "--modes", "--workers", "--frames", "--warmup",
                           "--repeats", "--seed", "--out", "--joints", "--vertices", "--kinds"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

TEST(LoadTestRun, TinyRunWritesACompleteReport) {
  const auto dir = temp_dir("tiny");
  std::vector<std::string> modes = {"single"};
  for (const char* m : {"static", "dynamic"}) {
    jobs::Mode mode;
    if (jobs::parse_mode(m, mode) && jobs::mode_available(mode)) modes.push_back(m);
  }
  std::string mode_list;
  for (const auto& m : modes) mode_list += (mode_list.empty() ? "" : ",") + m;
  const Result r = run({"--scene",
                        "boids,imbalanced",
                        "--objects",
                        "10,300",
                        "--modes",
                        mode_list,
                        "--workers",
                        "2",
                        "--frames",
                        "6",
                        "--warmup",
                        "3",
                        "--repeats",
                        "2",
                        "--trace-frames",
                        "3",
                        "--no-pin",
                        "--cpu-weight",
                        "0.5",
                        "--planned-frames",
                        "1",
                        "--out",
                        dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("every mode ended with the same world hash"), std::string::npos);
  EXPECT_NE(r.out.find("report.html"), std::string::npos);
  const std::size_t groups = 2 * 2 * modes.size();

  // Raw data: every series with every measured frame and its stage timings.
  const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
  ASSERT_EQ(run_json["series"].size(), groups * 2);
  EXPECT_EQ(run_json["settings"]["cpu_weight"].get<double>(), 0.5);
  EXPECT_EQ(run_json["settings"]["planned_frames"].get<std::uint32_t>(), 1u);
  bool saw_decisions = false;
  for (const auto& s : run_json["series"]) {
    EXPECT_EQ(s["frames"].size(), 6u);
    const auto& names = s["stage_names"];
    if (s["scene"] == "boids") {
      EXPECT_NE(std::find(names.begin(), names.end(), "steer"), names.end());
      EXPECT_NE(std::find(names.begin(), names.end(), "render_prep"), names.end());
    }
    for (const auto& f : s["frames"]) {
      EXPECT_GT(f["frame_ms"].get<double>(), 0.0);
      EXPECT_EQ(f["stages"].size(), names.size());
      if (s["mode"] == "dynamic" && f.contains("decisions") && !f["decisions"].empty())
        saw_decisions = true;
    }
    // Each replayed frame is also replayed on the workers it had (dynamic mode may wake fewer).
    const auto& replayed = s["replayed_frames"];
    ASSERT_FALSE(replayed.empty());
    ASSERT_EQ(s["replayed_own"].size(), replayed.size());
    for (std::size_t k = 0; k < replayed.size(); ++k) {
      const auto& f = s["frames"][replayed[k].get<std::size_t>()];
      const std::uint32_t active = f["active_workers"].get<std::uint32_t>();
      EXPECT_EQ(s["replayed_own"][k]["workers"].get<std::uint32_t>(),
                active > 0 ? active : s["workers"].get<std::uint32_t>());
      EXPECT_GT(s["replayed_own"][k]["frame_ms"].get<double>(), 0.0);
    }
    // Predictions above the series' workers replay frames recorded with the renderer's passes cut
    // for that count (--planned-frames 1, after the measured frames); the others replay measured
    // frames.
    const std::uint32_t workers = s["workers"].get<std::uint32_t>();
    ASSERT_EQ(s["predictions"].size(), 7u);
    for (const auto& p : s["predictions"]) {
      const bool above = s["mode"] != "single" && p["workers"].get<std::uint32_t>() > workers;
      EXPECT_EQ(p.value("planned_frames", 0u), above ? 1u : 0u)
          << s["scene"] << " " << s["mode"] << " on " << p["workers"];
      EXPECT_GT(p["frame_ms"].get<double>(), 0.0);
    }
  }
  if (std::find(modes.begin(), modes.end(), "dynamic") != modes.end()) {
    EXPECT_TRUE(saw_decisions);
  }
  // Every series of a scene and count recorded the same (non-zero) world hash.
  std::map<std::pair<std::string, std::uint32_t>, std::set<std::uint64_t>> hashes;
  for (const auto& s : run_json["series"]) {
    ASSERT_TRUE(s.contains("world_hash"));
    EXPECT_NE(s["world_hash"].get<std::uint64_t>(), 0u);
    hashes[{s["scene"].get<std::string>(), s["objects"].get<std::uint32_t>()}].insert(
        s["world_hash"].get<std::uint64_t>());
  }
  EXPECT_EQ(hashes.size(), 4u);
  for (const auto& [key, set] : hashes) EXPECT_EQ(set.size(), 1u) << key.first << " " << key.second;

  // Summary: the promised columns, one row per (scene, mode, workers, objects).
  std::ifstream csv(dir / "summary.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("scene,mode,workers,objects,frames,median_ms,p95_ms,p99_ms,mean_ms", 0),
            0u)
      << header;
  EXPECT_NE(header.find("fps_median"), std::string::npos);
  EXPECT_NE(header.find("speedup_vs_single"), std::string::npos);
  std::size_t rows = 0;
  for (std::string line; std::getline(csv, line);) rows += line.empty() ? 0 : 1;
  EXPECT_EQ(rows, groups);

  const std::string html = slurp(dir / "report.html");
  for (const char* id : {"chart-frametime-boids", "chart-dist-boids", "chart-stages-boids",
                         "chart-util-boids", "chart-frametime-imbalanced"})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  const std::string md = slurp(dir / "report.md");
  EXPECT_NE(md.find("boids"), std::string::npos);
  EXPECT_NE(md.find("ended with the same world state hash"), std::string::npos);
  EXPECT_NE(md.find("- dynamic mode's weight on a worker's CPU time: 0.50"), std::string::npos);

  // Trace: job zones named after the stages, frames, and the allocator's counters.
  const nlohmann::json trace = nlohmann::json::parse(slurp(dir / "trace.json"));
  const nlohmann::json& events = trace.is_array() ? trace : trace["traceEvents"];
  bool steer = false, frame = false, allocator = false;
  for (const auto& e : events) {
    const std::string name = e.value("name", "");
    steer |= name == "steer";
    frame |= name == "frame";
    allocator |= name == "allocator: workers";
  }
  EXPECT_TRUE(steer);
  EXPECT_TRUE(frame);
  if (std::find(modes.begin(), modes.end(), "dynamic") != modes.end()) {
    EXPECT_TRUE(allocator);
  }
}

// A count or scene given twice runs once (it used to run twice and pool both into one row),
// and counts run in ascending order, the order of the report's tables and charts.
TEST(LoadTestRun, RepeatedCountsAndScenesRunOnceInAscendingOrder) {
  const auto dir = temp_dir("dedupe");
  const Result r = run({"--scene", "boids,boids", "--objects", "300,10,300", "--modes", "single",
                        "--frames", "2", "--warmup", "0", "--repeats", "1", "--trace-frames", "0",
                        "--no-pin", "--out", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("[  2/2]"), std::string::npos) << r.out;
  const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
  ASSERT_EQ(run_json["series"].size(), 2u);
  EXPECT_EQ(run_json["series"][0]["objects"], 10);
  EXPECT_EQ(run_json["series"][1]["objects"], 300);
  for (const auto& s : run_json["series"]) EXPECT_EQ(s["frames"].size(), 2u);
}

// --dry-run checks a command line as a real run does and prints the series it asks for.
TEST(LoadTestCli, DryRunChecksTheCommandLineAndSaysWhatWouldRunWithoutRunning) {
  const auto dir = temp_dir("dry_run");
  const Result r = run({"--dry-run", "--scene", "boids,crowd", "--objects", "10,100", "--joints",
                        "20", "--modes", "single", "--frames", "7", "--out", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(r.out.find("dry run, nothing runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("scene boids, objects 10 100"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("scene crowd, objects 10 100, --joints 20"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("modes single,"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir)) << "a dry run creates nothing";
  // Still checked: a bad value is the same error as without --dry-run.
  const Result bad = run({"--dry-run", "--scene", "crowd", "--objects", "1"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--objects: scene crowd runs 10 to 5000 objects, got 1"),
            std::string::npos)
      << bad.err;
}

// The soak scene is the others in one world (one renderer, one mixer, one transform plugin)
// plus its sparks; like every scene it must end with the same world hash in every mode.
TEST(LoadTestRun, SoakSceneMixesTheOtherScenesAndAgreesAcrossModes) {
  const auto dir = temp_dir("soak_scene");
  const Result r = run({"--scene", "soak", "--objects", "400", "--modes", own_mode_list(),
                        "--workers", "2", "--frames", "6", "--warmup", "2", "--repeats", "1",
                        "--no-pin", "--planned-frames", "0", "--out", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("every mode ended with the same world hash"), std::string::npos) << r.out;
  const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
  const auto& names = run_json["series"][0]["stage_names"];
  for (const char* stage :
       {"steer", "physics_step", "spawner", "orbit", "spark_spawner", "sparks", "render_prep"})
    EXPECT_NE(std::find(names.begin(), names.end(), stage), names.end()) << stage;
}

// The Bullet and swarm scenes run in every mode with the same world hash, and the spawn report
// shows the thesis's FPS beside ours for every count of the thesis table.
TEST(LoadTestRun, PhysicsScenesAgreeAcrossModesAndSpawnQuotesTheThesis) {
  const auto dir = temp_dir("physics");
  const std::string mode_list = own_mode_list();
  const Result r = run({"--scene", "spawn,boxes,boxes_r2,swarm", "--objects", "10,100", "--modes",
                        mode_list, "--workers", "2", "--frames", "8", "--warmup", "2", "--repeats",
                        "1", "--no-pin", "--planned-frames", "0", "--out", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("every mode ended with the same world hash"), std::string::npos) << r.out;
  const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
  for (const auto& s : run_json["series"]) {
    const auto& names = s["stage_names"];
    if (s["scene"] == "swarm") {
      for (const char* stage : {"swarm_index", "swarm_neighbours", "swarm_resolve"})
        EXPECT_NE(std::find(names.begin(), names.end(), stage), names.end()) << stage;
      continue;
    }
    for (const char* stage : {"physics_sync", "physics_step", "physics_writeback", "render_prep"})
      EXPECT_NE(std::find(names.begin(), names.end(), stage), names.end()) << stage;
  }
  ASSERT_EQ(run_json["references"].size(), 1u);
  EXPECT_EQ(run_json["references"][0]["scene"], "spawn");
  EXPECT_EQ(run_json["references"][0]["rows"].size(), 11u);
  const std::string md = slurp(dir / "report.md");
  const std::size_t beside = md.find("### Beside the thesis");
  ASSERT_NE(beside, std::string::npos);
  // Rows for the thesis counts we did not run too, with its numbers (1444 FPS at 8000).
  for (const char* row : {"| 10 | ", "| 100 | ", "| 1000 | ", "| 5000 | ", "| 8000 | "})
    EXPECT_NE(md.find(row, beside), std::string::npos) << row;
  EXPECT_NE(md.find("| 1444 |", beside), std::string::npos);
  EXPECT_NE(slurp(dir / "report.html").find("Beside the thesis"), std::string::npos);
}

TEST(LoadTestRun, CrowdAgreesAcrossModesAndReportsItsParameters) {
  const auto dir = temp_dir("crowd");
  const std::string mode_list = own_mode_list();
  // clang-format off
  const Result r = run({"--scene", "crowd", "--objects", "10,40", "--joints", "20",
                        "--vertices", "300", "--quantized", "1", "--modes", mode_list,
                        "--workers", "2", "--frames", "8", "--warmup", "2", "--repeats", "1",
                        "--no-pin", "--planned-frames", "0", "--out", dir.string()});
  // clang-format on
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("every mode ended with the same world hash"), std::string::npos) << r.out;
  const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
  const auto& params = run_json["settings"]["parameters"];
  EXPECT_EQ(params["crowd.joints"], 20);
  EXPECT_EQ(params["crowd.vertices"], 300);
  EXPECT_EQ(params["crowd.kinds"], 4) << "the default";
  EXPECT_EQ(params["crowd.quantized"], 1);
  for (const auto& s : run_json["series"]) {
    const auto& names = s["stage_names"];
    for (const char* stage :
         {"anim_advance", "anim_pose", "anim_skin", "crowd_mood", "render_prep"})
      EXPECT_NE(std::find(names.begin(), names.end(), stage), names.end()) << stage;
  }
  EXPECT_NE(slurp(dir / "report.md").find("crowd.vertices: 300"), std::string::npos);
}

// Every scene draws what it simulates through the render stages: --screenshot writes one PNG per
// scene and count, the HTML report shows them, and the image hash agrees across modes like the
// world hash.
TEST(LoadTestRun, ScenesRenderWithScreenshotsAndTheSameImageInEveryMode) {
  const auto dir = temp_dir("shots");
  const auto shots = dir / "shots";
  const std::string mode_list = own_mode_list();
  // clang-format off
  const Result r = run({"--scene", "cubes,swarm,imbalanced", "--objects", "50,300",
                        "--modes", mode_list, "--workers", "2", "--frames", "3", "--warmup", "1",
                        "--repeats", "1", "--trace-frames", "0", "--no-pin", "--width", "160",
                        "--height", "96", "--screenshot", shots.string(), "--planned-frames", "0", "--out", dir.string()});
  // clang-format on
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("the same image"), std::string::npos) << r.out;
  const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
  std::map<std::pair<std::string, std::uint32_t>, std::set<std::uint64_t>> images;
  for (const auto& s : run_json["series"]) {
    const auto& names = s["stage_names"];
    for (const char* stage : {"render_submit", "render_prep", "render_geometry", "render_raster"})
      EXPECT_NE(std::find(names.begin(), names.end(), stage), names.end()) << stage;
    EXPECT_NE(s["image_hash"].get<std::uint64_t>(), 0u);
    images[{s["scene"].get<std::string>(), s["objects"].get<std::uint32_t>()}].insert(
        s["image_hash"].get<std::uint64_t>());
  }
  ASSERT_EQ(images.size(), 6u);
  for (const auto& [key, set] : images) EXPECT_EQ(set.size(), 1u) << key.first << " " << key.second;
  // Different counts draw different pictures.
  const auto cubes_50 = *images[{"cubes", 50}].begin();
  const auto cubes_300 = *images[{"cubes", 300}].begin();
  EXPECT_NE(cubes_50, cubes_300);
  const std::string html = slurp(dir / "report.html");
  for (const char* scene : {"cubes", "swarm", "imbalanced"})
    for (const char* n : {"50", "300"}) {
      const std::string name = std::string(scene) + "_" + n + ".png";
      const auto size = std::filesystem::file_size(shots / name);
      EXPECT_GT(size, 100u) << name;
      EXPECT_NE(html.find("shots/" + name), std::string::npos) << name;
    }
}

// Without --screenshot the report still shows every scene and count it drew: a thumbnail at
// most 320 pixels wide, the same frame --screenshot writes full size.
TEST(LoadTestRun, TheReportShowsAThumbnailOfEverySceneAndCountByDefault) {
  const auto dir = temp_dir("thumbs");
  // clang-format off
  const Result r = run({"--scene", "boids,cubes", "--objects", "50,300", "--modes", "single",
                        "--frames", "2", "--warmup", "1", "--repeats", "1", "--trace-frames", "0",
                        "--width", "800", "--height", "450", "--planned-frames", "0", "--out", dir.string()});
  // clang-format on
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = slurp(dir / "report.html");
  for (const char* scene : {"boids", "cubes"})
    for (const char* n : {"50", "300"}) {
      const std::string name = std::string(scene) + "_" + n + ".png";
      core::Result<render::Image> thumb = render::load_png((dir / "thumbs" / name).string());
      ASSERT_TRUE(thumb) << thumb.message();
      EXPECT_EQ(thumb.value().width(), 266) << name;  // 800 / 3
      EXPECT_EQ(thumb.value().height(), 150) << name;
      EXPECT_NE(html.find("thumbs/" + name), std::string::npos) << name;
    }
  // The largest count is seen moving too: six thumbnail-size frames side by side, not all alike.
  for (const char* scene : {"boids", "cubes"}) {
    const std::string name = std::string(scene) + "_300_strip.png";
    core::Result<render::Image> strip = render::load_png((dir / "thumbs" / name).string());
    ASSERT_TRUE(strip) << strip.message();
    EXPECT_EQ(strip.value().width(), 6 * 266 + 5 * 2) << name;
    EXPECT_EQ(strip.value().height(), 150) << name;
    EXPECT_NE(html.find("thumbs/" + name), std::string::npos) << name;
    const auto frame_hash = [&](int f) {
      std::uint64_t h = 0;
      for (int y = 0; y < 150; ++y)
        for (int x = 0; x < 266; ++x) h = h * 31 + strip.value().at(f * 268 + x, y);
      return h;
    };
    EXPECT_NE(frame_hash(0), frame_hash(5)) << name << ": the frames do not move";
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "thumbs" / "boids_50_strip.png"));
  // A scene that draws nothing has no thumbnail.
  const auto undrawn = temp_dir("thumbs_undrawn");
  ASSERT_EQ(run({"--scene", "boids", "--objects", "50", "--modes", "single", "--frames", "2",
                 "--warmup", "1", "--repeats", "1", "--draw", "0", "--out", undrawn.string()})
                .code,
            0);
  EXPECT_FALSE(std::filesystem::exists(undrawn / "thumbs" / "boids_50.png"));
}

// Every scene takes --draw 0: no render stage joins its frame (so a subsystem is measured on its
// own), no image is read, the modes still agree, and the report records the setting.
TEST(LoadTestRun, EverySceneRunsWithoutDrawingAndTheModesAgree) {
  register_builtin_scenes();
  const std::string mode_list = own_mode_list();
  std::size_t scenes = 0;
  for (const std::string& name : scene_names()) {
    SCOPED_TRACE(name);
    const SceneDef* def = find_scene(name);
    ASSERT_NE(def, nullptr);
    const bool declares = std::any_of(def->params.begin(), def->params.end(),
                                      [](const SceneParam& p) { return p.name == "draw"; });
    EXPECT_TRUE(declares);
    const auto dir = temp_dir("nodraw_" + name);
    const std::string objects = std::to_string(std::max(def->objects.min, 100u));
    // clang-format off
    const Result r = run({"--scene", name, "--objects", objects, "--draw", "0",
                          "--modes", mode_list, "--workers", "2", "--frames", "3", "--warmup",
                          "1", "--repeats", "1", "--trace-frames", "0", "--no-pin", "--width",
                          "160", "--height", "96", "--out", dir.string()});
    // clang-format on
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("every mode ended with the same world hash (nothing was drawn)"),
              std::string::npos)
        << r.out;
    const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
    EXPECT_EQ(run_json["settings"]["parameters"][name + ".draw"], 0);
    for (const auto& s : run_json["series"]) {
      for (const auto& stage : s["stage_names"])
        EXPECT_NE(stage.get<std::string>().rfind("render_", 0), 0u) << stage;
      EXPECT_EQ(s.value("image_hash", std::uint64_t{0}), 0u);
    }
    ++scenes;
  }
  EXPECT_GE(scenes, 10u);
  // With --draw 1 (the default) the same scenes draw.
  const auto dir = temp_dir("draw_boids");
  const Result r =
      run({"--scene", "boids", "--objects", "100", "--modes", "single", "--frames", "2", "--warmup",
           "1", "--repeats", "1", "--trace-frames", "0", "--out", dir.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
  const auto& names = run_json["series"][0]["stage_names"];
  EXPECT_NE(std::find(names.begin(), names.end(), "render_raster"), names.end());
}

// swarm draws agents under 1.5 pixels as points unless --points 0; the report counts, per frame,
// the draws visible, drawn as meshes and drawn as points, and the modes still agree on the image.
TEST(LoadTestRun, SwarmDrawsSmallAgentsAsPointsAndTheReportCountsThem) {
  register_builtin_scenes();
  std::uint64_t images[2] = {0, 0};
  for (const int points : {1, 0}) {
    SCOPED_TRACE(points);
    const auto dir = temp_dir("points_" + std::to_string(points));
    // clang-format off
    const Result r = run({"--scene", "swarm", "--objects", "20000", "--points",
                          std::to_string(points), "--modes", own_mode_list(), "--workers", "2",
                          "--frames", "3", "--warmup", "1", "--repeats", "1", "--trace-frames",
                          "0", "--no-pin", "--planned-frames", "0", "--out", dir.string()});
    // clang-format on
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("every mode ended with the same world hash and the same image"),
              std::string::npos)
        << r.out;
    const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
    EXPECT_EQ(run_json["settings"]["parameters"]["swarm.points"], points);
    for (const auto& s : run_json["series"]) {
      const auto& names = s["count_names"];
      ASSERT_GE(names.size(), 3u);
      EXPECT_EQ(names[0], "draws visible");
      EXPECT_EQ(names[1], "drawn as meshes");
      EXPECT_EQ(names[2], "drawn as points");
      for (const auto& f : s["frames"]) {
        const double visible = f["counts"][0], meshes = f["counts"][1], as_points = f["counts"][2];
        EXPECT_GT(visible, 15000);
        EXPECT_EQ(meshes + as_points + f["counts"][3].get<double>(), visible);
        if (points == 1) {
          EXPECT_GT(as_points, 0.9 * visible) << "agents are under a pixel or two wide";
        } else {
          EXPECT_EQ(as_points, 0);
        }
      }
      images[points] = s["image_hash"].get<std::uint64_t>();
    }
    EXPECT_NE(slurp(dir / "report.md").find("drawn as points"), std::string::npos);
  }
  EXPECT_NE(images[0], images[1]) << "points are not the cubes' triangles";
}

// The audio scene mixes through the audio stages in every mode to the same output (its hash is
// folded into the world hash the harness compares), and the physics scenes play impact sounds.
TEST(LoadTestRun, OrchestraMixesTheSameInEveryModeAndEveryScenePlaysSound) {
  const auto dir = temp_dir("orchestra");
  const std::string mode_list = own_mode_list();
  // clang-format off
  const Result r = run({"--scene", "orchestra,boxes", "--objects", "20,200", "--modes", mode_list,
                        "--workers", "2", "--frames", "6", "--warmup", "2", "--repeats", "1",
                        "--trace-frames", "0", "--no-pin", "--width", "160", "--height", "96",
                        "--planned-frames", "0", "--out", dir.string()});
  // clang-format on
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("every mode ended with the same world hash"), std::string::npos) << r.out;
  const nlohmann::json run_json = nlohmann::json::parse(slurp(dir / "run.json"));
  std::map<std::pair<std::string, std::uint32_t>, std::set<std::uint64_t>> hashes;
  for (const auto& s : run_json["series"]) {
    const auto& names = s["stage_names"];
    for (const char* stage : {"audio_update", "audio_mix"})
      EXPECT_NE(std::find(names.begin(), names.end(), stage), names.end()) << stage;
    const char* own = s["scene"] == "orchestra" ? "orbit" : "impact_sounds";
    EXPECT_NE(std::find(names.begin(), names.end(), own), names.end()) << own;
    hashes[{s["scene"].get<std::string>(), s["objects"].get<std::uint32_t>()}].insert(
        s["world_hash"].get<std::uint64_t>());
  }
  ASSERT_EQ(hashes.size(), 4u);
  const auto few = *hashes[{"orchestra", 20}].begin();
  const auto many = *hashes[{"orchestra", 200}].begin();
  EXPECT_NE(few, many);
}

}  // namespace
}  // namespace spindle::loadtest
