// Asserts for broken invariants (programming errors, not bad input: that returns a Status).
//
// Usage:
//
//   SPINDLE_ASSERT(index < count_, "pool index in range");
//   SPINDLE_ASSERTF(marker <= top_, "stack marker %zu above top %zu", marker, top_);
//
//   // Tests and tools may redirect failures (the default prints and aborts):
//   spindle::core::set_assert_handler([](const char* file, int line, const char* expr,
//                                        const char* message) { throw MyAssert{...}; });
//
// A failure calls the handler with file, line, the expression text and the message. A handler
// that returns still ends in std::abort(): code after a failed invariant must not run. Use one
// that throws or longjmps to keep going (tests). With SPINDLE_ASSERTS == 0 the checks compile to
// nothing, but the expression and the format arguments are still type-checked, never evaluated.
#pragma once

#include <spindle/base/build_config.h>

namespace spindle::core {

using AssertHandler = void (*)(const char* file, int line, const char* expression,
                               const char* message);

// Installs `handler` (nullptr restores the default) and returns the previous one.
AssertHandler set_assert_handler(AssertHandler handler);
AssertHandler assert_handler();
// Prints "file:line: assertion failed: expression: message" to stderr and aborts.
[[noreturn]] void default_assert_handler(const char* file, int line, const char* expression,
                                         const char* message);

namespace detail {
[[noreturn]] void assert_failed(const char* file, int line, const char* expression,
                                const char* message);
[[noreturn]] void assert_failed_format(const char* file, int line, const char* expression,
                                       const char* format, ...) SPINDLE_PRINTF_FORMAT(4, 5);
// Never called: lets a disabled SPINDLE_ASSERTF still check its format arguments.
inline void assert_format_check(const char*, ...) SPINDLE_PRINTF_FORMAT(1, 2);
inline void assert_format_check(const char*, ...) {}
}  // namespace detail

}  // namespace spindle::core

#if SPINDLE_ASSERTS
#define SPINDLE_ASSERT(cond, message)                                             \
  do {                                                                            \
    if (!(cond)) [[unlikely]]                                                     \
      ::spindle::core::detail::assert_failed(__FILE__, __LINE__, #cond, message); \
  } while (0)
#define SPINDLE_ASSERTF(cond, format, ...)                                              \
  do {                                                                                  \
    if (!(cond)) [[unlikely]]                                                           \
      ::spindle::core::detail::assert_failed_format(__FILE__, __LINE__, #cond,          \
                                                    format __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)
#else
// `if (false)` keeps the operands compiled (and their variables "used") but never evaluated.
#define SPINDLE_ASSERT(cond, message) \
  do {                                \
    if (false) {                      \
      (void)(cond);                   \
      (void)sizeof(message);          \
    }                                 \
  } while (0)
#define SPINDLE_ASSERTF(cond, format, ...)                                             \
  do {                                                                                 \
    if (false) {                                                                       \
      (void)(cond);                                                                    \
      ::spindle::core::detail::assert_format_check(format __VA_OPT__(, ) __VA_ARGS__); \
    }                                                                                  \
  } while (0)
#endif
