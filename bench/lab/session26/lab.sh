#!/usr/bin/env bash
# Where 4097x1023x777 (all three sides odd: A's and B's rows misaligned, one M row past 32
# tiles) loses against our own 4096^3 efficiency: the shipped winner and the 4096^3 kernel, each
# in the alignment class the family compiles for the shape (--family-class), at the six shapes odd
# in K, N, both or neither (bench/kernel_lab.py: checked before and after timing, cuBLAS timed
# interleaved in the same run).   bench/lab/session26/lab.sh OUT_DIR
set -uo pipefail
out=${1:?usage: lab.sh OUT_DIR}
mkdir -p "$out"
wide="at=1,bk=8,bm=128,bn=256,db=1,iloop=1,minb=0,pad=0,ptxo=3,sk=0,splitk=1,stages=0,tm=16,tn=8,vec=4,warp=1"
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=1,stages=0,tm=16,tn=8,vec=4,warp=1"
bigsk="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=2,splitk=1,stages=0,tm=16,tn=8,vec=4,warp=1"
for shape in 4096x1024x776 4096x1024x777 4096x1023x776 4096x1023x777 4097x1023x777 4097x1024x776; do
  python3 bench/kernel_lab.py matmul "$shape" "wide:$wide" "big:$big" "bigsk2:$bigsk" \
    --reps 30 --family-class 2>&1 | grep -v '^$'
done | tee "$out/lab.log"
