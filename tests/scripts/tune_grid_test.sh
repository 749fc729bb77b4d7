#!/usr/bin/env bash
# scripts/tune-grid.sh on a cutuned whose GPU is the fake worker (real NVRTC, fixed times), on a
# grid of two transpose shapes and one unseen shape: a run stopped by --stop-after exits 3 and a
# second run on the same OUT_DIR goes on, sweeping each shape once in all; a run with other
# options is refused and changes nothing; a finished OUT_DIR is left as it is; the matrix phase
# measures only what the store lacks (also when run again); gpu-grid.sh's packing (the store
# copied whole) unpacks into a state that is complete.
#   tune_grid_test.sh SRC CUTUNED CUTUNE FAKE_WORKER
set -uo pipefail
src=$1 cutuned=$2 cutune=$3 fake=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "tune_grid_test: $*" >&2; [[ -f $tmp/out/grid.log ]] && sed 's/^/  | /' "$tmp/out/grid.log" >&2; exit 1; }
mkdir -p "$tmp/bin" "$tmp/grid" "$tmp/seed"
ln -s "$cutuned" "$tmp/bin/cutuned"
ln -s "$cutune" "$tmp/bin/cutune"
export PATH=$tmp/bin:$PATH CUTUNE_CACHE_DIR=$tmp/cache
export TUNE_GRID_LISTEN=unix:$tmp/grid.sock CUTUNED_FLAGS="--worker $fake"
printf '# test grid\n64x64\n96x160\n' >"$tmp/grid/transpose.txt"
printf '# no matmul shapes\n' >"$tmp/grid/matmul.txt"
printf 'transpose 64x64\n' >"$tmp/grid/brute.txt"
printf 'transpose 100x60\n' >"$tmp/grid/unseen.txt"
grid() { bash "$src/scripts/tune-grid.sh" "$tmp/out" --grid "$tmp/grid" --seed-tables "$tmp/seed" --no-brute "$@" \
           >>"$tmp/stdout.log" 2>&1; }
count() { grep -c "$1" "$tmp/out/grid.log"; }

# A deadline that has passed before the first sweep: exit 3, nothing swept, the state kept.
grid --stop-after 0; rc=$?
[[ $rc == 3 ]] || fail "a run past its --stop-after exited $rc, not 3"
[[ -f $tmp/out/options.txt && -f $tmp/out/seeded ]] || fail "the stopped run kept no state"
[[ $(count ' quick transpose ') == 0 ]] || fail "a sweep started after the deadline"
grep -q 'stopped: --stop-after 0 s is up' "$tmp/out/grid.log" || fail "the log does not say it stopped"

# Other options on the same OUT_DIR: refused (exit 2), nothing changed.
cp "$tmp/out/options.txt" "$tmp/options.before"
bash "$src/scripts/tune-grid.sh" "$tmp/out" --grid "$tmp/grid" --seed-tables "$tmp/seed" \
  >"$tmp/refused.log" 2>&1; rc=$?
[[ $rc == 2 ]] || fail "a run with other options (brute force on) exited $rc, not 2"
grep -q 'other options' "$tmp/refused.log" || fail "the refusal does not say why: $(cat "$tmp/refused.log")"
cmp -s "$tmp/options.before" "$tmp/out/options.txt" || fail "the refused run changed options.txt"
grid --stop-after x; rc=$?
[[ $rc == 2 ]] || fail "--stop-after x exited $rc, not 2"

# Going on: every phase, each grid shape swept once.
grid; rc=$?
[[ $rc == 0 ]] || fail "the run that goes on exited $rc"
grep -q 'going on: 0 sweeps done before' "$tmp/out/grid.log" || fail "the second run did not go on"
for shape in 64x64 96x160; do
  [[ $(count " quick transpose $shape: exit 0") == 1 ]] || fail "quick $shape swept other than once"
done
[[ $(count ' unseen-quick transpose 100x60: exit 0') == 1 ]] || fail "the unseen shape was not swept once"
[[ -f $tmp/out/complete && -s $tmp/out/grid-rows.json && -s $tmp/out/all-rows.json ]] ||
  fail "the finished run left no complete marker or exports"
python3 - "$tmp/out/grid-rows.json" <<'EOF' || fail "grid-rows.json lacks the two grid winners"
import json, sys
winners = [w for d in json.load(open(sys.argv[1]))["devices"] for w in d["winners"]]
shapes = sorted(tuple(w["shape"]) for w in winners if w["family"] == "transpose")
sys.exit(0 if shapes == [(64, 64), (96, 160)] else f"winners at {shapes}")
EOF

# A finished OUT_DIR: nothing more is done.
lines=$(wc -l <"$tmp/out/grid.log")
grid; rc=$?
[[ $rc == 0 && $(wc -l <"$tmp/out/grid.log") == "$lines" ]] || fail "a complete OUT_DIR was tuned again"

