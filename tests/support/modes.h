// Job systems in the modes a test runs, shared by the jobs, render, physics and swarm tests.
//
// Usage:
//   INSTANTIATE_TEST_SUITE_P(Modes, MyTest, ::testing::ValuesIn(spindle::test::own_modes()),
//                            spindle::test::mode_name);
//   TEST_P(MyTest, X) { SPINDLE_REQUIRE_MODE(GetParam());
//                       jobs::JobSystem js(spindle::test::job_config(GetParam())); ... }
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spindle/jobs/job_system.h"

namespace spindle::test {

// The job system's own modes (oneTBB has its own tests).
inline std::vector<jobs::Mode> own_modes() {
  return {jobs::Mode::Single, jobs::Mode::Static, jobs::Mode::Dynamic};
}

// Every mode this build has, oneTBB included.
inline std::vector<jobs::Mode> available_modes() {
  std::vector<jobs::Mode> out;
  for (jobs::Mode m :
       {jobs::Mode::Single, jobs::Mode::Static, jobs::Mode::Dynamic, jobs::Mode::Tbb})
    if (jobs::mode_available(m)) out.push_back(m);
  return out;
}

// The modes with worker threads that this build has (none without SPINDLE_THREADS).
inline std::vector<jobs::Mode> threaded_modes() {
  std::vector<jobs::Mode> out;
  for (jobs::Mode m : {jobs::Mode::Static, jobs::Mode::Dynamic})
    if (jobs::mode_available(m)) out.push_back(m);
  return out;
}

inline std::string mode_name(const ::testing::TestParamInfo<jobs::Mode>& info) {
  return jobs::to_string(info.param);
}

// Unpinned, so test runners' threads stay free to move.
inline jobs::Config job_config(jobs::Mode mode, std::uint32_t workers = 2) {
  jobs::Config cfg;
  cfg.workers = workers;
  cfg.mode = mode;
  cfg.pin_workers = false;
  cfg.pin_main_thread = false;
  return cfg;
}

// As job_config, but workers pinned as Config's default has it (the job system's own tests).
inline jobs::Config pinned_job_config(jobs::Mode mode, std::uint32_t workers) {
  jobs::Config cfg = job_config(mode, workers);
  cfg.pin_workers = true;
  return cfg;
}

// SPINDLE_STRESS_SCALE (default 1.0) shrinks stress sizes, e.g. 0.1 under ThreadSanitizer.
inline double stress_scale() {
  const char* value = std::getenv("SPINDLE_STRESS_SCALE");
  if (value == nullptr) return 1.0;
  const double scale = std::atof(value);
  return scale > 0.0 ? scale : 1.0;
}

}  // namespace spindle::test

#define SPINDLE_REQUIRE_MODE(mode)            \
  if (!::spindle::jobs::mode_available(mode)) \
  GTEST_SKIP() << "mode " << ::spindle::jobs::to_string(mode) << " not in this build"
