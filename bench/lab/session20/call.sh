#!/usr/bin/env bash
# Session 20's device call: why.sh (ncu: cuBLAS's kernels and ours on the awkward shapes), then
# the matmul grid's four new shapes (new-shapes.txt, their winners measured at every grid shape)
# for the rest of the call; a later call goes on with --from OUT/grid.tgz.
#   [SKIP_WHY=1] bench/lab/session20/call.sh OUT_DIR SECONDS [--cache CACHE_TAR | --from GRID_TGZ]
set -uo pipefail
out=${1:?usage: call.sh OUT_DIR SECONDS [--cache CACHE_TAR | --from GRID_TGZ]}
budget=${2:?usage: call.sh OUT_DIR SECONDS}
shift 2
start=$SECONDS
if [[ ${SKIP_WHY:-0} != 1 ]]; then
  timeout 200 bash bench/lab/session20/why.sh "$out/why" 2>&1 | tee "$out/why.log"
  echo "why: $((SECONDS - start)) s"
fi
bash scripts/gpu-grid.sh "$out" $((budget - (SECONDS - start))) "$@" \
  --only bench/lab/session20/new-shapes.txt --matrix-all --near 1
