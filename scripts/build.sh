#!/usr/bin/env bash
# Configures and builds Basalt for one backend: scripts/build.sh [host|cuda]. The first run on a
# machine installs the Debian packages and builds the dependencies into the cache
# (scripts/bootstrap.sh); later runs reuse them. BASALT_BUILD_DIR overrides build/<backend>.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
backend=${1:-host}
build=${BASALT_BUILD_DIR:-$top/build/$backend}
"$top/scripts/bootstrap.sh" --packages
cuda=OFF
[ "$backend" = cuda ] && cuda=ON
cmake -S "$top" -B "$build" -G Ninja -DBASALT_ENABLE_CUDA=$cuda "${@:2}"
cmake --build "$build" -j "$(nproc)"
