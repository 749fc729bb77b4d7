#!/usr/bin/env bash
# The transpose's input paths and where odd shapes lose (kernel-notes.md, session 8), on a GPU
# host with CuPy: plain ld.global against the read-only path (ld.global.nc, the product's
# loads) against a texture object, on aligned and odd shapes; then which side of an odd shape
# costs (rows odd: misaligned stores; cols odd: misaligned loads), with Nsight Compute counters.
#   bench/lab/load-paths.sh OUT_DIR
set -uo pipefail
out=${1:?usage: load-paths.sh OUT_DIR}
mkdir -p "$out"
lab="python3 bench/kernel_lab.py transpose"
tex="--src bench/lab/transpose_tex.cu"
s2="tile=64,rows=8,vec=4,pad=0,swizzle=2"
v4p="tile=64,rows=8,vec=4,pad=1,swizzle=0"
v1="tile=64,rows=8,vec=1,pad=0,swizzle=1,minb=2"

for shape in 8192x8192 16384x16384 4096x4096 2048x2048 32768x128 8191x4097 3001x20001 10007x10007; do
  echo "== $shape: product kernel, read-only path (nc) against plain loads =="
  $lab "$shape" "nc s2:$s2" "plain s2:$s2,plain=1" "nc v4p:$v4p" "plain v4p:$v4p,plain=1" \
    "nc v1:$v1" "plain v1:$v1,plain=1"
  echo "== $shape: texture input (bench/lab/transpose_tex.cu) =="
  variants=("tex1d v1:$v1,tex=1" "tex1d v4p:$v4p,tex=1")
  [[ $shape == 8191x4097 || $shape == 3001x20001 || $shape == 10007x10007 ]] ||
    variants+=("tex2d v1:$v1,tex=2")
  $lab "$shape" $tex "${variants[@]}"
done 2>&1 | tee "$out/load-paths.log"

for shape in 8192x4096 8191x4096 8192x4097 8191x4097; do
  echo "== $shape: which side of an odd shape costs =="
  $lab "$shape" "v1:$v1" "v4p:$v4p" "s2:$s2"
done 2>&1 | tee "$out/odd-sides.log"

metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,\
lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,\
lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,\
lts__t_sectors_op_write.sum,lts__t_sector_op_read_hit_rate.pct
for shape in 8192x4096 8191x4096 8192x4097 8191x4097; do
  ncu --csv --kernel-name cutune_kernel --metrics "$metrics" \
    $lab "$shape" --profile "v1:$v1" "s2:$s2" 2>&1 | grep -E '^"' >"$out/ncu-$shape.csv"
done
echo "ncu done"
