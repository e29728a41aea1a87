// Job systems in the modes a test runs, shared by the render, physics and swarm tests.
//
// Usage:
//   INSTANTIATE_TEST_SUITE_P(Modes, MyTest, ::testing::ValuesIn(spindle::test::own_modes()),
//                            spindle::test::mode_name);
//   TEST_P(MyTest, X) { SPINDLE_REQUIRE_MODE(GetParam());
//                       jobs::JobSystem js(spindle::test::job_config(GetParam())); ... }
#pragma once

#include <cstdint>
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

}  // namespace spindle::test

#define SPINDLE_REQUIRE_MODE(mode)            \
  if (!::spindle::jobs::mode_available(mode)) \
  GTEST_SKIP() << "mode " << ::spindle::jobs::to_string(mode) << " not in this build"
