#!/usr/bin/env bash
# The five matmul shapes session 38 added to the grid, on a daemon holding no table: quick, then
# brute force (every candidate of the default space). Session 38 found quick 6.5% behind the full
# sweep at 3000x500x700 on an H100, whose best is a 16x4 thread tile split 2 ways that no
# portfolio holds; these shapes are meant to give that tile grid shapes of its own. Rows exported
# to OUT/brute-rows.json.xz.
#   brute.sh [SECONDS]
set -uo pipefail
budget=${1:-300}
start=$(date +%s)
# shellcheck disable=SC1091
source .gpu/env.sh
export CUTUNE_CACHE_DIR=/tmp/cutune-grid-cache
mkdir -p $CUTUNE_CACHE_DIR
[[ -n $(ls -A $CUTUNE_CACHE_DIR) ]] || python3 scripts/grid_tool.py extract .gpu/nvrtc-cache.tar.xz $CUTUNE_CACHE_DIR
rm -f /tmp/brute.db* /tmp/brute.sock
cutuned --db /tmp/brute.db --listen unix:/tmp/brute.sock >"$OUT/brute-cutuned.log" 2>&1 &
daemon=$!
export CUTUNE_SERVER=unix:/tmp/brute.sock
for _ in $(seq 100); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
mkdir -p "$OUT/brute"
for shape in 3000x400x800 2048x640x640 640x2048x640 5120x320x5120 1536x768x1024 3000x500x700; do
  (( $(date +%s) - start > budget - 40 )) && { echo "brute: out of time before $shape"; break; }
  for strategy in quick brute_force; do
    timeout $(( budget - ($(date +%s) - start) )) cutune sweep matmul --shape $shape \
      --strategy $strategy --top 5 >"$OUT/brute/$strategy-$shape.txt" 2>&1
    echo "$strategy $shape: rc $? at $(( $(date +%s) - start )) s"
    grep -E '^ *1 ' "$OUT/brute/$strategy-$shape.txt" | head -1
  done
done
cutune table export --rows 2>/dev/null | xz >"$OUT/brute-rows.json.xz"
kill -TERM $daemon; wait $daemon
tar -C "$OUT" -czf "$OUT/brute.tgz" brute && rm -rf "$OUT/brute"
