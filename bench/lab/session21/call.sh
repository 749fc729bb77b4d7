#!/usr/bin/env bash
# Session 21's device calls for space v9 (the patch series here), in calls of about 300 s each,
# since a machine taken back mid-call returns nothing. Carry the v9 bundle as .gpu (README.md).
#   bench/lab/session21/call.sh OUT_DIR lab             lab.sh: v9's 128x128 splits against the
#                                                       table's winners (about 200 s)
#   bench/lab/session21/call.sh OUT_DIR test            tuner_gpu_test's split-K tests on the
#                                                       v9 build (every split-K candidate, odd shapes)
#   bench/lab/session21/call.sh OUT_DIR grid SECONDS [--cache CACHE_TAR | --from GRID_TGZ]
#                                                       the matmul grid re-tuned (tables/README.md)
set -uo pipefail
usage="usage: call.sh OUT_DIR lab|test|grid [SECONDS [--cache CACHE_TAR | --from GRID_TGZ]]"
out=${1:?$usage}
mode=${2:?$usage}
shift 2
mkdir -p "$out"
# shellcheck disable=SC1091
source .gpu/env.sh
case $mode in
  lab) timeout 280 bash bench/lab/session21/lab.sh "$out" ;;
  test)
    timeout 290 tuner_gpu_test --gtest_filter='*SplitK*' >"$out/gpu-test.log" 2>&1
    echo "tuner_gpu_test: rc $?"
    grep -E '^\[( +OK|  FAILED|  PASSED) |Failure|wrong' "$out/gpu-test.log" | head -40 ;;
  grid)
    seconds=${1:?$usage}
    shift
    # Every matmul grid shape (grid/matmul.txt), at a path that stays the same from call to call
    # (tune-grid.sh refuses to go on with other options).
    only=/tmp/session21-matmul.txt
    awk '!/^#/ && NF { print "matmul", $1 }' tables/grid/matmul.txt >$only
    bash scripts/gpu-grid.sh "$out" "$seconds" "$@" --only $only --near 1 ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
