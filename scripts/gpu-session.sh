#!/usr/bin/env bash
# One full check on a GPU host, from a bundle made by ../shared/tools/gpu-bundle (see
# docs/gpu-testing.md): GPU tests, the device's NVRTC resource report, a gRPC session that tunes
# both families through cutuned and exports the H200 tuning table, and cutune-bench.
#   scripts/gpu-session.sh OUT_DIR [--no-bench] [--no-tests]
set -uo pipefail
out=${1:?usage: gpu-session.sh OUT_DIR [--no-bench] [--no-tests]}
shift
bench=1 tests=1
for a in "$@"; do
  [[ $a == --no-bench ]] && bench=0
  [[ $a == --no-tests ]] && tests=0
done
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/.gpu/env.sh"
mkdir -p "$out"
export CUTUNE_CACHE_DIR=/tmp/cutune-session-cache
log=$out/session.log
say() { echo "$@" | tee -a "$log"; }
run() { say "\$ $*"; "$@" 2>&1 | tee -a "$log"; say "(exit ${PIPESTATUS[0]})"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv | tee -a "$log"
if [[ $tests == 1 ]]; then
  for t in tuner_gpu_test worker_test compiler_test; do
    command -v "$t" >/dev/null || continue
    "$t" >"$out/$t.log" 2>&1
    say "$t: exit $? ($(grep -E '^\[  (PASSED|FAILED)' "$out/$t.log" | tr '\n' ' '))"
  done
fi
cutune space compile transpose --arch sm_90 --json >/tmp/space.json 2>&1
python3 -c "import json; d=json.load(open('/tmp/space.json')); print('device NVRTC, transpose sm_90:', d['summary']); print(d['candidates'][-1])" 2>&1 | tee -a "$log"

say "== gRPC session: cutuned + cutune =="
rm -f /tmp/cutune-session.db*
cutuned --db /tmp/cutune-session.db --listen 127.0.0.1:50051 >"$out/cutuned.log" 2>&1 &
daemon=$!
for _ in $(seq 50); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
run cutune devices
for shape in 8192x8192 4096x4096 16384x16384; do
  run cutune sweep transpose --shape "$shape" --timeout 600 --top 5
done
for shape in 4096x4096x4096 1024x1024x1024 2048x2048x2048 8192x64x8192; do
  run cutune sweep matmul --shape "$shape" --timeout 600 --top 5
done
run cutune get transpose --shape 8192x8192
run cutune get matmul --shape 4096x4096x4096
run cutune get matmul --shape 3000x5000x2000
run cutune table export --model "NVIDIA H200" -o "$out/nvidia-h200.json"
kill -TERM $daemon; wait $daemon; say "cutuned exit $?"

if [[ $bench == 1 ]]; then
  say "== cutune-bench =="
  cutune-bench --json "$out/bench.json" 2>&1 | tee "$out/bench.txt"
fi
