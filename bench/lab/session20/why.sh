#!/usr/bin/env bash
# What cuBLAS launches for the awkward shapes we lose, next to our winner there (the shipped
# table's), under Nsight Compute: grid, block, registers, occupancy, issue and stall figures.
#   bench/lab/session20/why.sh OUT_DIR
set -uo pipefail
out=${1:?usage: why.sh OUT_DIR}
mkdir -p "$out"
sections="--section LaunchStats --section Occupancy --section SpeedOfLight --section SchedulerStats --section WarpStateStats"
shapes="256x256x16384 2048x512x8192 127x8192x4096 6144x192x8192 512x512x16384 4096x4096x4096"
ncu --profile-from-start off $sections python3 bench/lab/session20/cublas_once.py $shapes \
  >"$out/ncu-cublas.txt" 2>&1
echo "cublas: rc $?"
ours() {  # shape, params: our kernel's first launch (its check) under ncu
  ncu --kernel-name cutune_kernel --launch-count 1 $sections \
    python3 bench/kernel_lab.py matmul "$1" "$2" --reps 3 >"$out/ncu-ours-$1.txt" 2>&1
  echo "ours $1: rc $?"
}
ours 256x256x16384 at=1,bk=32,bm=64,bn=64,db=1,iloop=0,minb=2,pad=4,ptxo=3,sk=0,splitk=16,stages=0,tm=8,tn=4,vec=4,warp=0
ours 2048x512x8192 at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=2,splitk=1,stages=0,tm=16,tn=8,vec=4,warp=1
ours 127x8192x4096 at=1,bk=16,bm=128,bn=64,db=1,iloop=1,minb=2,pad=4,ptxo=3,sk=0,splitk=2,stages=0,tm=8,tn=8,vec=4,warp=1
ours 6144x192x8192 at=1,bk=16,bm=128,bn=64,db=1,iloop=1,minb=2,pad=4,ptxo=3,sk=2,splitk=1,stages=0,tm=8,tn=8,vec=4,warp=1
ours 4096x4096x4096 at=1,bk=8,bm=128,bn=128,db=1,iloop=1,minb=0,pad=4,ptxo=3,sk=2,splitk=1,stages=0,tm=16,tn=8,vec=4,warp=1
