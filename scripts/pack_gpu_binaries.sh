#!/usr/bin/env bash
# Run here, after scripts/pack_gpu_deps.sh: builds the CUDA backend in build/cuda (nvcc is here,
# the GPU is not) and packs basalt-perf and every test, stripped and xz-compressed, into
# .gpu-bin/, to be carried to the GPU machine with .deps/sysroot (device `carry: [".deps/sysroot",
# ".gpu-bin"]`, about 55 MB). There scripts/gpu_check.sh runs them instead of building: a build
# on the GPU machine takes 3 to 4 of a session's 30 device minutes.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps=$top/.deps
build=$top/build/cuda
out=$top/.gpu-bin
[ -f "$deps/kokkos-cuda.path" ] || { echo "run scripts/pack_gpu_deps.sh first" >&2; exit 1; }
cmake -S "$top" -B "$build" -G Ninja -DBASALT_ENABLE_CUDA=ON -DCMAKE_PREFIX_PATH="$deps/sysroot" \
  > /dev/null
cmake --build "$build" -j "$(nproc)"
rm -rf "$out" && mkdir -p "$out"
for binary in "$build"/perf/basalt-perf "$build"/tests/test_*; do
  strip -o "$out/$(basename "$binary")" "$binary"
done
xz -T0 -6 "$out"/*
git -C "$top" describe --always --dirty > "$out/VERSION"
du -sh "$out"
