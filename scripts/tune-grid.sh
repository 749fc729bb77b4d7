#!/usr/bin/env bash
# Tunes the shape grids (tables/grid/*.txt) on this host's GPU and exports the tuning table with
# its portfolio matrix: the recipe behind tables/nvidia-h200.json (see tables/README.md).
#   scripts/tune-grid.sh OUT_DIR [--no-brute] [--no-unseen] [--seed-tables DIR] [--grid DIR]
#                                [--only FILE [--matrix-all]]
# --grid DIR: another grid (DIR/matmul.txt, DIR/transpose.txt, DIR/unseen.txt; default
# tables/grid); --seed-tables DIR: tables cutuned imports first (default tables/); --only FILE
# (FAMILY SHAPE per line): sweep and measure only these grid shapes, the rest of the grid being
# in the seed tables already (shapes added to a grid, or a family whose kernel changed); it
# implies --no-brute --no-unseen; with --matrix-all the matrix phase still visits every grid shape
# of the families FILE names (the new shapes' winners measured at the old shapes too).
# Phases, each timed in OUT_DIR/grid.log:
#   quick    every grid shape with --strategy quick (the portfolio so far, then a descent)
#   brute    brute force on the subset in brute.txt, to show quick finds the same winners
#   matrix   every distinct grid winner measured at every grid shape where it is not yet
#   unseen   the shapes of tables/grid/unseen.txt: quick, then the grid winners (not exported)
# Needs cutuned and cutune on PATH (a bundle's env.sh), python3, and a free GPU.
set -uo pipefail
out=${1:?usage: tune-grid.sh OUT_DIR [--no-brute] [--no-unseen] [--seed-tables DIR] [--grid DIR] [--only FILE]}
shift
here=$(cd "$(dirname "$0")/.." && pwd)
brute=1 unseen=1 seed_tables="$here/tables" grid="$here/tables/grid" only="" matrix_all=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --no-brute) brute=0 ;;
    --no-unseen) unseen=0 ;;
    --seed-tables) seed_tables=$2; shift ;;
    --grid) grid=$(cd "$2" && pwd); shift ;;
    --only) only=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); brute=0 unseen=0; shift ;;
    --matrix-all) matrix_all=1 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out/sweeps"
log=$out/grid.log
tool="python3 $here/scripts/grid_tool.py"
say() { echo "$(date +%T) $*" | tee -a "$log"; }
shapes() { grep -v '^\s*#' "$1" | grep -v '^\s*$'; }
# visit FAMILY: the grid shapes of FAMILY this run sweeps (all, or those --only names).
visit() {
  if [[ -z $only ]]; then shapes "$grid/$1.txt"; return; fi
  shapes "$only" | awk -v f="$1" '$1 == f { print $2 }'
}
# matrix_visit FAMILY: the shapes the matrix phase measures at (with --matrix-all, every grid
# shape of a family --only names).
matrix_visit() {
  if [[ -n $only && $matrix_all == 1 ]] && shapes "$only" | awk '{print $1}' | grep -qx "$1"; then
    shapes "$grid/$1.txt"
  else
    visit "$1"
  fi
}
if [[ -n $only ]]; then
  while read -r family shape; do
    shapes "$grid/$family.txt" 2>/dev/null | grep -qx "$shape" ||
      { echo "tune-grid: $family $shape (in $only) is not a shape of $grid/$family.txt" >&2; exit 2; }
  done < <(shapes "$only")
fi
phase_start() { phase=$1; t0=$(date +%s.%N); say "== $phase =="; }
phase_end() { say "== $phase: $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s =="; }

listen=127.0.0.1:50077
export CUTUNE_SERVER=$listen
db=/tmp/cutune-grid.db
rm -f $db $db-wal $db-shm
cutuned --db $db --listen $listen --tables "$seed_tables" ${CUTUNED_FLAGS:-} >"$out/cutuned.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon' EXIT
for _ in $(seq 100); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
cutune devices | tee -a "$log"

# sweep FAMILY SHAPE TAG [cutune sweep options...]: one sweep, its JSON result kept.
sweep() {
  local family=$1 shape=$2 tag=$3; shift 3
  local file="$out/sweeps/$tag-$family-$shape.json" s0 s1
  s0=$(date +%s.%N)
  cutune sweep "$family" --shape "$shape" --timeout 900 --top 1 --json "$@" >"$file" 2>>"$log"
  local rc=$?
  s1=$(date +%s.%N)
  say "$tag $family $shape: exit $rc, $(awk "BEGIN{printf \"%.2f\", $s1 - $s0}") s, $($tool best "$file")"
}

phase_start quick
for family in transpose matmul; do
  for shape in $(visit $family); do sweep $family "$shape" quick --strategy quick; done
done
phase_end

if [[ $brute == 1 ]]; then
  phase_start brute
  while read -r family shape; do sweep "$family" "$shape" brute; done < <(shapes "$grid/brute.txt")
  phase_end
  $tool compare "$out/sweeps" | tee -a "$log"
fi

# measure FAMILY SHAPE TAG: the distinct grid winners not yet measured at SHAPE.
measure() {
  local family=$1 shape=$2 tag=$3 list="$out/candidates-$1-$2.txt"
  $tool missing "$out/export.json" "$family" "$shape" "$grid/$family.txt" >"$list"
  if [[ -s $list ]]; then
    sweep "$family" "$shape" "$tag" --candidates "$list"
  else
    say "$tag $family $shape: nothing to measure"
  fi
}

phase_start matrix
cutune table export --rows --timeout 300 -o "$out/export.json"
for family in transpose matmul; do
  for shape in $(matrix_visit $family); do measure $family "$shape" matrix; done
done
phase_end
cutune table export --rows --timeout 300 -o "$out/grid-rows.json"
cutune table export --timeout 300 -o "$out/grid.json"

if [[ $unseen == 1 ]]; then
  phase_start unseen
  while read -r family shape; do
    sweep "$family" "$shape" unseen-quick --strategy quick
    measure "$family" "$shape" unseen-matrix
  done < <(shapes "$grid/unseen.txt")
  phase_end
  cutune table export --rows --timeout 300 -o "$out/all-rows.json"
fi
say "done"
