#!/usr/bin/env bash
# Session 28: scalar.sh found the misaligned class's loss in waiting on global loads (ncu: long
# scoreboard 0.06 -> 0.25 a issued instruction; same code, same instructions). Do loads issued
# earlier (ptxas -O1 keeps them at the loop's top) or a cp.async pipeline of 3-4 stages hide it?
#   bench/lab/session28/latency.sh OUT_DIR
set -uo pipefail
out=${1:?usage: latency.sh OUT_DIR}
mkdir -p "$out"
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,sk=0,splitk=1,stages=0,tm=16,tn=8,vec=4,warp=1"
wide="at=1,bk=8,bm=128,bn=256,db=1,iloop=1,minb=0,pad=0,sk=0,splitk=1,stages=0,tm=16,tn=8,vec=4,warp=1"
cp="at=1,bk=8,bm=128,bn=128,db=0,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=1,tm=16,tn=8,vec=4,warp=1"
cpw="at=1,bk=8,bm=128,bn=256,db=0,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=1,tm=16,tn=8,vec=4,warp=1"
for shape in 4096x1023x776 4097x1023x777 4096x1024x776; do
  python3 bench/kernel_lab.py matmul "$shape" "big:$big,ptxo=3" "big1:$big,ptxo=1" \
    "wide:$wide,ptxo=3" "wide1:$wide,ptxo=1" "cp3:$cp,stages=3" "cp4:$cp,stages=4" \
    "cpw3:$cpw,stages=3" "cpw4:$cpw,stages=4" --reps 20 --family-class 2>&1 | grep -v '^$'
done | tee "$out/lab.log"
