#!/usr/bin/env python3
"""Helpers of scripts/tune-grid.sh over cutune's JSON (docs/tables.md, `cutune sweep --json`).

  grid_tool.py best SWEEP_JSON                  the winner of one `cutune sweep --json` result
  grid_tool.py compare SWEEPS_DIR               quick vs brute force on the shapes both swept
  grid_tool.py pool TABLE FAMILY GRID [NEAR]    what the matrix phase measures at every GRID
                                                shape: the distinct winners of the GRID shapes
                                                (TABLE: an export with rows), and per shape up to
                                                NEAR (default 0) near-winners: its fastest other
                                                configurations within 5% of its best time whose
                                                tiling (NEAR_KEY) differs from the winner's and
                                                from each other's; one `NAME=V,...` per line
  grid_tool.py missing TABLE FAMILY SHAPE POOL  the POOL configurations not yet measured at
                                                SHAPE, one per line for `cutune sweep --candidates`
                                                (a single row spread over 5% is measured again)
  grid_tool.py winner TABLE FAMILY SHAPE        TABLE's winner at SHAPE as `NAME=V,...` (what
                                                bench/kernel_lab.py takes); exits 1 without one
  grid_tool.py current TABLE OUT FAMILY=HASH... TABLE's winners (and sweeps) of these kernel
                                                sources only (HASH: a prefix, as `cutune space
                                                show FAMILY` prints it), written to OUT: a shipped
                                                table holds no winner an older source measured;
                                                a family whose sweeps of its source are there
                                                loses its portfolio (rebuilt from those rows at
                                                import: seeded cells say no source)
  grid_tool.py phases SWEEPS_DIR                where the sweeps' wall time went, per tag (quick,
                                                matrix, ...): the GPU waiting for NVRTC, the
                                                worker's phases, the re-measured finalists
  grid_tool.py pack STATE_DIR TGZ               a tune-grid.sh OUT_DIR as one file to carry to
                                                another machine, its store (grid.db) copied
                                                through SQLite's backup: whole while cutuned
                                                writes it
  grid_tool.py unpack TGZ STATE_DIR             the reverse, into a new or empty STATE_DIR
  grid_tool.py extract TAR DIR                  any tar (gz, xz, ...) into DIR, beside what it
                                                holds (a compile cache filled elsewhere)
"""
import json
import os
import sqlite3
import sys
import tarfile
import tempfile


def fmt(params):
    return ",".join(f"{k}={params[k]}" for k in sorted(params))


def best(path):
    try:
        with open(path) as f:
            job = json.load(f)["job"]
    except (OSError, ValueError, KeyError) as e:
        return f"no result ({e.__class__.__name__})"
    # protobuf's JSON mapping (docs/cli.md): 64-bit integers (done, params) are strings, and
    # best is absent until a candidate was valid.
    b = job.get("best") or {}
    return (f"{int(job.get('done', 0))} candidates, best {b.get('time_us', 0):.2f} us "
            f"({b.get('percent_of_reference', 0):.1f}% of reference) {fmt(b.get('params', {}))}")


def load_best(path):
    with open(path) as f:
        b = json.load(f)["job"].get("best") or {}
    return b.get("time_us", 0), fmt(b.get("params", {})), None


def compare(directory):
    found = {}
    for name in sorted(os.listdir(directory)):
        tag, _, rest = name.partition("-")
        if tag in ("quick", "brute"):
            found.setdefault(rest[:-5], {})[tag] = os.path.join(directory, name)
    print(f"{'problem':<28} {'quick us':>10} {'brute us':>10} {'gap %':>7}  same config")
    for problem, files in sorted(found.items()):
        if len(files) != 2:
            continue
        q, qp, _ = load_best(files["quick"])
        b, bp, _ = load_best(files["brute"])
        gap = 100.0 * (q / b - 1) if b > 0 else float("nan")
        print(f"{problem:<28} {q:>10.2f} {b:>10.2f} {gap:>7.2f}  {'yes' if qp == bp else 'no'}")


PHASES = ("wall", "gpu_idle_compiling", "load", "verify", "time", "finalists", "reference")


