#!/usr/bin/env bash
# Packs what bench/device/run16.sh needs into .device/ (git-ignored): the stripped Release
# load test, the scheduler side-by-side driver (built by bench/peers/schedulers/run.sh), and every
# shared library they load except glibc's own (the other machine's is newer).
#
#   ./spindle.sh run --help >/dev/null            # the Release build
#   bench/device/pack.sh [path to spindle_sched_side_by_side]
set -euo pipefail
cd "$(dirname "$0")/../.."
sched="${1:-build/peers/schedulers/driver-build/spindle_sched_side_by_side}"
[[ -x build/release/bench/loadtest/spindle_loadtest ]] || { echo "pack.sh: build Release first" >&2; exit 2; }
[[ -x "$sched" ]] || { echo "pack.sh: no scheduler driver at $sched (bench/peers/schedulers/run.sh builds it)" >&2; exit 2; }
rm -rf .device/bin .device/lib
mkdir -p .device/bin .device/lib
cp build/release/bench/loadtest/spindle_loadtest .device/bin/lt
cp "$sched" .device/bin/sched
cp bench/device/run16.sh .device/run16.sh
strip .device/bin/lt .device/bin/sched
for b in .device/bin/*; do ldd "$b" | awk '/=>/ {print $3}'; done | sort -u |
  grep -v -E '/(libc|libm|libpthread|libdl|librt)\.so|ld-linux' | xargs -I{} cp -L {} .device/lib/
du -sh .device
