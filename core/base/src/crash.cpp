#include "spindle/base/crash.h"

#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>

#include "spindle/base/log.h"
#include "spindle/base/memory.h"

namespace spindle::core {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int kSignalCount = sizeof(kSignals) / sizeof(kSignals[0]);
constexpr std::size_t kLogLineBytes = 256;
constexpr std::size_t kAltStackBytes = 64 * 1024;

struct Section {
  std::atomic<CrashSectionFn> fn{nullptr};
  std::atomic<void*> user{nullptr};
  std::atomic<const char*> title{nullptr};
  int id = 0;
};

// Everything the handler reads is plain memory set up before a crash: no locks, no allocation.
struct State {
  std::mutex mutex;  // install/uninstall and section changes (never taken by the handler)
  bool installed = false;
  char path[kMaxCrashPathBytes + 1] = {};
  std::atomic<bool> to_stderr{true};
  struct sigaction previous[kSignalCount] = {};
  std::terminate_handler previous_terminate = nullptr;
  stack_t previous_stack{};
  bool stack_replaced = false;
  int log_sink = 0;
  Section sections[kMaxCrashSections];
  int next_section_id = 1;
  // The last log lines, a ring written by the log sink (under the logger's lock).
  char log[kCrashLogLines][kLogLineBytes] = {};
  std::atomic<std::uint32_t> log_length[kCrashLogLines] = {};
  std::atomic<std::uint64_t> log_next{0};
  std::atomic<int> crashing{0};
};

State& state() {
  static State* s = new State();  // never destroyed: a crash in a static destructor still reports
  return *s;
}

alignas(16) char g_alt_stack[kAltStackBytes];

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic error)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGABRT:
      return "SIGABRT (abort)";
    default:
      return "signal";
  }
}

void keep_log_line(void* /*user*/, const LogRecord& record) {
  State& s = state();
  const std::uint64_t slot = s.log_next.load(std::memory_order_relaxed) % kCrashLogLines;
  std::size_t n = record.text_size < kLogLineBytes - 1 ? record.text_size : kLogLineBytes - 1;
  std::memcpy(s.log[slot], record.text, n);
  if (n > 0 && s.log[slot][n - 1] != '\n') s.log[slot][n - 1] = '\n';  // a line cut short
  s.log_length[slot].store(static_cast<std::uint32_t>(n), std::memory_order_release);
  s.log_next.fetch_add(1, std::memory_order_release);
}

// The resident set from /proc/self/statm (pages), read with open/read only.
void write_memory(CrashWriter& out) {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return;
  buf[n] = '\0';
  std::uint64_t fields[2] = {0, 0};
  int field = 0;
  for (ssize_t i = 0; i < n && field < 2; ++i) {
    if (buf[i] >= '0' && buf[i] <= '9') {
      fields[field] = fields[field] * 10 + static_cast<std::uint64_t>(buf[i] - '0');
    } else if (buf[i] == ' ') {
      ++field;
    }
  }
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  out.text("virtual: ");
  out.number(fields[0] * page / 1024);
  out.text(" KiB, resident: ");
  out.number(fields[1] * page / 1024);
  out.text(" KiB\n");
}

// What each memory tag's books say (heap, arenas and pools alike; <spindle/base/memory.h>): the
// counters are atomics, read without a lock.
void write_memory_tags(CrashWriter& out) {
  out.text("by tag (bytes live, peak, allocations, reserved):\n");
  for (std::size_t i = 0, count = mem_tag_count(); i < count && i < kMaxMemTags; ++i) {
    const MemTag tag = mem_tag_at(i);
    const MemStats m = mem_stats(tag);
    out.text("  ");
    out.text(to_string(tag));
    out.text(": ");
    out.number(m.current_bytes);
    out.text(" live, ");
    out.number(m.peak_bytes);
    out.text(" peak, ");
    out.number(m.allocations);
    out.text(" allocations, ");
    out.number(m.reserved_bytes);
    out.text(" reserved\n");
  }
}

