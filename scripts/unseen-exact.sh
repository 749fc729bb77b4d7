#!/usr/bin/env bash
# Tunes every shape of an unseen list (default tables/grid/unseen.txt: shapes outside the grids)
# exactly, by a full sweep of the default space, on this host's GPU, and exports every row: the
# measured side of the PREDICTED rung's check (bench/results/unseen-shapes.md). The rows hold
# every configuration of the space at each shape, portfolio members included, so the answer a
# table server gives there can be timed against the shape's own winner:
#   scripts/unseen-exact.sh OUT_DIR [LIST]
#   cutune-predict-bench --table tables/nvidia-h200.json --measured OUT_DIR/unseen-rows.json \
#     --unseen LIST          (on any machine, no GPU)
# Needs cutuned and cutune on PATH (a bundle's env.sh) and a free GPU (CUTUNED_FLAGS: more
# cutuned flags; UNSEEN_LISTEN: its address, default 127.0.0.1:50078). Writes OUT_DIR/unseen.log,
# OUT_DIR/sweeps/*.json, OUT_DIR/unseen-rows.json. Exit: 0 done, 2 bad arguments, 4 cutuned
# failed, 5 a sweep failed (the others still ran).
set -uo pipefail
out=${1:?usage: unseen-exact.sh OUT_DIR [LIST]}
here=$(cd "$(dirname "$0")/.." && pwd)
list=${2:-$here/tables/grid/unseen.txt}
[[ -f $list ]] || { echo "unseen-exact: no list $list" >&2; exit 2; }
mkdir -p "$out/sweeps"
log=$out/unseen.log
say() { echo "$(date +%T) $*" | tee -a "$log"; }
listen=${UNSEEN_LISTEN:-127.0.0.1:50078}
export CUTUNE_SERVER=$listen
db=$(mktemp -d)/unseen.db
cutuned --db "$db" --listen "$listen" ${CUTUNED_FLAGS:-} >>"$out/cutuned.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon' EXIT
for _ in $(seq 100); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
cutune devices >>"$log" 2>&1 || { say "cutuned did not come up (see $out/cutuned.log)"; exit 4; }
failed=0
while read -r family shape; do
  [[ -z $family || $family == \#* ]] && continue
  s0=$(date +%s.%N)
  cutune sweep "$family" --shape "$shape" --timeout 900 --top 1 --json \
    >"$out/sweeps/$family-$shape.json" 2>>"$log"
  rc=$?
  [[ $rc == 0 ]] || failed=1
  say "$family $shape: exit $rc, $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $s0}") s"
done <"$list"
cutune table export --rows --timeout 300 -o "$out/unseen-rows.json" 2>>"$log" ||
  { say "export failed"; exit 5; }
say "done: $out/unseen-rows.json"
exit $(( failed ? 5 : 0 ))
