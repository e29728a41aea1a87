// The simulator against the clock: a frame of known shape measured on one and two participants,
// and its own recording replayed on as many. A binary of its own, run alone (RUN_SERIAL): a
// test running beside it would take the cores the prediction assumes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "modes.h"
#include "spin.h"
#include "spindle/jobs/job_graph.h"
#include "spindle/jobs/job_system.h"

namespace spindle::jobs {
namespace {

using test::now_ns;
using test::spin;

// --- recorded frames replayed against what was measured ----------------------------------------

// A frame-like graph of known costs: three stages in a chain, each a parallel_for of uneven
// chunks, beside an independent job; measured on `workers` participants in dynamic mode and
// predicted from its own recording.
double prediction_error(std::uint32_t workers) {
  JobSystem js(test::pinned_job_config(Mode::Dynamic, workers));
  auto frame = [&] {
    Counter side;
    js.run(side, {"side"}, [] { spin(1'500'000); });
    for (int stage = 0; stage < 3; ++stage) {
      js.parallel_for_range(0, 64, 4, [stage](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) spin(20'000 + ((i * 37 + stage * 11) % 64) * 1'000);
      });
    }
    js.wait(side);
  };
  for (int i = 0; i < 3; ++i) frame();  // warm up the threads
  std::vector<double> errors;
  for (int i = 0; i < 5; ++i) {
    JobGraph g;
    js.begin_recording();
    const std::uint64_t start = now_ns();
    frame();
    const std::uint64_t measured = now_ns() - start;
    if (!js.end_recording(g)) return 1.0;
    SimConfig c;
    c.policy = SimPolicy::Dynamic;
    c.workers = workers;
    c.handoff_ns = g.handoff_ns;
    const double predicted = static_cast<double>(simulate(g, c).frame_ns);
    errors.push_back(std::abs(predicted - static_cast<double>(measured)) /
                     static_cast<double>(measured));
  }
  std::sort(errors.begin(), errors.end());
  return errors[errors.size() / 2];
}

// Stated error: the median of five frames within 10% (the machine is shared: a worker the OS
// deschedules makes a frame slower than any schedule of its jobs).
TEST(SimulatorAccuracy, PredictsTheMeasuredFrameOnOneAndTwoWorkers) {
  SPINDLE_REQUIRE_MODE(Mode::Dynamic);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "a timing model of the uninstrumented build: sanitizers add their own costs";
#endif
  for (std::uint32_t workers : {1u, 2u}) {
    double best = 1.0;
    for (int attempt = 0; attempt < 3 && best > 0.10; ++attempt)
      best = std::min(best, prediction_error(workers));
    std::printf("%u worker(s): median prediction error %.1f%%\n", workers, best * 100);
    EXPECT_LT(best, 0.10) << workers << " worker(s)";
  }
}

}  // namespace
}  // namespace spindle::jobs
