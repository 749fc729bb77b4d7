#!/usr/bin/env bash
# After quick.sh on the same machine: quick at 6000x250x6000 three times on a fresh daemon holding
# only the shipped tables (quick.sh's daemon had swept 3000x500x700 first), rows exported to
# OUT/q2-rows.json.xz to replay its start here.
set -uo pipefail
# shellcheck disable=SC1091
source .gpu/env.sh
export CUTUNE_CACHE_DIR=/tmp/cutune-quick-cache
rm -f /tmp/q2.db* /tmp/q2.sock
cutuned --db /tmp/q2.db --listen unix:/tmp/q2.sock --tables tables >"$OUT/cutuned2.log" 2>&1 &
daemon=$!
export CUTUNE_SERVER=unix:/tmp/q2.sock
for _ in $(seq 200); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
for i in 1 2 3; do
  cutune sweep matmul --shape 6000x250x6000 --strategy quick --top 5 >"$OUT/q2-$i.txt" 2>&1
  echo "quick 6000x250x6000 #$i: rc $?"
  sed -n 2,4p "$OUT/q2-$i.txt"; grep -E '^[1-5] ' "$OUT/q2-$i.txt"
done
cutune table export --rows | xz >"$OUT/q2-rows.json.xz"
kill -TERM $daemon; wait $daemon
