#!/usr/bin/env bash
# Session 39's device calls, by the GPU lent: the whole matmul grid (tables/grid/matmul.txt, 145
# shapes, five of them new in session 38) re-tuned with the held start, after tuner_gpu_test but
# its every-candidate test. An H200: session35/call.sh h200-all-now, then h200-all-grid; any other
# GPU: h100-now, then h100-grid. A grid that is complete leaves the rest of the call to brute.sh
# (the five new shapes swept whole on a bare daemon: does quick find their best?).
#   pick.sh first|next [SECONDS]
set -uo pipefail
step=${1:?usage: pick.sh first|next [SECONDS]}
budget=${2:-560}
start=$(date +%s)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "on $gpu, bundle $(cat .gpu/COMMIT)"
case $gpu in *H200*) which=h200-all ;; *) which=h100 ;; esac
case $step in
  first) mode=$which-now ;;
  next) mode=$which-grid ;;
  *) echo "usage: pick.sh first|next [SECONDS]" >&2; exit 2 ;;
esac
bash bench/lab/session35/call.sh "$OUT" "$mode" "$budget" 2>&1 | tail -30
left=$(( budget - ($(date +%s) - start) ))
if grep -q COMPLETE "$OUT/grid.log" 2>/dev/null || [[ -f /tmp/grid-out/complete ]]; then
  (( left > 60 )) && bash bench/lab/session39/brute.sh "$(( left - 20 ))"
fi
