#!/usr/bin/env bash
# One prepared run on a 16-core machine: the scaling of the load-test scenes at 16 workers, the
# contention beside 8 and 16 steady loops, and the scheduler comparison with 16 participants.
# bench/device/pack.sh copies this to .device/run16.sh beside the binaries; there, with OUT set:
#   bash .device/run16.sh      (about 5 minutes; reports in $OUT/reports.tgz)
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=$PWD/.device/lib
B=.device/bin
R=$OUT/r
mkdir -p "$R"
{ echo "nproc $(nproc)"; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket|NUMA node|L3"; cat /proc/loadavg; } > "$R/machine.txt"
cat "$R/machine.txt"
start=$SECONDS
lt() { local name=$1 t=$2; shift 2; echo "== $name at $((SECONDS - start))s"; timeout "$t" $B/lt "$@" --out "$R/$name" > "$R/$name.log" 2>&1; echo "   rc=$? $(tail -1 "$R/$name.log")"; }
# 1. Scaling at 16 workers: the three scenes of the target, single / dynamic / tbb.
lt boids-200000 90 --scene boids --objects 200000 --modes single,dynamic,tbb --frames 40 --warmup 10
lt crowd-1000 90 --scene crowd --objects 1000 --modes single,dynamic,tbb --frames 40 --warmup 10
lt cubes-50000 90 --scene cubes --objects 50000 --modes single,dynamic,tbb --frames 40 --warmup 10
# 2. Beside 8 and 16 steady loops.
for bg in 8:steady 16:steady; do
  lt "boids-50000-${bg/:/-}" 60 --scene boids --objects 50000 --modes single,static,dynamic,tbb --frames 80 --warmup 10 --background "$bg" --trace-frames 0 --no-graph
done
# Beside 16 loops every core is busy. Dynamic mode stops pinning then only on machines of at most
# 4 cores (EngineConfig::unpin_when_busy_max_cores), so above it kept pinning: the same row with
# the rule on any machine, to compare in one start.
lt boids-50000-16-steady-unpin-when-busy 60 --scene boids --objects 50000 --modes single,dynamic --frames 80 --warmup 10 --background 16:steady --trace-frames 0 --no-graph --unpin-when-busy-cores 0
# 3. Scheduler comparison, 16 participants (enkiTS's 1M spawn at 16 takes ~40 s a rep: left out of a).
s() { local name=$1 t=$2; shift 2; echo "== $name at $((SECONDS - start))s"; timeout "$t" $B/sched --threads 16 "$@" > "$R/$name.txt" 2>&1; echo "   rc=$?"; }
s sched-a 60 --only a --reps 3 --schedulers spindle-dynamic,spindle-static,tbb,taskflow
s sched-e 90 --only e --reps 3
s sched-a1-enkits 30 --only a --reps 1 --schedulers enkits,spindle-dynamic --quick
s sched-bcd 120 --only b,c,d --reps 1
echo "== done at $((SECONDS - start))s"
tar czf "$OUT/reports.tgz" -C "$OUT" r && rm -rf "$R"
