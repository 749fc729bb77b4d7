#!/usr/bin/env bash
# Two matmul changes against the kernel before them (bench/lab/matmul_streamk.cu, the stream-K
# kernel as first shipped): split-K sums its partials in the last split to arrive instead of
# adding into C one split after another, and edge tiles (M or N not a multiple of the tile) take
# the unchecked fast path with clamped rows and chunks. First odd shapes for correctness (every
# variant is checked before and after it is timed), then the shapes each change is for, and
# 4096^3 to show the fast path's winner unchanged. kernel-notes.md, session 11.
#   bench/lab/edges-partials.sh OUT_DIR
set -uo pipefail
out=${1:?usage: edges-partials.sh OUT_DIR}
mkdir -p "$out"
lab="python3 bench/kernel_lab.py matmul"
old="--src bench/lab/matmul_streamk.cu"
new="--src kernels/matmul.cu"
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=2,pad=4,ptxo=3,stages=0,tm=16,tn=8,vec=4,warp=1"
big8="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=2,pad=4,ptxo=3,stages=0,tm=8,tn=8,vec=4,warp=1"
wide="at=1,bk=8,bm=128,bn=256,db=1,iloop=1,minb=1,pad=4,ptxo=3,stages=0,tm=16,tn=8,vec=4,warp=1"
mid="at=1,bk=16,bm=64,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,stages=0,tm=16,tn=4,vec=4,warp=1"
small="at=1,bk=32,bm=64,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,stages=0,tm=8,tn=4,vec=4,warp=0"
thin="at=1,bk=16,bm=64,bn=32,db=1,iloop=0,minb=0,pad=4,ptxo=3,stages=0,tm=4,tn=4,vec=4,warp=0"
flat="at=1,bk=16,bm=32,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,stages=0,tm=4,tn=4,vec=4,warp=1"
cpa="at=1,bk=16,bm=128,bn=128,db=0,iloop=0,minb=0,pad=4,ptxo=3,stages=3,tm=8,tn=8,vec=4,warp=1"
one="at=0,bk=16,bm=64,bn=64,db=1,iloop=1,minb=0,pad=4,ptxo=3,stages=0,tm=4,tn=4,vec=1,warp=0"
both() {  # shape, variants...: the old kernel's row, then the new one's
  local shape=$1; shift
  echo "== $shape =="
  echo "-- before"; $lab "$shape" $old "$@" | grep '|'
  echo "-- after"; $lab "$shape" $new "$@" | grep '|'
}
{
  for shape in 1000x1000x1000 77x36x1000 129x260x4100 16x16x16384 5x3000x7 127x1000x256; do
    echo "== $shape (correctness, new kernel) =="
    $lab "$shape" $new --reps 3 "big:$big" "big sk2:$big,sk=2" "wide:$wide" "cpa:$cpa" \
      "one:$one" "small split8:$small,splitk=8" "small split16:$small,splitk=16" \
      "thin split4:$thin,splitk=4" "mid split2:$mid,splitk=2" | grep '|'
  done
  both 256x256x16384 "small split8:$small,splitk=8" "small split16:$small,splitk=16" \
    "small split32:$small,splitk=32" "flat split8:$flat,splitk=8" "flat split16:$flat,splitk=16" \
    "thin split16:$thin,splitk=16"
  both 8192x32x8192 "thin split4:$thin,splitk=4" "thin split8:$thin,splitk=8" \
    "thin split16:$thin,splitk=16" "small split8:$small,splitk=8"
  both 16x8192x8192 "flat split4:$flat,splitk=4" "flat split8:$flat,splitk=8"
  both 1024x1024x16384 "big sk2:$big,sk=2" "small split4:$small,splitk=4" "mid split4:$mid,splitk=4"
  both 2048x512x8192 "big sk2:$big,sk=2" "mid split4:$mid,splitk=4" "mid split8:$mid,splitk=8"
  both 127x8192x4096 "big8 sk2:$big8,sk=2" "big sk2:$big,sk=2" "mid split4:$mid,splitk=4" \
    "small split4:$small,splitk=4"
  both 12000x200x3000 "wide sk1:$wide,sk=1" "big8 sk2:$big8,sk=2"
  both 200x12000x3000 "wide sk1:$wide,sk=1" "big8 sk2:$big8,sk=2"
  both 1000x1000x1000 "big8:$big8" "big8 sk2:$big8,sk=2" "cpa:$cpa"
  both 4096x4096x4096 "big sk2:$big,sk=2" "big:$big"
} 2>&1 | tee "$out/edges-partials.log"
