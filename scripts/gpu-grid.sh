#!/usr/bin/env bash
# Runs scripts/tune-grid.sh on a GPU host within one device call and packs its state to go on in
# the next one, on this machine or a fresh one:
#   scripts/gpu-grid.sh OUT [SECONDS [--from GRID_TGZ] [--cache CACHE_TAR] [TUNE-GRID OPTIONS...]]
# Follows the grid for up to SECONDS (default 540; the grid starts no sweep in its last 60) and
# writes OUT/grid.tgz (the whole state: store, sweeps, logs, exports) and OUT/grid.log. The grid
# goes on from what this machine holds, else from --from (an earlier call's grid.tgz, carried);
# a grid still running here from an earlier call is followed, not started again. --cache: a tar
# (any compression) of an NVRTC compile cache filled elsewhere (`CUTUNE_CACHE_DIR=DIR cutune space
# compile FAMILY --arch sm_90`, NVRTC of the same major.minor; tables/README.md), unpacked into
# this grid's cache first, so the GPU waits for no compile of the candidates it holds. Prints
# COMPLETE, STOPPED (call again to go on) or RUNNING.
set -uo pipefail
out=${1:?usage: gpu-grid.sh OUT [SECONDS [--from GRID_TGZ] [--cache CACHE_TAR] [TUNE-GRID OPTIONS...]]}
wait_s=${2:-540}
shift $(( $# < 2 ? $# : 2 ))
from="" cache=""
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
while [[ ${1:-} == --from || ${1:-} == --cache ]]; do
  [[ -f ${2:-} ]] || { echo "gpu-grid: $1 wants a file, not '${2:-}'" >&2; exit 2; }
  if [[ $1 == --from ]]; then from=$(absolute "$2"); else cache=$(absolute "$2"); fi
  shift 2
done
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/.gpu/env.sh"
work=/tmp/grid-out
export CUTUNE_CACHE_DIR=/tmp/cutune-grid-cache
running() { [[ -f $work/pid ]] && kill -0 "$(cat $work/pid)" 2>/dev/null; }
if ! running; then
  if [[ ! -f $work/options.txt && -n $from ]]; then
    rm -rf $work
    python3 "$repo/scripts/grid_tool.py" unpack "$from" $work || { echo "gpu-grid: cannot unpack $from" >&2; exit 2; }
  fi
  mkdir -p $work $CUTUNE_CACHE_DIR
  if [[ -n $cache ]]; then
    python3 "$repo/scripts/grid_tool.py" extract "$cache" $CUTUNE_CACHE_DIR ||
      { echo "gpu-grid: cannot unpack $cache" >&2; exit 2; }
    echo "$(date +%T) compile cache: $(find $CUTUNE_CACHE_DIR -type f | wc -l) entries" >>$work/stdout.log
  fi
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv >>$work/nvidia-smi.txt
  rm -f $work/exit
  setsid bash -c "'$repo/scripts/tune-grid.sh' $work --stop-after $(( wait_s > 90 ? wait_s - 60 : 30 )) $*
                  echo \$? >$work/exit" >>$work/stdout.log 2>&1 </dev/null &
  echo $! >$work/pid
fi
for _ in $(seq "$wait_s"); do
  running || break
  sleep 1
done
tail -5 $work/grid.log
python3 "$repo/scripts/grid_tool.py" pack $work "$out/grid.tgz"
cp $work/grid.log "$out/"
if running; then echo RUNNING
elif [[ -f $work/complete ]]; then echo COMPLETE
else echo "STOPPED (exit $(cat $work/exit 2>/dev/null || echo ?)): call again to go on"; fi
