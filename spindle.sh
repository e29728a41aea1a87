#!/usr/bin/env bash
# The project's front door. Each command installs what is missing first (./bootstrap.sh).
#
#   ./spindle.sh run     build Release and run the default load-test comparison (boids, every mode,
#                        10 to 50,000 objects); prints a summary table and where the report is.
#                        Extra arguments go to spindle_loadtest (e.g. --scene imbalanced).
#   ./spindle.sh soak [SECONDS]  build Release and run the soak (default 1800 s: every scene in one
#                        world, modes switching every minute, input replayed); report in out/soak
#   ./spindle.sh jobs-bench  the job-system micro benchmarks: Spindle vs oneTBB vs serial
#   ./spindle.sh test    build and run the whole test suite (what CI runs)
#   ./spindle.sh tsan    build the tsan preset and run the tests under ThreadSanitizer
#   ./spindle.sh asan    build the asan preset and run the tests under AddressSanitizer + UBSan
#   ./spindle.sh nothreads  build with SPINDLE_THREADS=OFF (single mode only) and run its tests
#   ./spindle.sh handheld  the tiny-target profile cross-compiled for 32-bit MIPS (handheld-mipsel
#                        preset): its tests, then the tiny swarm sample (1,000 enemies), under
#                        qemu-mipsel; prints CTest's summary and the sample's last line
#   ./spindle.sh handheld-cost  instructions per frame of the tiny swarm sample (callgrind, the
#                        handheld-ship preset on this machine), beside the PS1's 1.1 M cycles, and
#                        its rasteriser's apart
#   ./spindle.sh fuzz NAME SECONDS  build the fuzz preset (clang + libFuzzer) and fuzz one parser
#                        (settings, set_args, input_map, loadtest_cli, png, wav, ogg, gltf, fbx, x,
#                        replay; `all`: every one, one per core at a time) for SECONDS each; what
#                        fails goes to build/fuzz/findings/NAME
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
  soak)
    ./bootstrap.sh
    build release spindle_soak
    ./build/release/bench/loadtest/spindle_soak --seconds "${2:-1800}" --out out/soak "${@:3}"
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
  handheld)
    ./bootstrap.sh
    build handheld-mipsel
    ctest --preset handheld-mipsel -j "$jobs"
    echo "tiny swarm sample, 1,000 enemies, under qemu-mipsel (its last image, then its last line):"
    qemu-mipsel build/handheld-mipsel/samples/spindle_sample_swarm_tiny --enemies 1000 | tail -n 2
    ;;
  handheld-cost)
    ./bootstrap.sh
    build handheld-ship spindle_sample_swarm_tiny  # as a game ships: asserts off
    exe=build/handheld-ship/samples/spindle_sample_swarm_tiny
    # Instructions collected inside function $1 in a run of $2 frames.
    collected() {
      valgrind --tool=callgrind --callgrind-out-file=/dev/null "--toggle-collect=$1" "$exe" \
        --frames "$2" --enemies 1000 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    }
    # The difference of two lengths: start-up and the first frames cancel out. Engine::frame
    # holds the simulation, the game and the render stage (transforms, culling, the ordering
    # table); rasterize() is what the PS1's GPU did, run after each frame.
    per_frame() {
      local short long
      short=$(collected "$1" 300)
      long=$(collected "$1" 900)
      echo $(((long - short) / 600))
    }
    frame=$(per_frame "spindle::core::Engine::frame(*")
    raster=$(per_frame "spindle::render::OtRenderer::rasterize(*")
    echo "tiny swarm, 1,000 enemies, instructions per frame (callgrind, frames 301-900, asserts off):"
    echo "  outside the rasteriser: $frame (simulation, game, transforms and ordering table);" \
      "a PS1 frame at 30 FPS: 1,126,666 cycles ($((frame * 100 / 1126666))% of it)"
    echo "  rasteriser (the PS1 GPU's part): $raster (320x240, RGB555)"
    ;;
  fuzz)
    ./bootstrap.sh
    name=${2:-}
    seconds=${3:-60}
    targets=(settings set_args input_map loadtest_cli png wav ogg gltf fbx x replay packed_clip)
    # At least 1 s: libFuzzer reads -max_total_time=0 as "no limit".
    if [ -z "$name" ] || ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]] ||
      { [ "$name" != all ] && [[ ! " ${targets[*]} " =~ " $name " ]]; }; then
      echo "usage: ./spindle.sh fuzz NAME SECONDS, NAME one of: ${targets[*]} all" >&2
      exit 2
    fi
    if [ "$name" = all ]; then run=("${targets[@]}"); else run=("$name"); fi
    build fuzz "${run[@]/#/spindle_fuzz_}"
    # CI runs each target with one fixed seed, so a red run reproduces; by hand each run differs.
    seed=()
    if [ "${CI:-}" = "true" ]; then seed=(-seed=1); fi
    # One target per core at a time; each prints its summary when done.
    fuzz_one() {
      local t=$1 work=build/fuzz/corpus/$1 findings=build/fuzz/findings/$1 s
      # Failed until it passes: whatever stops this function early (a missing seed list, a failed
      # copy under set -e) leaves the marker, so the run cannot report success.
      touch "build/fuzz/$t.failed"
      mkdir -p "$work" "$findings"
      # Seed folders are read in place; seed files (the Debian test models) are copied into the
      # working corpus, since libFuzzer takes folders. New inputs go to the first folder (build/).
      local seeds=()
      while IFS= read -r s; do
        if [ -d "$s" ]; then seeds+=("$s"); elif [ -f "$s" ]; then cp -f "$s" "$work/"; fi
      done < "build/fuzz/tests/fuzz/$t.seeds"
      # -timeout: an input that takes 10 s is a hang; -rss_limit_mb: one that needs 2 GiB is a
      # missing size check. LeakSanitizer ignores assimp's own leaks (import_fuzz.cpp).
      if ./build/fuzz/tests/fuzz/spindle_fuzz_"$t" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 "${seed[@]}" -artifact_prefix="$findings/" \
        "$work" "${seeds[@]}" >"build/fuzz/$t.log" 2>&1; then
        # The last count is libFuzzer's own (the importers' child processes print theirs too).
        echo "fuzz $t: $(grep -E '^stat::number_of_executed_units' "build/fuzz/$t.log" |
          tail -n 1 | grep -oE '[0-9]+') inputs in ${seconds}s, no failure"
        rm -f "build/fuzz/$t.failed"
      else
        tail -n 60 "build/fuzz/$t.log"
        echo "fuzz $t: FAILED (log: build/fuzz/$t.log, input: $findings/)"
      fi
    }
    for t in "${run[@]}"; do
      fuzz_one "$t" &
      while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
    done
    wait
    failed=()
    for t in "${run[@]}"; do [ -e "build/fuzz/$t.failed" ] && failed+=("$t"); done
    if ((${#failed[@]})); then
      echo "fuzz: ${failed[*]} found inputs that fail (build/fuzz/findings/<name>/): add each to" \
        "tests/fuzz/corpus/<name>/ so the corpus replay keeps it, then fix the parser" >&2
      exit 1
    fi
    echo "fuzz: ${run[*]}: no failures in ${seconds}s each"
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
    sed -n '2,21p' "$0"
    exit 2
    ;;
esac
