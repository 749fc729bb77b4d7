#!/usr/bin/env bash
# Session 38's first device call, by the GPU lent. An H200 re-tunes its whole matmul grid with the
# held start (session35/call.sh h200-all-now: tuner_gpu_test but the every-candidate test, then
# the grid; `session35/call.sh $OUT h200-all-grid` goes on in the next call). Any other GPU checks
# the timing record of main's bundle end to end (a quick sweep through cutuned, then `cutune table
# export`: its winner and sweep should say "timing": "held"), and says whether nsys is there.
#   pick.sh [SECONDS]
set -uo pipefail
budget=${1:-570}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "on $gpu, bundle $(cat .gpu/COMMIT)"
case $gpu in
  *H200*) bash bench/lab/session35/call.sh "$OUT" h200-all-now "$budget" 2>&1 | tail -40 ;;
  *)
    # shellcheck disable=SC1091
    source .gpu/env.sh
    export CUTUNE_CACHE_DIR=/tmp/cutune-check-cache
    mkdir -p $CUTUNE_CACHE_DIR
    python3 scripts/grid_tool.py extract .gpu/nvrtc-cache.tar.xz $CUTUNE_CACHE_DIR
    rm -f /tmp/check.db* /tmp/check.sock
    cutuned --db /tmp/check.db --listen unix:/tmp/check.sock >"$OUT/cutuned.log" 2>&1 &
    daemon=$!
    export CUTUNE_SERVER=unix:/tmp/check.sock
    for _ in $(seq 100); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
    cutune sweep matmul --shape 1024x1024x1024 --strategy quick >"$OUT/sweep.txt" 2>&1
    echo "sweep: rc $?"; tail -4 "$OUT/sweep.txt"
    cutune table export >"$OUT/export.json"
    echo "export: rc $?"
    grep -o '"timing": *"[a-z]*"' "$OUT/export.json" | sort | uniq -c
    cutune results matmul --shape 1024x1024x1024 2>&1 | head -5
    kill -TERM $daemon; wait $daemon
    command -v nsys || ls /usr/local/cuda/bin | grep -i nsys || echo "no nsys"
    ;;
esac
