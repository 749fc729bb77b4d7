#!/usr/bin/env bash
# Tunes the shape grids (tables/grid/*.txt) on this host's GPU and exports the tuning table with
# its portfolio matrix: the recipe behind tables/nvidia-h200.json (see tables/README.md).
#   scripts/tune-grid.sh OUT_DIR [--no-brute] [--no-unseen] [--seed-tables DIR] [--grid DIR]
#                                [--only FILE [--matrix-all]] [--near N] [--stop-after SECONDS]
# --grid DIR: another grid (DIR/matmul.txt, DIR/transpose.txt, DIR/unseen.txt; default
# tables/grid); --seed-tables DIR: tables cutuned imports first (default tables/); --only FILE
# (FAMILY SHAPE per line): sweep and measure only these grid shapes, the rest of the grid being
# in the seed tables already (shapes added to a grid, or a family whose kernel changed); it
# implies --no-brute --no-unseen; with --matrix-all the matrix phase still visits every grid shape
# of the families FILE names (the new shapes' winners measured at the old shapes too).
# --near N: the matrix also measures, at every shape it visits, up to N near-winners of each grid
# shape (its fastest other configurations within 5% of its winner whose tiling differs:
# `grid_tool.py pool`), so that a portfolio can hold a member that serves several shapes well
# where each shape's own winner serves only its own (default 0: the winners alone).
# --stop-after SECONDS: start no sweep after SECONDS; the run then exits 3 with its state in
# OUT_DIR (the store grid.db, done.txt: the sweeps that finished). Running it again with the same
# OUT_DIR and options goes on where it stopped (the options must match: options.txt); so does a
# run whose machine went away, losing at most the sweep in flight. A finished OUT_DIR holds
# `complete`; running again on it does nothing.
# Phases, each timed in OUT_DIR/grid.log:
#   quick    every grid shape with --strategy quick (the portfolio so far, then a descent)
#   brute    brute force on the subset in brute.txt, to show quick finds the same winners
#   matrix   every distinct grid winner (and --near's near-winners; the list is fixed when the
#            phase first starts: OUT_DIR/pool-FAMILY.txt) measured at every grid shape where it
#            is not yet
#   unseen   the shapes of tables/grid/unseen.txt: quick, then the grid winners (not exported)
# Needs cutuned and cutune on PATH (a bundle's env.sh), python3, and a free GPU.
# Exit: 0 done, 2 bad options, 3 stopped by --stop-after (run again to go on), 4 cutuned failed.
set -uo pipefail
usage="usage: tune-grid.sh OUT_DIR [--no-brute] [--no-unseen] [--seed-tables DIR] [--grid DIR] [--only FILE [--matrix-all]] [--near N] [--stop-after SECONDS]"
out=${1:?$usage}
shift
here=$(cd "$(dirname "$0")/.." && pwd)
brute=1 unseen=1 seed_tables="$here/tables" grid="$here/tables/grid" only="" matrix_all=0 near=0 stop_after=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --no-brute) brute=0 ;;
    --no-unseen) unseen=0 ;;
    --seed-tables) seed_tables=$2; shift ;;
    --grid) grid=$(cd "${2:-}" 2>/dev/null && pwd) || { echo "tune-grid: no grid folder '${2:-}'" >&2; exit 2; }
      shift ;;
    --only) only=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); brute=0 unseen=0; shift ;;
    --matrix-all) matrix_all=1 ;;
    --near)
      [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "tune-grid: --near takes a count, not '${2:-}'" >&2; exit 2; }
      near=$2; shift ;;
    --stop-after)
      [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "tune-grid: --stop-after takes whole seconds, not '${2:-}'" >&2; exit 2; }
      stop_after=$2; shift ;;
    *) echo "tune-grid: unknown option $1" >&2; echo "$usage" >&2; exit 2 ;;
  esac
  shift
done
deadline=$(( $(date +%s) + ${stop_after:-0} ))
shapes() { grep -v '^\s*#' "$1" | grep -v '^\s*$'; }
if [[ -n $only ]]; then
  [[ -f $only ]] || { echo "tune-grid: no file $only" >&2; exit 2; }
  while read -r family shape; do
    shapes "$grid/$family.txt" 2>/dev/null | grep -qx "$shape" ||
      { echo "tune-grid: $family $shape (in $only) is not a shape of $grid/$family.txt" >&2; exit 2; }
  done < <(shapes "$only")
fi

# The run's identity: what it tunes (not where the files lie, nor its deadline), so a run on
# another machine can go on with the state an earlier one left.
identity() {
  echo "brute=$brute unseen=$unseen matrix_all=$matrix_all near=$near"
  for f in "$grid"/{transpose,matmul,brute,unseen}.txt ${only:+"$only"}; do
    [[ -f $f ]] && echo "$(basename "$f") $(shapes "$f" | sha256sum | cut -c1-16)"
  done
}
mkdir -p "$out/sweeps"
log=$out/grid.log
say() { echo "$(date +%T) $*" | tee -a "$log"; }
if [[ -f $out/complete ]]; then
  echo "tune-grid: $out is complete already (remove it to tune again)"
  exit 0
