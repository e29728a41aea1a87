#include <spindle/base/assert.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace spindle::core {
namespace {

std::atomic<AssertHandler> g_handler{nullptr};

}  // namespace

AssertHandler set_assert_handler(AssertHandler handler) {
  return g_handler.exchange(handler, std::memory_order_acq_rel);
}

AssertHandler assert_handler() {
  AssertHandler handler = g_handler.load(std::memory_order_acquire);
  return handler != nullptr ? handler : &default_assert_handler;
}

void default_assert_handler(const char* file, int line, const char* expression,
                            const char* message) {
  std::fprintf(stderr, "%s:%d: assertion failed: %s: %s\n", file, line, expression, message);
  std::fflush(stderr);
  std::abort();
}

namespace detail {

void assert_failed(const char* file, int line, const char* expression, const char* message) {
  assert_handler()(file, line, expression, message != nullptr ? message : "");
  // A handler that returns must not let the broken invariant run on.
  std::abort();
}

void assert_failed_format(const char* file, int line, const char* expression, const char* format,
                          ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  assert_failed(file, line, expression, message);
}

}  // namespace detail
}  // namespace spindle::core
