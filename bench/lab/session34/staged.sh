#!/usr/bin/env bash
# Session 34's kernel lab: the staged C stores (kernels/matmul.cu StoreTileStaged, rebuilt this
# session after branch staged-c was lost) against the scalar stores they replace, with a lab
# switch CT_STAGED_C (0 = scalar C stores) added to a copy of the source. Session 29 measured the
# first form on an H100 (kernel-notes.md); predicted here as there: the big and wide tiles at
# 4096x1023x776 within 3% of 4096x1024x776, every variant right, aligned shapes unchanged.
#   bench/lab/session34/staged.sh OUT_DIR [SHAPE...]
set -uo pipefail
out=${1:?usage: staged.sh OUT_DIR [SHAPE...]}
shift
mkdir -p "$out"
src=$out/matmul-staged.cu
{ printf '#ifndef CT_STAGED_C\n#define CT_STAGED_C 1\n#endif\n'; cat kernels/matmul.cu; } |
  sed 's/^constexpr bool kStagedC = \(.*\);$/constexpr bool kStagedC = \1 \&\& CT_STAGED_C;/' >"$src"
grep -q '&& CT_STAGED_C;' "$src" || { echo "staged.sh: no kStagedC line in kernels/matmul.cu" >&2; exit 2; }
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=1,stages=0,tm=16,tn=8,warp=1"
wide="at=1,bk=8,bm=128,bn=256,db=1,iloop=1,minb=0,pad=0,ptxo=3,sk=0,splitk=1,stages=0,tm=16,tn=8,warp=1"
split="at=1,bk=16,bm=64,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,splitk=2,stages=0,tm=16,tn=4,warp=1"
sk="at=1,bk=16,bm=128,bn=64,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=2,splitk=1,stages=0,tm=8,tn=8,warp=1"
s16="at=1,bk=16,bm=64,bn=64,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=16,stages=0,tm=8,tn=4,warp=1"
tall="at=1,bk=16,bm=128,bn=32,db=1,iloop=0,minb=0,pad=4,ptxo=3,sk=0,splitk=8,stages=0,tm=8,tn=4,warp=1"
shapes=("$@")
[[ ${#shapes[@]} -gt 0 ]] || shapes=(4096x1024x776 4096x1023x776 4097x1023x777 1000x1001x204 77x33x1000 8191x31x8191)
for shape in "${shapes[@]}"; do
  python3 bench/kernel_lab.py matmul "$shape" --src "$src" --family-class --reps 20 \
    "big0:$big,vec=4|-DCT_STAGED_C=0" "big:$big,vec=4" "wide0:$wide,vec=4|-DCT_STAGED_C=0" "wide:$wide,vec=4" \
    "split0:$split,vec=4|-DCT_STAGED_C=0" "split:$split,vec=4" "sk0:$sk,vec=4|-DCT_STAGED_C=0" "sk:$sk,vec=4" \
    "s16:$s16,vec=4" "tall:$tall,vec=4" 2>&1 | grep -v '^$'
done | tee "$out/lab.log"
