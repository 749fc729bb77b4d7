#!/usr/bin/env bash
# Session 33's second lab call: why the cluster modules ran slower everywhere but one tile
# (cluster.sh: 256x256x16384 split 16 74.3 -> 109.6 us, 2048x512x8192's big tile 384 -> 660 us).
# Isolates the cluster launch from the epilogue: staged-c's kernel with only __cluster_dims__
# added (cdims=C, the shipped split-K epilogue), against the shipped kernel and the two cluster
# epilogue.
#   bench/lab/session33/cdims.sh OUT_DIR
set -uo pipefail
out=${1:?usage: cdims.sh OUT_DIR}
mkdir -p "$out"
# The kernel with cluster.patch (or branch cluster's, which has it): with cluster=0 it is the
# kernel before (CT_CLUSTER_DIMS is empty).
cp kernels/matmul.cu "$out/staged.cu"
grep -q CT_CLUSTER "$out/staged.cu" || patch -s "$out/staged.cu" <bench/lab/session33/cluster.patch ||
  { echo "cdims.sh: the patch does not apply" >&2; exit 2; }
sed -e 's/^#define CT_CLUSTER_DIMS$/#define CT_CLUSTER_DIMS __cluster_dims__(CT_CDIMS, 1, 1)/' \
  "$out/staged.cu" >"$out/cdims.cu"
grep -q 'CT_CDIMS' "$out/cdims.cu" || { echo "cdims.sh: no CT_CLUSTER_DIMS to replace" >&2; exit 2; }
base="at=1,db=1,pad=4,ptxo=3,sk=0,stages=0,vec=4"
s64="$base,bk=32,bm=64,bn=64,tm=8,tn=4,iloop=0,minb=2,warp=0"
big="$base,bk=8,bm=128,bn=128,tm=16,tn=8,iloop=1,minb=0,warp=1"
lab() {  # SHAPE SRC VARIANT...
  local shape=$1 src=$2
  shift 2
  python3 bench/kernel_lab.py matmul "$shape" --src "$src" --reps 20 "$@" 2>&1 | grep -v '^$'
}
{
  lab 256x256x16384 "$out/staged.cu" "s64x16:$s64,splitk=16" "s64x8:$s64,splitk=8"
  lab 256x256x16384 "$out/cdims.cu" "s64x16d8:$s64,splitk=16,cdims=8" "s64x8d8:$s64,splitk=8,cdims=8" "s64x16d2:$s64,splitk=16,cdims=2"
  lab 256x256x16384 "$out/staged.cu" "s64x16c8:$s64,splitk=16,cluster=8"
  lab 2048x512x8192 "$out/staged.cu" "big4:$big,splitk=4"
  lab 2048x512x8192 "$out/cdims.cu" "big4d4:$big,splitk=4,cdims=4" "big4d2:$big,splitk=4,cdims=2"
} | tee "$out/cdims.log"
