#!/usr/bin/env bash
# The sector-window transpose (form 3 of bench/lab/transpose_aligned.cu) with its windows aligned
# to 8, 16 or 32 floats (unit: 32, 64 or 128 bytes, as many halo rows) and the tile order
# (order=1: tile rows vary fastest, so the blocks that continue one output row run together),
# on the large odd shapes where it stays under 87% of copy. kernel-notes.md, session 9.
#   bench/lab/units.sh OUT_DIR
set -uo pipefail
out=${1:?usage: units.sh OUT_DIR}
mkdir -p "$out"
lab="python3 bench/kernel_lab.py transpose"
src="--src bench/lab/transpose_aligned.cu"
for shape in 16383x16383 10007x10007 3001x20001 8191x4097 4097x8191 16384x16384; do
  echo "== $shape =="
  vs=("v1:tile=64,rows=8,vec=1,pad=0,swizzle=1,minb=2" "s2:tile=64,rows=8,vec=4,pad=0,swizzle=2")
  for cfg in "p r16 v2:rows=16,vec=2,pad=1" "p r8 v1:rows=8,vec=1,pad=1" \
             "s r16 v4:rows=16,vec=4,pad=0,swizzle=1" "p r32 v4:rows=32,vec=4,pad=1"; do
    name=${cfg%%:*} body=${cfg#*:}
    for unit in 8 16 32; do
      for order in 0 1; do
        vs+=("$name u$unit o$order:tile=64,$body,align=1,form=3,unit=$unit,order=$order")
      done
    done
  done
  $lab "$shape" $src "${vs[@]}" | grep '|'
done 2>&1 | tee "$out/units.log"
