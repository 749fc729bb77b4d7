#!/usr/bin/env python3
"""Session 35's noise call, summed up: each member's three timings per shape (call.sh OUT noise),
their spread, and the table's matrix cell beside them; then, per shape, the members' ranking by
the median of the three against the matrix's.
  python3 bench/lab/session35/noise.py OUT/noise tables/nvidia-h200.json"""
import glob, json, os, re, statistics, sys

def rows(node):
    """Every (params, time_us) in a sweep's JSON, wherever its rows sit."""
    if isinstance(node, dict):
        params = node.get("params")
        t = node.get("timeUs", node.get("time_us"))
        if isinstance(params, dict) and isinstance(t, (int, float)) and t > 0:
            yield tuple(sorted((k, int(v)) for k, v in params.items())), float(t)
        for v in node.values():
            yield from rows(v)
    elif isinstance(node, list):
        for v in node:
            yield from rows(v)

def main(noise_dir, table):
    cells = {}
    for d in json.load(open(table))["devices"]:
        for pf in d["portfolios"]:
            if pf["family"] != "matmul":
                continue
            members = [tuple(sorted((k, int(v)) for k, v in m.items())) for m in pf["members"]]
            for row in pf["matrix"]:
                shape = "x".join(map(str, row["shape"]))
                cells[shape] = (row["best_us"], dict(zip(members, row["times_us"])))
    runs = {}
    for path in sorted(glob.glob(os.path.join(noise_dir, "r*-*.json"))):
        m = re.match(r"r(\d+)-(.+)\.json", os.path.basename(path))
        try:
            data = json.load(open(path))
        except (json.JSONDecodeError, OSError):
            continue
        for params, t in rows(data):
            runs.setdefault(m.group(2), {}).setdefault(params, {})[int(m.group(1))] = t
    short = lambda p: ",".join(f"{k}={v}" for k, v in p if k in ("bm", "bn", "bk", "splitk", "sk", "warp", "minb"))
    for shape, members in runs.items():
        best, matrix = cells.get(shape, (0, {}))
        print(f"\n== {shape}: table best {best:.2f} us")
        spreads = []
        table = []
        for p, t in members.items():
            v = [t[r] for r in sorted(t)]
            med = statistics.median(v)
            spreads.append((max(v) - min(v)) / med)
            table.append((med, v, matrix.get(p, 0), p))
        table.sort()
        for med, v, cell, p in table[:8]:
            print(f"  {med:8.2f}  runs {' '.join(f'{x:7.2f}' for x in v)}  matrix {cell:7.2f}  {short(p)}")
        spreads.sort()
        print(f"  spread of three runs (max-min over median): median {spreads[len(spreads)//2]:.3f}, "
              f"p90 {spreads[len(spreads)*9//10]:.3f}, max {spreads[-1]:.3f} over {len(spreads)} members")
        if matrix:
            ratio = sorted(med / matrix[p] for med, v, cell, p in table if matrix.get(p, 0) > 0)
            print(f"  median of runs over the matrix cell: median {ratio[len(ratio)//2]:.3f}, "
                  f"min {ratio[0]:.3f}, max {ratio[-1]:.3f}")

if __name__ == "__main__":
    main(*sys.argv[1:3])
