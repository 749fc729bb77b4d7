#!/usr/bin/env bash
# Space v9 in the lab: the 128x128 tiles split 2, 4 and 8 ways, built from the patched kernel
# (its split-K sum in chunk groups, no spill), against the shipped table's winner built from
# the shipped kernel, at the K-heavy grid shapes with 4 to 130 such tiles. Every variant is
# checked before and after its timed launches; odd shapes first.
#   bench/lab/session21/lab.sh OUT_DIR [TABLE]   (TABLE: default tables/nvidia-h200.json)
set -uo pipefail
out=${1:?usage: lab.sh OUT_DIR [TABLE]}
table=${2:-tables/nvidia-h200.json}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/v9"
# The patched kernel source: kernels/ with the series' kernel patch (0001) applied.
cp -r kernels "$out/v9/" && (cd "$out/v9" && patch -p1 -s <"$here"/0001-*.patch) ||
  { echo "lab: 0001 does not apply to kernels/" >&2; exit 2; }
lab="python3 bench/kernel_lab.py matmul"
v9="--src $out/v9/kernels/matmul.cu"
big="at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,stages=0,tm=16,tn=8,vec=4,warp=1"
wide="at=1,bk=16,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=0,stages=0,tm=8,tn=8,vec=4,warp=1"
{
  for shape in 129x260x4100 1000x1001x204 16x16x16384 77x300x2051; do
    echo "== $shape (correctness) =="
    $lab "$shape" $v9 --reps 3 "big s2:$big,splitk=2" "big s4:$big,splitk=4" \
      "big s8:$big,splitk=8" "wide s4:$wide,splitk=4" "wide s8:$wide,splitk=8" | grep '|'
  done
  # Most telling first: a call cut short still has them. Aligned shapes only: kernel_lab.py
  # builds no misaligned fast path (the family's CT_SCALAR_A/B).
  # "v9 table winner" is the table's winner built from the patched source: where it splits K
  # (256x256x16384, 512x512x16384, 512x1024x8192) it must time as before (one chunk group).
  for shape in 2048x512x8192 256x256x16384 512x2048x8192 1024x1024x16384 512x1024x8192 \
      768x768x3072 512x512x16384 128x16384x16384 127x8192x4096 4096x256x4096; do
    echo "== $shape =="
    w=$(python3 scripts/grid_tool.py winner "$table" matmul "$shape") || continue
    $lab "$shape" --reps 20 "table winner:$w" | grep '|'
    $lab "$shape" $v9 --reps 20 "v9 table winner:$w" "big s2:$big,splitk=2" "big s4:$big,splitk=4" \
      "big s8:$big,splitk=8" "wide s2:$wide,splitk=2" "wide s4:$wide,splitk=4" \
      "wide s8:$wide,splitk=8" | grep '|'
  done
} 2>&1 | tee "$out/lab.log"
