#!/usr/bin/env bash
# Session 37's device call, by the GPU lent: an H200 re-tunes its whole matmul grid with the held
# start (session35/call.sh h200-all; a second call `session35/call.sh $OUT h200-all-grid` goes
# on), an H100, whose grid this session re-tuned, tunes the unseen shapes exactly
# (scripts/unseen-exact.sh) for `cutune-predict-bench --table tables/nvidia-h100.json
# --measured OUT/unseen-rows.json --device "NVIDIA H100 80GB HBM3" --unseen tables/grid/unseen.txt`.
#   pick.sh [SECONDS]
set -uo pipefail
budget=${1:-570}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "on $gpu"
case $gpu in
  *H200*) bash bench/lab/session35/call.sh "$OUT" h200-all "$budget" 2>&1 | tail -40 ;;
  *)
    # shellcheck disable=SC1091
    source .gpu/env.sh
    export CUTUNE_CACHE_DIR=/tmp/cutune-unseen-cache
    mkdir -p $CUTUNE_CACHE_DIR
    python3 scripts/grid_tool.py extract .gpu/nvrtc-cache.tar.xz $CUTUNE_CACHE_DIR
    timeout $((budget - 20)) bash scripts/unseen-exact.sh /tmp/unseen
    echo "unseen-exact: rc $?"
    tail -25 /tmp/unseen/unseen.log
    tar -C /tmp -cJf "$OUT/unseen.tar.xz" unseen/unseen.log unseen/unseen-rows.json unseen/sweeps \
      unseen/cutuned.log
    ;;
esac
