#!/usr/bin/env bash
# Session 35's device calls (bundle .gpu: cutuned, cutune, cutune-worker, cutune-bench of main
# 78183fd; nvrtc-cache.tar.xz, the compile cache of the grid's alignment classes for source
# b7c38814; grid-rows.json.xz, session 34's H200 grid rows).
#   call.sh OUT noise   the 32 members of the H200 table timed three times (shuffled, each round a
#       sweep of its own) at seven launch-bound grid shapes, with an idle start and then a held
#       one (executor.h, Time): how far apart two timings of one configuration are, against the
#       microsecond the held-out picks miss by (~2 x 60 s)
#   call.sh OUT check   tuner_gpu_test (but the every-candidate test), then noise
#   call.sh OUT mini   the same in about two minutes: three tests, four shapes, two rounds
#   call.sh OUT h200 [SECONDS]   noise, then new-shapes.txt added to the H200 grid (--only
#       --matrix-all --near 1, seeded with session 34's rows) until SECONDS (default 575)
#   call.sh OUT h100 [SECONDS]   the H100's matmul grid (128 shapes, --near 1) until SECONDS
#   call.sh OUT h200-all [SECONDS]   check, then the H200's whole matmul grid (140 shapes then, 145 since session 38; --near 1)
#       re-tuned with the held start, the shipped table seeding only its transpose half and the
#       quick phase's first portfolio (the matrix comes from this grid's rows alone)
#   call.sh OUT h200-all-now [SECONDS]   the same without the noise A/B (session 38)
#   call.sh OUT h100-now [SECONDS]   the H100's whole matmul grid (145 shapes) re-tuned, after
#       tuner_gpu_test, without the noise A/B (session 39)
#   call.sh OUT h200-grid|h200-all-grid|h100-grid [SECONDS]   that grid again, on the same warm
#       machine (it goes on where it stopped)
set -uo pipefail
usage="usage: call.sh OUT noise|check|mini|h200|h200-grid|h200-all|h200-all-now|h200-all-grid|h100|h100-now|h100-grid [SECONDS]"
out=${1:?$usage}
mode=${2:?$usage}
budget=${3:-575}
lab=bench/lab/session35
mkdir -p "$out"
start=$(date +%s)
left() { echo $(( budget - ($(date +%s) - start) )); }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu, bundle $(cat .gpu/COMMIT 2>/dev/null | head -1)" | tee -a "$out/gpu.txt"
# shellcheck disable=SC1091
source .gpu/env.sh
# $1: idle (CUTUNE_TIMING_IDLE_START=1: each sample's launch queued on an idle GPU, as every
# table so far was measured) or held (the stream held until the sample is queued: the default
# from this session on).
noise() {
  local how=$1 dir=$out/noise-$1
  mkdir -p "$dir"
  export CUTUNE_CACHE_DIR=/tmp/cutune-grid-cache
  mkdir -p $CUTUNE_CACHE_DIR
  [[ -n $(ls -A $CUTUNE_CACHE_DIR) ]] || python3 scripts/grid_tool.py extract .gpu/nvrtc-cache.tar.xz $CUTUNE_CACHE_DIR
  if [[ $how == idle ]]; then export CUTUNE_TIMING_IDLE_START=1; else unset CUTUNE_TIMING_IDLE_START; fi
  rm -f /tmp/noise.db* /tmp/noise.sock
  cutuned --db /tmp/noise.db --listen unix:/tmp/noise.sock >"$dir/cutuned.log" 2>&1 &
  local daemon=$!
  export CUTUNE_SERVER=unix:/tmp/noise.sock
  for _ in $(seq 100); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
  for round in $(seq "${NOISE_ROUNDS:-3}"); do
    for shape in ${NOISE_SHAPES:-16x16x16 32x32x32 128x128x128 512x256x128 256x256x1024 16x16x16384 768x768x768}; do
      grep -v '^#' $lab/members-h200-matmul.txt | shuf --random-source=<(yes $round) >/tmp/members.txt
      cutune sweep matmul --shape "$shape" --candidates /tmp/members.txt --top 64 --json \
        >"$dir/r$round-$shape.json" 2>>"$dir/sweeps.log"
      echo "$how round $round $shape: rc $? at $(( $(date +%s) - start )) s" >>"$dir/sweeps.log"
    done
  done
  tail -1 "$dir/sweeps.log"
  kill -TERM $daemon; wait $daemon
  unset CUTUNE_SERVER CUTUNE_TIMING_IDLE_START
}
# tuner_gpu_test but its every-candidate test (held start is on: the worker's timing changed).
gputest() {
  CUTUNE_CACHE_DIR=/tmp/cutune-test-cache timeout 150 tuner_gpu_test \
    --gtest_filter="${GPUTEST_FILTER:--*EveryMatmulCandidate*}" >"$out/tuner_gpu_test.log" 2>&1
  echo "tuner_gpu_test: rc $? at $(( $(date +%s) - start )) s"
  grep -E '^\[  FAILED|^\[  PASSED|^\[       OK|Failure' "$out/tuner_gpu_test.log" | head -20
}
# The two grids, each with the options it started with (a grid goes on only with the same ones);
# $1: more gpu-grid.sh options before them (the first call's --cache).
h200_grid() {
  if [[ ! -f /tmp/seed/grid-rows.json ]]; then
    mkdir -p /tmp/seed
    xz -dc .gpu/grid-rows.json.xz >/tmp/seed/grid-rows.json
    cp tables/nvidia-h200.json /tmp/seed/   # the transpose half and the v10 matmul portfolio
  fi
  # The grid's other shapes were timed with an idle start: so are these, to compare in one matrix.
  # shellcheck disable=SC2086
  CUTUNE_TIMING_IDLE_START=1 bash scripts/gpu-grid.sh "$out" "$(left)" $1 --seed-tables /tmp/seed \
    --only $lab/new-shapes.txt --matrix-all --near 1
}
h200_all_grid() {
  mkdir -p /tmp/seed-all
  cp tables/nvidia-h200.json /tmp/seed-all/
  awk '!/^#/ && NF { print "matmul", $1 }' tables/grid/matmul.txt >/tmp/h200-matmul.txt
  # shellcheck disable=SC2086
  bash scripts/gpu-grid.sh "$out" "$(left)" $1 --seed-tables /tmp/seed-all \
    --only /tmp/h200-matmul.txt --near 1
}
h100_grid() {
  awk '!/^#/ && NF { print "matmul", $1 }' tables/grid/matmul.txt >/tmp/h100-matmul.txt
  # shellcheck disable=SC2086
  bash scripts/gpu-grid.sh "$out" "$(left)" $1 --only /tmp/h100-matmul.txt --near 1
}
case $mode in
  noise) noise idle; noise held ;;
  check) gputest; noise idle; noise held ;;
  # What a few device minutes allow: the timing tests, two rounds at four launch-bound shapes.
  mini) GPUTEST_FILTER='*Faults*:*Quick*:*Reference*' gputest
        NOISE_ROUNDS=2 NOISE_SHAPES="16x16x16 128x128x128 512x256x128 256x256x1024" noise idle
        NOISE_ROUNDS=2 NOISE_SHAPES="16x16x16 128x128x128 512x256x128 256x256x1024" noise held ;;
  h200) gputest; noise idle; noise held; h200_grid "--cache .gpu/nvrtc-cache.tar.xz" ;;
  h200-grid) h200_grid "" ;;
  h200-all) gputest; noise idle; noise held; h200_all_grid "--cache .gpu/nvrtc-cache.tar.xz" ;;
  h200-all-now) gputest; h200_all_grid "--cache .gpu/nvrtc-cache.tar.xz" ;;
  h200-all-grid) h200_all_grid "" ;;
  h100) gputest; noise idle; noise held; h100_grid "--cache .gpu/nvrtc-cache.tar.xz" ;;
  h100-now) gputest; h100_grid "--cache .gpu/nvrtc-cache.tar.xz" ;;
  h100-grid) h100_grid "" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
echo "call.sh $mode: done at $(( $(date +%s) - start )) s"
