// Helpers shared by the job-system tests: the modes this build can run, and the stress scale.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "spindle/jobs/job_system.h"

namespace spindle::jobs::test {

inline std::vector<Mode> available_modes() {
  std::vector<Mode> modes;
  for (Mode m : {Mode::Single, Mode::Static, Mode::Dynamic, Mode::Tbb}) {
    if (mode_available(m)) modes.push_back(m);
  }
  return modes;
}

// SPINDLE_STRESS_SCALE (default 1.0) shrinks stress sizes, e.g. 0.1 under ThreadSanitizer.
inline double stress_scale() {
  const char* value = std::getenv("SPINDLE_STRESS_SCALE");
  if (value == nullptr) return 1.0;
  const double scale = std::atof(value);
  return scale > 0.0 ? scale : 1.0;
}

inline std::string mode_name(Mode m) {
  return to_string(m);
}

inline Config config_for(Mode mode, std::uint32_t workers = 0) {
  Config config;
  config.mode = mode;
  config.workers = workers;
  config.pin_main_thread = false;  // keep test runner threads free to move
  return config;
}

}  // namespace spindle::jobs::test
