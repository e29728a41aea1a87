#include <spindle/base/profiler.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <spindle/base/build_config.h>
#include <spindle/base/time.h>
#include <spindle/jobs/job_system.h>

#include "test_support.h"

#if SPINDLE_THREADS
#include <thread>
#endif

namespace spindle::core {

// Defined in profiler_disabled_test.cpp, compiled with SPINDLE_PROFILER 0.
void run_compiled_out_zones();

namespace {

namespace prof = profiler;
using nlohmann::json;

// Work long enough that a zone lasts at least a few nanoseconds on any clock.
void spin(std::uint64_t ns) {
  std::uint64_t end = monotonic_ns() + ns;
  while (monotonic_ns() < end) {
  }
}

json load_trace(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);  // throws (failing the test) on invalid JSON
}

struct Zone {
  std::string name;
  double ts, dur;
  int tid;
};

std::vector<Zone> zones_of(const json& trace) {
  std::vector<Zone> out;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X")
      out.push_back({e.at("name").get<std::string>(), e.at("ts").get<double>(),
                     e.at("dur").get<double>(), e.at("tid").get<int>()});
  }
  return out;
}

const Zone* find_zone(const std::vector<Zone>& zones, const std::string& name) {
  auto it = std::find_if(zones.begin(), zones.end(), [&](const Zone& z) { return z.name == name; });
  return it != zones.end() ? &*it : nullptr;
}

bool inside(const Zone& child, const Zone& parent) {
  return child.ts >= parent.ts && child.ts + child.dur <= parent.ts + parent.dur + 1e-9;
}

const prof::ZoneStats* find_stats(const prof::FrameProfile& frame, const std::string& name) {
  for (const auto& z : frame.zones) {
    if (name == z.name) return &z;
  }
  return nullptr;
}

struct ProfilerTest : ::testing::Test {
  void SetUp() override {
    prof::set_enabled(true);
    prof::clear();
  }
};

TEST_F(ProfilerTest, ChromeTraceIsValidJsonWithNestedZones) {
  prof::set_thread_name("main \"test\"");  // quotes must be escaped
  {
    SPINDLE_PROFILE_ZONE("parent");
    spin(2000);
    {
      SPINDLE_PROFILE_ZONE("child");
      spin(2000);
    }
    spin(2000);
  }
  auto path = test::temp_path("trace.json");
  ASSERT_TRUE(prof::write_chrome_trace(path.c_str()).ok());
  json trace = load_trace(path);
  std::vector<Zone> zones = zones_of(trace);
  const Zone* parent = find_zone(zones, "parent");
  const Zone* child = find_zone(zones, "child");
  ASSERT_NE(parent, nullptr);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(parent->tid, child->tid);
  EXPECT_GT(parent->dur, child->dur);
  EXPECT_GE(child->dur, 2.0);  // microseconds
  EXPECT_TRUE(inside(*child, *parent))
      << child->ts << "+" << child->dur << " vs " << parent->ts << "+" << parent->dur;
  bool named = false;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("tid") == parent->tid) {
      named = e.at("args").at("name") == "main \"test\"";
    }
    EXPECT_EQ(e.at("pid"), 1);
  }
  EXPECT_TRUE(named);
}

