#!/usr/bin/env bash
# Session 29's device calls. A carried bundle named .gpu-sc (branch staged-c's), .gpu-new (main's) or .gpu-cb (branch
# coalesce-b's, session 28's README) becomes .gpu first.
#   bench/lab/session29/call.sh OUT_DIR first      session 28's coalesce lab; if the prediction
#       holds (decide.py), the matmul grid re-tuned with the branch's bundle for the rest of the call
#   bench/lab/session29/call.sh OUT_DIR grid [--from GRID_TGZ]   the grid, continued
#   bench/lab/session29/call.sh OUT_DIR tests      the bundle's GPU tests: client, profile, and
#       tuner but for EveryMatmulCandidateIsRightOnOddShapes (479 s alone on an H100; its own call)
#   bench/lab/session29/call.sh OUT_DIR memory|quick   memory.sh (ncu) or quick.sh (main's bundle)
#   bench/lab/session29/call.sh OUT_DIR bench SHAPE...  cutune-bench's full and quick sweeps of
#       these awkward shapes (every candidate verified), the bundle's cache carried
set -uo pipefail
usage="usage: call.sh OUT_DIR first|grid|tests|memory|quick|bench [--from GRID_TGZ | SHAPE...]"
out=${1:?$usage}
mode=${2:?$usage}
shift 2
mkdir -p "$out"
start=$(date +%s)
for bundle in .gpu-sc .gpu-new .gpu-cb; do
  if [[ -d $bundle ]]; then rm -rf .gpu && mv $bundle .gpu && break; fi
done
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee -a "$out/gpu.txt"
left() { echo $(( ${1} - ($(date +%s) - start) )); }
case $mode in
  first)
    timeout 200 bash bench/lab/session28/coalesce.sh "$out/lab" >/dev/null 2>&1
    python3 bench/lab/session29/decide.py "$out/lab/lab.log" | tee "$out/decide.txt"
    if [[ ${PIPESTATUS[0]} == 0 ]]; then
      bash bench/lab/session21/call.sh "$out" grid "$(left 550)" --cache .gpu/nvrtc-cache.tar.xz
    fi ;;
  grid) bash bench/lab/session21/call.sh "$out" grid "$(left 560)" "$@" ;;
  tests)
    export CUTUNE_CACHE_DIR=/tmp/cutune-grid-cache
    mkdir -p $CUTUNE_CACHE_DIR
    [[ -n $(ls -A $CUTUNE_CACHE_DIR) ]] || python3 scripts/grid_tool.py extract .gpu/nvrtc-cache*.tar.xz $CUTUNE_CACHE_DIR
    # shellcheck disable=SC1091
    source .gpu/env.sh
    for t in client_gpu_test profile_gpu_test tuner_gpu_test; do
      s0=$(date +%s)
      filter='*'
      [[ $t == tuner_gpu_test ]] && filter='-*EveryMatmulCandidateIsRightOnOddShapes*'
      timeout "$(left 570)" "$t" --gtest_filter="$filter" >"$out/$t.log" 2>&1
      echo "$t: rc $? in $(( $(date +%s) - s0 )) s"
      grep -E '^\[  FAILED|^\[  PASSED|^\[==========\]' "$out/$t.log" | tail -4
    done ;;
  bench)
    export CUTUNE_CACHE_DIR=/tmp/cutune-bench-cache
    mkdir -p $CUTUNE_CACHE_DIR
    for c in .gpu/nvrtc-cache*.tar.xz; do python3 scripts/grid_tool.py extract "$c" $CUTUNE_CACHE_DIR; done
    # shellcheck disable=SC1091
    source .gpu/env.sh
    only=()
    for s in "$@"; do only+=(--only "$s"); done
    timeout "$(left 570)" cutune-bench --awkward-only "${only[@]}" --cache-dir $CUTUNE_CACHE_DIR \
      --table tables/nvidia-h100.json --json "$out/bench.json" >"$out/bench.log" 2>&1
    echo "cutune-bench: rc $?"
    tail -30 "$out/bench.log" ;;
  memory) bash bench/lab/session29/memory.sh "$out/memory" ;;
  quick) bash bench/lab/session29/quick.sh "$out/quick"; tar czf "$out/quick.tgz" -C "$out" quick && rm -rf "$out/quick" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
