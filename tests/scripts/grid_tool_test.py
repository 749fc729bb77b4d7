#!/usr/bin/env python3
"""scripts/grid_tool.py pool, missing and winner on a hand-made table: the matrix's list holds every
grid winner once, and per shape at most NEAR near-winners, each within 5% of the shape's best and
of a tiling (bm, bn, splitk, sk) that neither the winner nor an earlier pick has; missing lists
what a shape has not measured (or measured once with a spread over 5%); winner prints a shape's
winner, and fails for a shape without one; current keeps one kernel source's winners, sweeps and
the matrix they measured.
  grid_tool_test.py SRC"""
import json
import os
import subprocess
import sys
import tempfile

src = sys.argv[1]
tool = [sys.executable, os.path.join(src, "scripts", "grid_tool.py")]


def p(bm, bn, splitk=1, sk=0, minb=0):
    return {"bm": bm, "bn": bn, "splitk": splitk, "sk": sk, "minb": minb}


def row(params, time_us, outcome="ok", rel_spread=None):
    r = {"params": params, "time_us": time_us, "outcome": outcome}
    if rel_spread is not None:
        r["rel_spread"] = rel_spread
    return r


def fmt(params):
    return ",".join(f"{k}={params[k]}" for k in sorted(params))


table = {"devices": [{
    "winners": [
        {"family": "matmul", "shape": [64, 64, 64], "params": p(64, 64)},
        {"family": "matmul", "shape": [128, 128, 128], "params": p(64, 64)},
        {"family": "matmul", "shape": [256, 256, 256], "params": p(128, 128)},
        {"family": "matmul", "shape": [99, 99, 99], "params": p(32, 32)},  # not a grid shape
    ],
    "sweeps": [
        {"family": "matmul", "shape": [64, 64, 64], "rows": [
            row(p(64, 64), 10.0),
            row(p(64, 64, minb=2), 10.1),        # the winner's tiling: not a near-winner
            row(p(32, 64), 10.3),                # near-winner 1
            row(p(32, 64, minb=2), 10.35),       # the tiling of near-winner 1
            row(p(64, 64, splitk=2), 10.4),      # near-winner 2
            row(p(16, 64), 10.45, "wrong_answer"),
            row(p(128, 64), 10.6),               # 6% off: not near
        ]},
        {"family": "matmul", "shape": [128, 128, 128], "rows": [
            row(p(64, 64), 20.0), row(p(128, 128), 20.5)]},
        {"family": "matmul", "shape": [256, 256, 256], "rows": [
            row(p(128, 128), 30.0, rel_spread=0.004),
            row(p(32, 64), 31.0, rel_spread=0.29),       # quick's brief timing, spread out
            row(p(64, 64, splitk=2), 33.0, rel_spread=0.2),
            row(p(64, 64, splitk=2), 32.0, rel_spread=0.12)]},  # measured twice: done
        {"family": "transpose", "shape": [64, 64], "rows": [row({"tile": 32}, 1.0)]},
    ],
}]}

