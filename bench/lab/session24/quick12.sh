#!/usr/bin/env bash
# Session 24: main's daemon on whatever GPU came, holding the shipped tables: quick sweeps of
# the 12 matmul shapes of tables/grid/unseen.txt, the store's choice between the device's own
# prediction model and the H200's (its log), lookups of shapes nobody here tuned, and the rows
# exported for the offline leave-one-shape-out (split_folds.py, then cutune-predict-bench).
#   bash bench/lab/session24/quick12.sh OUT_DIR       (bundle: main's cutuned, cutune, cutune-worker)
set -uo pipefail
out=${1:?usage: quick12.sh OUT_DIR}
source .gpu/env.sh
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
export CUTUNE_SERVER=127.0.0.1:50091
cutuned --db /tmp/quick12.db --tables tables --listen $CUTUNE_SERVER >"$out/cutuned.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
for s in 2048x512x8192 6144x192x8192 4097x1023x777; do
  cutune get matmul --shape $s --device 0 >>"$out/get-before.log" 2>&1
done
for s in $(awk '$1 == "matmul" { print $2 }' tables/grid/unseen.txt); do
  /usr/bin/time -f "wall %e s" timeout 90 cutune sweep matmul --shape $s --strategy quick --top 1 \
    >"$out/quick-$s.log" 2>&1
  echo "quick $s: rc $? $(grep -E '^wall' "$out/quick-$s.log")"
done
for s in 2048x512x8192 6144x192x8192 4097x1023x777; do
  cutune get matmul --shape $s --device 0 >>"$out/get-after.log" 2>&1
done
grep -h -E 'match:' "$out/get-before.log" "$out/get-after.log"
cutune table export --rows --model "$(cut -d, -f1 "$out/gpu.txt")" -o "$out/quick-rows.json"
echo "export: rc $?"
grep 'cutune store' "$out/cutuned.log"
kill $daemon
