#!/usr/bin/env bash
# Session 29's kernel lab: C through shared memory where its rows are misaligned (branch
# staged-c, with staged-switch.patch's lab switch CT_STAGED_C: 0 = main's scalar stores).
# memory.sh found the misaligned class's loss in C's stores, not B's loads: at 4096x1023x776 the
# scalar stores write 7.1 bytes a sector, 4.5x the sectors. Predicted: the big and wide tiles at
# 4096x1023x776 within 3% of 4096x1024x776 (the scalar B loads cost about 2% there, session 28),
# every variant ok, the aligned shapes unchanged (N % 4 == 0 never takes the staged path).
#   bench/lab/session29/staged.sh OUT_DIR
set -uo pipefail
out=${1:?usage: staged.sh OUT_DIR}
mkdir -p "$out"
src=$out/matmul-staged.cu
cp kernels/matmul.cu "$src"
grep -q CT_STAGED_C "$src" || patch -s "$src" <bench/lab/session29/staged-switch.patch ||
  { echo "staged.sh: run it on branch staged-c (the patch applies to its kernels/matmul.cu)" >&2; exit 2; }
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=1,stages=0,tm=16,tn=8,warp=1"
wide="at=1,bk=8,bm=128,bn=256,db=1,iloop=1,minb=0,pad=0,ptxo=3,sk=0,splitk=1,stages=0,tm=16,tn=8,warp=1"
mid="at=1,bk=8,bm=64,bn=128,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=1,stages=0,tm=8,tn=8,warp=1"
small="at=1,bk=16,bm=64,bn=32,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=4,stages=0,tm=4,tn=4,warp=0"
split="at=1,bk=16,bm=64,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=2,stages=0,tm=16,tn=4,warp=1"
sk="at=1,bk=16,bm=128,bn=64,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=2,splitk=1,stages=0,tm=8,tn=8,warp=1"
s64="at=1,bk=16,bm=64,bn=32,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=4,stages=0,tm=4,tn=4,warp=1"
for shape in 4096x1024x776 4096x1023x776 4096x1021x776 4097x1023x777 3001x5003x1009 1000x1001x204 \
             129x257x4099 77x33x1000 8192x33x8191 6000x250x6000 6000x252x6000 2047x2047x2047; do
  python3 bench/kernel_lab.py matmul "$shape" --src "$src" --family-class --reps 20 \
    "big0:$big,vec=4|-DCT_STAGED_C=0" "big:$big,vec=4" "wide0:$wide,vec=4|-DCT_STAGED_C=0" "wide:$wide,vec=4" \
    "mid0:$mid,vec=4|-DCT_STAGED_C=0" "mid:$mid,vec=4" "split0:$split,vec=4|-DCT_STAGED_C=0" "split:$split,vec=4" \
    "sk0:$sk,vec=4|-DCT_STAGED_C=0" "sk:$sk,vec=4" "w640:$s64,vec=4|-DCT_STAGED_C=0" "w64:$s64,vec=4" \
    "small:$small,vec=4" 2>&1 | grep -v '^$'
done | tee "$out/lab.log"
