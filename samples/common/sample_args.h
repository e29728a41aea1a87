// The command line every sample takes: [--mode single|static|dynamic|tbb] [--workers N].
// CTest runs each sample once in its default mode and once per mode this build has, comparing the
// printed hash (tests/samples/modes_agree.cmake).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <spindle/jobs/job_system.h>

namespace samples {

struct SampleArgs {
  spindle::jobs::Mode mode = spindle::jobs::Mode::Dynamic;
  std::uint32_t workers = 0;  // participants, main thread included; 0: one per core
};

// False, after a message on stderr, for anything else (the sample then exits 2).
inline bool parse_sample_args(int argc, char** argv, SampleArgs& out) {
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--workers") == 0 && has_value) {
      out.workers = static_cast<std::uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (std::strcmp(argv[i], "--mode") == 0 && has_value) {
      if (!spindle::jobs::parse_mode(argv[++i], out.mode) ||
          !spindle::jobs::mode_available(out.mode)) {
        std::fprintf(stderr, "%s: --mode: '%s' is not a mode of this build\n", argv[0], argv[i]);
        return false;
      }
    } else {
      std::fprintf(stderr, "usage: %s [--mode single|static|dynamic|tbb] [--workers N]\n", argv[0]);
      return false;
    }
  }
  // A build without threads has only single mode: its default too.
  if (!spindle::jobs::mode_available(out.mode)) out.mode = spindle::jobs::Mode::Single;
  return true;
}

}  // namespace samples
