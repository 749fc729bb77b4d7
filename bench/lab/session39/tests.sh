#!/usr/bin/env bash
# The GPU tests at main's bundle (session 39: quick's start changed): tuner_gpu_test but its
# every-matmul-candidate test (the longest), then client_gpu_test. Logs under OUT.
#   tests.sh [SECONDS]
set -uo pipefail
budget=${1:-420}
start=$(date +%s)
echo "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), bundle $(cat .gpu/COMMIT)"
# shellcheck disable=SC1091
source .gpu/env.sh
export CUTUNE_CACHE_DIR=/tmp/cutune-test-cache
timeout $(( budget - 90 )) tuner_gpu_test --gtest_filter='-*EveryMatmulCandidate*' >"$OUT/tuner_gpu_test.log" 2>&1
echo "tuner_gpu_test: rc $? at $(( $(date +%s) - start )) s"
grep -E '^\[  FAILED|^\[  PASSED|^\[       OK|Failure' "$OUT/tuner_gpu_test.log" | head -20
timeout $(( budget - ($(date +%s) - start) )) client_gpu_test >"$OUT/client_gpu_test.log" 2>&1
echo "client_gpu_test: rc $? at $(( $(date +%s) - start )) s"
grep -E '^\[  FAILED|^\[  PASSED|^\[       OK|Failure' "$OUT/client_gpu_test.log" | head -20
