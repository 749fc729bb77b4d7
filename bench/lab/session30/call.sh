#!/usr/bin/env bash
# Session 30's device calls for branch staged-c (matmul source 6841f878; README.md). Each call
# carries one bundle, which becomes .gpu: .gpu-sc2 (cutuned, cutune, cutune-worker, the compile
# cache and the H100 grid's state of session 30) or .gpu-sc2t (tuner_gpu_test, cutune-bench,
# cutune-worker, cutune and the cache).
#   bench/lab/session30/call.sh OUT_DIR grid    [.gpu-sc2] the matmul grid of whatever GPU came:
#       on an H100 it goes on from session 30's state (quick done, 79 of 128 matrix shapes), on
#       any other GPU it starts afresh; again on the same warm machine until it prints COMPLETE
#   bench/lab/session30/call.sh OUT_DIR emc     [.gpu-sc2t] tuner_gpu_test's
#       EveryMatmulCandidateIsRightOnOddShapes (479 s alone on an H100)
#   bench/lab/session30/call.sh OUT_DIR tests   [.gpu-sc2t] tuner_gpu_test but for that one
#       (quick's one-sample timing, split-K, stream-K, faults, transposes)
#   bench/lab/session30/call.sh OUT_DIR quick   [.gpu-sc2] session 29's quick.sh: quick at 4096^3
#       three times and the 12 unseen shapes, the models retrained after each job (OUT/quick.tgz)
#   bench/lab/session30/call.sh OUT_DIR bench [SHAPE...]   [.gpu-sc2t] cutune-bench's matmul figures,
#       or only these shapes of its awkward set
set -uo pipefail
usage="usage: call.sh OUT_DIR grid|emc|tests|quick|bench [SHAPE...]"
out=${1:?$usage}
mode=${2:?$usage}
shift 2
mkdir -p "$out"
start=$(date +%s)
for bundle in .gpu-sc2 .gpu-sc2t; do
  if [[ -d $bundle ]]; then rm -rf .gpu && mv $bundle .gpu && break; fi
done
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu, bundle $(cat .gpu/COMMIT)" | tee -a "$out/gpu.txt"
left() { echo $(( ${1} - ($(date +%s) - start) )); }
cache=(.gpu/nvrtc-cache-*.tar.xz)
case $mode in
  grid)
    from=()
    if [[ $gpu == *H100* && ! -f /tmp/grid-out/options.txt && -f .gpu/grid-h100-partial.tar.xz ]]; then
      from=(--from .gpu/grid-h100-partial.tar.xz)
    fi
    bash bench/lab/session21/call.sh "$out" grid "$(left 570)" "${from[@]}" --cache "${cache[0]}" ;;
  emc|tests)
    export CUTUNE_CACHE_DIR=/tmp/cutune-grid-cache
    mkdir -p $CUTUNE_CACHE_DIR
    [[ -n $(ls -A $CUTUNE_CACHE_DIR) ]] || python3 scripts/grid_tool.py extract "${cache[0]}" $CUTUNE_CACHE_DIR
    # shellcheck disable=SC1091
    source .gpu/env.sh
    filter='*EveryMatmulCandidateIsRightOnOddShapes*'
    [[ $mode == tests ]] && filter="-$filter"
    timeout "$(left 585)" tuner_gpu_test --gtest_filter="$filter" >"$out/$mode.log" 2>&1
    echo "tuner_gpu_test: rc $? in $(( $(date +%s) - start )) s"
    grep -E '^\[  FAILED|^\[  PASSED|^\[==========\]|^\[       OK|Failure|wrong|^fast ' "$out/$mode.log" | head -30 ;;
  quick)
    bash bench/lab/session29/quick.sh "$out/quick"
    tar czf "$out/quick.tgz" -C "$out" quick && rm -rf "$out/quick" ;;
  bench)
    export CUTUNE_CACHE_DIR=/tmp/cutune-bench-cache
    mkdir -p $CUTUNE_CACHE_DIR
    python3 scripts/grid_tool.py extract "${cache[0]}" $CUTUNE_CACHE_DIR
    # shellcheck disable=SC1091
    source .gpu/env.sh
    only=(--skip-transpose)
    [[ $# -gt 0 ]] && only=(--awkward-only)
    for s in "$@"; do only+=(--only "$s"); done
    table=tables/nvidia-h200.json
    [[ $gpu == *H100* ]] && table=tables/nvidia-h100.json
    timeout "$(left 580)" cutune-bench "${only[@]}" --cache-dir $CUTUNE_CACHE_DIR \
      --table $table --json "$out/bench.json" >"$out/bench.log" 2>&1
    echo "cutune-bench: rc $?"
    tail -30 "$out/bench.log" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
