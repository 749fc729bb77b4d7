#!/usr/bin/env python3
"""Section 32's two readings of a shipped table (bench/results/unseen-shapes.md), no GPU:
1. its winners' sample spread (rel_spread) by family and time, and
2. its portfolio matrix's cells against the rows of the grid run that exported it: cells faster
   than every row of the table's source at that shape (an older session's timing, merged in by
   the fastest), and cells with no such row at all.
  python3 bench/lab/session35/provenance.py tables/nvidia-h200.json \\
      bench/data/h200/grid-2026-12-06-matmul-v10-rows.json.xz "NVIDIA H200" matmul=b7c38814"""
import json
import lzma
import statistics
import sys


def fmt(params):
    return ",".join(f"{k}={params[k]}" for k in sorted(params))


def device(table, model):
    return next(d for d in table["devices"] if d["model"] == model)


def spreads(shipped):
    print("winner's time | family: shapes, median / max spread")
    for lo, hi in ((0, 10), (10, 30), (30, 100), (100, 1000), (1000, float("inf"))):
        for family in ("matmul", "transpose"):
            v = [w["rel_spread"] for w in shipped["winners"]
                 if w["family"] == family and lo <= w["time_us"] < hi]
            if v:
                print(f"{lo}-{hi} us | {family}: {len(v)}, {100 * statistics.median(v):.1f}% / "
                      f"{100 * max(v):.1f}%")


def stale_cells(shipped, rows, family, source):
    fastest = {}
    for sweep in rows.get("sweeps", []):
        if sweep["family"] != family or not sweep["source_hash"].startswith(source):
            continue
        for r in sweep.get("rows", []):
            if r.get("outcome") == "ok" and r.get("time_us", 0) > 0:
                key = (tuple(sweep["shape"]), fmt(r["params"]))
                fastest[key] = min(fastest.get(key, r["time_us"]), r["time_us"])
    cells = unbacked = 0
    faster = []
    for pf in shipped["portfolios"]:
        if pf["family"] != family:
            continue
        members = [fmt(m) for m in pf["members"]]
        for row in pf["matrix"]:
            for member, t in zip(members, row["times_us"]):
                if t <= 0:
                    continue
                cells += 1
                best = fastest.get((tuple(row["shape"]), member))
                if best is None:
                    unbacked += 1
                elif t < best - 1e-6:
                    faster.append(t / best)
    print(f"{family} matrix: {cells} cells, {len(faster)} faster than every row of source "
          f"{source} (cell / fastest row: median {statistics.median(faster):.3f}, "
          f"least {min(faster):.3f}), {unbacked} without such a row")


def main(table_path, rows_path, model, *families):
    shipped = device(json.load(open(table_path)), model)
    opener = lzma.open if rows_path.endswith(".xz") else open
    with opener(rows_path, "rt") as f:
        rows = device(json.load(f), model)
    spreads(shipped)
    for spec in families:
        family, source = spec.split("=", 1)
        stale_cells(shipped, rows, family, source)


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
