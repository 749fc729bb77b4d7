#!/usr/bin/env bash
# Session 33's kernel lab: split-K whose splits of a C tile form thread-block clusters
# (cluster.patch's CT_CLUSTER=C, sm_90): each block leaves its partial tile in its own shared
# memory, and block r of a cluster sums part r of the tile over the cluster's C partials
# (distributed shared memory, in split order: with C = splitk the same sums as the shipped
# split-K) and stores it; with more splits than C (split 16 in clusters of 8 or 4: a portable
# cluster is at most 8 blocks), each cluster stores its part r through L2 and the last cluster to
# arrive at part r sums them. No block sums a whole tile alone: session 31 bounded the shipped
# sum by one SM's share of L2 (6.4 us of ~72 at 256x256x16384, 64x64 8x4 split 16).
# Predicted: 256x256x16384 64x64 split 8 clustered 3-6 us faster than split 8 shipped; split 16
# in clusters of 8 3-5 us faster than split 16 shipped (clusters of 4 less); the split-8
# modules elsewhere (8192x32x8192 128x32, 64x4096x4096 and 512x512x16384 64x128) 1-3 us faster;
# the big tile's split 4 (a small sum) within noise, or slower (64 KiB of shared memory a block
# for its partial). Every variant checked before and after its timed launches.
#   bench/lab/session33/cluster.sh OUT_DIR
set -uo pipefail
out=${1:?usage: cluster.sh OUT_DIR}
mkdir -p "$out"
src=$out/matmul-cluster.cu
cp kernels/matmul.cu "$src"
# Branch cluster's matmul.cu has CT_CLUSTER already (the same kernel as the patch's).
grep -q CT_CLUSTER "$src" || patch -s "$src" <bench/lab/session33/cluster.patch ||
  { echo "cluster.sh: the patch does not apply" >&2; exit 2; }
base="at=1,db=1,pad=4,ptxo=3,sk=0,stages=0,vec=4"
s64="$base,bk=32,bm=64,bn=64,tm=8,tn=4,iloop=0,minb=2,warp=0"
t32="$base,bk=32,bm=32,bn=64,tm=4,tn=4,iloop=0,minb=2,warp=0"
q128="$base,bk=16,bm=128,bn=32,tm=8,tn=4,iloop=0,minb=0,warp=0"
w128="$base,bk=16,bm=32,bn=128,tm=8,tn=4,iloop=0,minb=0,warp=0"
m8="$base,bk=16,bm=64,bn=128,tm=8,tn=4,iloop=0,minb=2,warp=0"
m16="$base,bk=16,bm=64,bn=128,tm=16,tn=4,iloop=1,minb=0,warp=1"
big="$base,bk=8,bm=128,bn=128,tm=16,tn=8,iloop=1,minb=0,warp=1"
lab() {
  local shape=$1
  shift
  python3 bench/kernel_lab.py matmul "$shape" --src "$src" --reps 30 "$@" 2>&1 | grep -v '^$'
}
# pairs: NAME:PARAMS,splitk=S and its clustered twin
pair() { echo "$1:$2,splitk=$3" "$1c:$2,splitk=$3,cluster=$3"; }
{
  # shellcheck disable=SC2046
  lab 256x256x16384 "s64x16:$s64,splitk=16" "s64x16c8:$s64,splitk=16,cluster=8" "s64x16c4:$s64,splitk=16,cluster=4" \
    $(pair s64x8 "$s64" 8) "s64x8c4:$s64,splitk=8,cluster=4" $(pair t32x8 "$t32" 8) "t32x16c8:$t32,splitk=16,cluster=8" $(pair s64x4 "$s64" 4)
  # shellcheck disable=SC2046
  lab 16x16x16384 "t32x16:$t32,splitk=16" "t32x16c8:$t32,splitk=16,cluster=8" $(pair t32x8 "$t32" 8)
  # shellcheck disable=SC2046
  lab 8192x32x8192 $(pair q128x8 "$q128" 8) $(pair q128x4 "$q128" 4)
  # shellcheck disable=SC2046
  lab 32x8192x8192 $(pair w128x4 "$w128" 4) $(pair w128x8 "$w128" 8)
  # shellcheck disable=SC2046
  lab 64x4096x4096 $(pair m8x8 "$m8" 8)
  # shellcheck disable=SC2046
  lab 512x512x16384 $(pair m16x8 "$m16" 8) "m16x8c4:$m16,splitk=8,cluster=4" "s64x16:$s64,splitk=16" "s64x16c8:$s64,splitk=16,cluster=8"
  # shellcheck disable=SC2046
  lab 2048x512x8192 $(pair big4 "$big" 4)
  # shellcheck disable=SC2046
  lab 1024x1024x16384 $(pair big4 "$big" 4)
  # shellcheck disable=SC2046
  lab 1000x1001x4099 $(pair s64x8 "$s64" 8) $(pair m8x4 "$m8" 4)
} | tee "$out/cluster.log"
