#!/usr/bin/env bash
# Split-K partials summed up a tree of pairwise sums (bench/lab/splitk_tree_epilogue.cuh, written
# into a copy of kernels/matmul.cu) against the shipped serial sum by the last split, with split-K
# on the large tiles the space keeps it from today (128x128x8 16x8, the 4096^3 winner's main
# loop); lab_nosum=1 (tree kernel) times the main loop and the partial's store alone. First odd shapes and split counts
# that are not powers of two, for correctness (every variant is checked before and after it is
# timed). kernel-notes.md, session 18.
#   bench/lab/splitk-tree.sh OUT_DIR
set -uo pipefail
out=${1:?usage: splitk-tree.sh OUT_DIR}
mkdir -p "$out"
lab="python3 bench/kernel_lab.py matmul"
# The tree's kernel: kernels/matmul.cu with its SplitKEpilogue replaced by the lab epilogue.
python3 - "$out/matmul_splitk_tree.cu" <<'PY' || exit 1
import sys
src = open("kernels/matmul.cu").read()
start = src.index("// The split-K epilogue.")
end = src.index("#endif\n\n#if CT_SK > 0")
tree = open("bench/lab/splitk_tree_epilogue.cuh").read()
open(sys.argv[1], "w").write(src[:start] + tree + src[end:])
PY
tree="--src $out/matmul_splitk_tree.cu"
serial="--src kernels/matmul.cu"
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,stages=0,tm=16,tn=8,vec=4,warp=1"
narrow="at=1,bk=16,bm=64,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,stages=0,tm=16,tn=4,vec=4,warp=1"
mid="at=1,bk=16,bm=128,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,stages=0,tm=8,tn=8,vec=4,warp=1"
small="at=1,bk=32,bm=64,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,stages=0,tm=8,tn=4,vec=4,warp=0"
thin="at=1,bk=16,bm=64,bn=32,db=1,iloop=0,minb=2,pad=4,ptxo=3,stages=0,tm=4,tn=4,vec=4,warp=0"
{
  for shape in 16x16x16384 1000x1001x204 77x33x1000 129x257x4099 5x3000x70; do
    echo "== $shape (correctness) =="
    $lab "$shape" $tree --reps 3 "big s3:$big,splitk=3" "big s7:$big,splitk=7" \
      "big s32:$big,splitk=32" "small s5:$small,splitk=5" "small s16:$small,splitk=16" \
      "mid s12:$mid,splitk=12" "thin s6:$thin,splitk=6" | grep '|'
  done
  run() {  # shape, then "tree variants" and "serial variants" as two strings
    echo "== $1 =="
    eval "$lab $1 $tree $2" | grep '|'
    [[ -n ${3:-} ]] && eval "$lab $1 $serial $3" | grep '|'
  }
  run 256x256x16384 "'small s16:$small,splitk=16' 'small s8:$small,splitk=8' 'small s32:$small,splitk=32' \
      'big s32:$big,splitk=32' 'big s64:$big,splitk=64' 'narrow s16:$narrow,splitk=16' \
      'narrow s32:$narrow,splitk=32' 'mid s32:$mid,splitk=32' \
      'nosum small s16:$small,splitk=16,lab_nosum=1' 'nosum big s32:$big,splitk=32,lab_nosum=1'" \
    "'serial small s16:$small,splitk=16' 'serial big s32:$big,splitk=32' \
      'serial narrow s16:$narrow,splitk=16'"
  run 2048x512x8192 "'big sk2:$big,sk=2' 'big s2:$big,splitk=2' 'big s4:$big,splitk=4' \
      'narrow s2:$narrow,splitk=2' 'nosum big s4:$big,splitk=4,lab_nosum=1'" \
    "'serial big s4:$big,splitk=4'"
  run 127x8192x4096 "'big sk2:$big,sk=2' 'big s2:$big,splitk=2' 'big s4:$big,splitk=4' \
      'narrow s2:$narrow,splitk=2' 'narrow s4:$narrow,splitk=4'"
  run 1024x1024x16384 "'big sk2:$big,sk=2' 'big s4:$big,splitk=4' 'big s3:$big,splitk=3'"
  run 512x512x16384 "'narrow s8:$narrow,splitk=8' 'big s16:$big,splitk=16' 'narrow s16:$narrow,splitk=16'" \
    "'serial narrow s8:$narrow,splitk=8'"
  run 512x2048x8192 "'big sk2:$big,sk=2' 'big s4:$big,splitk=4' 'narrow s2:$narrow,splitk=2'"
  run 768x768x3072 "'big sk2:$big,sk=2' 'big s4:$big,splitk=4' 'big s7:$big,splitk=7' \
      'narrow s3:$narrow,splitk=3'"
  run 8192x32x8192 "'thin s4:$thin,splitk=4' 'thin s8:$thin,splitk=8'" "'serial thin s4:$thin,splitk=4'"
  run 6144x192x8192 "'big sk2:$big,sk=2' 'big s4:$big,splitk=4' 'narrow s2:$narrow,splitk=2' \
      'mid s4:$mid,splitk=4'"
} 2>&1 | tee "$out/splitk-tree.log"
