#!/usr/bin/env bash
# Run here, before a GPU check: builds the CUDA dependencies (if not cached) and gathers into
# .deps/ what the GPU machine lacks, to be carried there (device `carry: [".deps"]`):
#   .deps/kokkos-cuda/  Kokkos + Kokkos Kernels for CUDA, and .deps/kokkos-cuda.path, the cache
#                       path it must appear under (its CMake files name it)
#   .deps/sysroot/      Catch2, CLI11, nlohmann-json and LAPACKE with reference LAPACK/BLAS,
#                       from this machine's Debian packages
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$top/scripts/bootstrap.sh" --packages
prefix=$("$top/scripts/bootstrap.sh" cuda | tail -n 1)
out=$top/.deps
rm -rf "$out" && mkdir -p "$out/sysroot/lib" "$out/sysroot/include" "$out/sysroot/share/cmake"
cp -a "$prefix" "$out/kokkos-cuda"
echo "$prefix" > "$out/kokkos-cuda.path"

cp -a /usr/include/catch2 /usr/include/CLI /usr/include/nlohmann "$out/sysroot/include/"
cp -a /usr/include/lapack.h /usr/include/lapacke*.h "$out/sysroot/include/"
mkdir -p "$out/sysroot/lib/cmake"
cp -a /usr/lib/cmake/Catch2 "$out/sysroot/lib/cmake/"
cp -a /usr/lib/libCatch2WithMain.a "$out/sysroot/lib/"
cp -a /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$out/sysroot/share/cmake/"
lib=/usr/lib/x86_64-linux-gnu
cp -L "$lib/liblapacke.so.3" "$lib/lapack/liblapack.so.3" "$lib/blas/libblas.so.3" \
  "$lib/libtmglib.so.3" "$lib/libgfortran.so.5" "$lib/libquadmath.so.0" "$out/sysroot/lib/"
ln -s liblapacke.so.3 "$out/sysroot/lib/liblapacke.so"
du -sh "$out"
