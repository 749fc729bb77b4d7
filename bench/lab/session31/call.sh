#!/usr/bin/env bash
# Session 31's device calls. Each carries one bundle, which becomes .gpu (the first of these
# found): .gpu-sc3 (branch staged-c 5316c97 on main f2c4127: cutuned, cutune, cutune-worker,
# tuner_gpu_test and nvrtc-cache-6841f878.tar.xz; with the tree about 66 MB of the 67 MB a call
# carries) or .gpu-m31 (main e16d5bb, the same programs of main and its cache). The tree's
# checkout should match the bundle (staged-c for .gpu-sc3): the scripts read its tables.
#   bench/lab/session31/call.sh OUT_DIR grid     the H200's matmul grid for staged-c
#       (bench/lab/session30/call.sh grid), refused at once on any other GPU (the H100's grid is
#       done); again on the same warm machine until COMPLETE
#   bench/lab/session31/call.sh OUT_DIR verify   quick at 4096^3 three times and the 12 unseen
#       shapes (session 29's quick.sh; OUT/quick.tgz), then sum.sh if SUM=1 (at most 150 s), then
#       tuner_gpu_test but for EveryMatmulCandidateIsRightOnOddShapes, in what time is left
#   bench/lab/session31/call.sh OUT_DIR emc      EveryMatmulCandidateIsRightOnOddShapes alone
#       (404 s on an H100)
#   bench/lab/session31/call.sh OUT_DIR sum      sum.sh alone: the split-K sum with the next
#       split's loads in flight (refuted on an H100, kernel-notes.md session 31; CuPy only)
set -uo pipefail
usage="usage: call.sh OUT_DIR grid|verify|emc|sum"
out=${1:?$usage}
mode=${2:?$usage}
mkdir -p "$out"
start=$(date +%s)
for bundle in .gpu-sc3 .gpu-m31 .gpu-sc2; do
  if [[ -d $bundle ]]; then rm -rf .gpu && mv $bundle .gpu && break; fi
done
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu, bundle $(cat .gpu/COMMIT 2>/dev/null || echo none)" | tee -a "$out/gpu.txt"
left() { echo $(( ${1} - ($(date +%s) - start) )); }
gpu_test() {  # FILTER LOG
  export CUTUNE_CACHE_DIR=/tmp/cutune-session29-cache
  if [[ ! -d $CUTUNE_CACHE_DIR ]]; then
    mkdir -p $CUTUNE_CACHE_DIR && python3 scripts/grid_tool.py extract .gpu/nvrtc-cache-*.tar.xz $CUTUNE_CACHE_DIR
  fi
  # shellcheck disable=SC1091
  source .gpu/env.sh
  timeout "$(left 585)" tuner_gpu_test --gtest_filter="$1" >"$out/$2" 2>&1
  echo "tuner_gpu_test: rc $? at $(( $(date +%s) - start )) s"
  grep -E '^\[  FAILED|^\[  PASSED|^\[==========\]|^\[       OK|Failure|wrong' "$out/$2" | head -40
}
case $mode in
  grid)
    [[ $gpu == *H200* ]] || { echo "call.sh: the grid is for an H200 (the H100's is done); this is $gpu" >&2; exit 3; }
    bash bench/lab/session30/call.sh "$out" grid ;;
  verify)
    bash bench/lab/session29/quick.sh "$out/quick"
    tar czf "$out/quick.tgz" -C "$out" quick && rm -rf "$out/quick"
    [[ ${SUM:-0} == 1 ]] && timeout 150 bash bench/lab/session31/sum.sh "$out"
    gpu_test '-*EveryMatmulCandidateIsRightOnOddShapes*' tests.log ;;
  emc) gpu_test '*EveryMatmulCandidateIsRightOnOddShapes*' emc.log ;;
  sum) timeout "$(left 585)" bash bench/lab/session31/sum.sh "$out" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
