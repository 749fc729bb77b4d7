#!/usr/bin/env bash
# Session 28's kernel lab for the next device call: CT_SCALAR_B's chunks read coalesced
# (coalesce-b.patch: lane l of a warp loads columns l, l+32, l+64, l+96 of a 128-column segment,
# one 128-byte run per load, where today each lane loads four consecutive floats, 16 bytes a lane
# apart). Predicted: the misaligned-N class's 11-16% (scalar.sh, session 28) mostly gone, the big
# and wide tiles at 4096x1023x776 within 3% of 4096x1024x776's aligned module, and the aligned
# shapes unchanged (their modules are not touched). Each variant is checked before and after its
# timed launches (kernel_lab.py), at odd shapes too; cuBLAS timed interleaved.
#   bench/lab/session28/coalesce.sh OUT_DIR
set -uo pipefail
out=${1:?usage: coalesce.sh OUT_DIR}
mkdir -p "$out"
src=$out/matmul-coalesce.cu
cp kernels/matmul.cu "$src" && patch -s "$src" <bench/lab/session28/coalesce-b.patch || exit 2
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=1,stages=0,tm=16,tn=8,warp=1"
wide="at=1,bk=8,bm=128,bn=256,db=1,iloop=1,minb=0,pad=0,ptxo=3,sk=0,splitk=1,stages=0,tm=16,tn=8,warp=1"
mid="at=1,bk=8,bm=64,bn=128,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=1,stages=0,tm=8,tn=8,warp=1"
small="at=1,bk=16,bm=64,bn=32,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=4,stages=0,tm=4,tn=4,warp=0"
for shape in 4096x1024x776 4096x1023x776 4096x1021x776 4097x1023x777 4096x1024x777 3001x5003x1009 \
             1000x1001x204 129x257x4099 77x33x1000 8192x33x8191; do
  python3 bench/kernel_lab.py matmul "$shape" --src "$src" --family-class --reps 20 \
    "big0:$big,vec=4|-DCT_COALESCE_B=0" "big:$big,vec=4" \
    "wide0:$wide,vec=4|-DCT_COALESCE_B=0" "wide:$wide,vec=4" \
    "mid0:$mid,vec=4|-DCT_COALESCE_B=0" "mid:$mid,vec=4" "midv1:$mid,vec=1" \
    "small0:$small,vec=4|-DCT_COALESCE_B=0" "small:$small,vec=4" 2>&1 | grep -v '^$'
done | tee "$out/lab.log"
# 6000x250x6000 (N % 4 = 2): 80.6-84% of cuBLAS on the H100 (session 28's quick, session 23's full
# sweep); its full-sweep best and the H100 table's quick winner, both in the misaligned class.
split="at=1,bk=16,bm=64,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=2,stages=0,tm=16,tn=4,warp=1"
sk="at=1,bk=16,bm=128,bn=64,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=2,splitk=1,stages=0,tm=8,tn=8,warp=1"
for shape in 6000x250x6000 6000x252x6000; do
  python3 bench/kernel_lab.py matmul "$shape" --src "$src" --family-class --reps 20 \
    "split0:$split,vec=4|-DCT_COALESCE_B=0" "split:$split,vec=4" \
    "sk0:$sk,vec=4|-DCT_COALESCE_B=0" "sk:$sk,vec=4" 2>&1 | grep -v '^$'
done | tee -a "$out/lab.log"
