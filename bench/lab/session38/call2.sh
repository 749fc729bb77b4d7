#!/usr/bin/env bash
# Session 38's second device call: (1) quick on a daemon holding no table, now started from the
# family's starters (before: the baseline alone, 23.5% of cuBLAS at 1024^3 on an H100); (2) the
# transpose figures of cutune-bench under the held start (the odd-sided ones read 93.3-95.2% of
# copy with the idle start: does the copy reference read faster held, as cuBLAS did?).
#   call2.sh [SECONDS]
set -uo pipefail
budget=${1:-560}
start=$(date +%s)
left() { echo $(( budget - ($(date +%s) - start) )); }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu, bundle $(cat .gpu/COMMIT)"
# shellcheck disable=SC1091
source .gpu/env.sh
export CUTUNE_CACHE_DIR=/tmp/cutune-check-cache
mkdir -p $CUTUNE_CACHE_DIR
python3 scripts/grid_tool.py extract .gpu/nvrtc-cache.tar.xz $CUTUNE_CACHE_DIR
rm -f /tmp/bare.db* /tmp/bare.sock
cutuned --db /tmp/bare.db --listen unix:/tmp/bare.sock >"$OUT/cutuned.log" 2>&1 &
daemon=$!
export CUTUNE_SERVER=unix:/tmp/bare.sock
for _ in $(seq 100); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
for s in "matmul 1024x1024x1024" "matmul 3000x500x700" "matmul 256x256x16384" "transpose 8191x4097"; do
  set -- $s
  cutune sweep "$1" --shape "$2" --strategy quick >"$OUT/quick-$1-$2.txt" 2>&1
  echo "quick $1 $2: rc $? at $(( $(date +%s) - start )) s"
  sed -n 2,3p "$OUT/quick-$1-$2.txt"; grep -E '^ 1 ' "$OUT/quick-$1-$2.txt"
done
kill -TERM $daemon; wait $daemon
mkdir -p /tmp/tc
timeout "$(left)" cutune-bench --skip-matmul --cache-dir /tmp/tc --json "$OUT/bench.json" >"$OUT/bench.log" 2>&1
echo "cutune-bench --skip-matmul: rc $? at $(( $(date +%s) - start )) s"
grep -E "vs copy|copy" "$OUT/bench.log" | tail -30
