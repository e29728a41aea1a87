#!/usr/bin/env bash
# Installs what Spindle needs to build and test on Debian 12, and nothing that is already there.
# Run as root (or with sudo available). Prints what it does; a no-op when everything is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format  # toolchain
  libsdl2-dev libbullet-dev libglm-dev                       # platform, physics, math
  libtbb-dev                                                 # oneTBB reference backend
  googletest libgtest-dev libgmock-dev libbenchmark-dev      # tests and benchmarks
  libinih-dev nlohmann-json3-dev libcli11-dev                # config, JSON, command lines
  libassimp-dev assimp-testmodels                            # model import, test assets
  libstb-dev                                                 # PNG and Ogg Vorbis through stb
  libgl-dev libegl-dev libegl-mesa0 libgl1-mesa-dri          # bench/render only: GL headers, EGL + llvmpipe
  libsdl2-mixer-dev libopenal-dev                            # bench/audio only: the mixers compared
  xvfb xauth                                                 # tests only: a real X11 window (xvfb-run)
  clang libclang-rt-14-dev llvm                              # tests only: the fuzz preset (libFuzzer), llvm-symbolizer
  g++-mipsel-linux-gnu qemu-user valgrind                    # the handheld profile: mipsel cross build, qemu, callgrind
  libinih-dev:mipsel libgtest-dev:mipsel libstb-dev:mipsel   # ... and its libraries for mipsel (multiarch)
)
# Not gcc-multilib: on Debian 12 it removes the cross compilers.

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "bootstrap: all ${#packages[@]} packages present, nothing to do"
  exit 0
fi

sudo=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "bootstrap: missing packages (${missing[*]}) and not root: run as root" >&2
    exit 1
  fi
fi

echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# The handheld profile's libraries come from Debian's mipsel architecture, beside the amd64 ones.
if [[ " ${missing[*]} " == *":mipsel "* ]] && ! dpkg --print-foreign-architectures | grep -qx mipsel; then
  $sudo dpkg --add-architecture mipsel
fi
$sudo apt-get update
$sudo apt-get install -y --no-install-recommends "${missing[@]}"
echo "bootstrap: done"
