#!/usr/bin/env bash
# The product's misaligned-row classes (kernels/matmul.cu CT_SCALAR_A / CT_SCALAR_B, which the
# family sets from K % 4 and N % 4) checked on odd shapes with kernel_lab: each variant in the
# class of its shape and in the other classes (a module of any class must be right at any shape:
# only its speed is its class's), every one checked before and after it is timed. Then a few
# timings of the right class against the aligned build at misaligned shapes. kernel-notes.md,
# session 16.
#   bench/lab/scalar-classes.sh OUT_DIR
set -uo pipefail
out=${1:?usage: scalar-classes.sh OUT_DIR}
mkdir -p "$out"
lab="python3 bench/kernel_lab.py matmul"
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,stages=0,tm=16,tn=8,vec=4,warp=1"
wide="at=1,bk=8,bm=128,bn=256,db=1,iloop=1,minb=1,pad=0,ptxo=3,stages=0,tm=16,tn=8,vec=4,warp=1"
mid="at=1,bk=16,bm=64,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,stages=0,tm=16,tn=4,vec=4,warp=1"
mid2="at=1,bk=16,bm=64,bn=128,db=1,iloop=0,minb=2,pad=4,ptxo=3,stages=0,tm=8,tn=4,vec=4,warp=1"
flat="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=0,ptxo=3,stages=0,tm=16,tn=4,vec=4,warp=1"
small="at=1,bk=32,bm=64,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,stages=0,tm=8,tn=4,vec=4,warp=0"
thin="at=1,bk=16,bm=64,bn=32,db=1,iloop=0,minb=0,pad=4,ptxo=3,stages=0,tm=4,tn=4,vec=4,warp=0"
{
  for shape in 1000x1001x204 1000x1000x77 77x33x1001 129x257x4099 127x1000x255 5x3001x7 \
               16x17x16385 64x3x999 33x65x17 1x1x1 4097x1023x777 300x300x300; do
    for cls in "scalar_a=1" "scalar_b=1" "scalar_a=1,scalar_b=1"; do
      echo "== $shape $cls =="
      $lab "$shape" --reps 3 "big:$big,$cls" "big sk2:$big,sk=2,$cls" "wide:$wide,$cls" \
        "mid:$mid,$cls" "mid2 sk2:$mid2,sk=2,$cls" "flat:$flat,$cls" \
        "mid split4:$mid,splitk=4,$cls" "small split16:$small,splitk=16,$cls" \
        "thin split8:$thin,splitk=8,$cls" | grep '|'
    done
  done
  for shape in 4097x4097x4097 4096x4096x4097 4096x4097x4096 3001x5003x1009; do
    echo "== $shape (timing) =="
    $lab "$shape" "big sk2:$big,sk=2" "big sk2 AB:$big,sk=2,scalar_a=1,scalar_b=1" \
      "mid:$mid" "mid AB:$mid,scalar_a=1,scalar_b=1" | grep '|'
  done
} 2>&1 | tee "$out/scalar-classes.log"
