// The one place for job modes and configs in tests: the modes a test runs, job and engine
// configs, the stress scale, and the same-result-in-every-mode check. Used by every test folder.
//
// Usage:
//   INSTANTIATE_TEST_SUITE_P(Modes, MyTest, ::testing::ValuesIn(spindle::test::own_modes()),
//                            spindle::test::mode_name);
//   TEST_P(MyTest, X) { SPINDLE_REQUIRE_MODE(GetParam());
//                       jobs::JobSystem js(spindle::test::job_config(GetParam())); ... }
#pragma once

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spindle/jobs/job_system.h"
#if __has_include(<spindle/engine/engine.h>)
#include <spindle/engine/engine.h>
#endif

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

#if __has_include(<spindle/engine/engine.h>)
// An unpinned engine in `mode` with `workers` participants (tests share the machine). Only for
// tests that link the engine.
inline core::EngineConfig engine_config(jobs::Mode mode, std::uint32_t workers,
                                        std::uint32_t entity_capacity = 65536) {
  core::EngineConfig c;
  c.mode = mode;
  c.workers = workers;
  c.pin_workers = false;
  c.entity_capacity = entity_capacity;
  return c;
}
#endif

// Determinism check for one whole run: calls run(mode, workers) in every mode this build has,
// with each worker count (single mode: 1 only), and expects each result (a world hash, or
// anything comparable) to equal the single-threaded one, which it returns.
//   expect_same_in_every_mode([](jobs::Mode m, std::uint32_t w) { return run_scene(m, w); });
template <class Run>
auto expect_same_in_every_mode(Run&& run,
                               std::initializer_list<std::uint32_t> workers = {1u, 2u, 4u}) {
  const auto reference = run(jobs::Mode::Single, 1u);
  for (jobs::Mode mode : available_modes()) {
    for (std::uint32_t w : workers) {
      if (mode == jobs::Mode::Single && w != 1) continue;
      if (mode != jobs::Mode::Single || w != 1) {
        EXPECT_EQ(run(mode, w), reference) << jobs::to_string(mode) << " with " << w << " workers";
      }
    }
  }
  return reference;
}

}  // namespace spindle::test

// Death tests re-execute the test binary ("threadsafe": safe beside the job system's threads); a
// build without threads forks only ("fast"), which also works where the binary cannot be
// executed directly (the mipsel tests under qemu-mipsel).
#define SPINDLE_DEATH_TEST_STYLE() \
  GTEST_FLAG_SET(death_test_style, SPINDLE_THREADS ? "threadsafe" : "fast")

// For a test whose jobs or stages throw: the handheld profile's engine code is built without
// exceptions (a job that throws there ends the program), so the test is skipped there.
#if SPINDLE_HANDHELD
#define SPINDLE_REQUIRE_ENGINE_EXCEPTIONS() \
  GTEST_SKIP() << "the handheld profile's engine code has no exceptions"
#else
#define SPINDLE_REQUIRE_ENGINE_EXCEPTIONS() (void)0
#endif

#define SPINDLE_REQUIRE_MODE(mode)            \
  if (!::spindle::jobs::mode_available(mode)) \
  GTEST_SKIP() << "mode " << ::spindle::jobs::to_string(mode) << " not in this build"
