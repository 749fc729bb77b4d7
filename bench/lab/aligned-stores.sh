#!/usr/bin/env bash
# Output windows aligned to sectors (CT_ALIGN, bench/lab/transpose_aligned.cu) against the
# product's kernels on odd transposes, on a GPU host with CuPy; then Nsight Compute counters.
#   bench/lab/aligned-stores.sh OUT_DIR
set -uo pipefail
out=${1:?usage: aligned-stores.sh OUT_DIR}
mkdir -p "$out"
lab="python3 bench/kernel_lab.py transpose"
src="--src bench/lab/transpose_aligned.cu"
s2="tile=64,rows=8,vec=4,pad=0,swizzle=2"
v1="tile=64,rows=8,vec=1,pad=0,swizzle=1,minb=2"
v4p="tile=64,rows=8,vec=4,pad=1,swizzle=0"
for shape in 8192x4096 8191x4096 8192x4097 8191x4097 4097x8191 3001x20001 12287x3071 10007x10007 16383x16383; do
  echo "== $shape =="
  $lab "$shape" $src "v1:$v1" "s2:$s2" "v4p:$v4p" \
    "a1s:$v1,align=1" "a1p:tile=64,rows=8,vec=1,pad=1,align=1" \
    "a1p16:tile=64,rows=16,vec=1,pad=1,align=1" \
    "a4p:$v4p,align=1" "a4p16:tile=64,rows=16,vec=4,pad=1,align=1" \
    "a4s:tile=64,rows=8,vec=4,pad=0,swizzle=1,align=1" "a4s16:tile=64,rows=16,vec=4,pad=0,swizzle=1,align=1" \
    "a4sm:tile=64,rows=8,vec=4,pad=0,swizzle=1,minb=4,align=1" \
    "a2p:tile=64,rows=8,vec=2,pad=1,align=1" "a2s:tile=64,rows=8,vec=2,pad=0,swizzle=1,align=1" \
    "a4p32:tile=32,rows=8,vec=4,pad=1,align=1" "a1s32:tile=32,rows=8,vec=1,pad=0,swizzle=1,align=1"
done 2>&1 | tee "$out/aligned.log"

metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_op_write.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed
for shape in 8192x4096 8191x4096 8191x4097; do
  echo "## ncu-$shape (v1 a1s a4p a4s)"
  ncu --csv --kernel-name cutune_kernel --metrics "$metrics" \
    $lab "$shape" $src --profile "v1:$v1" "a1s:$v1,align=1" "a4p:$v4p,align=1" \
    "a4s:tile=64,rows=8,vec=4,pad=0,swizzle=1,align=1" 2>&1 | grep -E '^"'
done >"$out/ncu.csv" 2>&1
echo "ncu done"
