#include <spindle/base/log.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>

#include <spindle/base/time.h>
#include <spindle/jobs/job_system.h>

namespace spindle::core {
namespace {

constexpr char kTruncatedMarker[] = "...[truncated]";

// The logger whose sinks this thread is running, under that logger's lock. A message logged
// from a sink is dropped (it would deadlock on the lock); a sink that edits the sink list or
// the file already holds the lock, so SinkLock does not take it again.
thread_local const Logger* t_dispatching = nullptr;

class SinkLock {
 public:
  SinkLock(Mutex& mutex, const Logger* owner) : mutex_(t_dispatching == owner ? nullptr : &mutex) {
    if (mutex_ != nullptr) mutex_->lock();
  }
  ~SinkLock() {
    if (mutex_ != nullptr) mutex_->unlock();
  }
  SinkLock(const SinkLock&) = delete;
  SinkLock& operator=(const SinkLock&) = delete;

 private:
  Mutex* mutex_;
};

const char* const kChannelNames[] = {"core",     "jobs",     "memory", "config",
                                     "profiler", "platform", "render", "physics",
                                     "anim",     "audio",    "game",   "bench"};

}  // namespace

const char* to_string(LogLevel level) {
  switch (level) {
    case LogLevel::Trace:
      return "trace";
    case LogLevel::Debug:
      return "debug";
    case LogLevel::Info:
      return "info";
    case LogLevel::Warning:
      return "warning";
    case LogLevel::Error:
      return "error";
    case LogLevel::Off:
      return "off";
  }
  return "?";
}

const char* to_string(LogChannel channel) {
  std::uint32_t index = Logger::channel_index(channel);
  return index < std::size(kChannelNames) ? kChannelNames[index] : "user";
}

Logger::Logger() : start_ns_(monotonic_ns()) {
  for (auto& level : min_level_) level.store(static_cast<std::uint8_t>(LogLevel::Info));
}

Logger::~Logger() {
  close_file();
}

void Logger::set_level(LogChannelMask channels, LogLevel level) {
  for (std::uint32_t i = 0; i < kLogChannelBits; ++i) {
    if ((channels >> i) & 1u)
      min_level_[i].store(static_cast<std::uint8_t>(level), std::memory_order_relaxed);
  }
}

LogLevel Logger::level(LogChannel channel) const {
  return static_cast<LogLevel>(min_level_[channel_index(channel)].load(std::memory_order_relaxed));
}

void Logger::write(LogChannel channel, LogLevel level, const char* file, int line,
                   const char* format, ...) {
  va_list args;
  va_start(args, format);
  vwrite(channel, level, file, line, format, args);
  va_end(args);
}

void Logger::vwrite(LogChannel channel, LogLevel level, const char* file, int line,
                    const char* format, va_list args) {
  SPINDLE_ASSERT(std::has_single_bit(static_cast<std::uint32_t>(channel)),
                 "a log message belongs to exactly one channel");
  if (level == LogLevel::Off || !enabled(channel, level)) return;
  messages_.fetch_add(1, std::memory_order_relaxed);

  std::uint64_t time_ns = monotonic_ns() - start_ns_;
  char buffer[kLogLineCapacity];
  int prefix =
      std::snprintf(buffer, sizeof(buffer), "[%11.6f] %-7s %-8s ",
                    static_cast<double>(time_ns) * 1e-9, to_string(level), to_string(channel));
  auto prefix_size = static_cast<std::size_t>(prefix > 0 ? prefix : 0);
  // Room for the message, keeping one byte for '\n' and one for the terminator.
  std::size_t room = sizeof(buffer) - prefix_size - 1;
  int written = std::vsnprintf(buffer + prefix_size, room, format, args);
  std::size_t message_size = written > 0 ? static_cast<std::size_t>(written) : 0;
  bool truncated = message_size >= room;
  if (truncated) {
    message_size = room - 1;
    std::memcpy(buffer + prefix_size + message_size - (sizeof(kTruncatedMarker) - 1),
                kTruncatedMarker, sizeof(kTruncatedMarker) - 1);
  }
  std::size_t text_size = prefix_size + message_size;
  buffer[text_size++] = '\n';
  buffer[text_size] = '\0';

  LogRecord record{level,        channel,  file,      line,
                   time_ns,      buffer,   text_size, buffer + prefix_size,
                   message_size, truncated};
  emit(record);
}

void Logger::emit(const LogRecord& record) {
  if (t_dispatching != nullptr) return;
  LockGuard lock(mutex_);
  // Reset even if a sink throws, or this thread's logging would stay silenced for good.
  struct Dispatching {
    explicit Dispatching(const Logger* logger) { t_dispatching = logger; }
    ~Dispatching() { t_dispatching = nullptr; }
  } dispatching(this);
  if (stderr_enabled()) std::fwrite(record.text, 1, record.text_size, stderr);
  if (file_ != nullptr) {
    std::fwrite(record.text, 1, record.text_size, file_);
    std::fflush(file_);
  }
  // Sinks may add and remove sinks from their callback. One removed is not called again, even
  // later in this loop; one added (a newer id) gets the next message, not this one.
  const int first_new_id = next_sink_id_;
  for (const Sink& sink : sinks_) {
    if (sink.fn != nullptr && sink.id < first_new_id) sink.fn(sink.user, record);
  }
}

void Logger::set_stderr_enabled(bool enabled) {
  stderr_enabled_.store(enabled, std::memory_order_relaxed);
}

Status Logger::open_file(const char* path, bool append) {
  std::FILE* file = std::fopen(path, append ? "ab" : "wb");
  if (file == nullptr) {
    return Status::error(std::string(path) + ": cannot open log file: " + std::strerror(errno));
  }
  // Unbuffered: each line goes out in one write, so a crash loses nothing and stdio never
  // allocates a buffer behind our back.
  std::setvbuf(file, nullptr, _IONBF, 0);
  std::FILE* old = nullptr;
  {
    SinkLock lock(mutex_, this);
    old = file_;
    file_ = file;
  }
  if (old != nullptr) std::fclose(old);
  return {};
}

void Logger::close_file() {
  std::FILE* old = nullptr;
  {
    SinkLock lock(mutex_, this);
    old = file_;
    file_ = nullptr;
  }
  if (old != nullptr) std::fclose(old);
}

bool Logger::file_open() const {
  SinkLock lock(mutex_, this);
  return file_ != nullptr;
}

int Logger::add_sink(LogSinkFn fn, void* user) {
  SPINDLE_ASSERT(fn != nullptr, "a log sink has a function");
  SinkLock lock(mutex_, this);
  for (Sink& sink : sinks_) {
    if (sink.fn == nullptr) {
      sink = Sink{fn, user, next_sink_id_++};
      return sink.id;
    }
  }
  return 0;
}

void Logger::remove_sink(int id) {
  SinkLock lock(mutex_, this);
  for (Sink& sink : sinks_) {
    if (sink.fn != nullptr && sink.id == id) sink = Sink{};
  }
}

Logger& logger() {
  // Built in static storage and never destroyed: no heap, and usable from static destructors.
  alignas(Logger) static unsigned char storage[sizeof(Logger)];
  static Logger* instance = ::new (storage) Logger();
  return *instance;
}

void job_log_adapter(void* user, jobs::LogLevel level, const char* message) {
  Logger& log = user != nullptr ? *static_cast<Logger*>(user) : logger();
  LogLevel mapped = LogLevel::Info;
  switch (level) {
    case jobs::LogLevel::Info:
      mapped = LogLevel::Info;
      break;
    case jobs::LogLevel::Warning:
      mapped = LogLevel::Warning;
      break;
    case jobs::LogLevel::Error:
      mapped = LogLevel::Error;
      break;
  }
  log.write(LogChannel::Jobs, mapped, nullptr, 0, "%s", message != nullptr ? message : "");
}

}  // namespace spindle::core
