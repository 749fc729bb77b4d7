#!/usr/bin/env bash
# Quick with the nearest winners' own places (main 3ae480a) on the GPU lent: a daemon holding the
# shipped tables (`cutuned --tables tables`), the compile cache of the grid's classes carried.
# (1) matmul 4096^3 three times (issue 14: <= 3 s on the H200, warm cache); (2) the three shapes
# whose best no portfolio holds (bench/data/h100-v10), quick then brute force on the same daemon.
#   quick.sh [SECONDS]
set -uo pipefail
budget=${1:-400}
start=$(date +%s)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu, bundle $(cat .gpu/COMMIT)"
# shellcheck disable=SC1091
source .gpu/env.sh
export CUTUNE_CACHE_DIR=/tmp/cutune-quick-cache
mkdir -p $CUTUNE_CACHE_DIR
python3 scripts/grid_tool.py extract .gpu/nvrtc-cache.tar.xz $CUTUNE_CACHE_DIR
rm -f /tmp/quick.db* /tmp/quick.sock
cutuned --db /tmp/quick.db --listen unix:/tmp/quick.sock --tables tables >"$OUT/cutuned.log" 2>&1 &
daemon=$!
export CUTUNE_SERVER=unix:/tmp/quick.sock
for _ in $(seq 200); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
mkdir -p "$OUT/quick"
for i in 1 2 3; do
  t0=$(date +%s%N)
  cutune sweep matmul --shape 4096x4096x4096 --strategy quick --top 3 >"$OUT/quick/4096-$i.txt" 2>&1
  echo "quick 4096^3 #$i: rc $?, CLI $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  sed -n 2,4p "$OUT/quick/4096-$i.txt"; grep -E '^1 ' "$OUT/quick/4096-$i.txt"
done
for shape in 3000x500x700 6000x250x6000 96x12288x4096; do
  for strategy in quick brute_force; do
    (( $(date +%s) - start > budget - 30 )) && { echo "out of time before $strategy $shape"; break 2; }
    timeout $(( budget - ($(date +%s) - start) )) cutune sweep matmul --shape $shape \
      --strategy $strategy --top 3 >"$OUT/quick/$strategy-$shape.txt" 2>&1
    echo "$strategy $shape: rc $? at $(( $(date +%s) - start )) s"
    sed -n 2,4p "$OUT/quick/$strategy-$shape.txt"; grep -E '^1 ' "$OUT/quick/$strategy-$shape.txt"
  done
done
kill -TERM $daemon; wait $daemon
tar -C "$OUT" -czf "$OUT/quick.tgz" quick && rm -rf "$OUT/quick"
