// Logging: levels, channels, per-channel filters, and sinks (stderr, a file, callbacks).
//
// Usage:
//
//   SPINDLE_LOG_INFO(Render, "swapchain %dx%d", width, height);
//   SPINDLE_LOG_WARNING(Memory, "frame arena full (%zu bytes)", capacity);
//
//   auto& log = spindle::core::logger();
//   log.set_level(spindle::core::kAllChannels, spindle::core::LogLevel::Warning);
//   log.set_level(spindle::core::channel_mask(spindle::core::LogChannel::Physics),
//                 spindle::core::LogLevel::Trace);       // one noisy channel on
//   if (auto s = log.open_file("spindle.log"); !s) { ... }  // every line flushed as written
//   int id = log.add_sink(&my_sink, &my_state);           // e.g. an in-game console
//
//   jobs_config.log = &spindle::core::job_log_adapter;  // job system messages -> Jobs channel
//
// A message is formatted into a 1 KiB stack buffer (longer ones are cut and end in
// "...[truncated]"), so ordinary logging allocates nothing. Only the output to the sinks is
// under a lock, so lines from different threads never interleave. Sinks run under that lock:
// messages a sink logs are dropped; a sink may add or remove sinks (one added gets the next
// message, one removed is not called again).
#pragma once

#include <atomic>
#include <bit>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include <spindle/base/build_config.h>
#include <spindle/base/mutex.h>
#include <spindle/base/result.h>

namespace spindle::jobs {
enum class LogLevel : std::uint8_t;  // <spindle/jobs/job_system.h>; keeps this header light
}

namespace spindle::core {

enum class LogLevel : std::uint8_t { Trace, Debug, Info, Warning, Error, Off };

// One bit each, so filters can name several channels at once. Bits 16-31 are free for games.
enum class LogChannel : std::uint32_t {
  Core = 1u << 0,
  Jobs = 1u << 1,
  Memory = 1u << 2,
  Config = 1u << 3,
  Profiler = 1u << 4,
  Platform = 1u << 5,
  Render = 1u << 6,
  Physics = 1u << 7,
  Anim = 1u << 8,
  Audio = 1u << 9,
  Game = 1u << 10,
  Bench = 1u << 11,
};

using LogChannelMask = std::uint32_t;
inline constexpr LogChannelMask kAllChannels = 0xffffffffu;
inline constexpr std::uint32_t kLogChannelBits = 32;
inline constexpr std::size_t kLogLineCapacity = 1024;  // bytes per formatted line, '\n' included
inline constexpr std::uint32_t kMaxLogSinks = 8;

constexpr LogChannelMask channel_mask(LogChannel channel) {
  return static_cast<LogChannelMask>(channel);
}
constexpr LogChannelMask operator|(LogChannel a, LogChannel b) {
  return channel_mask(a) | channel_mask(b);
}

const char* to_string(LogLevel level);      // "trace", "debug", "info", "warning", "error"
const char* to_string(LogChannel channel);  // "core", "jobs", ...; "user" for game bits

// What a sink receives. `text` is the whole line as written to stderr and files (prefix,
// message, '\n'); `message` points at the message part inside it. Both live only during the call.
struct LogRecord {
  LogLevel level;
  LogChannel channel;
  const char* file;  // may be null (messages from the job system)
  int line;
  std::uint64_t time_ns;  // since the logger started
  const char* text;
  std::size_t text_size;
  const char* message;
  std::size_t message_size;
  bool truncated;
};

using LogSinkFn = void (*)(void* user, const LogRecord& record);

class Logger {
 public:
  Logger();
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  // Lets messages of `level` and above through on every channel in `channels`; Off silences.
  void set_level(LogChannelMask channels, LogLevel level);
  LogLevel level(LogChannel channel) const;
  bool enabled(LogChannel channel, LogLevel level) const {
    return static_cast<std::uint8_t>(level) >=
           min_level_[channel_index(channel)].load(std::memory_order_relaxed);
  }