// A name longer than the profiler keeps is cut at a character boundary, never inside a UTF-8
// sequence (the trace would not be valid JSON, and viewers show garbage).
TEST_F(ProfilerTest, ALongThreadNameIsCutBetweenCharacters) {
  const std::string ascii(46, 'w');
  // 46 bytes, then a 2-byte and a 3-byte character: the 47-byte limit falls inside the first.
  prof::set_thread_name((ascii + "\xc3\xa9\xe2\x82\xac").c_str());
  { SPINDLE_PROFILE_ZONE("named"); }
  auto path = test::temp_path("trace.json");
  ASSERT_TRUE(prof::write_chrome_trace(path.c_str()).ok());
  json trace;
  ASSERT_NO_THROW(trace = load_trace(path)) << "the trace is not valid UTF-8 JSON";
  const std::vector<Zone> zones = zones_of(trace);
  const Zone* zone = find_zone(zones, "named");
  ASSERT_NE(zone, nullptr);
  std::string name;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("tid") == zone->tid)
      name = e.at("args").at("name").get<std::string>();
  }
  EXPECT_EQ(name, ascii);  // the 2-byte character would need byte 48: it goes whole
  // Exactly at the limit, a whole multi-byte character stays.
  prof::set_thread_name((std::string(45, 'w') + "\xc3\xa9").c_str());
  ASSERT_TRUE(prof::write_chrome_trace(path.c_str()).ok());
  trace = load_trace(path);
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("tid") == zone->tid)
      name = e.at("args").at("name").get<std::string>();
  }
  EXPECT_EQ(name, std::string(45, 'w') + "\xc3\xa9");
}

#if SPINDLE_THREADS
TEST_F(ProfilerTest, EachThreadGetsItsOwnTid) {
  constexpr int kThreads = 3;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      std::string name = "test thread " + std::to_string(t);
      prof::set_thread_name(name.c_str());
      for (int i = 0; i < 50; ++i) {
        SPINDLE_PROFILE_ZONE("thread work");
        SPINDLE_PROFILE_ZONE("inner");
      }
    });
  }
  for (auto& th : threads) th.join();
  auto path = test::temp_path("threads.json");
  ASSERT_TRUE(prof::write_chrome_trace(path.c_str()).ok());
  json trace = load_trace(path);

  std::map<int, int> per_tid;
  for (const Zone& z : zones_of(trace)) per_tid[z.tid] += z.name == "thread work" ? 1 : 0;
  std::set<std::string> names;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name" && per_tid[e.at("tid").get<int>()] > 0)
      names.insert(e.at("args").at("name").get<std::string>());
  }
  int tids_with_work = 0;
  for (const auto& [tid, n] : per_tid) {
    if (n > 0) {
      ++tids_with_work;
      EXPECT_EQ(n, 50) << "tid " << tid;
    }
  }
  EXPECT_EQ(tids_with_work, kThreads);
  EXPECT_EQ(names, (std::set<std::string>{"test thread 0", "test thread 1", "test thread 2"}));
}

TEST_F(ProfilerTest, RingOverflowIsCountedNotFatal) {
  prof::set_events_per_thread(16);  // applies to threads registering from now on
  std::uint64_t lost_before = prof::events_lost();
  std::thread([] {
    prof::set_thread_name("overflow");
    for (int i = 0; i < 100; ++i) SPINDLE_PROFILE_ZONE("many");
  }).join();
  prof::set_events_per_thread(1u << 15);
  EXPECT_EQ(prof::events_lost() - lost_before, 84u);
  auto path = test::temp_path("overflow.json");
  ASSERT_TRUE(prof::write_chrome_trace(path.c_str()).ok());
  int kept = 0;
  for (const Zone& z : zones_of(load_trace(path))) kept += z.name == "many" ? 1 : 0;
  EXPECT_EQ(kept, 16);  // the newest ones
}

TEST_F(ProfilerTest, ExitedThreadsFreeTheirRegistration) {
  prof::set_events_per_thread(16);  // keep the many rings small
  const std::uint32_t total = prof::kMaxThreads + 40;
  for (std::uint32_t i = 0; i < total; ++i) {
    std::thread([] { SPINDLE_PROFILE_ZONE("short-lived"); }).join();
  }
  std::thread([] {
    prof::set_thread_name("last one");
    SPINDLE_PROFILE_ZONE("last zone");
  }).join();
  prof::set_events_per_thread(1u << 15);
  EXPECT_EQ(prof::threads_dropped(), 0u);
  EXPECT_LE(prof::thread_count(), prof::kMaxThreads);

  auto path = test::temp_path("many.json");
  ASSERT_TRUE(prof::write_chrome_trace(path.c_str()).ok());
  json trace = load_trace(path);
  const std::vector<Zone> zones = zones_of(trace);
  const Zone* last = find_zone(zones, "last zone");
  ASSERT_NE(last, nullptr);
  std::set<int> tids;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("name") == "thread_name") {
      EXPECT_TRUE(tids.insert(e.at("tid").get<int>()).second) << "tid reused in one trace";
      if (e.at("tid") == last->tid) {
        EXPECT_EQ(e.at("args").at("name"), "last one");
      }
    }
  }
}

