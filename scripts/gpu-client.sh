#!/usr/bin/env bash
# The client runtime on a GPU host (issue 15's evidence), from a bundle made by
# ../shared/tools/gpu-bundle: client_gpu_test offline and against a warm cutuned, the example,
# and cutune-client-bench (first launch, cache, per-launch overhead) both ways.
#   scripts/gpu-client.sh OUT_DIR
set -uo pipefail
out=${1:?usage: gpu-client.sh OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/.gpu/env.sh"
mkdir -p "$out"
export CUTUNE_CACHE_DIR=/tmp/cutune-client-cache CUTUNE_TEST_TABLES=$root/tables
log=$out/client.log
say() { echo "$@" | tee -a "$log"; }
run() { say "\$ $*"; "$@" 2>&1 | tee -a "$log"; say "(exit ${PIPESTATUS[0]})"; }
table=$root/tables/nvidia-h200.json

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$log"
say "== client_gpu_test, offline table =="
client_gpu_test >"$out/client_gpu_offline.log" 2>&1
say "exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/client_gpu_offline.log" | tr '\n' ' ')"
grep -E '^(matmul|transpose) ' "$out/client_gpu_offline.log" | tee -a "$log"

rm -f /tmp/cutune-client.db*
cutuned --db /tmp/cutune-client.db --listen unix:/tmp/cutuned-client.sock --tables "$root/tables" \
  >"$out/cutuned.log" 2>&1 &
daemon=$!
export CUTUNE_SERVER=unix:/tmp/cutuned-client.sock
for _ in $(seq 100); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
run cutune devices
say "== client_gpu_test, through cutuned =="
CUTUNE_TEST_SERVER=$CUTUNE_SERVER client_gpu_test >"$out/client_gpu_daemon.log" 2>&1
say "exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/client_gpu_daemon.log" | tr '\n' ' ')"
grep -E '^(matmul|transpose) ' "$out/client_gpu_daemon.log" | tee -a "$log"
say "== example =="
run cutune-example 1000 3000 500
run cutune-example --table "$table" --offline 257 509 1021
say "== cutune-client-bench =="
for i in 1 2; do run cutune-client-bench --table "$table"; done
for i in 1 2 3; do run cutune-client-bench --server "$CUTUNE_SERVER" --table "$table"; done
kill -TERM $daemon; wait $daemon; say "cutuned exit $?"
