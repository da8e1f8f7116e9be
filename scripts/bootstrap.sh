#!/usr/bin/env bash
# Builds Basalt's dependencies into a cache outside the checkout and prints the install prefix.
#
#   scripts/bootstrap.sh host|cuda          build (or reuse) and print the prefix on the last line
#   scripts/bootstrap.sh --prefix host|cuda print the prefix the build would use, build nothing
#   scripts/bootstrap.sh --packages         install the Debian packages the build and tests need
#
# Kokkos and Kokkos Kernels 3.4.01 come from Debian bookworm's trilinos source package, patched
# with cmake/patches/. The cache key is the backend plus a hash of the patch set and this script,
# so a changed patch or option gives a fresh build and an unchanged one is reused.
# BASALT_DEPS_CACHE overrides the cache root (default: ~/.cache/basalt).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
cache=${BASALT_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/basalt}
jobs=${BASALT_BUILD_JOBS:-$(nproc)}

debian_packages=(build-essential cmake ninja-build catch2 libopenblas-dev liblapacke-dev
                 libcli11-dev nlohmann-json3-dev gnuplot-nox patch ca-certificates)

log() { echo "[bootstrap] $*" >&2; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

install_packages() {
  local missing=()
  for p in "${debian_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
}

patch_set_hash() {
  (cd "$top" && find cmake/patches -type f -name '*.patch' | LC_ALL=C sort | xargs cat; cat "$here/bootstrap.sh") |
    sha256sum | cut -c1-12
}

prefix_for() { echo "$cache/$1-$(patch_set_hash)"; }

# Downloads trilinos' source through a private apt configuration (a deb-src entry of our own),
# leaving the machine's sources untouched.
fetch_trilinos() {
  local dl=$cache/downloads
  local tarball=$dl/trilinos_13.2.0.orig.tar.gz
  [ -f "$tarball" ] && { echo "$tarball"; return; }
  mkdir -p "$dl/apt/lists/partial" "$dl/apt/sources"
  cat > "$dl/apt/sources/bookworm-src.sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  local opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$dl/apt/sources"
              -o "Dir::State::Lists=$dl/apt/lists" -o APT::Sandbox::User=root)
  log "downloading Debian bookworm's trilinos source package"
  apt-get "${opts[@]}" update -qq >&2
  (cd "$dl" && apt-get "${opts[@]}" source --download-only trilinos=13.2.0-4 >&2)
  echo "$tarball"
}

extract_and_patch() { # $1 = source dir to create
  local src=$1 tarball
  tarball=$(fetch_trilinos)
  rm -rf "$src" && mkdir -p "$src"
  log "extracting Kokkos and Kokkos Kernels 3.4.01"
  tar xzf "$tarball" -C "$src" --strip-components=2 --wildcards \
    '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  for pkg in kokkos kokkos-kernels; do
    for p in "$top"/cmake/patches/$pkg/*.patch; do
      log "patch $pkg: $(head -n 1 "$p")"
      patch -d "$src/$pkg" -p1 --forward --quiet < "$p"
    done
  done
}

build() { # $1 = host|cuda
  local backend=$1 prefix
  prefix=$(prefix_for "$backend")
  if [ -f "$prefix/.complete" ]; then echo "$prefix"; return; fi
  install_packages
  local work=$prefix.work
  extract_and_patch "$work/src"
  local common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17
                -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_INSTALL_PREFIX="$prefix")
  local kokkos_opts kk_opts
  case $backend in
    host)
      kokkos_opts=(-DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON)
      kk_opts=(-DKokkosKernels_ENABLE_TPL_BLAS=ON -DKokkosKernels_ENABLE_TPL_LAPACK=ON
               -DBLAS_LIBRARIES=openblas -DLAPACK_LIBRARIES=openblas
               -DKokkosKernels_INST_FLOAT=ON -DKokkosKernels_INST_DOUBLE=ON
               -DKokkosKernels_INST_COMPLEX_FLOAT=ON -DKokkosKernels_INST_COMPLEX_DOUBLE=ON
               -DKokkosKernels_INST_LAYOUTLEFT=ON -DKokkosKernels_INST_LAYOUTRIGHT=OFF
               -DKokkosKernels_INST_ORDINAL_INT=ON -DKokkosKernels_INST_OFFSET_INT=ON
               # size_t offsets and the Serial space run from headers: instantiating them too
               # would take this build (already half an hour on 2 cores) to an hour.
               -DKokkosKernels_INST_OFFSET_SIZE_T=OFF -DKokkosKernels_INST_EXECSPACE_SERIAL=OFF)
      ;;
    cuda)
      # nvcc_wrapper is the compiler Kokkos 3.4 supports for CUDA; it uses the host g++.
      common+=(-DCMAKE_CXX_COMPILER="$work/src/kokkos/bin/nvcc_wrapper")
      kokkos_opts=(-DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ENABLE_SERIAL=ON
                   -DKokkos_ARCH_HOPPER90=ON)
      # No explicit instantiations: a CUDA instantiation of Kokkos Kernels takes 7 minutes on
      # 16 cores and 400 MB (../shared/FACTS.md); Basalt instantiates what it uses from headers.
      # cuSPARSE stays off: without instantiations its spmv path fails to link.
      kk_opts=(-DKokkosKernels_ENABLE_TPL_CUBLAS=ON -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF
               -DKokkosKernels_ADD_DEFAULT_ETI=OFF -DKokkosKernels_INST_DOUBLE=OFF
               -DKokkosKernels_INST_OFFSET_SIZE_T=OFF -DKokkosKernels_INST_OFFSET_INT=OFF
               -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_LAYOUTLEFT=OFF)
      ;;
    *) echo "unknown backend '$backend' (host or cuda)" >&2; exit 2 ;;
  esac
  log "building Kokkos ($backend) with $jobs jobs"
  cmake -S "$work/src/kokkos" -B "$work/build-kokkos" "${common[@]}" "${kokkos_opts[@]}" >&2
  cmake --build "$work/build-kokkos" -j "$jobs" >&2
  cmake --install "$work/build-kokkos" >&2
  log "building Kokkos Kernels ($backend) with $jobs jobs"
  [ "$backend" = cuda ] && common+=(-DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper")
  cmake -S "$work/src/kokkos-kernels" -B "$work/build-kk" "${common[@]}" -DKokkos_ROOT="$prefix" \
    -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF "${kk_opts[@]}" >&2
  cmake --build "$work/build-kk" -j "$jobs" >&2
  cmake --install "$work/build-kk" >&2
  rm -rf "$work"
  touch "$prefix/.complete"
  log "installed into $prefix"
  echo "$prefix"
}

case ${1:-} in
  --packages) install_packages ;;
  --prefix) prefix_for "${2:?backend}" ;;
  host|cuda) build "$1" ;;
  *) echo "usage: $0 host|cuda | --prefix host|cuda | --packages" >&2; exit 2 ;;
esac
