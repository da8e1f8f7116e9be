#!/usr/bin/env bash
# The portability summary: each routine's rate as a fraction of its backend's ceiling, host and
# CUDA side by side. perf/portability.sh HOST_DIR CUDA_DIR, each holding basalt-perf CSVs
# (copy.csv for the bandwidth ceiling, one CSV per routine). Prints a Markdown table.
# Ceilings: the best copy rate for data movement (laswp; SpMV when it lands).
set -euo pipefail
host=${1:?usage: perf/portability.sh HOST_DIR CUDA_DIR}
cuda=${2:?usage: perf/portability.sh HOST_DIR CUDA_DIR}
rates() { # dir -> "routine prec n gflops" for the Basalt rows of every CSV but copy.csv
  for f in "$1"/*.csv; do
    [ "$(basename "$f")" = copy.csv ] && continue
    awk -F, 'FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      $col["backend"] !~ /portable/ { print $col["routine"], $col["prec"], $col["n"], $col["gflops"] }' "$f"
  done
}
ceiling() { awk -F, 'FNR > 1 && $10 > best { best = $10 } END { print best + 0 }' "$1/copy.csv"; }
host_ceiling=$(ceiling "$host")
cuda_ceiling=$(ceiling "$cuda")
echo "| routine | prec | n | host GB/s | of host copy ($host_ceiling GB/s) | CUDA GB/s | of CUDA copy ($cuda_ceiling GB/s) |"
echo "|---|---|---|---|---|---|---|"
join -j1 -a1 -a2 -e - -o 0,1.2,2.2 \
  <(rates "$host" | awk '{ print $1 "/" $2 "/" $3, $4 }' | sort) \
  <(rates "$cuda" | awk '{ print $1 "/" $2 "/" $3, $4 }' | sort) |
  sort -t/ -k1,1 -k2,2 -k3,3n |
  awk -v hc="$host_ceiling" -v cc="$cuda_ceiling" '{
    split($1, key, "/")
    h = $2 == "-" ? "-" : sprintf("%.0f", $2); hf = $2 == "-" ? "-" : sprintf("%.0f%%", 100 * $2 / hc)
    c = $3 == "-" ? "-" : sprintf("%.0f", $3); cf = $3 == "-" ? "-" : sprintf("%.0f%%", 100 * $3 / cc)
    printf "| %s | %s | %s | %s | %s | %s | %s |\n", key[1], key[2], key[3], h, hf, c, cf
  }'
