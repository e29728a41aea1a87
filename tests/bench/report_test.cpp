// write_report: the report folder from a tiny synthetic run.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "spindle/report/report.h"

namespace sr = spindle::report;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) {
  fs::path p =
      fs::temp_directory_path() / ("spindle_report_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

std::vector<std::string> split_csv(const std::string& line) {  // fields hold no quotes here
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string f; std::getline(ss, f, ',');) out.push_back(f);
  if (!line.empty() && line.back() == ',') out.push_back("");
  return out;
}

// 2 modes (single, dynamic) x 2 counts (100, 1000) x 2 repeats x 5 frames. Frame times of
// single at count c, repeat r, frame i: c/100 * (10 + i + r*5) -> pooled {10..14, 15..19}, median
// 14.5 * c/100; dynamic runs exactly twice as fast.
sr::Run synthetic_run(const std::string& scene) {
  sr::Run run;
  run.machine = {2, "Test CPU", "g++ 12", "-O3", "Release", "Debian 12", "2024-05-01", "loadtest"};
  run.seed = 42;
  run.frames = 5;
  run.warmup = 2;
  run.repeats = 2;
  for (const char* mode : {"single", "dynamic"})
    for (std::uint32_t count : {100u, 1000u})
      for (std::uint32_t rep = 0; rep < 2; ++rep) {
        sr::Series s;
        s.scene = scene;
        s.mode = mode;
        s.workers = std::string(mode) == "single" ? 1 : 2;
        s.objects = count;
        s.repeat = rep;
        s.stage_names = {"physics", "render"};
        // What the scene counted: points 1/10 of the objects plus the frame index; "far" only
        // in the first repeat (series need not agree on their counts).
        s.count_names = {"drawn as points"};
        if (rep == 0) s.count_names.push_back("far");
        for (int i = 0; i < 5; ++i) {
          sr::Frame f;
          const double scale = count / 100.0 * (s.mode == "dynamic" ? 0.5 : 1.0);
          f.frame_ms = scale * (10 + i + rep * 5);
          // Dynamic at 1000 overflowed its job pool in frame 2 of each repeat.
          f.job_overflows = s.mode == "dynamic" && count == 1000 && i == 2 ? 7 : 0;
          f.stages = {{f.frame_ms * 0.6, f.frame_ms * 0.6, 4},
                      {f.frame_ms * 0.4, f.frame_ms * 0.4, 2}};
          for (std::uint32_t w = 0; w < s.workers; ++w)
            f.worker_busy_ms.push_back(f.frame_ms * 0.8);
          if (s.mode == "dynamic")
            f.decisions = {{0, 2, static_cast<std::uint32_t>(8 + i), 0, 1.0}, {1, 1, 4, 1, 0.5}};
          // The recorded graph's numbers: dynamic does 1.6x single's work, spread over two.
          f.work_ms = f.frame_ms * (s.mode == "dynamic" ? 1.6 : 1.0);
          f.span_ms = f.frame_ms * (s.mode == "dynamic" ? 0.3 : 1.0);
          f.span_handoff_ms = f.span_ms * 1.01;
          f.handoff_us = 2;
          f.jobs = 10;
          f.cpu_ms = f.frame_ms * s.workers * 0.9;
          f.counts = {count / 10.0 + i};
          if (rep == 0) f.counts.push_back(3);
          s.frames.push_back(std::move(f));
        }
        const double scale = count / 100.0;
        if (s.mode == "dynamic")
          s.predictions = {
              {1, 30 * scale, 29 * scale}, {2, 15 * scale, 14 * scale}, {4, 8 * scale, 7 * scale}};
        else
          s.predictions = {{1, 14 * scale, 14 * scale}, {2, 14 * scale, 14 * scale}};
        s.replayed = {1, 3};
        run.series.push_back(std::move(s));
      }
  return run;
}

}  // namespace

