#!/usr/bin/env bash
# Session 35: a grid call's rows to a shipped table, as tables/README.md's recipe does:
#   bench/lab/session35/finish.sh ROWS MODEL TABLE_OUT
# ROWS: a grid call's OUT/grid.tgz, or its grid-rows.json (.xz too);
# MODEL: "NVIDIA H200" or "NVIDIA H100 80GB HBM3". The kernel sources kept are this build's
# (`cutune space show FAMILY`, as in the recipe). The family the grid did not re-tune (the
# transpose) comes from the seed tables the grid imported, which its rows export holds; no
# shipped table is imported beside it (its matrix cells, of older sources, would merge in by
# the fastest: grid_tool.py current).
set -euo pipefail
rows=${1:?usage: finish.sh ROWS MODEL TABLE_OUT}
model=${2:?model}
table_out=${3:?table}
bin=$(cd "$(dirname "$0")/../../.." && pwd)/build/bin
work=$(mktemp -d /tmp/finish.XXXX)
mkdir -p "$work/state" "$work/cur"
case $rows in
  *.tgz) python3 scripts/grid_tool.py extract "$rows" "$work/state" ;;
  *.xz) xz -dc "$rows" >"$work/state/grid-rows.json" ;;
  *) cp "$rows" "$work/state/grid-rows.json" ;;
esac
source_of() { "$bin/cutune" space show "$1" | sed -n 's/^source hash: \([0-9a-f]*\).*/\1/p'; }
python3 scripts/grid_tool.py current "$work/state/grid-rows.json" "$work/cur/current.json" \
  transpose="$(source_of transpose)" matmul="$(source_of matmul)"
sock=$work/x.sock
"$bin/cutuned" --db "$work/ship.db" --tables "$work/cur" --listen "unix:$sock" --worker /bin/false \
  >"$work/cutuned.log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null' EXIT
for _ in $(seq 300); do [[ -S $sock ]] && "$bin/cutune" --server "unix:$sock" devices >/dev/null 2>&1 && break; sleep 0.2; done
"$bin/cutune" --server "unix:$sock" table export --model "$model" --timeout 120 -o "$table_out"
echo "finish: $table_out from $rows (work $work)"
