#!/usr/bin/env bash
# The last step of the grid recipe (tables/README.md): a grid's rows to a shipped table.
#   scripts/grid-table.sh ROWS MODEL TABLE_OUT
# ROWS: a tune-grid.sh OUT_DIR's grid-rows.json (.xz too), or gpu-grid.sh's OUT/grid.tgz;
# MODEL: the device the table is for, as `cutune devices` names it ("NVIDIA H200").
# Keeps the winners and sweeps of this build's kernel sources only (`cutune space show FAMILY`):
# older winners in the seed tables the grid imported are stale, and a re-tuned family's seeded
# portfolio goes, its matrix rebuilt from the rows (grid_tool.py current). A family the grid did
# not re-tune comes from those seed tables, which the rows' export holds. No shipped table is
# imported beside the rows: its matrix cells, of older sources, would merge in by the fastest.
# Needs cutuned and cutune on PATH (no GPU: a table server exports), python3.
set -euo pipefail
usage="usage: grid-table.sh ROWS MODEL TABLE_OUT"
rows=${1:?$usage}
model=${2:?$usage}
table_out=${3:?$usage}
[[ -f $rows ]] || { echo "grid-table: no rows file '$rows'" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/grid-table.XXXXXX")
daemon=""
trap '[[ -n $daemon ]] && kill $daemon 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/state" "$work/current"
case $rows in
  *.tgz) python3 "$repo/scripts/grid_tool.py" extract "$rows" "$work/state" ;;
  *.xz) xz -dc "$rows" >"$work/state/grid-rows.json" ;;
  *) cp "$rows" "$work/state/grid-rows.json" ;;
esac
[[ -s $work/state/grid-rows.json ]] || { echo "grid-table: $rows holds no grid-rows.json" >&2; exit 2; }
source_of() {
  local hash
  hash=$(cutune space show "$1" | sed -n 's/^source hash: \([0-9a-f]*\).*/\1/p')
  [[ -n $hash ]] || { echo "grid-table: cutune space show $1 names no source hash" >&2; exit 2; }
  echo "$hash"
}
python3 "$repo/scripts/grid_tool.py" current "$work/state/grid-rows.json" "$work/current/current.json" \
  transpose="$(source_of transpose)" matmul="$(source_of matmul)"
sock=unix:$work/table.sock
cutuned --db "$work/table.db" --tables "$work/current" --listen "$sock" --worker /bin/false \
  >"$work/cutuned.log" 2>&1 &
daemon=$!
for _ in $(seq 300); do
  cutune --server "$sock" devices >/dev/null 2>&1 && break
  kill -0 $daemon 2>/dev/null || { echo "grid-table: cutuned failed:" >&2; cat "$work/cutuned.log" >&2; exit 4; }
  sleep 0.2
done
cutune --server "$sock" table export --model "$model" --timeout 120 -o "$table_out"
echo "grid-table: $table_out from $rows"
