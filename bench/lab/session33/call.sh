#!/usr/bin/env bash
# Session 33's device calls, from a tree at branch `cluster` (it holds session 32's call.sh too).
#   bench/lab/session33/call.sh OUT_DIR lab   [carry .gpu-cl]
#       1. cluster.sh: the kernel lab of split-K summed across thread-block clusters (cupy);
#       2. tuner_gpu_test's ClusterSplitKModulesAreRight from .gpu-cl (branch cluster: space
#          v11; its modules compiled there, none is in any cache yet)
#   .gpu-cl: tuner_gpu_test and cutune-worker of branch cluster.
set -uo pipefail
usage="usage: call.sh OUT_DIR lab"
out=${1:?$usage}
mode=${2:?$usage}
mkdir -p "$out"
start=$(date +%s)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu, bundle $(cat .gpu-cl/COMMIT 2>/dev/null || echo none)" | tee -a "$out/gpu.txt"
left() { echo $(( ${1} - ($(date +%s) - start) )); }
case $mode in
  lab)
    timeout "$(left 270)" bash bench/lab/session33/cluster.sh "$out/cluster" >/dev/null 2>&1
    echo "cluster.sh: rc $? at $(( $(date +%s) - start )) s"
    cat "$out/cluster/cluster.log"
    rm -rf .gpu && mv .gpu-cl .gpu
    export CUTUNE_CACHE_DIR=/tmp/cutune-cluster-cache
    mkdir -p $CUTUNE_CACHE_DIR
    # shellcheck disable=SC1091
    source .gpu/env.sh
    timeout "$(left 470)" tuner_gpu_test --gtest_filter='*ClusterSplitK*' >"$out/cluster-test.log" 2>&1
    echo "tuner_gpu_test: rc $? at $(( $(date +%s) - start )) s"
    grep -E '^\[  FAILED|^\[  PASSED|^\[       OK|Failure|wrong' "$out/cluster-test.log" | head -30 ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
