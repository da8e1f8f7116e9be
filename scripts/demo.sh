#!/usr/bin/env bash
# Sets everything up on a fresh machine and runs the quick performance suite on the host
# backend: every landed routine beside LAPACKE, with the copy and gemm rates as ceilings. CSVs
# and charts land in build/host/perf-results.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$top/scripts/build.sh" host
perf=$top/build/host/perf/basalt-perf
results=$top/build/host/perf-results
mkdir -p "$results"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)} OMP_PROC_BIND=${OMP_PROC_BIND:-false}
"$perf" --routine copy --prec d --n 4096:8192:4096 --niter 5 --energy --csv "$results/copy.csv"
"$perf" --routine gemm --prec s,d,c,z --n 2000 --niter 3 --energy --csv "$results/gemm.csv"
"$perf" --routine laswp --prec s,d,c,z --n 4096:8192:4096 --niter 5 --vendor --check --energy \
  --csv "$results/laswp.csv"
"$perf" --routine getrf --prec d,z --n 1000:2000:1000 --niter 3 --vendor --check --energy \
  --csv "$results/getrf.csv"
"$perf" --routine potrf --prec d,z --n 1000:2000:1000 --niter 3 --vendor --check --csv "$results/potrf.csv"
"$perf" --routine geqrf --prec d,z --n 1000:2000:1000 --niter 3 --vendor --check --csv "$results/geqrf.csv"
for r in getrf_batched potrf_batched geqrf_batched; do
  "$perf" --routine $r --prec d --n 8:32:24 --batch 2000 --niter 3 --vendor --check --csv "$results/$r.csv"
done
for format in csr sellp; do
  "$perf" --routine spmv --prec d --n 64 --format $format --niter 5 --csv "$results/spmv-$format.csv"
done
"$perf" --routine lobpcg --prec d --n 24 --nrhs 4 --niter 1 --csv "$results/lobpcg.csv"
if command -v gnuplot > /dev/null; then "$top/perf/plot.sh" "$results" "$results"/*.csv; fi
