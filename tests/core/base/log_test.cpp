#include <spindle/base/log.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/base/build_config.h>
#include <spindle/jobs/job_system.h>

#include "test_support.h"

#if SPINDLE_THREADS
#include <chrono>
#include <future>
#include <thread>
#endif

namespace spindle::core {
namespace {

using test::CapturedLog;

// A private logger with one capturing sink and no stderr.
struct LoggerFixture : ::testing::Test {
  Logger log;
  CapturedLog captured;
  void SetUp() override {
    log.set_stderr_enabled(false);
    ASSERT_GT(log.add_sink(&CapturedLog::sink, &captured), 0);
  }
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Strips the "[   12.345678] " time prefix; empty if the line does not start with one.
std::string after_time(const std::string& line) {
  std::size_t close = line.find("] ");
  if (line.empty() || line[0] != '[' || close == std::string::npos) return {};
  std::string time = line.substr(1, close - 1);
  std::size_t dot = time.find('.');
  if (dot == std::string::npos || time.size() - dot - 1 != 6) return {};
  for (char c : time) {
    if (c != ' ' && c != '.' && (c < '0' || c > '9')) return {};
  }
  return line.substr(close + 2);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) lines.push_back(line);
  return lines;
}

TEST_F(LoggerFixture, DefaultLevelIsInfo) {
  log.write(LogChannel::Core, LogLevel::Debug, __FILE__, __LINE__, "hidden");
  log.write(LogChannel::Core, LogLevel::Info, __FILE__, __LINE__, "shown %d", 1);
  ASSERT_EQ(captured.lines.size(), 1u);
  EXPECT_EQ(captured.lines[0].message, "shown 1");
  EXPECT_EQ(log.message_count(), 1u);
}

TEST_F(LoggerFixture, LevelFilterAppliesToEveryChannel) {
  log.set_level(kAllChannels, LogLevel::Warning);
  EXPECT_FALSE(log.enabled(LogChannel::Render, LogLevel::Info));
  EXPECT_TRUE(log.enabled(LogChannel::Render, LogLevel::Error));
  log.write(LogChannel::Render, LogLevel::Info, nullptr, 0, "info");
  log.write(LogChannel::Render, LogLevel::Warning, nullptr, 0, "warning");
  log.write(LogChannel::Audio, LogLevel::Error, nullptr, 0, "error");
  ASSERT_EQ(captured.lines.size(), 2u);
  EXPECT_EQ(captured.lines[0].message, "warning");
  EXPECT_EQ(captured.lines[1].message, "error");
  EXPECT_EQ(captured.lines[1].level, LogLevel::Error);
  EXPECT_EQ(captured.lines[1].channel, LogChannel::Audio);
}

TEST_F(LoggerFixture, PerChannelLevels) {
  log.set_level(kAllChannels, LogLevel::Warning);
  log.set_level(channel_mask(LogChannel::Physics), LogLevel::Trace);
  log.set_level(LogChannel::Render | LogChannel::Audio, LogLevel::Off);
  EXPECT_EQ(log.level(LogChannel::Physics), LogLevel::Trace);
  EXPECT_EQ(log.level(LogChannel::Anim), LogLevel::Warning);
  EXPECT_EQ(log.level(LogChannel::Audio), LogLevel::Off);

  log.write(LogChannel::Physics, LogLevel::Trace, nullptr, 0, "physics trace");
  log.write(LogChannel::Anim, LogLevel::Info, nullptr, 0, "anim info");
  log.write(LogChannel::Render, LogLevel::Error, nullptr, 0, "render error");
  log.write(LogChannel::Audio, LogLevel::Error, nullptr, 0, "audio error");
  log.write(LogChannel::Anim, LogLevel::Error, nullptr, 0, "anim error");
  ASSERT_EQ(captured.lines.size(), 2u);
  EXPECT_EQ(captured.lines[0].message, "physics trace");
  EXPECT_EQ(captured.lines[1].message, "anim error");
}

TEST_F(LoggerFixture, LineCarriesLevelChannelAndNewline) {
  log.write(LogChannel::Physics, LogLevel::Warning, "x.cpp", 3, "broadphase %s", "full");
  ASSERT_EQ(captured.lines.size(), 1u);
  const std::string& text = captured.lines[0].text;
  EXPECT_EQ(after_time(text), "warning physics  broadphase full\n") << text;
}

TEST_F(LoggerFixture, LongMessagesAreTruncatedWithMarker) {
  std::string big(5000, 'x');
  bool truncated = false;
  int id = log.add_sink(
      [](void* user, const LogRecord& r) { *static_cast<bool*>(user) = r.truncated; }, &truncated);
  log.write(LogChannel::Core, LogLevel::Info, nullptr, 0, "%s", big.c_str());
  log.remove_sink(id);
  ASSERT_EQ(captured.lines.size(), 1u);
  const std::string& text = captured.lines[0].text;
  EXPECT_TRUE(truncated);
  EXPECT_EQ(text.size(), kLogLineCapacity - 1);  // the terminator takes the last byte
  EXPECT_TRUE(text.ends_with("x...[truncated]\n")) << text.substr(text.size() - 30);
}

TEST_F(LoggerFixture, SinksCanBeRemovedAndSlotsRunOut) {
  CapturedLog other;
  int id = log.add_sink(&CapturedLog::sink, &other);
  log.write(LogChannel::Game, LogLevel::Info, nullptr, 0, "both");
  log.remove_sink(id);
  log.write(LogChannel::Game, LogLevel::Info, nullptr, 0, "first only");
  EXPECT_EQ(other.lines.size(), 1u);
  EXPECT_EQ(captured.lines.size(), 2u);

  std::vector<int> ids;
  for (std::uint32_t i = 0; i < kMaxLogSinks; ++i)
    ids.push_back(log.add_sink(&CapturedLog::sink, &other));
  EXPECT_EQ(ids.back(), 0);  // the fixture's sink holds one slot
  EXPECT_EQ(std::count_if(ids.begin(), ids.end(), [](int i) { return i > 0; }),
            static_cast<std::ptrdiff_t>(kMaxLogSinks - 1));
}

TEST_F(LoggerFixture, SinkThatLogsDoesNotDeadlock) {
  struct Ctx {
    Logger* log;
    int calls = 0;
  } ctx{&log};
  log.add_sink(
      [](void* user, const LogRecord&) {
        auto* c = static_cast<Ctx*>(user);
        ++c->calls;
        c->log->write(LogChannel::Core, LogLevel::Error, nullptr, 0, "nested");  // dropped
      },
      &ctx);
  log.write(LogChannel::Core, LogLevel::Info, nullptr, 0, "outer");
  EXPECT_EQ(ctx.calls, 1);
  ASSERT_EQ(captured.lines.size(), 1u);
  EXPECT_EQ(captured.lines[0].message, "outer");
}

// Sinks that change the sink list from inside their callback, on a logger of their own.
struct SinkEditing {
  Logger log;
  CapturedLog captured;  // always there
  CapturedLog added;     // added by `adder` during the first message
  int self_remover_id = 0;
  int self_remover_calls = 0;
  int adder_calls = 0;
  int victim_id = 0;  // removed by `remover` before its turn comes
  int victim_calls = 0;

