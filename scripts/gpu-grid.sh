#!/usr/bin/env bash
# Runs scripts/tune-grid.sh on a GPU host in its own session (it outlives one device call) and
# follows it: scripts/gpu-grid.sh OUT [SECONDS [TUNE-GRID OPTIONS...]]. Starts the grid unless it
# is running or done; waits up to SECONDS (default 560) and copies what it has written into OUT.
set -uo pipefail
out=${1:?usage: gpu-grid.sh OUT [SECONDS]}
wait_s=${2:-560}
shift $(( $# < 2 ? $# : 2 ))
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/.gpu/env.sh"
work=/tmp/grid-out
export CUTUNE_CACHE_DIR=/tmp/cutune-grid-cache
if [[ ! -f $work/started ]]; then
  mkdir -p $work && touch $work/started
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv >$work/nvidia-smi.txt
  setsid bash -c "'$repo/scripts/tune-grid.sh' $work $* >$work/stdout.log 2>&1; touch $work/finished" \
    </dev/null &
fi
for _ in $(seq "$wait_s"); do
  [[ -f $work/finished ]] && break
  sleep 1
done
tail -5 $work/grid.log
[[ -f $work/finished ]] && echo FINISHED || echo RUNNING
cp -r $work/. "$out/"