failures = []
with tempfile.TemporaryDirectory() as tmp:
    table_path, grid_path = os.path.join(tmp, "t.json"), os.path.join(tmp, "matmul.txt")
    json.dump(table, open(table_path, "w"))
    open(grid_path, "w").write("# grid\n64x64x64\n128x128x128\n256x256x256\n")

    def run(*args):
        return subprocess.run(tool + list(args), check=True, capture_output=True,
                              text=True).stdout.split()

    def expect(what, got, want):
        if sorted(got) != sorted(want):
            failures.append(f"{what}: got {got}, want {want}")

    winners = [fmt(p(64, 64)), fmt(p(128, 128))]
    expect("pool without near-winners", run("pool", table_path, "matmul", grid_path), winners)
    expect("pool NEAR=1", run("pool", table_path, "matmul", grid_path, "1"),
           winners + [fmt(p(32, 64))])
    # 128x128x128's runner-up is a winner already: listed once.
    expect("pool NEAR=3", run("pool", table_path, "matmul", grid_path, "3"),
           winners + [fmt(p(32, 64)), fmt(p(64, 64, splitk=2))])
    pool_path = os.path.join(tmp, "pool.txt")
    open(pool_path, "w").write("\n".join(run("pool", table_path, "matmul", grid_path, "3")) + "\n")
    # 32x64's only row there spread 29%: measured again; 64x64 split 2 has two rows already.
    expect("missing at 256x256x256", run("missing", table_path, "matmul", "256x256x256", pool_path),
           [fmt(p(64, 64)), fmt(p(32, 64))])
    expect("missing at 64x64x64", run("missing", table_path, "matmul", "64x64x64", pool_path),
           [fmt(p(128, 128))])
    expect("missing at an unmeasured shape",
           run("missing", table_path, "matmul", "512x512x512", pool_path),
           run("pool", table_path, "matmul", grid_path, "3"))
    expect("winner at 256x256x256", run("winner", table_path, "matmul", "256x256x256"),
           [fmt(p(128, 128))])
    expect("winner at a shape outside the grid", run("winner", table_path, "matmul", "99x99x99"),
           [fmt(p(32, 32))])
    absent = subprocess.run(tool + ["winner", table_path, "transpose", "64x64"],
                            capture_output=True, text=True)
    if absent.returncode != 1 or "no transpose winner for 64x64" not in absent.stderr:
        failures.append(f"winner without one: rc {absent.returncode}, {absent.stderr!r}")

# current: winners and sweeps of other kernel sources go; so does the portfolio of a family whose
# rows of the wanted source are there (its matrix is rebuilt from them at import: cells seeded
# from older tables would otherwise outlive every re-tune), while a family without such rows
# keeps its portfolio.
seeded = {"devices": [{
    "winners": [
        {"family": "matmul", "shape": [64, 64, 64], "params": p(64, 64), "source_hash": "aaaa1111"},
        {"family": "matmul", "shape": [128, 128, 128], "params": p(64, 64),
         "source_hash": "bbbb2222"},
        {"family": "transpose", "shape": [64, 64], "params": {"tile": 32},
         "source_hash": "cccc3333"},
    ],
    "sweeps": [
        {"family": "matmul", "shape": [64, 64, 64], "source_hash": "aaaa1111",
         "rows": [row(p(64, 64), 10.0)]},
        {"family": "matmul", "shape": [128, 128, 128], "source_hash": "bbbb2222",
         "rows": [row(p(64, 64), 19.0)]},
    ],
    "portfolios": [
        {"family": "matmul", "dtype": "f32", "members": [p(64, 64)],
         "matrix": [{"shape": [64, 64, 64], "best_us": 8.0, "times_us": [8.0]}]},
        {"family": "transpose", "dtype": "f32", "members": [{"tile": 32}],
         "matrix": [{"shape": [64, 64], "best_us": 1.0, "times_us": [1.0]}]},
    ],
}]}
with tempfile.TemporaryDirectory() as tmp:
    seeded_path, out_path = os.path.join(tmp, "rows.json"), os.path.join(tmp, "current.json")
    json.dump(seeded, open(seeded_path, "w"))
    subprocess.run(tool + ["current", seeded_path, out_path, "matmul=aaaa", "transpose=cccc"],
                   check=True, capture_output=True, text=True)
    device = json.load(open(out_path))["devices"][0]
    got = (sorted((w["family"], w["source_hash"]) for w in device["winners"]),
           [sw["source_hash"] for sw in device["sweeps"]],
           [pf["family"] for pf in device.get("portfolios", [])])
    want = ([("matmul", "aaaa1111"), ("transpose", "cccc3333")], ["aaaa1111"], ["transpose"])
    if got != want:
        failures.append(f"current: got {got}, want {want}")

if failures:
    sys.exit("grid_tool_test: " + "; ".join(failures))
print("grid_tool_test: ok")