TEST(ReportWrite, WritesAllFilesWithExpectedContent) {
  const fs::path dir = temp_dir("all") / "nested";
  const sr::Run run = synthetic_run("swarm");
  const auto status = sr::write_report(run, dir.string());
  ASSERT_TRUE(status.ok()) << status.message();

  // run.json: everything raw.
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "run.json"));
  EXPECT_EQ(j["machine"]["cores"], 2);
  EXPECT_EQ(j["machine"]["cpu"], "Test CPU");
  EXPECT_EQ(j["machine"]["command_line"], "loadtest");
  EXPECT_EQ(j["settings"]["seed"], 42);
  EXPECT_EQ(j["settings"]["warmup"], 2);
  ASSERT_EQ(j["series"].size(), 8u);
  for (const auto& s : j["series"]) {
    ASSERT_EQ(s["frames"].size(), 5u);
    EXPECT_EQ(s["stage_names"].size(), 2u);
    EXPECT_EQ(s["frames"][0]["stages"].size(), 2u);
    EXPECT_EQ(s["frames"][0].contains("decisions"), s["mode"] == "dynamic");
    EXPECT_EQ(s["count_names"].size(), s["frames"][4]["counts"].size());
    EXPECT_EQ(s["frames"][4]["counts"][0], s["objects"].get<double>() / 10 + 4);
  }
  EXPECT_DOUBLE_EQ(j["series"][1]["frames"][4]["frame_ms"].get<double>(), 19.0);
  EXPECT_EQ(j["series"][6]["frames"][2]["job_overflows"], 7);
  EXPECT_EQ(j["series"][6]["frames"][1]["job_overflows"], 0);
  EXPECT_EQ(j["summary"].size(), 4u);

  // summary.csv: exact header, one row per group, pooled medians and speedups.
  const auto csv = lines(slurp(dir / "summary.csv"));
  ASSERT_EQ(csv.size(), 5u);
  EXPECT_EQ(csv[0],
            "scene,mode,workers,objects,frames,median_ms,p95_ms,p99_ms,mean_ms,stddev_ms,"
            "ci95_low_ms,ci95_high_ms,fps_median,speedup_vs_single,speedup_ci95_low,"
            "speedup_ci95_high,p_vs_single,job_overflows,work_ms,span_ms,bound_ms,efficiency,"
            "cpu_ms,predicted_ms,background");
  int checked = 0;
  for (std::size_t i = 1; i < csv.size(); ++i) {
    const auto f = split_csv(csv[i]);
    ASSERT_EQ(f.size(), 25u) << csv[i];
    // The limit: medians over the frames; bound = max(work / workers, span with hand-offs).
    const double median = std::stod(f[5]);
    const bool dyn = f[1] == "dynamic";
    EXPECT_NEAR(std::stod(f[18]), median * (dyn ? 1.6 : 1.0), 1e-4) << csv[i];
    EXPECT_NEAR(std::stod(f[19]), median * (dyn ? 0.3 : 1.0), 1e-4) << csv[i];
    EXPECT_NEAR(std::stod(f[20]), dyn ? median * 0.8 : median * 1.01, 1e-4) << csv[i];
    EXPECT_NEAR(std::stod(f[21]), dyn ? 0.8 : 1.01, 1e-4) << csv[i];
    EXPECT_NEAR(std::stod(f[22]), median * (dyn ? 1.8 : 0.9), 1e-4) << csv[i];
    EXPECT_NEAR(std::stod(f[23]), (dyn ? 15 : 14) * std::stod(f[3]) / 100.0, 1e-4) << csv[i];
    EXPECT_EQ(f[24], "none");
    EXPECT_EQ(f[17], f[1] == "dynamic" && f[3] == "1000" ? "14" : "0") << csv[i];
    EXPECT_EQ(f[0], "swarm");
    EXPECT_EQ(f[4], "10");
    const double scale = std::stod(f[3]) / 100.0 * (f[1] == "dynamic" ? 0.5 : 1.0);
    EXPECT_NEAR(std::stod(f[5]), 14.5 * scale, 1e-4) << csv[i];
    EXPECT_NEAR(std::stod(f[12]), 1000 / (14.5 * scale), 1e-3);
    EXPECT_NEAR(std::stod(f[13]), f[1] == "single" ? 1.0 : 2.0, 1e-4) << csv[i];
    EXPECT_LE(std::stod(f[14]), std::stod(f[13]));
    EXPECT_GE(std::stod(f[15]), std::stod(f[13]));
    if (f[1] == "dynamic") {
      EXPECT_LT(std::stod(f[16]), 0.05);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
  EXPECT_NE(csv[1].find("swarm,single,1,100,"), std::string::npos);  // sorted by count, mode

  // report.md: machine facts and the table.
  const std::string md = slurp(dir / "report.md");
  EXPECT_NE(md.find("Test CPU"), std::string::npos);
  EXPECT_NE(md.find("| objects | mode | workers | median ms | p95 | p99 | FPS |"),
            std::string::npos);
  EXPECT_NE(md.find("| 1000 | dynamic | 2 | 72.500 |"), std::string::npos);
  EXPECT_NE(md.find("2.00 ["), std::string::npos);
  EXPECT_NE(md.find("physics ms"), std::string::npos);
  EXPECT_NE(md.find("How to read this"), std::string::npos);
  // The limit tables: dynamic at 1000 objects has a median of 72.5 ms, work 116, span 21.75,
  // bound 58, efficiency 0.80, CPU 130.5.
  EXPECT_NE(
      md.find("| 1000 | dynamic | 2 | - | 72.500 | 116.000 | 21.750 | 58.000 | 0.80 | 130.500 |"),
      std::string::npos);
  EXPECT_NE(md.find("Where the time beyond the bound went"), std::string::npos);
  // Counts: points at 1000 objects are 100..104 in both repeats (median 102); "far" is 3 in the
  // frames of the repeat that counted it.
  EXPECT_NE(md.find("| objects | mode | workers | drawn as points | far |"), std::string::npos);
  EXPECT_NE(md.find("| 1000 | dynamic | 2 | 102 [100, 104] | 3 |"), std::string::npos) << md;
  // Every row of every table has its header's number of cells (a value without a column heading
  // shifts every value after it under the wrong heading).
  {
    std::size_t header_cells = 0;
    bool in_table = false;
    for (const std::string& line : lines(md)) {
      if (line.empty() || line[0] != '|') {
        in_table = false;
        continue;
      }
      const auto cells = static_cast<std::size_t>(std::count(line.begin(), line.end(), '|'));
      if (!in_table) {
        header_cells = cells;
        in_table = true;
      }
      EXPECT_EQ(cells, header_cells) << line;
    }
  }
  // Replayed on its own 2 workers: 150 ms against the replayed frames' measured median (frames 1
  // and 3 of both repeats: 55, 65, 80, 90 -> 72.5), +106.9%; on 1 worker 300 against single's
  // 145 at the same frames.
  EXPECT_NE(
      md.find("| 1000 | dynamic | 2 | 72.500 | 150.000 | 106.9% | 300.000 | 145.000 | 106.9% |"),
      std::string::npos)
      << md;

  // report.html: every chart, self-contained.
  const std::string html = slurp(dir / "report.html");
  for (const char* id : {"chart-frametime-swarm", "chart-dist-swarm", "chart-stages-swarm",
                         "chart-util-swarm", "chart-alloc-swarm", "chart-scaling-swarm"})
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("Counted per frame"), std::string::npos);
  EXPECT_NE(html.find("102 [100, 104]"), std::string::npos);
  EXPECT_NE(html.find("<figcaption>"), std::string::npos);
  EXPECT_NE(html.find("<polyline"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("nan"), std::string::npos);
  fs::remove_all(dir.parent_path());
}

// Dynamic mode may wake fewer workers than it has (boids at 100 on 2 cores runs on one). The
// model check compares each replayed frame with its replay on the workers it had, and the bound
// is on those workers: replayed on 2, a one-worker frame of 72.5 ms looked 50% off, and its
// efficiency 0.5.
TEST(ReportWrite, TheModelCheckAndTheBoundUseTheWorkersEachFrameHad) {
  const fs::path dir = temp_dir("own");
  sr::Run run = synthetic_run("own");
  for (sr::Series& s : run.series) {
    if (s.mode != "dynamic") continue;
    for (sr::Frame& f : s.frames) {
      f.active_workers = 1;
      f.work_ms = f.frame_ms;
      f.span_ms = f.span_handoff_ms = f.frame_ms * 0.2;
    }
    // Frames 1 and 3 replayed on their one worker: 74 ms at 1,000 objects (7.4 at 100); on
    // two, half that.
    const double scale = s.objects / 100.0;
    s.replayed_own = {{1, 7.4 * scale, 7.3 * scale, 7.25 * scale},
                      {1, 7.4 * scale, 7.3 * scale, 7.25 * scale}};
    s.predictions = {{1, 7.4 * scale, 7.3 * scale, 7.25 * scale},
                     {2, 3.7 * scale, 3.6 * scale, 3.6 * scale}};
  }
  ASSERT_TRUE(sr::write_report(run, dir.string()).ok());
  const std::string md = slurp(dir / "report.md");
  // Measured median of the replayed frames 72.5 (as in WritesAllFilesWithExpectedContent),
  // predicted 74 on the one worker they had: +2.1%.
  EXPECT_NE(md.find("| 1000 | dynamic | 2 | 72.500 | 74.000 | 2.1% |"), std::string::npos) << md;
  // Bound max(work / 1, span) = the frame: efficiency 1, not 0.5.
  EXPECT_NE(md.find("| 1000 | dynamic | 2 | 1.00 | 72.500 | 72.500 | 14.500 | 72.500 | 1.00 |"),
            std::string::npos)
      << md;
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "run.json"));
  for (const auto& s : j["series"]) {
    if (s["mode"] != "dynamic") continue;
    ASSERT_EQ(s["replayed_own"].size(), 2u);
    EXPECT_EQ(s["replayed_own"][0]["workers"], 1);
  }
  fs::remove_all(dir);
}

