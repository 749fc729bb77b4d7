#!/usr/bin/env bash
# Session 28: what the misaligned class costs at 4096x1023x776 (the H100 lab of session 26's
# lab.sh: 4096x1024x776 big 98.8% of cuBLAS, 4096x1023x776 88.3%). Is it the scalar-load code
# or the misaligned addresses? The 4096^3 kernel ("big") in both classes at the aligned shape
# (a module of either class is right at any shape), then Nsight Compute's stall reasons and
# global-load counts for the aligned and the scalar-B module at both shapes.
#   bench/lab/session28/scalar.sh OUT_DIR
set -uo pipefail
out=${1:?usage: scalar.sh OUT_DIR}
mkdir -p "$out"
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=1,stages=0,tm=16,tn=8,vec=4,warp=1"
for shape in 4096x1024x776 4096x1023x776; do
  python3 bench/kernel_lab.py matmul "$shape" "vec:$big" "sb:$big|-DCT_SCALAR_B=1" \
    "sa:$big|-DCT_SCALAR_A=1" "sab:$big|-DCT_SCALAR_A=1 -DCT_SCALAR_B=1" --reps 30 2>&1 | grep -v '^$'
done | tee "$out/lab.log"
metrics="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum"
metrics+=",smsp__sass_inst_executed_op_global_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
metrics+=",l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
metrics+=",lts__t_sectors_srcunit_tex_op_read.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum"
for run in "4096x1024x776 vec:$big" "4096x1024x776 sb:$big|-DCT_SCALAR_B=1" "4096x1023x776 sb:$big|-DCT_SCALAR_B=1"; do
  set -- $run
  timeout 120 ncu --clock-control none --kernel-name cutune_kernel --launch-count 1 --metrics "$metrics" \
    python3 bench/kernel_lab.py matmul "$1" "$2" "${@:3}" --reps 3 >"$out/ncu-$1-${2%%:*}.txt" 2>&1
  echo "ncu $1 ${2%%:*}: rc $?"
done
