#!/usr/bin/env bash
# Session 37: the awkward matmul set (cutune-bench --awkward-only, 14 shapes, full sweeps of
# space v10 with the held start, quick from this GPU's shipped table) on whatever GPU is lent,
# the compile cache of the grid's classes carried (aligned and both-odd: every awkward shape).
#   awkward.sh [SECONDS]
set -uo pipefail
budget=${1:-520}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $gpu in *H200*) table=tables/nvidia-h200.json ;; *) table=tables/nvidia-h100.json ;; esac
echo "$gpu, bundle $(cat .gpu/COMMIT), table $table"
# shellcheck disable=SC1091
source .gpu/env.sh
mkdir -p /tmp/bc
python3 scripts/grid_tool.py extract .gpu/nvrtc-cache.tar.xz /tmp/bc
timeout "$budget" cutune-bench --skip-transpose --awkward-only --table $table --cache-dir /tmp/bc \
  --json "$OUT/bench.json" >"$OUT/bench.log" 2>&1
echo "cutune-bench: rc $?"
grep -E "^\[matmul|winner|awkward set" "$OUT/bench.log" | grep -E "full|awkward set|cuBLAS" | tail -60
grep -iE "median|worst" "$OUT/bench.log" | tail -5
