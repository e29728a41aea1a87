// Shared by the fuzz targets in this folder. Each target is one LLVMFuzzerTestOneInput that feeds
// its bytes to one parser of outside data and checks what must hold for every input with
// SPINDLE_FUZZ_CHECK: a refusal names its source, a failed load keeps what was loaded before, an
// accepted input gives a valid object (and round-trips where the format can be written back).
// A broken check aborts, which libFuzzer records as a crash and the corpus replay as a failure.
//
//   extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
//     spindle::fuzz::quiet_logs();
//     auto r = spindle::render::decode_png({data, size}, "fuzz.png");
//     SPINDLE_FUZZ_CHECK(r || spindle::fuzz::starts_with(r.message(), "fuzz.png: "), r.message());
//     return 0;
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <spindle/base/log.h>

// Aborts with the condition, the file and line, and `detail` (anything convertible to
// std::string_view) when `cond` is false.
#define SPINDLE_FUZZ_CHECK(cond, detail)                                             \
  do {                                                                               \
    if (!(cond)) ::spindle::fuzz::check_failed(#cond, __FILE__, __LINE__, (detail)); \
  } while (false)

namespace spindle::fuzz {

[[noreturn]] inline void check_failed(const char* cond, const char* file, int line,
                                      std::string_view detail) {
  std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n  %.*s\n", file, line, cond,
               static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// The parsers log what they refuse; millions of inputs would print millions of lines.
inline void quiet_logs() {
  static const bool done = [] {
    core::logger().set_stderr_enabled(false);
    return true;
  }();
  (void)done;
}

// With SPINDLE_FUZZ_VERBOSE set, each input's outcome is printed: "refused: <message>" or
// "accepted" (to see what a seed exercises, or what a finding now gets).
inline void outcome(bool accepted, std::string_view message = {}) {
  static const bool verbose = std::getenv("SPINDLE_FUZZ_VERBOSE") != nullptr;
  if (!verbose) return;
  if (accepted)
    std::fprintf(stderr, "accepted\n");
  else
    std::fprintf(stderr, "refused: %.*s\n", static_cast<int>(message.size()), message.data());
}

inline bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A command line from bytes: one argument per line ('\n'), at most `max_args`; argv[0] is
// `program`, then `fixed` (flags every run gets), then the input's.
struct Args {
  std::vector<std::string> storage;
  std::vector<const char*> argv;
  int argc() const { return static_cast<int>(argv.size()) - 1; }  // argv ends with a null
};
inline Args split_args(std::string_view text, std::string_view program,
                       std::vector<std::string> fixed = {}, std::size_t max_args = 64) {
  Args a;
  a.storage.emplace_back(program);
  for (std::string& f : fixed) a.storage.push_back(std::move(f));
  while (!text.empty() && a.storage.size() < max_args) {
    const std::size_t end = text.find('\n');
    a.storage.emplace_back(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  }
  for (const std::string& s : a.storage) a.argv.push_back(s.c_str());
  a.argv.push_back(nullptr);
  return a;
}

}  // namespace spindle::fuzz
