#!/usr/bin/env bash
# One prepared A/B run on a 16-core machine: a baseline (a) and a change (b), packed by
# bench/device/pack-ab.sh, measured one after the other in the same machine start, so their
# ratios can be quoted. There, with OUT set:
#   bash .device/ab16.sh      (about 6.5 minutes; reports in $OUT/reports.tgz)
# Scheduler: 1M spawn (a), idle and bursts (e), frame graph (d), 16 participants. Load test:
# boids 200,000, crowd 1,000, cubes 50,000 quiet, and boids 50,000 beside 8 and 16 steady loops.
# Steps that would start after 400 s are skipped, and the reports are packed whatever happens.
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.device/lib
B=.device/bin
R=$OUT/r
mkdir -p "$R"
{ echo "nproc $(nproc)"; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket|NUMA node|L3"; cat /proc/loadavg; } | tee "$R/machine.txt"
start=$SECONDS
trap 'tar czf "$OUT/reports.tgz" -C "$OUT" r' EXIT
t() { echo "== $1 at $((SECONDS - start))s"; }
late() { (( SECONDS - start > 400 )) && { echo "skip $1 (late)"; return 0; }; return 1; }
s() { local name=$1 v=$2 limit=$3; shift 3; t "$name-$v"; timeout "$limit" $B/sched_$v --threads 16 "$@" > "$R/$name-$v.txt" 2>&1; echo "   rc=$?"; }
for v in a b; do s a $v 70 --only a --reps 3 --schedulers spindle-dynamic,spindle-static,tbb; done
s a1-enkits b 40 --only a --reps 1 --quick --schedulers enkits,spindle-dynamic
for v in a b; do s e $v 70 --only e --reps 2 --schedulers spindle-dynamic,spindle-static,enkits; done
for v in a b; do s d $v 60 --only d --reps 1 --schedulers spindle-dynamic,spindle-static,tbb; done
lt() {
  local name=$1 v=$2; shift 2
  late "$name-$v" && return
  t "$name-$v"
  timeout 60 $B/lt_$v "$@" --trace-frames 0 --no-graph --out "$R/$name-$v" > "$R/$name-$v.log" 2>&1
  echo "   rc=$? $(tail -1 "$R/$name-$v.log")"
}
for v in a b; do lt boids-200000 $v --scene boids --objects 200000 --modes single,dynamic,tbb --frames 30 --warmup 10; done
for v in a b; do lt crowd-1000 $v --scene crowd --objects 1000 --modes single,dynamic --frames 30 --warmup 10; done
for v in a b; do lt cubes-50000 $v --scene cubes --objects 50000 --modes single,dynamic --frames 30 --warmup 10; done
for bg in 8:steady 16:steady; do
  for v in a b; do
    lt "boids-50000-${bg/:/-}" $v --scene boids --objects 50000 --modes single,static,dynamic,tbb --frames 60 --warmup 10 --background "$bg"
  done
done
t done
