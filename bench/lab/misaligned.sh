#!/usr/bin/env bash
# Misaligned operands (K or N not a multiple of 4): where does the 20% the tuned kernel loses on
# them go? bench/lab/matmul_scalarfast.cu is kernels/matmul.cu (7c8b1cc) with two lab switches:
# lab_scalar=1 lets misaligned blocks take the unchecked fast path, each float4 chunk loaded as
# four scalars (every operand: for aligned shapes it only shows what scalars cost), but for tiles
# on C's right edge when N is misaligned; lab_checked=1 sends every block through the checked loads. Odd shapes first for
# correctness (every variant is checked before and after it is timed), then each shape with the
# kernel as shipped, lab_scalar and lab_checked side by side, then ncu's warp states for two.
# kernel-notes.md, session 16 (which also records the element-order variant this replaced).
#   bench/lab/misaligned.sh OUT_DIR
set -uo pipefail
out=${1:?usage: misaligned.sh OUT_DIR}
mkdir -p "$out"
lab="python3 bench/kernel_lab.py matmul --src bench/lab/matmul_scalarfast.cu"
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,stages=0,tm=16,tn=8,vec=4,warp=1"
wide="at=1,bk=8,bm=128,bn=256,db=1,iloop=1,minb=1,pad=0,ptxo=3,stages=0,tm=16,tn=8,vec=4,warp=1"
mid="at=1,bk=16,bm=64,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,stages=0,tm=16,tn=4,vec=4,warp=1"
mid2="at=1,bk=16,bm=64,bn=128,db=1,iloop=0,minb=2,pad=4,ptxo=3,stages=0,tm=8,tn=4,vec=4,warp=1"
sq8="at=1,bk=16,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=1,stages=0,tm=8,tn=8,vec=4,warp=1"
flat="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=0,ptxo=3,stages=0,tm=16,tn=4,vec=4,warp=1"
small="at=1,bk=32,bm=64,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,stages=0,tm=8,tn=4,vec=4,warp=0"
three() {  # shape, NAME:PARAMS...: each as shipped, with lab_scalar=1 and with lab_checked=1
  local shape=$1; shift
  local v=()
  for x in "$@"; do v+=("$x" "${x/:/ scalar:},lab_scalar=1" "${x/:/ checked:},lab_checked=1"); done
  echo "== $shape =="
  $lab "$shape" "${v[@]}" | grep '|'
}
{
  for shape in 1000x1001x204 77x33x1001 129x257x4099 127x1000x255 5x3001x7 16x17x16385 64x3x999; do
    echo "== $shape (correctness, lab_scalar=1) =="
    $lab "$shape" --reps 3 "big:$big,lab_scalar=1" "big sk2:$big,sk=2,lab_scalar=1" \
      "wide:$wide,lab_scalar=1" "mid:$mid,lab_scalar=1" "mid2 sk2:$mid2,sk=2,lab_scalar=1" \
      "flat:$flat,lab_scalar=1" "mid split4:$mid,splitk=4,lab_scalar=1" \
      "small split16:$small,splitk=16,lab_scalar=1" | grep '|'
  done
  three 4097x1023x777 "wide:$wide" "big sk2:$big,sk=2"
  three 1021x2039x4093 "sq8:$sq8" "big:$big"
  three 3001x5003x1009 "mid:$mid" "big sk2:$big,sk=2"
  three 4097x4097x4097 "big sk2:$big,sk=2" "mid:$mid"
  three 2047x2047x2047 "big:$big"
  three 8191x127x4095 "mid split2:$mid,splitk=2"
  three 1031x1031x3067 "mid2 sk2:$mid2,sk=2"
  three 4096x4096x4097 "big sk2:$big,sk=2"
  three 4096x4097x4096 "big sk2:$big,sk=2"
  three 4096x4096x4096 "big sk2:$big,sk=2"
  three 8192x8192x64 "flat:$flat"
  if command -v ncu > /dev/null; then
    for v in "shipped:$big,sk=2" "scalar:$big,sk=2,lab_scalar=1"; do
      echo "== ncu 4096x4096x4097 ${v%%:*} =="
      ncu --kernel-name cutune_kernel --launch-count 1 --section WarpStateStats \
        --section InstructionStats --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__inst_executed.sum \
        $lab 4096x4096x4097 --profile "$v" 2>&1 | grep -E "Stall|stall|Warp Cycles|Executed Ipc|inst_executed|wavefronts|sectors|Issued" | head -30
    done
  fi
} 2>&1 | tee "$out/misaligned.log"
