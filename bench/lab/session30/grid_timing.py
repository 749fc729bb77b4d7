#!/usr/bin/env python3
"""Where a grid run's time went, from its state (a grid.tgz of scripts/gpu-grid.sh, unpacked).

  grid_timing.py overhead STATE_DIR   each sweep's own wall (phase_seconds.wall in
                                      sweeps/*.json) against the CLI's (grid.log), per phase
  grid_timing.py abandon STATE_DIR    the quick sweeps' timed launches replayed from the stored
                                      rows in the order they were measured: (1 + samples) x median
                                      before; the checked launch as the warm-up and one sample
                                      where it is above 1.25x the fastest so far (>= 100 us) after

unseen-shapes.md sections 26 and 27 (session 30's H100 grid of branch staged-c).
"""
import glob
import json
import re
import sqlite3
import statistics
import sys

FACTOR, LEAST_US = 1.25, 100  # server/tuner: kQuickAbandonFactor, kAbandonLeastUs


def overhead(state):
    cli = {}
    for line in open(f"{state}/grid.log"):
        m = re.match(r"\S+ (quick|matrix) matmul (\S+): exit 0, ([\d.]+) s", line)
        if m:
            cli[(m[1], m[2])] = float(m[3])  # a sweep measured again: its last run
    for tag in ("quick", "matrix"):
        walls, around = [], []
        for path in glob.glob(f"{state}/sweeps/{tag}-matmul-*.json"):
            shape = path.rsplit("-", 1)[1][:-5]
            if (tag, shape) not in cli:
                continue
            wall = json.load(open(path))["job"]["phase_seconds"]["wall"]
            walls.append(wall)
            around.append(cli[(tag, shape)] - wall)
        if not walls:
            continue
        around.sort()
        print(f"{tag}: {len(walls)} sweeps; own wall median {statistics.median(walls):.2f} s, "
              f"sum {sum(walls):.0f} s; CLI minus wall median {statistics.median(around):.2f} s "
              f"(p10 {around[len(around) // 10]:.2f}, p90 {around[9 * len(around) // 10]:.2f}), "
              f"sum {sum(around):.0f} s")


def abandon(state):
    db = sqlite3.connect(f"{state}/grid.db")
    total_before = total_after = 0
    for sweep_id, request in db.execute("SELECT id, request_json FROM sweeps"):
        r = json.loads(request)
        if r.get("strategy") != "quick" or r.get("family") != "matmul":
            continue
        rows = db.execute("SELECT median_us, samples FROM rows WHERE sweep_id = ? AND outcome = 'ok' "
                          "ORDER BY id", (sweep_id,)).fetchall()
        fastest, before, after, once = float("inf"), 0.0, 0.0, 0
        for median, samples in rows:
            before += (1 + samples) * median
            if FACTOR * fastest >= LEAST_US and median > FACTOR * fastest:
                after += median
                once += 1
            else:
                after += samples * median
            fastest = min(fastest, median)
        total_before += before
        total_after += after
        shape = "x".join(map(str, r["shape"]))
        print(f"{shape}: {len(rows)} candidates, launches {before / 1e6:.2f} -> {after / 1e6:.2f} s, "
              f"{once} with one sample")
    print(f"all: {total_before / 1e6:.1f} -> {total_after / 1e6:.1f} s")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("overhead", "abandon"):
        sys.exit(__doc__)
    {"overhead": overhead, "abandon": abandon}[sys.argv[1]](sys.argv[2])