TEST_F(ProfilerTest, ReadingWhileThreadsRecordSeesOnlyWholeEvents) {
  prof::set_events_per_thread(64);  // small rings wrap constantly under the reader
  std::atomic<bool> stop{false};
  std::atomic<int> started{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t) {
    writers.emplace_back([&] {
      { SPINDLE_PROFILE_ZONE("outer"); }  // registers with the small ring
      started.fetch_add(1);
      while (!stop.load(std::memory_order_relaxed)) {
        SPINDLE_PROFILE_ZONE("outer");
        SPINDLE_PROFILE_ZONE("inner");
      }
    });
  }
  while (started.load() < 2) std::this_thread::yield();
  prof::set_events_per_thread(1u << 15);
  auto path = test::temp_path("live.json");
  for (int round = 0; round < 20; ++round) {
    prof::begin_frame();
    prof::end_frame();
    ASSERT_TRUE(prof::write_chrome_trace(path.c_str()).ok());
    for (const Zone& z : zones_of(load_trace(path))) {
      ASSERT_TRUE(z.name == "outer" || z.name == "inner" || z.name == "frame") << z.name;
      ASSERT_GE(z.dur, 0.0);
      ASSERT_LT(z.dur, 10e6);  // a torn event would pair unrelated timestamps
    }
  }
  stop.store(true);
  for (auto& w : writers) w.join();
  EXPECT_GT(prof::events_lost(), 0u);
}
#endif

TEST_F(ProfilerTest, FrameAggregatesCountTotalAndMax) {
  { SPINDLE_PROFILE_ZONE("before the frame"); }
  prof::begin_frame();
  for (int i = 0; i < 3; ++i) {
    SPINDLE_PROFILE_ZONE("update");
    spin(1000 * (i + 1));
  }
  {
    SPINDLE_PROFILE_ZONE("render");
    spin(5000);
  }
  prof::end_frame();
  const prof::FrameProfile& frame = prof::last_frame();
  EXPECT_GE(frame.frame, 1u);
  EXPECT_LE(frame.begin_ns, frame.end_ns);
  EXPECT_EQ(find_stats(frame, "before the frame"), nullptr);
  const prof::ZoneStats* update = find_stats(frame, "update");
  const prof::ZoneStats* render = find_stats(frame, "render");
  const prof::ZoneStats* whole = find_stats(frame, "frame");
  ASSERT_NE(update, nullptr);
  ASSERT_NE(render, nullptr);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(update->count, 3u);
  EXPECT_EQ(render->count, 1u);
  EXPECT_EQ(whole->count, 1u);
  EXPECT_GE(update->total_ns, 6000u);
  EXPECT_GE(update->max_ns, 3000u);
  EXPECT_LT(update->max_ns, update->total_ns);
  EXPECT_GE(whole->total_ns, update->total_ns + render->total_ns);
  EXPECT_STREQ(frame.zones[0].name, "frame");  // largest first

  // The next frame starts from zero.
  std::uint64_t first = frame.frame;
  prof::begin_frame();
  { SPINDLE_PROFILE_ZONE("render"); }
  prof::end_frame();
  EXPECT_EQ(prof::last_frame().frame, first + 1);
  EXPECT_EQ(find_stats(prof::last_frame(), "update"), nullptr);
  ASSERT_NE(find_stats(prof::last_frame(), "render"), nullptr);
  EXPECT_EQ(find_stats(prof::last_frame(), "render")->count, 1u);
}