  void write(LogChannel channel, LogLevel level, const char* file, int line, const char* format,
             ...) SPINDLE_PRINTF_FORMAT(6, 7);
  void vwrite(LogChannel channel, LogLevel level, const char* file, int line, const char* format,
              va_list args);

  void set_stderr_enabled(bool enabled);
  bool stderr_enabled() const { return stderr_enabled_.load(std::memory_order_relaxed); }
  // Opens (truncates, or appends) a log file; replaces any file already open.
  Status open_file(const char* path, bool append = false);
  void close_file();
  bool file_open() const;

  // Returns an id (> 0) for remove_sink(), or 0 when all kMaxLogSinks slots are taken.
  int add_sink(LogSinkFn fn, void* user);
  void remove_sink(int id);

  // Messages accepted by the filters since construction (all threads).
  std::uint64_t message_count() const { return messages_.load(std::memory_order_relaxed); }

  // Bit index of a one-bit channel (0..31).
  static std::uint32_t channel_index(LogChannel channel) {
    return static_cast<std::uint32_t>(std::countr_zero(static_cast<std::uint32_t>(channel))) &
           (kLogChannelBits - 1);
  }

 private:
  struct Sink {
    LogSinkFn fn = nullptr;
    void* user = nullptr;
    int id = 0;
  };

  void emit(const LogRecord& record);

  std::atomic<std::uint8_t> min_level_[kLogChannelBits];
  std::atomic<bool> stderr_enabled_{true};
  std::atomic<std::uint64_t> messages_{0};
  std::uint64_t start_ns_;
  // Guards everything below; held only while writing to the sinks.
  mutable Mutex mutex_;
  std::FILE* file_ = nullptr;
  Sink sinks_[kMaxLogSinks];
  int next_sink_id_ = 1;
};

// The process-wide logger used by the SPINDLE_LOG_* macros. Never destroyed, so it works in
// static destructors too.
Logger& logger();

// Matches spindle::jobs::LogFn. `user` may point at a Logger; null means logger().
void job_log_adapter(void* user, jobs::LogLevel level, const char* message);

}  // namespace spindle::core

#define SPINDLE_LOG(channel, level, format, ...)                                                 \
  do {                                                                                           \
    ::spindle::core::Logger& spindle_log_ = ::spindle::core::logger();                           \
    if (spindle_log_.enabled(channel, level))                                                    \
      spindle_log_.write(channel, level, __FILE__, __LINE__, format __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

// `channel` is a LogChannel enumerator name: SPINDLE_LOG_INFO(Render, "...").
#define SPINDLE_LOG_TRACE(channel, format, ...)                                       \
  SPINDLE_LOG(::spindle::core::LogChannel::channel, ::spindle::core::LogLevel::Trace, \
              format __VA_OPT__(, ) __VA_ARGS__)
#define SPINDLE_LOG_DEBUG(channel, format, ...)                                       \
  SPINDLE_LOG(::spindle::core::LogChannel::channel, ::spindle::core::LogLevel::Debug, \
              format __VA_OPT__(, ) __VA_ARGS__)
#define SPINDLE_LOG_INFO(channel, format, ...)                                       \
  SPINDLE_LOG(::spindle::core::LogChannel::channel, ::spindle::core::LogLevel::Info, \
              format __VA_OPT__(, ) __VA_ARGS__)
#define SPINDLE_LOG_WARNING(channel, format, ...)                                       \
  SPINDLE_LOG(::spindle::core::LogChannel::channel, ::spindle::core::LogLevel::Warning, \
              format __VA_OPT__(, ) __VA_ARGS__)
#define SPINDLE_LOG_ERROR(channel, format, ...)                                       \
  SPINDLE_LOG(::spindle::core::LogChannel::channel, ::spindle::core::LogLevel::Error, \
              format __VA_OPT__(, ) __VA_ARGS__)
