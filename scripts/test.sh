#!/usr/bin/env bash
# Builds the host backend (dependencies included, on a fresh machine) and runs every test.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$top/scripts/build.sh" host
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
ctest --test-dir "$top/build/host" --output-on-failure --timeout 600
