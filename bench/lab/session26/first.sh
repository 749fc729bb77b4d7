#!/usr/bin/env bash
# Session 26's device call with the v9 bundle carried as .gpu-v10: on an H200 the matmul grid of
# space v9 (bench/lab/session21/call.sh grid), on any other GPU why.sh (call.sh here), so that a
# machine that is not the H200 still answers something the next kernel change needs.
#   bench/lab/session26/first.sh OUT_DIR SECONDS --cache .gpu/nvrtc-cache.tar.xz
# (the cache's path once the bundle is moved to .gpu; on the warm machine leave --cache out)
set -uo pipefail
out=${1:?usage: first.sh OUT_DIR SECONDS [grid options]}
seconds=${2:?usage: first.sh OUT_DIR SECONDS [grid options]}
shift 2
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  rm -rf .gpu && mv .gpu-v10 .gpu && bash bench/lab/session21/call.sh "$out" grid "$seconds" "$@"
else
  bash bench/lab/session26/call.sh "$out"
fi