TEST_F(ProfilerTest, SameNameFromDifferentStringsIsOneZone) {
  std::string a = "dynamic name";
  std::string b = "dynamic name";
  prof::begin_frame();
  prof::begin_zone(a.c_str());
  prof::end_zone();
  prof::begin_zone(b.c_str());
  prof::end_zone();
  prof::end_frame();
  const prof::ZoneStats* z = find_stats(prof::last_frame(), "dynamic name");
  ASSERT_NE(z, nullptr);
  EXPECT_EQ(z->count, 2u);
}

TEST_F(ProfilerTest, DisabledAtRunTimeRecordsNothing) {
  prof::begin_frame();
  prof::set_enabled(false);
  { SPINDLE_PROFILE_ZONE("off"); }
  prof::begin_zone("manual off");
  prof::set_enabled(true);  // the zone opened while off stays unrecorded
  prof::end_zone();
  prof::end_frame();
  EXPECT_EQ(find_stats(prof::last_frame(), "off"), nullptr);
  EXPECT_EQ(find_stats(prof::last_frame(), "manual off"), nullptr);
  EXPECT_NE(find_stats(prof::last_frame(), "frame"), nullptr);
}

TEST_F(ProfilerTest, UnbalancedManualZonesAreHarmless) {
  prof::end_zone();  // nothing open
  for (std::uint32_t i = 0; i < prof::kMaxOpenZones + 10; ++i) prof::begin_zone("deep");
  for (std::uint32_t i = 0; i < prof::kMaxOpenZones + 10; ++i) prof::end_zone();
  prof::begin_frame();
  prof::begin_zone("after");
  prof::end_zone();
  prof::end_frame();
  ASSERT_NE(find_stats(prof::last_frame(), "after"), nullptr);
}

TEST_F(ProfilerTest, CompiledOutMacrosRecordNothing) {
  prof::begin_frame();
  run_compiled_out_zones();
  prof::end_frame();
  EXPECT_EQ(find_stats(prof::last_frame(), "compiled out"), nullptr);
}

TEST_F(ProfilerTest, JobHooksRecordEveryJobByName) {
  jobs::Config config;
  config.workers = 2;
  config.pin_workers = false;
  config.pin_main_thread = false;
  config.mode =
      jobs::mode_available(jobs::Mode::Dynamic) ? jobs::Mode::Dynamic : jobs::Mode::Single;
  config.hooks = prof::job_hooks();
  constexpr int kJobs = 40;
  prof::begin_frame();
  {
    jobs::JobSystem js(config);
    jobs::Counter done;
    for (int i = 0; i < kJobs; ++i) {
      js.run(done, {"physics job", 1}, [] {
        SPINDLE_PROFILE_ZONE("inside job");
        spin(20000);
      });
    }
    js.wait(done);
  }  // joins the workers, so every job's end hook has run
  prof::end_frame();
  const prof::ZoneStats* job = find_stats(prof::last_frame(), "physics job");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->count, static_cast<std::uint32_t>(kJobs));
  ASSERT_NE(find_stats(prof::last_frame(), "inside job"), nullptr);

  auto path = test::temp_path("jobs.json");
  ASSERT_TRUE(prof::write_chrome_trace(path.c_str()).ok());
  std::vector<Zone> zones = zones_of(load_trace(path));
  std::vector<Zone> job_zones, inner;
  for (const Zone& z : zones) {
    if (z.name == "physics job") job_zones.push_back(z);
    if (z.name == "inside job") inner.push_back(z);
  }
  ASSERT_EQ(job_zones.size(), static_cast<std::size_t>(kJobs));
  ASSERT_EQ(inner.size(), static_cast<std::size_t>(kJobs));
  for (const Zone& z : inner) {  // each inner zone nests in a job zone on the same thread
    bool nested = std::any_of(job_zones.begin(), job_zones.end(),
                              [&](const Zone& j) { return j.tid == z.tid && inside(z, j); });
    EXPECT_TRUE(nested);
  }
}

TEST_F(ProfilerTest, WriteToBadPathIsAStatus) {
  Status s = prof::write_chrome_trace("/nonexistent-dir/trace.json");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/trace.json"), std::string::npos);
}

}  // namespace
}  // namespace spindle::core
