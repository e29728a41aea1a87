#!/usr/bin/env bash
# Builds ozz-animation from source, installs Spindle's existing release build to a prefix, builds
# the side-by-side driver against both and runs it pinned to one core.
#
#   ./spindle.sh build                      # Spindle's release build, once
#   git clone --depth 1 --branch 0.16.0 https://github.com/guillaumeblanc/ozz-animation ozz-src
#   bench/peers/ozz/run.sh ozz-src [-- driver options, e.g. --rounds 11 --seconds 0.25 --filter pose]
#
# Environment (defaults in brackets):
#   OZZ_SRC        ozz-animation source tree (or the first argument)
#   OZZ_VERSION    label for the report [0.16.0]
#   SPINDLE_DIR    Spindle checkout [this one]; SPINDLE_BUILD its release build [$SPINDLE_DIR/build/release]
#   WORK           build directories [$SPINDLE_DIR/build/peers/ozz]; SPINDLE_PREFIX where Spindle is
#                  installed for the driver [$WORK/spindle-prefix]; CPU core to pin to [CORE=1]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
OZZ_SRC="${1:-${OZZ_SRC:-}}"
if [[ -z "$OZZ_SRC" || "$OZZ_SRC" == "--" || ! -f "$OZZ_SRC/CMakeLists.txt" ]]; then
  echo "run.sh: give an ozz-animation source tree (see the top of this file)" >&2
  exit 2
fi
[[ "${1:-}" != "" && "${1:-}" != "--" ]] && shift || true
[[ "${1:-}" == "--" ]] && shift || true
OZZ_VERSION="${OZZ_VERSION:-0.16.0}"
SPINDLE_DIR="${SPINDLE_DIR:-$(cd "$here/../../.." && pwd)}"
SPINDLE_BUILD="${SPINDLE_BUILD:-$SPINDLE_DIR/build/release}"
WORK="${WORK:-$SPINDLE_DIR/build/peers/ozz}"
SPINDLE_PREFIX="${SPINDLE_PREFIX:-$WORK/spindle-prefix}"
CORE="${CORE:-1}"
jobs="$(nproc)"

echo "== ozz-animation $OZZ_VERSION from $OZZ_SRC"
# Release, -O3 -DNDEBUG, no -march (SSE2 on x86-64), like Spindle's release build; only the
# runtime and offline libraries (no samples, tests, howtos, tools, fbx, gltf, data).
cmake -S "$OZZ_SRC" -B "$WORK/ozz-build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="-O3 -DNDEBUG" -DCMAKE_INSTALL_PREFIX="$WORK/ozz-install" \
  -Dozz_build_samples=OFF -Dozz_build_howtos=OFF -Dozz_build_tests=OFF -Dozz_build_tools=OFF \
  -Dozz_build_fbx=OFF -Dozz_build_gltf=OFF -Dozz_build_data=OFF -Dozz_build_postfix=OFF >/dev/null
cmake --build "$WORK/ozz-build" -j"$jobs" >/dev/null
cmake --install "$WORK/ozz-build" >/dev/null

echo "== Spindle: installing $SPINDLE_BUILD to $SPINDLE_PREFIX (no rebuild)"
# Note: cmake --install rewrites $SPINDLE_BUILD/install_manifest.txt (CMake always does).
cmake --install "$SPINDLE_BUILD" --prefix "$SPINDLE_PREFIX" >/dev/null
commit="$(git -C "$SPINDLE_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)"

echo "== driver"
cmake -S "$here" -B "$WORK/driver-build" -DCMAKE_BUILD_TYPE=Release \
  -DOZZ_ROOT="$WORK/ozz-install" -DOZZ_VERSION="$OZZ_VERSION" \
  -DCMAKE_PREFIX_PATH="$SPINDLE_PREFIX" -DSPINDLE_SOURCE_DIR="$SPINDLE_DIR" \
  -DSPINDLE_COMMIT="$commit" >/dev/null
cmake --build "$WORK/driver-build" -j"$jobs" >/dev/null

echo "== run (taskset -c $CORE), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)"
taskset -c "$CORE" "$WORK/driver-build/spindle_ozz_side_by_side" "$@"
