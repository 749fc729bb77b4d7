#!/usr/bin/env bash
# Session 37: cutune-bench's matmul headline figures (4096^3 full sweep, 8192^3 from its top 24,
# 4097x1023x777, 8192x64x8192) with the held start, cut at SECONDS; the log streams to OUT.
#   headline.sh [SECONDS]
set -uo pipefail
budget=${1:-250}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu, bundle $(cat .gpu/COMMIT)"
# shellcheck disable=SC1091
source .gpu/env.sh
mkdir -p /tmp/bc
python3 scripts/grid_tool.py extract .gpu/nvrtc-cache.tar.xz /tmp/bc
timeout "$budget" cutune-bench --skip-transpose --cache-dir /tmp/bc --json "$OUT/bench.json" \
  >"$OUT/bench.log" 2>&1
echo "cutune-bench: rc $?"
grep -E "^\[matmul|winner" "$OUT/bench.log" | head -20