TEST(ReportWrite, EscapesHostileSceneNames) {
  const fs::path dir = temp_dir("hostile");
  const std::string name = "<script>alert(\"x\")</script> & 'co' | pipe";
  ASSERT_TRUE(sr::write_report(synthetic_run(name), dir.string()).ok());
  const std::string html = slurp(dir / "report.html");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;"),
            std::string::npos);
  EXPECT_NE(html.find("id=\"chart-frametime-script-alert-x-script-co-pipe\""), std::string::npos);
  const std::string md = slurp(dir / "report.md");
  EXPECT_NE(md.find("\\| pipe"), std::string::npos);
  const auto csv = lines(slurp(dir / "summary.csv"));
  ASSERT_EQ(csv.size(), 5u);
  EXPECT_EQ(csv[1].rfind("\"<script>alert(\"\"x\"\")</script> & 'co' | pipe\",single,", 0), 0u);
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "run.json"));
  EXPECT_EQ(j["series"][0]["scene"], name);
  fs::remove_all(dir);
}

TEST(ReportWrite, FailsWithMessageNamingTheFile) {
  const fs::path dir = temp_dir("file");
  fs::create_directories(dir);
  const fs::path file = dir / "not_a_dir";
  std::ofstream(file) << "x";
  const auto status = sr::write_report(synthetic_run("swarm"), file.string());
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(file.string()), std::string::npos) << status.message();
  const auto below = sr::write_report(synthetic_run("swarm"), (file / "sub").string());
  EXPECT_FALSE(below.ok());
  EXPECT_NE(below.message().find(file.string()), std::string::npos) << below.message();
  fs::remove_all(dir);
}

