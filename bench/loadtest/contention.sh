#!/usr/bin/env bash
# The contention matrix: each scene beside 0, 1 and 2 busy threads of another process (steady and
# bursty), every mode interleaved in one load-test run per cell, and one table of speedups over
# `single` from the runs' summary.csv files.
#
#   bench/loadtest/contention.sh                       # boids and swarm at 20,000, 2 cores' worth
#   SCENES="boids:20000 swarm:20000" BACKGROUNDS="none 1:steady 2:bursty" FRAMES=200 REPEATS=3 \
#     OUT=out/contention bench/loadtest/contention.sh [extra spindle_loadtest flags]
#
# Needs the release build (./spindle.sh run builds it). Each cell writes its report folder under
# $OUT/<scene>-<objects>-<background>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=build/release/bench/loadtest/spindle_loadtest
[[ -x $bin ]] || { echo "contention.sh: build the release preset first ($bin)" >&2; exit 2; }
SCENES="${SCENES:-boids:20000 swarm:20000}"
BACKGROUNDS="${BACKGROUNDS:-none 1:steady 2:steady 1:bursty 2:bursty}"
MODES="${MODES:-single,static,dynamic,tbb}"
FRAMES="${FRAMES:-200}"
REPEATS="${REPEATS:-3}"
OUT="${OUT:-out/contention}"
mkdir -p "$OUT"

for sc in $SCENES; do
  scene=${sc%%:*}
  objects=${sc##*:}
  for bg in $BACKGROUNDS; do
    dir="$OUT/$scene-$objects-${bg/:/-}"
    "$bin" --scene "$scene" --objects "$objects" --modes "$MODES" --frames "$FRAMES" \
      --repeats "$REPEATS" --background "$bg" --trace-frames 0 --out "$dir" "$@" >"$dir.log" 2>&1 ||
      { echo "contention.sh: $scene $objects $bg failed, see $dir.log" >&2; exit 1; }
  done
done

# One row per cell: the speedup over single of each mode, and dynamic's margin over tbb.
printf '| scene | objects | background |'
IFS=, read -ra modes <<<"$MODES"
for m in "${modes[@]}"; do printf ' %s |' "$m"; done
printf '\n|---|---:|---|'
for _ in "${modes[@]}"; do printf -- '---:|'; done
printf '\n'
for sc in $SCENES; do
  scene=${sc%%:*}
  objects=${sc##*:}
  for bg in $BACKGROUNDS; do
    csv="$OUT/$scene-$objects-${bg/:/-}/summary.csv"
    printf '| %s | %s | %s |' "$scene" "$objects" "$bg"
    for m in "${modes[@]}"; do
      # Columns by name, so added columns do not shift the ones read here.
      v=$(awk -F, -v mode="$m" 'NR==1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
            $c["mode"] == mode { printf "%.2fx", $c["speedup_vs_single"] }' "$csv")
      printf ' %s |' "${v:--}"
    done
    printf '\n'
  done
done
