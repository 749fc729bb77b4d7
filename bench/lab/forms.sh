#!/usr/bin/env bash
# The aligned-output transpose (bench/lab/transpose_aligned.cu, CT_ALIGN=1) in its code forms
# (CT_FORM: 0 loads and shared stores interleaved under one branch, 1 as the product's kernel,
# 2 every load first, 3 also every shared load before the global stores), against the
# product's winners, on odd and aligned shapes. kernel-notes.md, session 9.
#   bench/lab/forms.sh OUT_DIR [FORMS...]
set -uo pipefail
out=${1:?usage: forms.sh OUT_DIR [FORMS...]}; shift
forms=("${@:-2 3}")
mkdir -p "$out"
lab="python3 bench/kernel_lab.py transpose"
src="--src bench/lab/transpose_aligned.cu"
for shape in 8192x4096 8191x4096 8191x4097 3001x20001 10007x10007 16383x16383 12287x3071 4097x8191 \
             16384x16384 2048x2048 1000x1000 32768x128; do
  echo "== $shape =="
  vs=("v1:tile=64,rows=8,vec=1,pad=0,swizzle=1,minb=2" "s2:tile=64,rows=8,vec=4,pad=0,swizzle=2")
  for f in ${forms[@]}; do
    for rows in 8 16 32; do
      for vec in 1 2 4; do
        (( 64 / vec * rows <= 1024 )) || continue
        vs+=("f$f p r$rows v$vec:tile=64,rows=$rows,vec=$vec,pad=1,align=1,form=$f"
             "f$f s r$rows v$vec:tile=64,rows=$rows,vec=$vec,pad=0,swizzle=1,align=1,form=$f")
      done
    done
    vs+=("f$f p t32 r8 v2:tile=32,rows=8,vec=2,pad=1,align=1,form=$f"
         "f$f p t32 r8 v4:tile=32,rows=8,vec=4,pad=1,align=1,form=$f")
  done
  $lab "$shape" $src "${vs[@]}" | grep '|'
done 2>&1 | tee "$out/forms.log"