# The matrix phase measures what the store lacks, also when run again. Seeded with the first
# run's winner at 96x160 swapped for a configuration quick measured there but not at 64x64 (and no
# rows), re-tuning 64x64 alone (--only, --matrix-all) measures both winners at 96x160 and nothing
# else; its matrix phase run again measures nothing.
mkdir "$tmp/seed2"
python3 "$src/tests/scripts/grid_seed.py" "$tmp/out/grid-rows.json" "$tmp/seed2/seed.json" 64x64 96x160 ||
  fail "cannot make the seed table"
printf 'transpose 64x64\n' >"$tmp/only.txt"
out2() { bash "$src/scripts/tune-grid.sh" "$tmp/out2" --grid "$tmp/grid" --seed-tables "$tmp/seed2" \
           --only "$tmp/only.txt" --matrix-all "$@" >>"$tmp/stdout.log" 2>&1; }
log2() { cat "$tmp/out2/grid.log"; }
count2() { grep -c "$1" "$tmp/out2/grid.log"; }
out2 --stop-after 0; rc=$?
[[ $rc == 3 ]] || fail "the --only run past its deadline exited $rc"
out2; rc=$?
[[ $rc == 0 ]] || fail "the --only run that goes on exited $rc: $(log2)"
[[ $(count2 ' quick transpose ') == 1 ]] || fail "the --only run swept other shapes: $(log2)"
grep -q 'matrix transpose 96x160: exit 0, .*, 2 candidates' "$tmp/out2/grid.log" ||
  fail "the matrix did not measure both winners at 96x160: $(log2)"
sed -i '/^phase matrix$/d' "$tmp/out2/done.txt"
rm "$tmp/out2/complete"
out2; rc=$?
[[ $rc == 0 ]] || fail "the run that redoes the matrix exited $rc"
[[ $(count2 ' quick transpose ') == 1 ]] || fail "the quick phase ran again: $(log2)"
[[ $(count2 ': nothing to measure') == 3 && $(count2 ' matrix transpose .*: exit') == 1 ]] ||
  fail "the matrix run again measured what the store holds: $(log2)"

# gpu-grid.sh's packing: the store copied through SQLite's backup unpacks into a state that is
# complete and whose store opens.
tool="python3 $src/scripts/grid_tool.py"
$tool pack "$tmp/out" "$tmp/grid.tgz" || fail "packing failed"
$tool unpack "$tmp/grid.tgz" "$tmp/unpacked" || fail "unpacking failed"
[[ -f $tmp/unpacked/complete && -f $tmp/unpacked/done.txt && ! -e $tmp/unpacked/grid.db-wal ]] ||
  fail "the unpacked state lacks complete or done.txt, or holds a journal"
$tool unpack "$tmp/grid.tgz" "$tmp/unpacked" 2>/dev/null && fail "unpacking over a state succeeded"
rows=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from winners').fetchone()[0])" \
  "$tmp/unpacked/grid.db") || fail "the unpacked store does not open"
[[ $rows -ge 3 ]] || fail "the unpacked store holds $rows winners, expected 3"
# scripts/grid-table.sh: the packed state (and its rows alone) to a table of this build's sources,
# with the grid's two winners, each of the source this build names; a file that holds no rows is
# refused.
source=$("$cutune" space show transpose | sed -n 's/^source hash: \([0-9a-f]*\).*/\1/p')
for rows in "$tmp/grid.tgz" "$tmp/out/grid-rows.json"; do
  rm -f "$tmp/table.json"
  bash "$src/scripts/grid-table.sh" "$rows" "Fake GPU" "$tmp/table.json" >"$tmp/table.log" 2>&1 ||
    fail "grid-table.sh $rows failed: $(cat "$tmp/table.log")"
  python3 - "$tmp/table.json" "$source" <<'EOF' || fail "the table from $rows lacks the winners"
import json, sys
devices = json.load(open(sys.argv[1]))["devices"]
assert [d["model"] for d in devices] == ["Fake GPU"], devices
shapes = sorted(tuple(w["shape"]) for w in devices[0]["winners"] if w["family"] == "transpose")
assert shapes == [(64, 64), (96, 160)], shapes
assert sys.argv[2] and all(w["source_hash"].startswith(sys.argv[2]) for w in devices[0]["winners"])
EOF
done
bash "$src/scripts/grid-table.sh" "$tmp/options.before" "Fake GPU" "$tmp/bad.json" >"$tmp/bad.log" 2>&1 &&
  fail "grid-table.sh took a file that holds no rows"
[[ ! -e $tmp/bad.json ]] || fail "grid-table.sh wrote a table from a file that holds no rows"
echo "tune_grid_test: ok"
