// Helpers shared by the engine-level tests (core, physics, anim): asserts that throw instead of
// aborting, temporary paths, and a log sink that keeps what it receives.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <spindle/base/assert.h>
#include <spindle/base/log.h>
#include <spindle/engine/engine.h>

#include "modes.h"

namespace spindle::core::test {

// Engine configs come from modes.h with the job configs (one place for both).
using ::spindle::test::engine_config;

struct AssertFailure {
  std::string file;
  int line;
  std::string expression;
  std::string message;
};

// While alive, a failed SPINDLE_ASSERT throws AssertFailure instead of aborting.
class ThrowOnAssert {
 public:
  ThrowOnAssert() : previous_(set_assert_handler(&handler)) {}
  ~ThrowOnAssert() { set_assert_handler(previous_); }
  ThrowOnAssert(const ThrowOnAssert&) = delete;
  ThrowOnAssert& operator=(const ThrowOnAssert&) = delete;

  static void handler(const char* file, int line, const char* expression, const char* message) {
    throw AssertFailure{file, line, expression, message};
  }

 private:
  AssertHandler previous_;
};

// A fresh path under the test temp folder, unique per process and test.
// Whether `p` is a multiple of `align`.
inline bool aligned(const void* p, std::size_t align) {
  return reinterpret_cast<std::uintptr_t>(p) % align == 0;
}

inline std::filesystem::path temp_path(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                              ("spindle_core_" + std::to_string(::getpid()) + "_" +
                               (info != nullptr ? info->name() : "test"));
  std::filesystem::create_directories(dir);
  return dir / name;
}

// Keeps every record's message, level and channel.
struct CapturedLog {
  struct Line {
    LogLevel level;
    LogChannel channel;
    std::string message;
    std::string text;
  };
  std::vector<Line> lines;

  static void sink(void* user, const LogRecord& r) {
    static_cast<CapturedLog*>(user)->lines.push_back({r.level, r.channel,
                                                      std::string(r.message, r.message_size),
                                                      std::string(r.text, r.text_size)});
  }
};

// Captures the global logger's output (and silences stderr) for one scope.
class ScopedLogCapture {
 public:
  ScopedLogCapture() : stderr_was_(logger().stderr_enabled()) {
    logger().set_stderr_enabled(false);
    id_ = logger().add_sink(&CapturedLog::sink, &log_);
  }
  ~ScopedLogCapture() {
    logger().remove_sink(id_);
    logger().set_stderr_enabled(stderr_was_);
  }
  ScopedLogCapture(const ScopedLogCapture&) = delete;
  ScopedLogCapture& operator=(const ScopedLogCapture&) = delete;

  const std::vector<CapturedLog::Line>& lines() const { return log_.lines; }
  std::size_t count(LogLevel level) const {
    std::size_t n = 0;
    for (const auto& l : log_.lines) n += l.level == level ? 1 : 0;
    return n;
  }

 private:
  CapturedLog log_;
  bool stderr_was_;
  int id_ = 0;
};

}  // namespace spindle::core::test
