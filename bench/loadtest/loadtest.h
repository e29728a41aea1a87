// The load-test harness behind `spindle_loadtest`: parses the command line, runs every
// (scene, object count, repeat, mode) series, prints progress and a summary table, and writes
// the report folder (run.json, summary.csv, report.md, report.html, trace.json).
//
// Usage:
//
//   spindle_loadtest --scene boids --objects 10,1000,20000 --modes single,static,dynamic,tbb
//                    --workers 2 --frames 300 --warmup 30 --repeats 3 --seed 1 --out out/boids
//
// Every numeric flag takes a decimal integer in its range (--help shows each); each scene takes
// the object counts it declares (listed at the end of --help). --dry-run checks the command line
// as a run would, prints the series it asks for and exits 0 without running or writing anything
// (the --out folder is neither checked nor created). Counts run once each, ascending.
//
// Exit codes: 0 done, 1 a run or a write failed (message on stderr), 2 bad command line,
// checked before anything runs: a value outside its range, a count outside its scene's, more
// than a million measured frames in all, or an --out folder whose report files are not files.
#pragma once

#include <iosfwd>

namespace spindle::loadtest {

// Runs the harness as the program would with these arguments; `out` gets progress and the
// summary, `err` the error messages. `crash_report`: install the crash handler
// (<spindle/base/crash.h>), writing to crash.txt in the --out folder if the run dies; the program
// does, tests running the harness in their own process do not.
int run_loadtest(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                 bool crash_report = false);

}  // namespace spindle::loadtest
