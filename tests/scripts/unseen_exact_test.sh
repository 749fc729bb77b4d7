#!/usr/bin/env bash
# scripts/unseen-exact.sh on a cutuned whose GPU is the fake worker (real NVRTC, fixed times): a
# list of two transpose shapes is swept in full and every row of both comes out in the export
# (what cutune-predict-bench --measured reads); a list that does not exist is refused (exit 2).
#   unseen_exact_test.sh SRC CUTUNED CUTUNE FAKE_WORKER
set -uo pipefail
src=$1 cutuned=$2 cutune=$3 fake=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "unseen_exact_test: $*" >&2; [[ -f $tmp/out/unseen.log ]] && sed 's/^/  | /' "$tmp/out/unseen.log" >&2; exit 1; }
mkdir -p "$tmp/bin"
ln -s "$cutuned" "$tmp/bin/cutuned"
ln -s "$cutune" "$tmp/bin/cutune"
export PATH=$tmp/bin:$PATH CUTUNE_CACHE_DIR=$tmp/cache
export UNSEEN_LISTEN=unix:$tmp/unseen.sock CUTUNED_FLAGS="--worker $fake"
printf '# two shapes\ntranspose 64x64\n\ntranspose 100x60\n' >"$tmp/list.txt"

bash "$src/scripts/unseen-exact.sh" "$tmp/out" "$tmp/list.txt" >"$tmp/stdout.log" 2>&1; rc=$?
[[ $rc == 0 ]] || fail "exit $rc: $(cat "$tmp/stdout.log")"
python3 - "$tmp/out/unseen-rows.json" <<'PY' || fail "the export lacks the sweeps' rows"
import json, sys
table = json.load(open(sys.argv[1]))
sweeps = [s for d in table["devices"] for s in d.get("sweeps", [])]
shapes = sorted(tuple(s["shape"]) for s in sweeps)
assert shapes == [(64, 64), (100, 60)], shapes
for s in sweeps:
    assert len(s["rows"]) > 1, (s["shape"], len(s["rows"]))  # the whole space, not the winner
PY
[[ $(grep -c ': exit 0, ' "$tmp/out/unseen.log") == 2 ]] || fail "not two sweeps done: $(cat "$tmp/out/unseen.log")"

bash "$src/scripts/unseen-exact.sh" "$tmp/out2" "$tmp/no-such-list.txt" >"$tmp/refused.log" 2>&1; rc=$?
[[ $rc == 2 ]] || fail "a missing list exited $rc, not 2"
echo "unseen_exact_test: ok"
