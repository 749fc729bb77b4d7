#!/usr/bin/env bash
# Session 31's kernel lab: the split-K sum of the last split to arrive with split s + 1's loads
# in flight while split s is added (sum-pipe.patch's lab switch CT_SUM_PIPE=1), against the
# shipped loop (0), whose iterations each wait for their loads before the next ones issue.
# Session 19 measured the sum at 6.4 us of 77.2 at 256x256x16384 (64x64 8x4 split 16).
# Predicted: that module 2-3 us faster there, 16x16x16384's split-16 tile 1-2 us; the big
# tile's split 4 within noise (its sum is a small share); the 64x128 16x4 split-8 module (163 ->
# 215 registers: 3 -> 2 blocks an SM) no better, maybe worse. Every variant checked before and
# after its timed launches (bench/kernel_lab.py).
#   bench/lab/session31/sum.sh OUT_DIR
set -uo pipefail
out=${1:?usage: sum.sh OUT_DIR}
mkdir -p "$out"
src=$out/matmul-sum.cu
cp kernels/matmul.cu "$src"
patch -s "$src" <bench/lab/session31/sum-pipe.patch || { echo "sum.sh: the patch does not apply" >&2; exit 2; }
s16="at=1,bk=32,bm=64,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,sk=0,splitk=16,stages=0,tm=8,tn=4,vec=4,warp=0"
t16="at=1,bk=32,bm=32,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,sk=0,splitk=16,stages=0,tm=4,tn=4,vec=4,warp=0"
s4w="at=1,bk=16,bm=64,bn=32,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=4,stages=0,tm=4,tn=4,vec=4,warp=0"
s8w="at=1,bk=16,bm=64,bn=32,db=1,iloop=0,minb=2,pad=4,ptxo=3,sk=0,splitk=8,stages=0,tm=4,tn=4,vec=4,warp=0"
big4="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=4,stages=0,tm=16,tn=8,vec=4,warp=1"
m8="at=1,bk=16,bm=64,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=8,stages=0,tm=16,tn=4,vec=4,warp=1"
lab() {
  local shape=$1
  shift
  local args=()
  for v in "$@"; do args+=("$v|-DCT_SUM_PIPE=0" "${v%%:*}+pipe:${v#*:}|-DCT_SUM_PIPE=1"); done
  python3 bench/kernel_lab.py matmul "$shape" --src "$src" --reps 30 "${args[@]}" 2>&1 | grep -v '^$'
}
{
  lab 256x256x16384 "s16:$s16" "t16:$t16"
  lab 16x16x16384 "t16:$t16" "s16:$s16"
  lab 8192x32x8192 "s4w:$s4w" "s8w:$s8w"
  lab 512x512x16384 "m8:$m8" "s16:$s16"
  lab 64x4096x4096 "m8:$m8"
  lab 2048x512x8192 "big4:$big4"
  lab 1024x1024x16384 "big4:$big4"
} | tee "$out/sum.log"
