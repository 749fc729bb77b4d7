#!/usr/bin/env bash
# Session 29: the misaligned class's loss is not the warp's access pattern (coalesce.sh refuted
# it). Same instructions, same sectors within 4%, yet long-scoreboard stalls x4 at 4096x1023x776:
# where do the loads wait? Nsight Compute's full set (raw page) for main's scalar-B module ("big")
# at the aligned and the misaligned shape; compare.py lists the metrics that moved.
#   bench/lab/session29/memory.sh OUT_DIR
set -uo pipefail
out=${1:?usage: memory.sh OUT_DIR}
mkdir -p "$out"
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=1,stages=0,tm=16,tn=8,vec=4,warp=1"
for shape in 4096x1024x776 4096x1023x776; do
  timeout 200 ncu --clock-control none --kernel-name cutune_kernel --launch-count 1 --set full \
    --page raw --csv python3 bench/kernel_lab.py matmul "$shape" "sb:$big|-DCT_SCALAR_B=1" --reps 3 \
    >"$out/ncu-$shape.csv" 2>"$out/ncu-$shape.err"
  echo "ncu $shape: rc $?"
done
python3 bench/lab/session29/compare.py "$out/ncu-4096x1024x776.csv" "$out/ncu-4096x1023x776.csv" \
  | tee "$out/moved.txt" | head -80
