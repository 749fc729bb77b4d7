#!/usr/bin/env bash
# Proof that an edit of kernels/ changed no candidate's machine code: compiles every valid
# candidate of each family from BASE's kernels/ (default: main) and from the sources this build
# embeds, with the daemon's NVRTC options, and compares the cubins (tests/kernels/kernel_identity.cc
# says what must be equal). No GPU needed; the matmul family takes about half an hour on two cores.
#
#   scripts/kernel_identity.sh [BASE] [FAMILY...]     (families default to matmul and transpose)
#
# Environment: BUILD_DIR (default build), THREADS (compile threads, default 2), STRIDE (only every
# N-th candidate, for a quick look; default 1). Exit status: 0 when every family is identical.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
base=${1:-main}
shift || true
families=("$@")
if [ ${#families[@]} -eq 0 ]; then families=(matmul transpose); fi

cmake --build "$build" --target kernel_identity > /dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive "$base" kernels | tar -x -C "$tmp"

status=0
for family in "${families[@]}"; do
  # The base source as NVRTC gets it: its includes inlined the way embed.cmake does for the build.
  cmake -DINPUT="$tmp/kernels/$family.cu" -DOUTPUT="$tmp/$family.cu" -DFORMAT=cu \
    -P "$root/kernels/embed.cmake"
  "$build/bin/kernel_identity" --family "$family" --base "$tmp/$family.cu" \
    --threads "${THREADS:-2}" --stride "${STRIDE:-1}" || status=1
done
exit $status
