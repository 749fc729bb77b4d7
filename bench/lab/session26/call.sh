#!/usr/bin/env bash
# Session 26's first device call, which needs no bundle: what cuBLAS launches at the awkward
# shapes still under 90% of it, and our shipped winners there, under Nsight Compute
# (bench/lab/session20/why.sh, with the misaligned class and the clocks left alone); then
# lab.sh: 4097x1023x777's winner at its aligned and misaligned neighbours.
#   bench/lab/session26/call.sh OUT_DIR
set -uo pipefail
out=${1:?usage: call.sh OUT_DIR}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv,noheader | tee "$out/gpu.txt"
SHAPES="256x256x16384 4097x1023x777 2048x512x8192 127x8192x4096 4096x4096x4096" \
  timeout 330 bash bench/lab/session20/why.sh "$out/why" 2>&1 | tee "$out/why.log"
timeout 180 bash bench/lab/session26/lab.sh "$out/lab"
