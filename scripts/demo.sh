#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the quick performance suite on the host
# backend: laswp beside LAPACKE, with the copy rate as its ceiling. The CSV lands in build/host.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$top/scripts/build.sh" host
perf=$top/build/host/perf/basalt-perf
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
"$perf" --routine copy --prec d --n 1000:4000:1000 --niter 5 --energy --csv "$top/build/host/perf-copy.csv"
"$perf" --routine laswp --prec s,d,c,z --n 1000:4000:1000 --niter 5 --vendor --check --energy \
  --csv "$top/build/host/perf-laswp.csv"
