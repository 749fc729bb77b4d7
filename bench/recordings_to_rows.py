#!/usr/bin/env python3
"""A table with rows (docs/tables.md) from recorded sweeps (bench/data/<gpu>/<family>-<shape>.csv,
what bench/rows_to_recordings.py writes), for `cutune-predict-bench --measured`: one sweep per
file, its rows the candidates' median times (an empty time: a failed row). The header's second
line gives the space version and source hash; what a recording does not keep (spread, samples,
ptxas reports, dates) is written as neutral values, so the table is for measuring answers
against, not for shipping.

  bench/recordings_to_rows.py [--cc 9.0] [--sms 132] "NVIDIA H100 80GB HBM3" OUT.json \
      bench/data/h100/matmul-*.csv
"""
import argparse
import csv
import json
import os
import re

WHEN = "2026-01-01T00:00:00.000Z"


def sweep(path):
    family, shape_text = os.path.basename(path)[:-len(".csv")].split("-", 1)
    with open(path) as f:
        lines = f.readlines()
    header = "".join(line for line in lines if line.startswith("#"))
    found = re.search(r"space v(\d+) \(source ([0-9a-f]+)\)", header)
    if not found:
        raise SystemExit(f"{path}: no 'space vN (source HASH)' in its header")
    rows = []
    for record in csv.DictReader(line for line in lines if not line.startswith("#")):
        time = record.pop("time_us")
        rows.append({"params": {k: int(v) for k, v in record.items()},
                     "outcome": "ok" if time else "failed", "detail": "",
                     "time_us": float(time or 0), "min_us": float(time or 0), "samples": 1,
                     "rel_spread": 0.0, "compile_ms": 0.0, "measured_at": WHEN,
                     "percent_of_reference": 0.0, "gbps": 0.0, "tflops": 0.0,
                     "resources": {"registers": 0, "spill_load_bytes": 0, "spill_store_bytes": 0,
                                   "stack_bytes": 0, "static_shared_bytes": 0,
                                   "constant_bytes": 0}})
    return {"family": family, "dtype": "f32", "shape": [int(d) for d in shape_text.split("x")],
            "source_hash": found.group(2), "space_version": int(found.group(1)),
            "driver_version": 0, "nvrtc_version": "", "reference": {"name": "", "time_us": 0},
            "request": "{}", "started_at": WHEN, "finished_at": WHEN, "status": "succeeded",
            "rows": rows}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cc", default="9.0", help="the device's compute capability")
    p.add_argument("--sms", type=int, default=132, help="its multiprocessors")
    p.add_argument("model", help="the device model the sweeps ran on, as the table names it")
    p.add_argument("out")
    p.add_argument("recordings", nargs="+")
    args = p.parse_args()
    major, minor = (int(v) for v in args.cc.split("."))
    device = {"model": args.model, "cc_major": major, "cc_minor": minor, "sm_count": args.sms,
              "total_memory_bytes": 0, "winners": [],
              "sweeps": [sweep(path) for path in sorted(args.recordings)]}
    with open(args.out, "w") as out:
        json.dump({"format": "cutune-table", "version": 1, "devices": [device]}, out)
    print(f"{args.out}: {len(device['sweeps'])} sweeps")


if __name__ == "__main__":
    main()