def phases(directory):
    totals = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        tag = name.split("-transpose-")[0].split("-matmul-")[0]
        try:
            with open(os.path.join(directory, name)) as f:
                seconds = json.load(f)["job"].get("phase_seconds", {})
        except (OSError, ValueError, KeyError):
            continue
        row = totals.setdefault(tag, {"sweeps": 0})
        row["sweeps"] += 1
        for p in PHASES:
            row[p] = row.get(p, 0.0) + seconds.get(p, 0.0)
    labels = {"gpu_idle_compiling": "nvrtc_wait"}
    print(f"{'tag':<14} {'sweeps':>6} " + " ".join(f"{labels.get(p, p):>10}" for p in PHASES)
          + "  (seconds)")
    for tag, row in sorted(totals.items()):
        print(f"{tag:<14} {row['sweeps']:>6} " + " ".join(f"{row[p]:>10.1f}" for p in PHASES))


def shapes_of(grid_file):
    out = set()
    with open(grid_file) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                out.add(tuple(int(d) for d in line.split("x")))
    return out


# A near-winner's tiling must differ from its shape's winner's in one of these parameters (how
# the family fills the GPU), so that it answers for shapes the winner serves badly.
NEAR_KEY = {"matmul": ("bm", "bn", "splitk", "sk"), "transpose": ("tile", "rows", "vec")}
NEAR_TOLERANCE = 0.05


def _table(table_path):
    with open(table_path) as f:
        return json.load(f)


def pool(table_path, family, grid_file, near="0"):
    near = int(near)
    table, grid = _table(table_path), shapes_of(grid_file)
    winners, rows = {}, {}
    for device in table.get("devices", []):
        for w in device.get("winners", []):
            if w["family"] == family and tuple(w["shape"]) in grid:
                winners[tuple(w["shape"])] = w["params"]
        for sweep in device.get("sweeps", []):
            if sweep["family"] == family and tuple(sweep["shape"]) in grid:
                for row in sweep.get("rows", []):
                    if row.get("outcome") == "ok" and row.get("time_us", 0) > 0:
                        rows.setdefault(tuple(sweep["shape"]), []).append(row)
    chosen = {fmt(p) for p in winners.values()}
    keys = NEAR_KEY.get(family)
    for shape in sorted(winners):
        key = lambda p: tuple(p.get(k) for k in keys) if keys else fmt(p)
        seen = {key(winners[shape])}
        ranked = sorted(rows.get(shape, []), key=lambda r: (r["time_us"], fmt(r["params"])))
        taken = 0
        for row in ranked:
            if taken == near or row["time_us"] > ranked[0]["time_us"] * (1 + NEAR_TOLERANCE):
                break
            if key(row["params"]) not in seen:
                seen.add(key(row["params"]))
                chosen.add(fmt(row["params"]))
                taken += 1
    for params in sorted(chosen):
        print(params)


# A row whose samples spread (stdev / mean) more than this is not yet a matrix cell: quick times
# each candidate briefly (at most 50 samples or 50 ms), and a kernel of a few microseconds can
# stop there with a spread of 10-30% and a median off by as much (the H100 grid of 2026-12-05:
# 751 of its portfolio's 4096 cells, bench/results/unseen-shapes.md section 21). The matrix is
# what the prediction model learns from, so such a configuration is measured again with the
# full timing, once: a second row counts whatever its spread.
PRECISE_SPREAD = 0.05


def missing(table_path, family, shape_text, pool_file):
    shape = tuple(int(d) for d in shape_text.split("x"))
    rows = {}
    for device in _table(table_path).get("devices", []):
        for sweep in device.get("sweeps", []):
            if sweep["family"] == family and tuple(sweep["shape"]) == shape:
                for row in sweep.get("rows", []):
                    rows.setdefault(fmt(row["params"]), []).append(row)
    measured = {params for params, seen in rows.items()
                if len(seen) > 1 or any(r.get("rel_spread", 0) <= PRECISE_SPREAD for r in seen)}
    with open(pool_file) as f:
        for line in f:
            if line.strip() and line.strip() not in measured:
                print(line.strip())


