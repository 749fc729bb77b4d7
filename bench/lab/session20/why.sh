#!/usr/bin/env bash
# What cuBLAS launches for the awkward shapes we lose, next to our winner there (the shipped
# table's), under Nsight Compute: grid, block, registers, occupancy, issue and stall figures.
#   bench/lab/session20/why.sh OUT_DIR [TABLE]   (TABLE: default tables/nvidia-h200.json)
set -uo pipefail
out=${1:?usage: why.sh OUT_DIR [TABLE]}
table=${2:-tables/nvidia-h200.json}
mkdir -p "$out"
sections="--section LaunchStats --section Occupancy --section SpeedOfLight --section SchedulerStats --section WarpStateStats"
shapes=${SHAPES:-"256x256x16384 2048x512x8192 127x8192x4096 6144x192x8192 512x512x16384 4096x4096x4096"}
# METHOD.md: leave the clocks alone (ncu locks them to base by default)
ncu --clock-control none --profile-from-start off $sections python3 bench/lab/session20/cublas_once.py $shapes \
  >"$out/ncu-cublas.txt" 2>&1
echo "cublas: rc $?"
for shape in $shapes; do  # our kernel's first launch (its check) under ncu
  params=$(python3 scripts/grid_tool.py winner "$table" matmul "$shape") || continue
  ncu --clock-control none --kernel-name cutune_kernel --launch-count 1 $sections \
    python3 bench/kernel_lab.py matmul "$shape" "$params" --reps 3 --family-class >"$out/ncu-ours-$shape.txt" 2>&1
  echo "ours $shape ($params): rc $?"
done
