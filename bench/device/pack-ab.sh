#!/usr/bin/env bash
# Packs two builds side by side for bench/device/ab16.sh: two load tests and two scheduler
# drivers (a: the baseline, b: the change), with every shared library they load except glibc's
# own. Into .device/ (git-ignored), replacing what pack.sh put there.
#
#   bench/device/pack-ab.sh LOADTEST_A LOADTEST_B SCHED_A SCHED_B
# e.g. build/release/bench/loadtest/spindle_loadtest of each commit (copied aside), and
# bench/peers/schedulers/run.sh's driver built against each commit's install.
set -euo pipefail
[[ $# -eq 4 ]] || { sed -n 2,8p "$0" >&2; exit 2; }
for f in "$@"; do [[ -x "$f" ]] || { echo "pack-ab.sh: $f is not an executable" >&2; exit 2; }; done
files=("$@")
cd "$(dirname "$0")/../.."
rm -rf .device/bin .device/lib
mkdir -p .device/bin .device/lib
cp "${files[0]}" .device/bin/lt_a
cp "${files[1]}" .device/bin/lt_b
cp "${files[2]}" .device/bin/sched_a
cp "${files[3]}" .device/bin/sched_b
cp bench/device/ab16.sh .device/ab16.sh
strip .device/bin/*
for b in .device/bin/*; do ldd "$b" | awk '/=>/ {print $3}'; done | sort -u |
  grep -v -E '/(libc|libm|libpthread|libdl|librt)\.so|ld-linux' | xargs -I{} cp -L {} .device/lib/
du -sh .device
