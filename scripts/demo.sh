#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the quick performance suite on the host
# backend: laswp in four precisions beside LAPACKE, with the copy rate as its ceiling. CSVs
# and charts land in build/host/perf-results.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$top/scripts/build.sh" host
perf=$top/build/host/perf/basalt-perf
results=$top/build/host/perf-results
mkdir -p "$results"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
"$perf" --routine copy --prec d --n 4096:8192:4096 --niter 5 --energy --csv "$results/copy.csv"
"$perf" --routine laswp --prec s,d,c,z --n 4096:8192:4096 --niter 5 --vendor --check --energy \
  --csv "$results/laswp.csv"
if command -v gnuplot > /dev/null; then "$top/perf/plot.sh" "$results" "$results"/*.csv; fi
