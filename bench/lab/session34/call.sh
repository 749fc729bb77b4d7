#!/usr/bin/env bash
# Session 34's device calls (bundle .gpu: cutuned, cutune, cutune-worker, tuner_gpu_test of this
# tree, and nvrtc-cache.tar.xz, the compile cache of every matmul candidate in the alignment
# classes the grid's shapes build (aligned, both misaligned), filled here without a GPU).
#   bench/lab/session34/call.sh OUT_DIR first   staged.sh (the staged C stores checked and timed
#       against the scalar ones, about 60 s), then the matmul grid (tables/README.md) with the
#       cache, until 570 s
#   bench/lab/session34/call.sh OUT_DIR grid [SECONDS]   the grid again, on the same warm
#       machine (it goes on where it stopped; print COMPLETE or STOPPED)
#   bench/lab/session34/call.sh OUT_DIR emc   tuner_gpu_test's every-candidate test at odd shapes
set -uo pipefail
usage="usage: call.sh OUT_DIR first|grid|emc [SECONDS]"
out=${1:?$usage}
mode=${2:?$usage}
mkdir -p "$out"
start=$(date +%s)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu, bundle $(cat .gpu/COMMIT 2>/dev/null || echo none)" | tee -a "$out/gpu.txt"
left() { echo $(( ${1} - ($(date +%s) - start) )); }
only=/tmp/session34-matmul.txt
awk '!/^#/ && NF { print "matmul", $1 }' tables/grid/matmul.txt >$only
case $mode in
  first)
    timeout 120 bash bench/lab/session34/staged.sh "$out/staged" >/dev/null 2>&1
    echo "staged.sh: rc $? at $(( $(date +%s) - start )) s"
    grep -E '^#|\|' "$out/staged/lab.log" | grep -v '^variant'
    bash scripts/gpu-grid.sh "$out" "$(left 575)" --cache .gpu/nvrtc-cache.tar.xz --only $only --near 1 ;;
  grid)
    bash scripts/gpu-grid.sh "$out" "${3:-570}" --only $only --near 1 ;;
  emc)
    export CUTUNE_CACHE_DIR=/tmp/cutune-grid-cache
    mkdir -p $CUTUNE_CACHE_DIR
    [[ -n $(ls -A $CUTUNE_CACHE_DIR) ]] || python3 scripts/grid_tool.py extract .gpu/nvrtc-cache.tar.xz $CUTUNE_CACHE_DIR
    # shellcheck disable=SC1091
    source .gpu/env.sh
    timeout "$(left 580)" tuner_gpu_test --gtest_filter='*EveryMatmulCandidate*' >"$out/emc.log" 2>&1
    echo "tuner_gpu_test: rc $? at $(( $(date +%s) - start )) s"
    grep -E '^\[  FAILED|^\[  PASSED|^\[       OK|Failure|wrong' "$out/emc.log" | head -30 ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
