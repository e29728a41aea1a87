#!/usr/bin/env bash
# Installs Spindle's existing release build to a prefix, builds the scheduler side-by-side driver
# against it and the enkiTS and Taskflow source trees, and runs it (it pins its own threads).
#
#   ./spindle.sh build                      # Spindle's release build, once
#   git clone https://github.com/dougbinks/enkiTS enkits-src
#   git -C enkits-src checkout 771a087
#   git clone https://github.com/taskflow/taskflow taskflow-src
#   git -C taskflow-src checkout 83f90a2
#   bench/peers/schedulers/run.sh enkits-src taskflow-src [-- driver options, e.g. --reps 15]
#
# Environment (defaults in brackets):
#   ENKITS_SRC, TASKFLOW_SRC      the source trees (or the first two arguments)
#   ENKITS_VERSION, TASKFLOW_VERSION  labels for the report [git describe of the tree, or unknown]
#   SPINDLE_DIR    Spindle checkout [this one]
#   SPINDLE_BUILD  its release build [$SPINDLE_DIR/build/release]
#   WORK           build directories [$SPINDLE_DIR/build/peers/schedulers]
#   SPINDLE_PREFIX where Spindle is installed for the driver [$WORK/spindle-prefix]; when given and
#                  already holding an install, it is used as is (no install from SPINDLE_BUILD)
#   SPINDLE_COMMIT label for the report [git rev-parse --short HEAD of SPINDLE_DIR]
#   JOBS           parallel compile jobs [nproc]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
ENKITS_SRC="${ENKITS_SRC:-}"
TASKFLOW_SRC="${TASKFLOW_SRC:-}"
if [[ $# -gt 0 && "$1" != -* ]]; then ENKITS_SRC="$1"; shift; fi
if [[ $# -gt 0 && "$1" != -* ]]; then TASKFLOW_SRC="$1"; shift; fi
if [[ "${1:-}" == "--" ]]; then shift; fi
if [[ -z "$ENKITS_SRC" || ! -f "$ENKITS_SRC/src/TaskScheduler.cpp" ]]; then
  echo "run.sh: give an enkiTS source tree (see the top of this file)" >&2
  exit 2
fi
if [[ -z "$TASKFLOW_SRC" || ! -f "$TASKFLOW_SRC/taskflow/taskflow.hpp" ]]; then
  echo "run.sh: give a Taskflow source tree (see the top of this file)" >&2
  exit 2
fi
ENKITS_SRC="$(cd "$ENKITS_SRC" && pwd)"
TASKFLOW_SRC="$(cd "$TASKFLOW_SRC" && pwd)"
SPINDLE_DIR="${SPINDLE_DIR:-$(cd "$here/../../.." && pwd)}"
SPINDLE_BUILD="${SPINDLE_BUILD:-$SPINDLE_DIR/build/release}"
WORK="${WORK:-$SPINDLE_DIR/build/peers/schedulers}"
JOBS="${JOBS:-$(nproc)}"

# A label for a peer's tree: its commit when it is the top of a git checkout (an exported tree
# inside another checkout would otherwise be labelled with that checkout's commit).
describe() {
  if [[ "$(git -C "$1" rev-parse --show-toplevel 2>/dev/null)" == "$(cd "$1" && pwd -P)" ]]; then
    git -C "$1" describe --tags --always
  else
    echo unknown
  fi
}
ENKITS_VERSION="${ENKITS_VERSION:-$(describe "$ENKITS_SRC")}"
TASKFLOW_VERSION="${TASKFLOW_VERSION:-$(describe "$TASKFLOW_SRC")}"

if [[ -n "${SPINDLE_PREFIX:-}" && -f "$SPINDLE_PREFIX/lib/cmake/Spindle/SpindleConfig.cmake" ]]
then
  echo "== Spindle: using the install in $SPINDLE_PREFIX"
else
  SPINDLE_PREFIX="${SPINDLE_PREFIX:-$WORK/spindle-prefix}"
  echo "== Spindle: installing $SPINDLE_BUILD to $SPINDLE_PREFIX (no rebuild)"
  # Note: cmake --install rewrites $SPINDLE_BUILD/install_manifest.txt (CMake always does).
  cmake --install "$SPINDLE_BUILD" --prefix "$SPINDLE_PREFIX" >/dev/null
fi
if [[ -z "${SPINDLE_COMMIT:-}" ]]; then
  SPINDLE_COMMIT="$(git -C "$SPINDLE_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)"
fi

echo "== driver: enkiTS $ENKITS_VERSION ($ENKITS_SRC), Taskflow $TASKFLOW_VERSION ($TASKFLOW_SRC)"
cmake -S "$here" -B "$WORK/driver-build" \
  -DENKITS_SRC="$ENKITS_SRC" -DTASKFLOW_SRC="$TASKFLOW_SRC" \
  -DCMAKE_PREFIX_PATH="$SPINDLE_PREFIX" -DSPINDLE_COMMIT="$SPINDLE_COMMIT" \
  -DENKITS_VERSION="$ENKITS_VERSION" -DTASKFLOW_VERSION="$TASKFLOW_VERSION" >/dev/null
cmake --build "$WORK/driver-build" -j"$JOBS" >/dev/null

echo "== run, $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$WORK/driver-build/spindle_sched_side_by_side" "$@"
