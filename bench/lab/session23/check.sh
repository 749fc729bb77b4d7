#!/usr/bin/env bash
# session 23: main's daemon and client runtime on whatever GPU came
out=$1
source .gpu/env.sh
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $out/gpu.txt
CUTUNE_TEST_TABLES=$PWD/tables timeout 100 client_gpu_test >$out/client_gpu_test.log 2>&1
echo "client_gpu_test rc $?"; grep -E '^\[( +OK|  FAILED|  PASSED|  SKIPPED) ' $out/client_gpu_test.log
export CUTUNE_SERVER=127.0.0.1:50090
cutuned --db /tmp/q.db --tables tables --listen $CUTUNE_SERVER >$out/cutuned.log 2>&1 &
for _ in $(seq 100); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
cutune devices
for s in 2048x512x8192 4096x4096x4096 6000x250x6000; do
  /usr/bin/time -f "wall %e s" timeout 60 cutune sweep matmul --shape $s --strategy quick --top 3 2>&1 | tee -a $out/quick.log | tail -12
done
# the same shape again: the compile cache is warm now
/usr/bin/time -f "wall %e s" timeout 60 cutune sweep matmul --shape 4096x4096x4096 --strategy quick --top 3 2>&1 | tee -a $out/quick.log | tail -6
kill %1
