#!/usr/bin/env bash
# Charts from basalt-perf CSV files: perf/plot.sh OUT_DIR FILE.csv [FILE.csv ...]
# One PNG per routine and precision: rate against n for each backend found and for the vendor,
# and Gflop/s per watt where the CSV has energy. Needs gnuplot (Debian's gnuplot-nox).
set -euo pipefail
out=${1:?usage: perf/plot.sh OUT_DIR FILE.csv...}
shift
mkdir -p "$out"
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
# Series files: <routine>_<prec>/<label>.dat with "n rate per_watt" lines.
awk -F, -v dir="$data" 'FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  {
    key = $col["routine"] "_" $col["prec"]
    system("mkdir -p " dir "/" key)
    print $col["n"], $col["gflops"], ($col["gflops_per_watt"] == "n/a" ? "NaN" : $col["gflops_per_watt"]) \
      >> (dir "/" key "/basalt-" $col["backend"] ".dat")
    if ($col["vendor"] != "")
      print $col["n"], $col["vendor_gflops"], "NaN" >> (dir "/" key "/" $col["vendor"] ".dat")
  }' "$@"
for series in "$data"/*/; do
  key=$(basename "$series")
  routine=${key%_*}
  unit="Gflop/s"
  case $routine in laswp|copy) unit="GB/s (read + written)" ;; esac
  plots=""
  for f in "$series"*.dat; do
    sort -n -o "$f" "$f"
    plots+="${plots:+, }'$f' using 1:2 with linespoints title '$(basename "$f" .dat)'"
  done
  gnuplot <<GNUPLOT
set terminal pngcairo size 800,500 noenhanced
set output "$out/$key.png"
set title "$key"
set xlabel "n"
set ylabel "$unit"
set key left top
set grid
plot $plots
GNUPLOT
  echo "$out/$key.png"
done