void write_report(int sig, const siginfo_t* info, const char* exception) {
  State& s = state();
  const int fd = ::open(s.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  CrashWriter out(fd, s.to_stderr.load(std::memory_order_relaxed) ? STDERR_FILENO : -1);
  out.text("\n=== Spindle crash report ===\n");
  if (sig != 0) {
    out.text("signal: ");
    out.text(signal_name(sig));
    out.text(", number ");
    out.number(static_cast<std::uint64_t>(sig));
    if (info != nullptr && info->si_code <= 0) {  // kill(), raise(), abort(): no address
      out.text(", sent by process ");
      out.number(static_cast<std::uint64_t>(info->si_pid));
    } else if (info != nullptr) {
      out.text(", at address ");
      out.hex(reinterpret_cast<std::uintptr_t>(info->si_addr));
    }
    out.text("\n");
  } else {
    out.text("uncaught exception: ");
    out.text(exception != nullptr ? exception : "(not a std::exception)");
    out.text("\n");
  }
  out.text("process: ");
  out.number(static_cast<std::uint64_t>(::getpid()));
  out.text(", thread: ");
  out.number(static_cast<std::uint64_t>(::syscall(SYS_gettid)));
  out.text("\n\n== stack ==\n");
  void* frames[64];
  const int count = ::backtrace(frames, 64);
  if (fd >= 0) ::backtrace_symbols_fd(frames, count, fd);
  if (s.to_stderr.load(std::memory_order_relaxed)) ::backtrace_symbols_fd(frames, count, 2);
  for (Section& section : s.sections) {
    const CrashSectionFn fn = section.fn.load(std::memory_order_acquire);
    if (fn == nullptr) continue;
    out.text("\n== ");
    out.text(section.title.load(std::memory_order_relaxed));
    out.text(" ==\n");
    fn(section.user.load(std::memory_order_relaxed), out);
  }
  out.text("\n== memory ==\n");
  write_memory(out);
  write_memory_tags(out);
  out.text("\n== last log lines ==\n");
  const std::uint64_t next = s.log_next.load(std::memory_order_acquire);
  const std::uint64_t first = next > kCrashLogLines ? next - kCrashLogLines : 0;
  for (std::uint64_t i = first; i < next; ++i) {
    const std::uint64_t slot = i % kCrashLogLines;
    out.text(s.log[slot], s.log_length[slot].load(std::memory_order_acquire));
  }
  if (next == 0) out.text("(none)\n");
  out.text("=== end of crash report");
  if (fd >= 0) {
    out.text(" (also in ");
    out.text(s.path);
    out.text(")");
  }
  out.text(" ===\n");
  if (fd >= 0) ::close(fd);
}

// Dies of `sig` as if no handler had been there.
[[noreturn]] void die_of(int sig) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(sig, &action, nullptr);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &unblock, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);
}

void on_signal(int sig, siginfo_t* info, void* /*context*/) {
  State& s = state();
  if (s.crashing.exchange(1) != 0) die_of(sig);  // a crash while reporting one
  write_report(sig, info, nullptr);
  die_of(sig);
}

void on_terminate() {
  State& s = state();
  if (s.crashing.exchange(1) == 0) {
    const char* what = nullptr;
#if defined(__cpp_exceptions)
    if (std::exception_ptr current = std::current_exception()) {
      try {
        std::rethrow_exception(current);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
    } else {
      what = "std::terminate() called without an exception";
    }
#else
    what = "std::terminate() called (a build without exceptions)";
#endif
    write_report(0, nullptr, what);
  }
  die_of(SIGABRT);
}

}  // namespace

void CrashWriter::text(const char* s) {
  if (s != nullptr) text(s, std::strlen(s));
}

