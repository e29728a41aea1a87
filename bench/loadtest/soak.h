// The soak run behind `spindle_soak`: the `soak` scene (crowd, boids, Bullet bodies spawned and
// destroyed every step, the orchestra's voices and streamed music, sparks with sounds) run for a
// wall-clock time in one engine, as a game runs for hours: the job mode changes every
// --switch-every seconds (single, static, dynamic, tbb in turn) and the `burst` action comes from
// a recorded input file, replayed again each time it ends. Every second it samples the resident
// memory, the open files, the mixer's voices, the frame times and each stage's times; at the end
// it writes soak.json, soak.csv and soak.html (charts of all of them over time) to --out and
// prints one line per target:
//
//   resident memory growth after warm-up <= 1%   (warm-up: the first minute, or a sixth of
//                                                  shorter runs; every mode has run before it)
//   errors (log errors, exceptions) = 0
//   open files at the end = after warm-up
//   each stage's p99, first vs last 5 minutes (a quarter of shorter runs), mode by mode:
//                                                  within 10%
//
// Usage:
//
//   spindle_soak --seconds 1800 --out out/soak     # the 30-minute run (./spindle.sh soak)
//   spindle_soak --seconds 60 --switch-every 10    # CI's one minute
//
// Exit codes: 0 every target met (the p99 one only with --gate-timing: timing on a shared
// machine is reported, not asserted), 1 a target missed or a write failed, 2 bad command line.
#pragma once

#include <iosfwd>

namespace spindle::loadtest {

int run_soak(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace spindle::loadtest