def winner(table_path, family, shape_text):
    shape = [int(d) for d in shape_text.split("x")]
    for device in _table(table_path).get("devices", []):
        for w in device.get("winners", []):
            if w["family"] == family and w["shape"] == shape:
                print(fmt(w["params"]))
                return
    sys.exit(f"no {family} winner for {shape_text} in {table_path}")


def current(table_path, out_path, *hashes):
    wanted = dict(h.split("=", 1) for h in hashes)
    with open(table_path) as f:
        table = json.load(f)
    kept = dropped = stale_portfolios = 0
    for device in table.get("devices", []):
        winners = []
        for w in device.get("winners", []):
            prefix = wanted.get(w["family"])
            if prefix is None or w["source_hash"].startswith(prefix):
                winners.append(w)
            else:
                dropped += 1
        kept += len(winners)
        device["winners"] = winners
        if "sweeps" in device:  # a table with rows: its sweeps of other sources go too
            device["sweeps"] = [sw for sw in device["sweeps"]
                                if sw["family"] not in wanted
                                or sw["source_hash"].startswith(wanted[sw["family"]])]
            # A portfolio's matrix cells say no source, and an import merges a cell with the
            # rows by the fastest: cells seeded from older tables would outlive every re-tune.
            # Where the rows hold sweeps of the wanted source, the matrix is rebuilt from them.
            retuned = {sw["family"] for sw in device["sweeps"] if sw["family"] in wanted}
            if "portfolios" in device:
                before = len(device["portfolios"])
                device["portfolios"] = [pf for pf in device["portfolios"]
                                        if pf["family"] not in retuned]
                stale_portfolios += before - len(device["portfolios"])
    with open(out_path, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")
    print(f"kept {kept} winners, dropped {dropped} of other kernel sources and "
          f"{stale_portfolios} portfolios rebuilt from the rows", file=sys.stderr)


STORE = "grid.db"
# The store's journal files (the backup holds their content) and the runner's process id.
NOT_PACKED = {STORE, STORE + "-wal", STORE + "-shm", STORE + "-journal", "pid"}


def pack(state_dir, tgz):
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(tgz, "w:gz") as tar:
        store = os.path.join(state_dir, STORE)
        if os.path.exists(store):
            copy = os.path.join(tmp, STORE)
            source, target = sqlite3.connect(store), sqlite3.connect(copy)
            with target:
                source.backup(target)
            source.close()
            target.close()
            tar.add(copy, arcname=STORE)
        for name in sorted(os.listdir(state_dir)):
            if name not in NOT_PACKED:
                tar.add(os.path.join(state_dir, name), arcname=name)


def extract(archive, directory):
    os.makedirs(directory, exist_ok=True)
    with tarfile.open(archive) as tar:
        # Python < 3.11.4 (Debian 12's 3.11.2) has no extraction filters; the archive is our own.
        if hasattr(tarfile, "data_filter"):
            tar.extractall(directory, filter="data")
        else:
            tar.extractall(directory)


def unpack(tgz, state_dir):
    if os.path.isdir(state_dir) and os.listdir(state_dir):
        sys.exit(f"grid_tool unpack: {state_dir} is not empty")
    extract(tgz, state_dir)


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "best" and len(sys.argv) == 3:
        print(best(sys.argv[2]))
    elif command == "compare" and len(sys.argv) == 3:
        compare(sys.argv[2])
    elif command == "pool" and len(sys.argv) in (5, 6):
        pool(*sys.argv[2:])
    elif command == "missing" and len(sys.argv) == 6:
        missing(*sys.argv[2:])
    elif command == "winner" and len(sys.argv) == 5:
        winner(*sys.argv[2:])
    elif command == "current" and len(sys.argv) >= 5:
        current(*sys.argv[2:])
    elif command == "phases" and len(sys.argv) == 3:
        phases(sys.argv[2])
    elif command == "pack" and len(sys.argv) == 4:
        pack(*sys.argv[2:])
    elif command == "unpack" and len(sys.argv) == 4:
        unpack(*sys.argv[2:])
    elif command == "extract" and len(sys.argv) == 4:
        extract(*sys.argv[2:])
    else:
        sys.exit(__doc__)
