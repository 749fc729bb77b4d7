#!/usr/bin/env bash
# The first GPU call for the session-18 patch (README.md here): the lab, then the patched build's
# split-K GPU tests, in one device call of under 10 minutes.
#   bench/lab/session18/first-call.sh OUT_DIR BUNDLE
# BUNDLE: a gpu-bundle holding the patched tree's tuner_gpu_test (it compiles its own modules
# with NVRTC on the host; the grid calls after it use the bundle's compile cache).
set -uo pipefail
out=${1:?usage: first-call.sh OUT_DIR BUNDLE}
bundle=${2:?usage: first-call.sh OUT_DIR BUNDLE}
mkdir -p "$out"
start=$SECONDS
timeout 400 bash bench/lab/splitk-tree.sh "$out/lab" >"$out/lab.log" 2>&1
echo "lab: rc $? after $((SECONDS - start)) s" | tee -a "$out/summary.txt"
# shellcheck disable=SC1091
source "$bundle/env.sh"
timeout $((560 - SECONDS)) tuner_gpu_test \
  --gtest_filter='*SplitK*:*StreamK*:*Faults*' >"$out/gpu-test.log" 2>&1
echo "tuner_gpu_test: rc $? after $((SECONDS - start)) s" | tee -a "$out/summary.txt"
grep -E '^\[( +OK|  FAILED|  PASSED) ' "$out/gpu-test.log" | tee -a "$out/summary.txt"
grep '|' "$out/lab.log" | tail -60 >>"$out/summary.txt"
