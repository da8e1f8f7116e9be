#!/usr/bin/env bash
# Configures and builds Basalt for one backend: scripts/build.sh [host|cuda]. The first run on a
# machine installs the Debian packages and builds the dependencies into the cache
# (scripts/bootstrap.sh); later runs reuse them. BASALT_BUILD_DIR overrides build/<backend>.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
backend=${1:-host}
build=${BASALT_BUILD_DIR:-$top/build/$backend}
"$top/scripts/bootstrap.sh" --packages
# Debian's OpenMP build of OpenBLAS, which the host build prefers (CMakeLists.txt says why).
if [ "$backend" = host ] &&
   ! dpkg-query -W -f='${Status}' libopenblas0-openmp 2>/dev/null | grep -q 'ok installed'; then
  as_root=(); [ "$(id -u)" = 0 ] || as_root=(sudo)
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas0-openmp >&2
fi
cuda=OFF
[ "$backend" = cuda ] && cuda=ON
cmake -S "$top" -B "$build" -G Ninja -DBASALT_ENABLE_CUDA=$cuda "${@:2}"
cmake --build "$build" -j "$(nproc)"
