#!/usr/bin/env bash
# Session 28's device calls, with main's bundle carried as .gpu-main (session 27's README):
#   bench/lab/session28/call.sh OUT_DIR tests    main's GPU tests (client, profile, tuner)
#   bench/lab/session28/call.sh OUT_DIR unseen   scripts/unseen-exact.sh on tables/grid/unseen.txt's matmuls
#                                                 (the v9 table's answers timed by full sweeps)
#   bench/lab/session28/call.sh OUT_DIR why      bench/lab/session26/call.sh (ncu; no bundle)
# The first call moves .gpu-main to .gpu and fills the NVRTC cache; a warm machine keeps both.
set -uo pipefail
usage="usage: call.sh OUT_DIR tests|unseen|why"
out=${1:?$usage}
mode=${2:?$usage}
mkdir -p "$out"
if [[ -d .gpu-main ]]; then rm -rf .gpu && mv .gpu-main .gpu; fi
export CUTUNE_CACHE_DIR=/tmp/cutune-session28-cache
if [[ ! -d $CUTUNE_CACHE_DIR ]]; then
  mkdir -p "$CUTUNE_CACHE_DIR" && tar -xJf .gpu/nvrtc-cache.tar.xz -C "$CUTUNE_CACHE_DIR"
fi
# shellcheck disable=SC1091
source .gpu/env.sh
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee -a "$out/gpu.txt"
case $mode in
  tests)
    for t in client_gpu_test profile_gpu_test tuner_gpu_test; do
      s0=$(date +%s)
      timeout 270 "$t" >"$out/$t.log" 2>&1
      echo "$t: rc $? in $(( $(date +%s) - s0 )) s"
      grep -E '^\[  FAILED|^\[  PASSED|^\[==========\]' "$out/$t.log" | tail -4
    done ;;
  unseen)
    # matmul only: the table's transpose half was not re-tuned for v9 (section 14 holds it)
    grep '^matmul' tables/grid/unseen.txt >/tmp/session28-unseen.txt
    timeout 580 bash scripts/unseen-exact.sh "$out" /tmp/session28-unseen.txt
    echo "unseen-exact: rc $?"
    tail -25 "$out/unseen.log" ;;
  why) bash bench/lab/session26/call.sh "$out" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
