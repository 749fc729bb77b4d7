#!/usr/bin/env python3
"""Recorded sweeps (bench/data/<gpu>/<family>-<shape>.csv, what cutune-search-bench replays) from
a table with rows (`cutune table export --rows`): one file per sweep whose every row is of one
shape, the parameters in name order, then the median time in microseconds (empty: the candidate
failed). A shape swept twice keeps each candidate's faster time.

  bench/rows_to_recordings.py TABLE.json OUT_DIR [--note TEXT]
"""
import argparse
import json
import os


def main():
    p = argparse.ArgumentParser()
    p.add_argument("table")
    p.add_argument("out_dir")
    p.add_argument("--note", default="", help="a line for the files' header (where, when, how)")
    args = p.parse_args()
    with open(args.table) as f:
        table = json.load(f)
    os.makedirs(args.out_dir, exist_ok=True)
    for device in table["devices"]:
        recordings = {}  # (family, shape) -> (header fields, {params tuple: time or None})
        for sweep in device.get("sweeps", []):
            key = (sweep["family"], "x".join(str(d) for d in sweep["shape"]))
            for row in sweep["rows"]:
                names = sorted(row["params"])
                fields, times = recordings.setdefault(key, (names, {}))
                if names != fields:
                    raise SystemExit(f"{key}: rows with other parameters ({names} vs {fields})")
                values = tuple(row["params"][n] for n in names)
                t = row["time_us"] if row["outcome"] == "ok" else None
                old = times.get(values)
                if values not in times or (t is not None and (old is None or t < old)):
                    times[values] = t
        for (family, shape), (names, times) in sorted(recordings.items()):
            path = os.path.join(args.out_dir, f"{family}-{shape}.csv")
            with open(path, "w") as out:
                out.write(f"# {device['model']}: every candidate of a sweep of {family} at {shape}, "
                          "median time in microseconds (empty: the candidate failed).\n")
                if args.note:
                    out.write(f"# {args.note}\n")
                out.write(",".join(names + ["time_us"]) + "\n")
                for values in sorted(times):
                    t = times[values]
                    out.write(",".join(str(v) for v in values) + "," + ("" if t is None else f"{t:.3f}") + "\n")
            print(f"{path}: {len(times)} candidates")


if __name__ == "__main__":
    main()
