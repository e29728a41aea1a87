// Crash reports: when the process dies of a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT)
// or of an uncaught exception, a report is written before it goes: what killed it, a stack trace,
// what the engine was doing (the frame, the last stages run, the job system's state: the sections
// below), memory (the resident set, and each memory tag's books of <spindle/base/memory.h>: bytes
// live, peak, allocations, reserved) and the last log lines. Then the process dies as it would have
// (the same signal, so exit codes and core dumps are unchanged).
//
// Usage:
//
//   if (auto s = spindle::core::install_crash_handler({.path = prefs + "crash.txt"}); !s)
//     SPINDLE_LOG_WARNING(Core, "%s", s.c_str());
//   // every core::Engine adds its "engine" section by itself; a game may add its own:
//   int id = spindle::core::add_crash_section("level", [](void* user, spindle::core::CrashWriter&
//   out) {
//     out.text("level: "); out.number(static_cast<Level*>(user)->index); out.text("\n");
//   }, &level);
//
// A section runs inside the signal handler, on the crashing thread, with the process in an
// unknown state: it may only read memory and write through the CrashWriter (no locks, no
// allocation, no logging, no std::string). The stack trace names functions where the binary
// exports them (link with -rdynamic) and gives offsets otherwise (addr2line -e BINARY OFFSET).
// One handler per process; a second crash while writing (another thread, or a section that
// faults) ends the process at once with its signal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <spindle/base/result.h>

namespace spindle::core {

struct CrashConfig {
  std::string path = "spindle-crash.txt";  // written (truncated) only when a crash happens
  bool to_stderr = true;                   // the same report on stderr too
};

// Installs the handlers (the fatal signals', and the terminate handler) and starts keeping the
// last log lines. The calling thread also gets an alternate signal stack, so a stack overflow on
// it (the main thread, usually) is reported too; on other threads it kills without a report. A
// second call replaces the config.
// Errors: an empty or too long path (more than kMaxCrashPathBytes), or sigaction failing.
Status install_crash_handler(const CrashConfig& config = {});
// Puts back what was there before install_crash_handler().
void uninstall_crash_handler();
bool crash_handler_installed();

inline constexpr std::size_t kMaxCrashPathBytes = 1023;
inline constexpr int kMaxCrashSections = 16;
inline constexpr int kCrashLogLines = 32;  // the last lines kept, each cut at 255 bytes

// Writes to the report's outputs with write(2) only: usable inside a signal handler.
class CrashWriter {
 public:
  CrashWriter(int file_fd, int stderr_fd) : fds_{file_fd, stderr_fd} {}
  void text(const char* s);
  void text(const char* s, std::size_t n);
  void number(std::uint64_t v);
  void signed_number(std::int64_t v);
  void hex(std::uint64_t v);  // 0x...

 private:
  int fds_[2];  // -1: not used
};

using CrashSectionFn = void (*)(void* user, CrashWriter& out);
// Adds a section, written under "== title ==" in every later report. Returns an id (> 0) for
// remove_crash_section(), or 0 when kMaxCrashSections are taken. `title` must outlive the
// section (a literal). Safe to call from any thread, with or without a handler installed.
int add_crash_section(const char* title, CrashSectionFn fn, void* user);
void remove_crash_section(int id);

}  // namespace spindle::core
