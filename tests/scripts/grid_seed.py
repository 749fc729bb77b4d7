#!/usr/bin/env python3
"""tune_grid_test.sh's seed table: from a tune-grid.sh grid-rows.json over the grid shapes A and
B, a table holding only B's winner, its configuration swapped for one the sweep measured at B but
not at A (so re-tuning A alone leaves two distinct winners for the matrix phase), and no rows.
  grid_seed.py GRID_ROWS_JSON OUT_JSON AxB BxC"""
import json
import sys


def main(rows_path, out_path, a_text, b_text):
    a, b = ([int(d) for d in s.split("x")] for s in (a_text, b_text))
    with open(rows_path) as f:
        table = json.load(f)
    device = table["devices"][0]
    rows = {tuple(s["shape"]): s["rows"] for s in device["sweeps"]}
    key = lambda params: json.dumps(params, sort_keys=True)
    at_a = {key(r["params"]) for r in rows[tuple(a)]}
    other = next(r for r in rows[tuple(b)] if r["outcome"] == "ok" and key(r["params"]) not in at_a)
    winner = next(w for w in device["winners"] if w["shape"] == b)
    winner.update(params=other["params"], time_us=other["time_us"], ties=[])
    device["winners"], device["sweeps"] = [winner], []
    with open(out_path, "w") as f:
        json.dump(table, f)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
