// The job system the micro benchmarks run their parallel side on: dynamic mode with 2
// participants (the developers' machines), made on first use and kept for the process.
//
// Usage: spindle::bench::two_worker_jobs().parallel_for_range(0, n, 0, fn);
#pragma once

#include <spindle/jobs/job_system.h>

namespace spindle::bench {

inline jobs::JobSystem& two_worker_jobs() {
  static jobs::JobSystem js([] {
    jobs::Config c;
    c.workers = 2;
    c.mode = jobs::Mode::Dynamic;
    return c;
  }());
  return js;
}

}  // namespace spindle::bench
