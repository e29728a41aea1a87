// Crash reports: a child process (gtest's death tests, re-executed so no threads come along)
// installs the handler, runs an engine and crashes on purpose, in every job mode; the test then
// reads the report it left. What a report must hold: the signal or the exception, a stack, the
// engine's frame and the stage that was running, memory, the last log lines, a game's section.
#include <spindle/base/crash.h>
#include <spindle/base/log.h>
#include <spindle/base/memory.h>
#include <spindle/engine/engine.h>

#include <gtest/gtest.h>

#include <signal.h>

#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "test_support.h"

namespace spindle::core {
namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// AddressSanitizer and ThreadSanitizer own the fatal signals (and report them themselves).
#define SPINDLE_SKIP_UNDER_SANITIZERS() GTEST_SKIP() << "the sanitizer handles fatal signals"
#else
#define SPINDLE_SKIP_UNDER_SANITIZERS() (void)0
#endif

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The same path in the test and in its death-test child, which is this program run again (so
// not test::temp_path(), which is per process): named after the test, and `name`.
std::filesystem::path report_path(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = std::string(info->test_suite_name()) + "." + info->name();
  for (char& c : test)
    if (c == '/') c = '_';
  return std::filesystem::path(::testing::TempDir()) / ("spindle_crash_" + test + "_" + name);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class CrashReport : public ::testing::TestWithParam<jobs::Mode> {
 protected:
  void SetUp() override {
    SPINDLE_SKIP_UNDER_SANITIZERS();
    SPINDLE_DEATH_TEST_STYLE();
  }
};

// Runs steps of an engine in `mode` whose stage "crasher" calls `crash` at step 3, after logging.
// noexcept: an exception that leaves a stage is rethrown by step() and then ends here, in
// std::terminate(), as it would in a game's main() (gtest would otherwise catch it).
void run_until_crash(jobs::Mode mode, const std::string& report, void (*crash)()) noexcept {
  if (!install_crash_handler({.path = report, .to_stderr = true})) std::_Exit(3);
  // A level's data, booked under a tag of its own: the report's memory section must show it.
  (void)tagged_alloc(register_mem_tag("level"), 12345);
  Engine engine(test::engine_config(mode, 2));
  static void (*crash_now)() = nullptr;
  crash_now = crash;
  engine.add_stage({.name = "steady", .run = [](StageContext&) {}});
  engine.add_stage({.name = "crasher", .run = [](StageContext& ctx) {
                      if (ctx.tick() == 3) {
                        SPINDLE_LOG_WARNING(Game, "crasher: about to crash at step %llu",
                                            static_cast<unsigned long long>(ctx.tick()));
                        crash_now();
                      }
                    }});
  for (int i = 0; i < 10; ++i) engine.step();
  std::_Exit(4);  // not reached
}

void write_through_null() {
  volatile int* volatile nowhere = nullptr;
  *nowhere = 1;
}

void throw_uncaught() {
  throw std::runtime_error("the level file is gone");
}

TEST_P(CrashReport, AnInvalidAccessInAStageIsReportedThenKillsTheProcess) {
  const std::filesystem::path report = report_path("segv.txt");
  std::filesystem::remove(report);
  EXPECT_EXIT(run_until_crash(GetParam(), report.string(), &write_through_null),
              ::testing::KilledBySignal(SIGSEGV), "Spindle crash report");
  const std::string text = read_all(report);
  EXPECT_TRUE(has(text, "signal: SIGSEGV (invalid memory access), number 11, at address 0x0"))
      << text;
  EXPECT_TRUE(has(text, "== stack ==\n")) << text;
  EXPECT_TRUE(has(text, "== engine ==\nframe: 3, simulation steps: 3, job mode: " +
                            std::string(jobs::to_string(GetParam()))))
      << text;
  EXPECT_TRUE(has(text, "  3 crasher RUNNING\n")) << text;
  EXPECT_TRUE(has(text, "  2 crasher finished\n")) << text;
  EXPECT_TRUE(has(text, "resident: ")) << text;
  // The allocators' books, per memory tag.
  EXPECT_TRUE(has(text, "by tag (bytes live, peak, allocations, reserved):\n  core: ")) << text;
  EXPECT_TRUE(has(text, "\n  level: 12345 live, 12345 peak, 1 allocations, 0 reserved\n")) << text;
  EXPECT_TRUE(has(text, " job slots per participant, jobs run inline for lack of room 0")) << text;
  EXPECT_TRUE(has(text, "crasher: about to crash at step 3")) << text;
  EXPECT_TRUE(has(text, "=== end of crash report")) << text;
}

TEST_P(CrashReport, AnUncaughtExceptionIsReportedWithItsMessage) {
  SPINDLE_REQUIRE_ENGINE_EXCEPTIONS();
  const std::filesystem::path report = report_path("exception.txt");
  std::filesystem::remove(report);
  EXPECT_EXIT(run_until_crash(GetParam(), report.string(), &throw_uncaught),
              ::testing::KilledBySignal(SIGABRT), "uncaught exception: the level file is gone");
  const std::string text = read_all(report);
  EXPECT_TRUE(has(text, "uncaught exception: the level file is gone\n")) << text;
  EXPECT_TRUE(has(text, "== engine ==\n")) << text;
  EXPECT_TRUE(has(text, "  3 crasher RUNNING\n")) << "the stage that threw never finished\n"
                                                  << text;
}

TEST_P(CrashReport, AbortIsReported) {
  const std::filesystem::path report = report_path("abort.txt");
  std::filesystem::remove(report);
  EXPECT_EXIT(run_until_crash(GetParam(), report.string(), [] { std::abort(); }),
              ::testing::KilledBySignal(SIGABRT), "signal: SIGABRT");
  EXPECT_TRUE(has(read_all(report), "signal: SIGABRT (abort), number 6, sent by process "));
}

INSTANTIATE_TEST_SUITE_P(Modes, CrashReport, ::testing::ValuesIn(spindle::test::available_modes()),
                         [](const auto& info) { return std::string(jobs::to_string(info.param)); });

struct Level {
  std::uint64_t index = 7;
};

void crash_with_a_section_and_many_log_lines(const std::string& report) {
  if (!install_crash_handler({.path = report, .to_stderr = false})) std::_Exit(3);
  static Level level;
  add_crash_section(
      "level",
      [](void* user, CrashWriter& out) {
        out.text("level: ");
        out.number(static_cast<Level*>(user)->index);
        out.text(", offset ");
        out.signed_number(-42);
        out.text(", mask ");
        out.hex(0xbeef);
        out.text("\n");
      },
      &level);
  const int removed = add_crash_section(
      "removed", [](void*, CrashWriter& out) { out.text("must not appear\n"); }, nullptr);
  remove_crash_section(removed);
  for (int i = 0; i < 40; ++i) SPINDLE_LOG_WARNING(Game, "line %d", i);
  SPINDLE_LOG_WARNING(Game, "%s", std::string(600, 'x').c_str());
  write_through_null();
}

TEST(CrashReports, KeepTheLastLogLinesAndAGamesSection) {
  SPINDLE_SKIP_UNDER_SANITIZERS();
  SPINDLE_DEATH_TEST_STYLE();
  const std::filesystem::path report = report_path("section.txt");
  std::filesystem::remove(report);
  EXPECT_EXIT(crash_with_a_section_and_many_log_lines(report.string()),
              ::testing::KilledBySignal(SIGSEGV), "");
  const std::string text = read_all(report);
  EXPECT_TRUE(has(text, "== level ==\nlevel: 7, offset -42, mask 0xbeef\n")) << text;
  EXPECT_FALSE(has(text, "must not appear")) << text;
  // The last kCrashLogLines (32) lines: "line 9" .. "line 39" and the long one, cut short.
  EXPECT_FALSE(has(text, "line 8\n")) << text;
  const std::size_t first = text.find("line 9\n"), last = text.find("line 39\n");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(last, std::string::npos) << text;
  EXPECT_LT(first, last);
  const std::size_t long_line = text.find(std::string(200, 'x'));
  ASSERT_NE(long_line, std::string::npos) << text;
  EXPECT_EQ(text.find(std::string(300, 'x')), std::string::npos) << "lines are cut at 255 bytes";
}

TEST(CrashReports, InstallRefusesBadPathsAndUninstallPutsBackWhatWasThere) {
  SPINDLE_SKIP_UNDER_SANITIZERS();
  EXPECT_EQ(install_crash_handler({.path = ""}).message(),
            "crash handler: the report path is empty");
  EXPECT_FALSE(install_crash_handler({.path = std::string(2000, 'a')}).ok());
  EXPECT_FALSE(crash_handler_installed());
  struct sigaction before {};
  ::sigaction(SIGSEGV, nullptr, &before);
  const std::terminate_handler terminate_before = std::get_terminate();
  ASSERT_TRUE(install_crash_handler({.path = test::temp_path("unused.txt").string()}).ok());
  EXPECT_TRUE(crash_handler_installed());
  struct sigaction during {};
  ::sigaction(SIGSEGV, nullptr, &during);
  EXPECT_NE(during.sa_sigaction, before.sa_sigaction);
  uninstall_crash_handler();
  EXPECT_FALSE(crash_handler_installed());
  struct sigaction after {};
  ::sigaction(SIGSEGV, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
  EXPECT_EQ(std::get_terminate(), terminate_before);
  EXPECT_FALSE(std::filesystem::exists(test::temp_path("unused.txt")))
      << "a report is written only when a crash happens";
}

}  // namespace
}  // namespace spindle::core
