// Build switches shared by every core header, with defaults for code built outside Spindle's CMake.
//
// Usage:
//
//   #include <spindle/base/build_config.h>
//   #if SPINDLE_THREADS
//   std::thread worker(...);
//   #endif
//
// The CMake targets define them to 1 or 0 for whoever links them, a game included, as the engine
// was built: SPINDLE_THREADS (spindle::jobs), SPINDLE_ASSERTS and SPINDLE_PROFILER (spindle::core).
// A translation unit may override SPINDLE_ASSERTS / SPINDLE_PROFILER before its first include,
// since only macros (never layouts) depend on them.
#pragma once

#ifndef SPINDLE_THREADS
#define SPINDLE_THREADS 1
#endif
#ifndef SPINDLE_ASSERTS
#define SPINDLE_ASSERTS 1
#endif
#ifndef SPINDLE_PROFILER
#define SPINDLE_PROFILER 1
#endif

#define SPINDLE_CONCAT_INNER(a, b) a##b
#define SPINDLE_CONCAT(a, b) SPINDLE_CONCAT_INNER(a, b)

#if defined(__GNUC__)
#define SPINDLE_PRINTF_FORMAT(fmt_index, first_arg) \
  __attribute__((format(printf, fmt_index, first_arg)))
#else
#define SPINDLE_PRINTF_FORMAT(fmt_index, first_arg)
#endif
