#!/usr/bin/env bash
# The portability summary: each routine's rate as a fraction of its backend's ceiling, host and
# CUDA side by side. perf/portability.sh HOST_DIR CUDA_DIR, each holding basalt-perf CSVs.
# Ceilings: the best copy rate (copy.csv) for data movement (laswp, spmv, spmm), the best gemm
# rate of the same precision (gemm.csv) for the rest. Prints a Markdown table.
set -euo pipefail
host=${1:?usage: perf/portability.sh HOST_DIR CUDA_DIR}
cuda=${2:?usage: perf/portability.sh HOST_DIR CUDA_DIR}
# dir -> "routine/prec/n fraction rate" for Basalt's own rows (the portable runs excluded, and
# getf2, a building block timed on panels of varying height)
fractions() {
  awk -F, 'FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    FILENAME ~ /\/copy\.csv$/ { if ($col["gflops"] > copy) copy = $col["gflops"]; next }
    FILENAME ~ /\/gemm\.csv$/ { p = $col["prec"]; if ($col["gflops"] > gemm[p]) gemm[p] = $col["gflops"]; next }
    $col["backend"] !~ /portable/ && $col["routine"] != "getf2" {
      n++; key[n] = $col["routine"] "/" $col["prec"] "/" $col["n"]; rate[n] = $col["gflops"]
      routine[n] = $col["routine"]; prec[n] = $col["prec"]
    }
    END {
      for (i = 1; i <= n; i++) {
        c = routine[i] ~ /^(laswp|spmv|spmm)$/ ? copy : gemm[prec[i]]
        printf "%s %s %.0f\n", key[i], (c > 0 ? sprintf(100 * rate[i] < 10 * c ? "%.1f%%" : "%.0f%%", 100 * rate[i] / c) : "-"), rate[i]
      }
    }' "$1"/copy.csv "$1"/gemm.csv $(ls "$1"/*.csv | grep -v -e /copy.csv -e /gemm.csv)
}
echo "| routine | prec | n | host rate | of host ceiling | CUDA rate | of CUDA ceiling |"
echo "|---|---|---|---|---|---|---|"
join -j1 -a1 -a2 -e - -o 0,1.2,1.3,2.2,2.3 <(fractions "$host" | sort) <(fractions "$cuda" | sort) |
  sort -t/ -k1,1 -k2,2 -k3,3n |
  awk '{ split($1, key, "/"); printf "| %s | %s | %s | %s | %s | %s | %s |\n", key[1], key[2], key[3], $3, $2, $5, $4 }'
