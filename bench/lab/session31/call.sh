#!/usr/bin/env bash
# Session 31's device calls. Each carries one bundle, which becomes .gpu:
#   .gpu-m31 (main e16d5bb: cutuned, cutune, cutune-worker, tuner_gpu_test and main's compile
#   cache). Session 30's calls for branch staged-c: bench/lab/session30.
#   bench/lab/session31/call.sh OUT_DIR verify   [.gpu-m31] main's GPU behaviour of session 30
#       (quick's one-sample timing): session 29's quick.sh (quick at 4096^3 three times, the 12
#       unseen shapes; OUT/quick.tgz), then sum.sh (at most 150 s), then tuner_gpu_test but for
#       EveryMatmulCandidateIsRightOnOddShapes, in what time is left
#   bench/lab/session31/call.sh OUT_DIR sum      [any] sum.sh alone: the split-K sum with the
#       next split's loads in flight (sum-pipe.patch's CT_SUM_PIPE=1) against the shipped loop,
#       at the K-heavy shapes' split-K winners (CuPy and NVRTC only; no bundle needed)
#   bench/lab/session31/call.sh OUT_DIR grid     [.gpu-sc2, from a checkout of staged-c] the H200's
#       matmul grid for branch staged-c (bench/lab/session30/call.sh grid), refused at once on
#       any other GPU (the H100's grid is done); again on the same warm machine until COMPLETE
set -uo pipefail
usage="usage: call.sh OUT_DIR verify|sum|grid"
out=${1:?$usage}
mode=${2:?$usage}
mkdir -p "$out"
start=$(date +%s)
for bundle in .gpu-m31; do
  if [[ -d $bundle ]]; then rm -rf .gpu && mv $bundle .gpu && break; fi
done
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu, bundle $(cat .gpu/COMMIT 2>/dev/null || echo none yet)" | tee -a "$out/gpu.txt"
left() { echo $(( ${1} - ($(date +%s) - start) )); }
case $mode in
  verify)
    bash bench/lab/session29/quick.sh "$out/quick"
    tar czf "$out/quick.tgz" -C "$out" quick && rm -rf "$out/quick"
    timeout 150 bash bench/lab/session31/sum.sh "$out"
    export CUTUNE_CACHE_DIR=/tmp/cutune-session29-cache
    # shellcheck disable=SC1091
    source .gpu/env.sh
    timeout "$(left 585)" tuner_gpu_test --gtest_filter='-*EveryMatmulCandidateIsRightOnOddShapes*' \
      >"$out/tests.log" 2>&1
    echo "tuner_gpu_test: rc $? at $(( $(date +%s) - start )) s"
    grep -E '^\[  FAILED|^\[  PASSED|^\[==========\]|^\[       OK|Failure|wrong' "$out/tests.log" | head -40 ;;
  sum) timeout "$(left 585)" bash bench/lab/session31/sum.sh "$out" ;;
  grid)
    [[ $gpu == *H200* ]] || { echo "call.sh: the grid is for an H200 (the H100's is done); this is $gpu" >&2; exit 3; }
    bash bench/lab/session30/call.sh "$out" grid ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