TEST(ReportWrite, DropsNonFiniteSamplesAndCopesWithOddShapes) {
  const fs::path dir = temp_dir("odd");
  sr::Run run;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  sr::Series a;  // one mode, one count, NaN and inf frames, missing stages, huge values
  a.scene = "odd";
  a.mode = "static";
  a.workers = 2;
  a.objects = 50;
  a.stage_names = {"s0", "s1", "s2"};
  for (double v : {1.0, nan, 3.0, inf, 2.0, 1e300}) {
    sr::Frame f;
    f.frame_ms = v;
    f.stages = {{v, v, 1}};  // only the first of three stages
    f.worker_busy_ms = {v, 0.5};
    a.frames.push_back(f);
  }
  sr::Series empty = a;  // zero-length series in another scene and mode
  empty.scene = "empty";
  empty.mode = "dynamic";
  empty.frames.clear();
  run.series = {a, empty};
  const auto status = sr::write_report(run, dir.string());
  ASSERT_TRUE(status.ok()) << status.message();
  const auto csv = lines(slurp(dir / "summary.csv"));
  ASSERT_EQ(csv.size(), 3u);
  const auto f = split_csv(csv[1]);
  EXPECT_EQ(f[4], "4");  // 1, 3, 2, 1e300 kept; NaN and inf dropped
  EXPECT_NEAR(std::stod(f[5]), 2.5, 1e-9);
  EXPECT_EQ(f[13], "");  // no single group: speedup columns empty
  EXPECT_EQ(split_csv(csv[2])[4], "0");
  const nlohmann::json j = nlohmann::json::parse(slurp(dir / "run.json"));
  EXPECT_EQ(j["dropped_non_finite_frames"], 2);
  EXPECT_TRUE(j["series"][0]["frames"][1]["frame_ms"].is_null());
  const std::string html = slurp(dir / "report.html");
  EXPECT_NE(html.find("id=\"chart-util-odd\""), std::string::npos);
  EXPECT_NE(html.find("id=\"chart-alloc-empty\""), std::string::npos);
  EXPECT_NE(html.find("no dynamic-mode decisions recorded"), std::string::npos);
  EXPECT_NE(slurp(dir / "report.md").find("non-finite frame times dropped: 2"), std::string::npos);
  fs::remove_all(dir);
}
