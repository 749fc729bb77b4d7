#!/usr/bin/env bash
# The main job: build cutune, start cutuned (embedded SQLite at ./cutune.db), and use it once.
#   On a GPU host: tune transpose 8192x8192 over gRPC, then ask for the winner (a cached lookup).
#   Without a GPU: serve the shipped H200 tuning tables (tables/) and query them.
# The daemon keeps running afterwards; the script prints how to stop it.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
ADDR=${CUTUNE_SERVER:-127.0.0.1:50051}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target cutuned cutune cutune-worker
BIN=$PWD/$BUILD/bin
export CUTUNE_SERVER=$ADDR

if [[ -f cutuned.pid ]] && kill -0 "$(cat cutuned.pid)" 2>/dev/null; then
  echo "demo: stopping the cutuned started earlier (pid $(cat cutuned.pid))"
  kill "$(cat cutuned.pid)"; sleep 1
fi
"$BIN/cutuned" --listen "$ADDR" --db ./cutune.db --tables tables >cutuned.log 2>&1 &
echo $! > cutuned.pid
for _ in $(seq 50); do
  "$BIN/cutune" devices >/dev/null 2>&1 && break
  sleep 0.2
done
echo "demo: cutuned running (pid $(cat cutuned.pid), log cutuned.log, db ./cutune.db)"
echo
echo "\$ cutune devices"
"$BIN/cutune" devices
echo
if ! "$BIN/cutune" devices --json | grep -q '"no_gpu_reason": *"[^"]' ; then
  echo "\$ cutune sweep transpose --shape 8192x8192"
  "$BIN/cutune" sweep transpose --shape 8192x8192
  echo
  echo "\$ cutune get transpose --shape 8192x8192"
  "$BIN/cutune" get transpose --shape 8192x8192
else
  echo "(no GPU here: answering from the shipped H200 tables in tables/)"
  echo
  echo "\$ cutune get matmul --shape 4096x4096x4096 --model 'NVIDIA H200'"
  "$BIN/cutune" get matmul --shape 4096x4096x4096 --model "NVIDIA H200"
  echo
  echo "\$ cutune get transpose --shape 10000x6000 --model 'NVIDIA H200'"
  "$BIN/cutune" get transpose --shape 10000x6000 --model "NVIDIA H200"
fi
echo
echo "demo: done. cutuned keeps running; stop it with: kill \$(cat cutuned.pid)"
