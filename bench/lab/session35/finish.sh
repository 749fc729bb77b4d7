#!/usr/bin/env bash
# Session 35: a grid call's result (OUT/grid.tgz, fetched here) to a shipped table, as
# tables/README.md's recipe does:
#   bench/lab/session35/finish.sh GRID_TGZ MODEL TABLE_OUT
# MODEL: "NVIDIA H200" or "NVIDIA H100 80GB HBM3". The family the grid did not re-tune (the
# transpose) comes from the seed tables the grid imported, which its rows export holds; no
# shipped table is imported beside it (its matrix cells, of older sources, would merge in by
# the fastest: grid_tool.py current).
set -euo pipefail
tgz=${1:?usage: finish.sh GRID_TGZ MODEL TABLE_OUT}
model=${2:?model}
table_out=${3:?table}
bin=$(cd "$(dirname "$0")/../../.." && pwd)/build/bin
work=$(mktemp -d /tmp/finish.XXXX)
python3 scripts/grid_tool.py extract "$tgz" "$work/state"
mkdir -p "$work/cur"
python3 scripts/grid_tool.py current "$work/state/grid-rows.json" "$work/cur/current.json" \
  transpose=8d1a7775cbf90847 matmul=b7c38814a73493ab
sock=$work/x.sock
"$bin/cutuned" --db "$work/ship.db" --tables "$work/cur" --listen "unix:$sock" --worker /bin/false \
  >"$work/cutuned.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null' EXIT
for _ in $(seq 300); do [[ -S $sock ]] && "$bin/cutune" --server "unix:$sock" devices >/dev/null 2>&1 && break; sleep 0.2; done
"$bin/cutune" --server "unix:$sock" table export --model "$model" --timeout 120 -o "$table_out"
echo "finish: $table_out from $tgz (work $work)"