void CrashWriter::text(const char* s, std::size_t n) {
  for (const int fd : fds_) {
    if (fd < 0) continue;
    std::size_t done = 0;
    while (done < n) {
      const ssize_t w = ::write(fd, s + done, n - done);
      if (w <= 0) break;
      done += static_cast<std::size_t>(w);
    }
  }
}

void CrashWriter::number(std::uint64_t v) {
  char buf[24];
  int i = sizeof(buf);
  do {
    buf[--i] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  text(buf + i, sizeof(buf) - static_cast<std::size_t>(i));
}

void CrashWriter::signed_number(std::int64_t v) {
  if (v < 0) {
    text("-");
    number(static_cast<std::uint64_t>(-(v + 1)) + 1);
  } else {
    number(static_cast<std::uint64_t>(v));
  }
}

void CrashWriter::hex(std::uint64_t v) {
  char buf[18];
  int i = sizeof(buf);
  do {
    buf[--i] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v != 0);
  buf[--i] = 'x';
  buf[--i] = '0';
  text(buf + i, sizeof(buf) - static_cast<std::size_t>(i));
}

Status install_crash_handler(const CrashConfig& config) {
  if (config.path.empty()) return Status::error("crash handler: the report path is empty");
  if (config.path.size() > kMaxCrashPathBytes)
    return Status::error("crash handler: the report path is longer than " +
                         std::to_string(kMaxCrashPathBytes) + " bytes");
  State& s = state();
  std::lock_guard lock(s.mutex);
  std::memcpy(s.path, config.path.c_str(), config.path.size() + 1);
  s.to_stderr.store(config.to_stderr, std::memory_order_relaxed);
  if (s.installed) return {};
  // backtrace() loads libgcc on its first call, which allocates: do that now, not in a handler.
  void* warm[4];
  ::backtrace(warm, 4);
  stack_t stack{};
  stack.ss_sp = g_alt_stack;
  stack.ss_size = sizeof(g_alt_stack);
  s.stack_replaced = ::sigaltstack(&stack, &s.previous_stack) == 0;
  for (int i = 0; i < kSignalCount; ++i) {
    struct sigaction action {};
    action.sa_sigaction = &on_signal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (::sigaction(kSignals[i], &action, &s.previous[i]) != 0) {
      const int err = errno;
      for (int k = 0; k < i; ++k) ::sigaction(kSignals[k], &s.previous[k], nullptr);
      return Status::error(std::string("crash handler: sigaction failed: ") + std::strerror(err));
    }
  }
  s.previous_terminate = std::set_terminate(&on_terminate);
  s.log_sink = logger().add_sink(&keep_log_line, nullptr);
  s.installed = true;
  return {};
}

void uninstall_crash_handler() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.installed) return;
  for (int i = 0; i < kSignalCount; ++i) ::sigaction(kSignals[i], &s.previous[i], nullptr);
  std::set_terminate(s.previous_terminate);
  if (s.stack_replaced) ::sigaltstack(&s.previous_stack, nullptr);
  if (s.log_sink != 0) logger().remove_sink(s.log_sink);
  s.log_sink = 0;
  s.installed = false;
}

bool crash_handler_installed() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.installed;
}

int add_crash_section(const char* title, CrashSectionFn fn, void* user) {
  if (fn == nullptr) return 0;
  State& s = state();
  std::lock_guard lock(s.mutex);
  for (Section& section : s.sections) {
    if (section.fn.load(std::memory_order_relaxed) != nullptr) continue;
    section.title.store(title != nullptr ? title : "section", std::memory_order_relaxed);
    section.user.store(user, std::memory_order_relaxed);
    section.id = s.next_section_id++;
    section.fn.store(fn, std::memory_order_release);
    return section.id;
  }
  return 0;
}

void remove_crash_section(int id) {
  if (id <= 0) return;
  State& s = state();
  std::lock_guard lock(s.mutex);
  for (Section& section : s.sections) {
    if (section.id == id) {
      section.fn.store(nullptr, std::memory_order_release);
      section.id = 0;
    }
  }
}

}  // namespace spindle::core
