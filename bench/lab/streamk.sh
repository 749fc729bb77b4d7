#!/usr/bin/env bash
# Stream-K (CT_SK in kernels/matmul.cu; the session-10 runs used bench/lab/matmul_streamk.cu, its first form)
# against the data-parallel grid of the same tiles, on the cubes where the last wave is partial
# and on the awkward set's under-filled shapes; first small odd shapes for correctness (every
# variant is checked before it is timed). kernel-notes.md, session 10.
#   bench/lab/streamk.sh OUT_DIR
set -uo pipefail
out=${1:?usage: streamk.sh OUT_DIR}
mkdir -p "$out"
lab="python3 bench/kernel_lab.py matmul"
src="--src kernels/matmul.cu"
# The 4096^3 winner (128x128x8, 16x8, iloop), and tiles the awkward shapes chose.
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=1,pad=4,ptxo=3,stages=0,tm=16,tn=8,vec=4,warp=1"
wide="at=1,bk=8,bm=128,bn=256,db=1,iloop=1,minb=1,pad=4,ptxo=3,stages=0,tm=16,tn=8,vec=4,warp=1"
mid="at=1,bk=16,bm=128,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,stages=0,tm=8,tn=8,vec=4,warp=1"
small="at=1,bk=16,bm=64,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,stages=0,tm=8,tn=4,vec=4,warp=1"
narrow="at=1,bk=16,bm=64,bn=128,db=1,iloop=1,minb=2,pad=4,ptxo=3,stages=0,tm=16,tn=4,vec=4,warp=1"
{
  for shape in 1000x1001x204 77x33x1000 129x257x4099 16x16x16384 5x3000x7; do
    echo "== $shape (correctness) =="
    $lab "$shape" $src --reps 3 "big sk1:$big,sk=1" "big sk2:$big,sk=2" "small sk2:$small,sk=2" \
      "mid sk1:$mid,sk=1" | grep '|'
  done
  for shape in 4096x4096x4096 8192x8192x8192; do
    echo "== $shape =="
    $lab "$shape" $src "big:$big" "big sk1:$big,sk=1" "big sk2:$big,sk=2" "wide:$wide" \
      "wide sk1:$wide,sk=1" | grep '|'
  done
  for shape in 4097x1023x777 127x8192x4096 2048x512x8192 1024x1024x16384 256x256x16384 \
               12000x200x3000 3001x5003x1009 1021x2039x4093 200x12000x3000 8192x32x8192; do
    echo "== $shape =="
    $lab "$shape" $src "big:$big" "big sk2:$big,sk=2" "wide:$wide" "wide sk1:$wide,sk=1" \
      "mid:$mid" "mid sk2:$mid,sk=2" "small sk2:$small,sk=2" "small sk4:$small,sk=4" \
      "narrow sk2:$narrow,sk=2" "small split4:$small,splitk=4" | grep '|'
  done
} 2>&1 | tee "$out/streamk.log"
