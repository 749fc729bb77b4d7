#!/usr/bin/env bash
# What cuBLAS launches for the awkward shapes we lose, next to our winner there (the shipped
# table's), under Nsight Compute: grid, block, registers, occupancy, issue and stall figures.
#   bench/lab/session20/why.sh OUT_DIR [TABLE]   (TABLE: default tables/nvidia-h200.json)
set -uo pipefail
out=${1:?usage: why.sh OUT_DIR [TABLE]}
table=${2:-tables/nvidia-h200.json}
mkdir -p "$out"
sections="--section LaunchStats --section Occupancy --section SpeedOfLight --section SchedulerStats --section WarpStateStats"
shapes="256x256x16384 2048x512x8192 127x8192x4096 6144x192x8192 512x512x16384 4096x4096x4096"
ncu --profile-from-start off $sections python3 bench/lab/session20/cublas_once.py $shapes \
  >"$out/ncu-cublas.txt" 2>&1
echo "cublas: rc $?"
# winner SHAPE: the table's matmul winner there, as kernel_lab.py takes it (k=v,...).
winner() {
  python3 - "$table" "$1" <<'PY'
import json, sys
table, shape = sys.argv[1], [int(v) for v in sys.argv[2].split("x")]
for device in json.load(open(table))["devices"]:
    for w in device["winners"]:
        if w["family"] == "matmul" and w["shape"] == shape:
            print(",".join(f"{k}={w['params'][k]}" for k in sorted(w["params"])))
            sys.exit(0)
sys.exit(f"no matmul winner for {sys.argv[2]} in {table}")
PY
}
for shape in $shapes; do  # our kernel's first launch (its check) under ncu
  params=$(winner "$shape") || continue
  ncu --kernel-name cutune_kernel --launch-count 1 $sections \
    python3 bench/kernel_lab.py matmul "$shape" "$params" --reps 3 >"$out/ncu-ours-$shape.txt" 2>&1
  echo "ours $shape ($params): rc $?"
done