fi
if [[ -f $out/options.txt ]]; then
  if ! diff <(identity) "$out/options.txt" >/dev/null; then
    echo "tune-grid: $out holds a run with other options or grids; use another OUT_DIR" >&2
    diff <(identity) "$out/options.txt" | sed 's/^/  /' >&2
    exit 2
  fi
  say "== going on: $(grep -vc '^phase ' "$out/done.txt" 2>/dev/null) sweeps done before =="
else
  rm -f "$out"/grid.db "$out"/grid.db-wal "$out"/grid.db-shm "$out/done.txt" "$out/seeded"
  identity >"$out/options.txt"
fi
touch "$out/done.txt"
tool="python3 $here/scripts/grid_tool.py"
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
# done.txt: one line per finished sweep ("TAG FAMILY SHAPE") and phase ("phase NAME").
finished() { grep -qxF "$*" "$out/done.txt"; }
phase_start() { phase=$1; t0=$(date +%s.%N); say "== $phase =="; }
phase_end() {
  say "== $phase: $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s =="
  echo "phase $phase" >>"$out/done.txt"
}

listen=${TUNE_GRID_LISTEN:-127.0.0.1:50077}
export CUTUNE_SERVER=$listen
# The seed tables go in once, before the first sweep: imported again they could put an older
# kernel's winner back over this run's (keep-faster merge).
seed=(--tables "$seed_tables")
[[ -f $out/seeded ]] && seed=()
cutuned --db "$out/grid.db" --listen "$listen" "${seed[@]}" ${CUTUNED_FLAGS:-} >>"$out/cutuned.log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon' EXIT
for _ in $(seq 100); do cutune devices >/dev/null 2>&1 && break; sleep 0.2; done
cutune devices >>"$log" 2>&1 || { say "cutuned did not come up (see $out/cutuned.log)"; exit 4; }
touch "$out/seeded"

# sweep FAMILY SHAPE TAG [cutune sweep options...]: one sweep, its JSON result kept; none starts
# after the deadline.
sweep() {
  local family=$1 shape=$2 tag=$3; shift 3
  local file="$out/sweeps/$tag-$family-$shape.json" s0 s1
  if [[ -n $stop_after ]] && (( $(date +%s) >= deadline )); then
    say "stopped: --stop-after $stop_after s is up; run again on $out to go on"
    exit 3
  fi
  s0=$(date +%s.%N)
  cutune sweep "$family" --shape "$shape" --timeout 900 --top 1 --json "$@" >"$file" 2>>"$log"
  local rc=$?
  s1=$(date +%s.%N)
  say "$tag $family $shape: exit $rc, $(awk "BEGIN{printf \"%.2f\", $s1 - $s0}") s, $($tool best "$file")"
  [[ $rc == 0 ]] && echo "$tag $family $shape" >>"$out/done.txt"
}

if ! finished phase quick; then
  phase_start quick
  for family in transpose matmul; do
    for shape in $(visit $family); do
      finished quick $family "$shape" || sweep $family "$shape" quick --strategy quick
    done
  done
  phase_end
fi

if [[ $brute == 1 ]] && ! finished phase brute; then
  phase_start brute
  while read -r family shape; do
    finished brute "$family" "$shape" || sweep "$family" "$shape" brute
  done < <(shapes "$grid/brute.txt")
  phase_end
  $tool compare "$out/sweeps" | tee -a "$log"
fi

# measure FAMILY SHAPE TAG: what the matrix measures (OUT_DIR/pool-FAMILY.txt, written once: a
# run that goes on measures the same list) not yet measured at SHAPE (what the store holds, so a
# run that goes on measures only what is still missing).
measure() {
  local family=$1 shape=$2 tag=$3 list="$out/candidates-$1-$2.txt" pool="$out/pool-$1.txt"
  if [[ ! -f $pool ]]; then
    $tool pool "$out/export.json" "$family" "$grid/$family.txt" "$near" >"$pool.tmp" && mv "$pool.tmp" "$pool"
    say "matrix $family: $(wc -l <"$pool") configurations (winners and up to $near near-winners a shape)"
  fi
  $tool missing "$out/export.json" "$family" "$shape" "$pool" >"$list"
  if [[ -s $list ]]; then
    sweep "$family" "$shape" "$tag" --candidates "$list"
  else
    say "$tag $family $shape: nothing to measure"
  fi
}

if ! finished phase matrix; then
  phase_start matrix
  cutune table export --rows --timeout 300 -o "$out/export.json"
  for family in transpose matmul; do
    for shape in $(matrix_visit $family); do measure $family "$shape" matrix; done
  done
  cutune table export --rows --timeout 300 -o "$out/grid-rows.json"
  cutune table export --timeout 300 -o "$out/grid.json"
  phase_end
fi

if [[ $unseen == 1 ]] && ! finished phase unseen; then
  phase_start unseen
  while read -r family shape; do
    finished unseen-quick "$family" "$shape" || sweep "$family" "$shape" unseen-quick --strategy quick
    # What quick measured at the shape is measured already.
    cutune table export --rows --timeout 300 -o "$out/export.json"
    measure "$family" "$shape" unseen-matrix
  done < <(shapes "$grid/unseen.txt")
  cutune table export --rows --timeout 300 -o "$out/all-rows.json"
  phase_end
fi
touch "$out/complete"
$tool phases "$out/sweeps" | tee -a "$log"
say "done"