  void run() {
    log.set_stderr_enabled(false);
    ASSERT_GT(log.add_sink(&CapturedLog::sink, &captured), 0);
    // The adder runs first: the slot it fills lies after its own, not yet visited.
    log.add_sink(
        [](void* user, const LogRecord&) {
          auto* self = static_cast<SinkEditing*>(user);
          if (self->adder_calls++ == 0) {
            EXPECT_GT(self->log.add_sink(&CapturedLog::sink, &self->added), 0);
            self->log.remove_sink(self->victim_id);
          }
        },
        this);
    self_remover_id = log.add_sink(
        [](void* user, const LogRecord&) {
          auto* self = static_cast<SinkEditing*>(user);
          ++self->self_remover_calls;
          self->log.remove_sink(self->self_remover_id);
        },
        this);
    victim_id = log.add_sink([](void* user, const LogRecord&) { ++*static_cast<int*>(user); },
                             &victim_calls);
    log.write(LogChannel::Core, LogLevel::Info, nullptr, 0, "one");
    log.write(LogChannel::Core, LogLevel::Info, nullptr, 0, "two");
  }
};

TEST(Log, SinksCanAddAndRemoveSinksFromTheirCallback) {
  // A deadlock must fail the test, not hang CI: the body runs on a thread of its own, and if it
  // does not come back its state is leaked to the blocked thread.
  auto* state = new SinkEditing;
#if SPINDLE_THREADS
  auto* done = new std::future<void>(std::async(std::launch::async, [state] { state->run(); }));
  ASSERT_EQ(done->wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "a sink that edits the sink list deadlocked the logger";
  done->get();
  delete done;
#else
  state->run();
#endif
  EXPECT_EQ(state->self_remover_calls, 1);
  EXPECT_EQ(state->adder_calls, 2);
  EXPECT_EQ(state->victim_calls, 0);  // removed before its turn in the first message
  ASSERT_EQ(state->captured.lines.size(), 2u);
  // Added while "one" was being written: it takes effect from the next message.
  ASSERT_EQ(state->added.lines.size(), 1u);
  EXPECT_EQ(state->added.lines[0].message, "two");
  delete state;
}

TEST_F(LoggerFixture, FileSinkIsFlushedAsWritten) {
  auto path = test::temp_path("log.txt");
  ASSERT_TRUE(log.open_file(path.c_str()).ok());
  EXPECT_TRUE(log.file_open());
  log.write(LogChannel::Core, LogLevel::Info, nullptr, 0, "first %d", 1);
  log.write(LogChannel::Jobs, LogLevel::Error, nullptr, 0, "second");
  // Read back while the logger still holds the file open: nothing may sit in a buffer.
  std::vector<std::string> lines = split_lines(read_file(path));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[0].ends_with("info    core     first 1")) << lines[0];
  EXPECT_TRUE(lines[1].ends_with("error   jobs     second")) << lines[1];

  // Reopening without append truncates; with append keeps.
  ASSERT_TRUE(log.open_file(path.c_str(), true).ok());
  log.write(LogChannel::Core, LogLevel::Info, nullptr, 0, "third");
  EXPECT_EQ(split_lines(read_file(path)).size(), 3u);
  log.close_file();
  EXPECT_FALSE(log.file_open());
  log.write(LogChannel::Core, LogLevel::Info, nullptr, 0, "not in file");
  EXPECT_EQ(split_lines(read_file(path)).size(), 3u);
}

TEST_F(LoggerFixture, OpenFileFailureIsAStatus) {
  Status s = log.open_file("/nonexistent-dir/x/log.txt");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/x/log.txt"), std::string::npos) << s.message();
  EXPECT_FALSE(log.file_open());
}

TEST_F(LoggerFixture, JobLogAdapterForwardsToJobsChannel) {
  jobs::LogFn fn = &job_log_adapter;  // must match the job system's callback type
  fn(&log, jobs::LogLevel::Warning, "pinning failed");
  fn(&log, jobs::LogLevel::Error, "job threw");
  fn(&log, jobs::LogLevel::Info, "started 2 workers");
  ASSERT_EQ(captured.lines.size(), 3u);
  EXPECT_EQ(captured.lines[0].channel, LogChannel::Jobs);
  EXPECT_EQ(captured.lines[0].level, LogLevel::Warning);
  EXPECT_EQ(captured.lines[0].message, "pinning failed");
  EXPECT_EQ(captured.lines[1].level, LogLevel::Error);
  EXPECT_EQ(captured.lines[2].level, LogLevel::Info);
}

TEST(Log, MacrosUseTheGlobalLoggerAndSkipFormattingWhenFiltered) {
  test::ScopedLogCapture capture;
  LogLevel before = logger().level(LogChannel::Anim);
  logger().set_level(channel_mask(LogChannel::Anim), LogLevel::Info);
  int evaluated = 0;
  SPINDLE_LOG_DEBUG(Anim, "hidden %d", ++evaluated);  // filtered: arguments not evaluated
  SPINDLE_LOG_INFO(Anim, "clip %s has %d keys", "walk", 12);
  SPINDLE_LOG_WARNING(Anim, "no arguments");
  SPINDLE_LOG(LogChannel::Anim, LogLevel::Error, "explicit %s", "form");
  logger().set_level(channel_mask(LogChannel::Anim), before);
  EXPECT_EQ(evaluated, 0);
  ASSERT_EQ(capture.lines().size(), 3u);
  EXPECT_EQ(capture.lines()[0].message, "clip walk has 12 keys");
  EXPECT_EQ(capture.lines()[1].message, "no arguments");
  EXPECT_EQ(capture.lines()[2].message, "explicit form");
}

TEST(Log, Names) {
  EXPECT_STREQ(to_string(LogLevel::Warning), "warning");
  EXPECT_STREQ(to_string(LogChannel::Physics), "physics");
  EXPECT_STREQ(to_string(static_cast<LogChannel>(1u << 20)), "user");
  EXPECT_EQ(Logger::channel_index(LogChannel::Jobs), 1u);
}

#if SPINDLE_THREADS
TEST(Log, ConcurrentThreadsWriteWholeLines) {
  Logger log;
  log.set_stderr_enabled(false);
  auto path = test::temp_path("concurrent.txt");
  ASSERT_TRUE(log.open_file(path.c_str()).ok());
  constexpr int kThreads = 4;
  constexpr int kMessages = 2000;
  // Long payloads make torn or interleaved writes likely if the lock were missing.
  const std::string payload(300, '#');
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kMessages; ++i)
        log.write(LogChannel::Game, LogLevel::Info, nullptr, 0, "thread %d message %d %s end", t, i,
                  payload.c_str());
    });
  }
  for (auto& th : threads) th.join();
  log.close_file();

  std::vector<std::string> lines = split_lines(read_file(path));
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kThreads * kMessages));
  std::vector<int> next(kThreads, 0);
  for (const std::string& line : lines) {
    int t = -1, i = -1, used = 0;
    std::string rest = after_time(line);
    ASSERT_EQ(std::sscanf(rest.c_str(), "info    game     thread %d message %d %n", &t, &i, &used),
              2)
        << line;
    ASSERT_EQ(rest.substr(static_cast<std::size_t>(used)), payload + " end") << line;
    ASSERT_TRUE(t >= 0 && t < kThreads) << line;
    EXPECT_EQ(i, next[t]++);  // each thread's lines in its own order
  }
  for (int n : next) EXPECT_EQ(n, kMessages);
}
#endif

}  // namespace
}  // namespace spindle::core
