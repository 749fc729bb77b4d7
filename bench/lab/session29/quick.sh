#!/usr/bin/env bash
# Session 29: main's daemon (the quick start in turns, e6e3859) on whatever GPU came, holding the
# shipped tables: session 24's quick12.sh (the 12 unseen matmul shapes), then quick at 4096^3
# three times against one daemon (the issue's <= 3 s, warm compile cache).
#   bash bench/lab/session29/quick.sh OUT_DIR      (.gpu: main's bundle with the cache tar)
set -uo pipefail
out=${1:?usage: quick.sh OUT_DIR}
mkdir -p "$out/quick12"
source .gpu/env.sh
export CUTUNE_CACHE_DIR=/tmp/cutune-session29-cache
if [[ ! -d $CUTUNE_CACHE_DIR ]]; then
  mkdir -p $CUTUNE_CACHE_DIR && python3 scripts/grid_tool.py extract .gpu/nvrtc-cache-*.tar.xz $CUTUNE_CACHE_DIR
fi
bash bench/lab/session24/quick12.sh "$out/quick12"
export CUTUNE_SERVER=127.0.0.1:50092
cutuned --db /tmp/quick4096.db --tables tables --listen $CUTUNE_SERVER >"$out/cutuned-4096.log" 2>&1 &
daemon=$!
for _ in $(seq 100); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
for i in 1 2 3; do
  /usr/bin/time -f "wall %e s" timeout 60 cutune sweep matmul --shape 4096x4096x4096 --strategy quick \
    --top 3 >"$out/quick-4096-$i.log" 2>&1
  echo "quick 4096^3 run $i: rc $? $(grep -E 'candidates in|^wall' "$out/quick-4096-$i.log" | tr '\n' ' ')"
done
kill $daemon
