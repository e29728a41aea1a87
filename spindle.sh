#!/usr/bin/env bash
# The project's front door. Each command installs what is missing first (./bootstrap.sh).
#
#   ./spindle.sh run     build Release and run the default load-test comparison (boids, every mode,
#                        10 to 50,000 objects); prints a summary table and where the report is.
#                        Extra arguments go to spindle_loadtest (e.g. --scene imbalanced).
#   ./spindle.sh jobs-bench  the job-system micro benchmarks: Spindle vs oneTBB vs serial
#   ./spindle.sh test    build and run the whole test suite (what CI runs)
#   ./spindle.sh tsan    build the tsan preset and run the tests under ThreadSanitizer
#   ./spindle.sh asan    build the asan preset and run the tests under AddressSanitizer + UBSan
#   ./spindle.sh nothreads  build with SPINDLE_THREADS=OFF (single mode only) and run its tests
#   ./spindle.sh format  apply clang-format (the root .clang-format) to every C++ file in git
#   ./spindle.sh format-check  list the files clang-format would change; fails if there are any
#
# Builds go to build/<preset>. CI=true turns warnings into errors.
set -euo pipefail
cd "$(dirname "$0")"

jobs=$(nproc 2>/dev/null || echo 2)
werror=()
if [ "${CI:-}" = "true" ]; then werror=(-DSPINDLE_WERROR=ON); fi

build() {  # build <preset> [targets...]
  local preset=$1; shift
  cmake --preset "$preset" "${werror[@]}" >/dev/null
  if (($#)); then
    cmake --build --preset "$preset" -j "$jobs" --target "$@"
  else
    cmake --build --preset "$preset" -j "$jobs"
  fi
}

case "${1:-}" in
  run)
    ./bootstrap.sh
    build release spindle_loadtest
    shift
    ./build/release/bench/loadtest/spindle_loadtest "$@"
    ;;
  jobs-bench)
    ./bootstrap.sh
    build release spindle_bench_jobs
    shift
    ./build/release/bench/spindle_bench_jobs "$@"
    ;;
  test)
    ./bootstrap.sh
    build release
    ctest --preset release -j "$jobs"
    ;;
  tsan)
    ./bootstrap.sh
    build tsan
    # Stress sizes shrink under TSan's ~10x slowdown, and sample replays run with 4 workers only
    # (the release stage checks 1, 2 and 4); halt_on_error makes a race fail the run.
    SPINDLE_STRESS_SCALE=${SPINDLE_STRESS_SCALE:-0.1} SPINDLE_REPLAY_WORKERS=${SPINDLE_REPLAY_WORKERS:-4} \
      TSAN_OPTIONS="halt_on_error=1 ${TSAN_OPTIONS:-}" ctest --preset tsan -j "$jobs"
    ;;
  asan)
    ./bootstrap.sh
    build asan
    SPINDLE_STRESS_SCALE=${SPINDLE_STRESS_SCALE:-0.3} ctest --preset asan -j "$jobs"
    ;;
  nothreads)
    ./bootstrap.sh
    build nothreads
    ctest --preset nothreads -j "$jobs"
    ;;
  format | format-check)
    ./bootstrap.sh
    mapfile -t files < <(git ls-files '*.h' '*.cpp')
    if [ "$1" = format ]; then
      clang-format -i "${files[@]}"
    else
      # --dry-run --Werror prints each diff as an error naming file and line, and fails on any.
      clang-format --dry-run --Werror "${files[@]}"
      echo "format-check: ${#files[@]} files follow .clang-format"
    fi
    ;;
  *)
    sed -n '2,16p' "$0"
    exit 2
    ;;
esac
