#!/usr/bin/env python3
"""Leave-one-shape-out folds of a rows table (cutune table export --rows): for each tuned shape,
the table without that shape's sweep and winner (and without portfolios, which the store rebuilds
from the rows), and a one-line unseen list naming it, for cutune-predict-bench --unseen.

usage: split_folds.py ROWS.json OUT_DIR
"""
import copy
import json
import os
import sys


def main():
    rows_path, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    table = json.load(open(rows_path))
    for device in table["devices"]:
        for winner in device["winners"]:
            family, shape = winner["family"], winner["shape"]
            name = f"{family}-{'x'.join(map(str, shape))}"
            fold = copy.deepcopy(table)
            for d in fold["devices"]:
                d["portfolios"] = []
                d["sweeps"] = [s for s in d["sweeps"]
                               if (s["family"], s["shape"]) != (family, shape)]
                d["winners"] = [w for w in d["winners"]
                                if (w["family"], w["shape"]) != (family, shape)]
            with open(os.path.join(out, f"without-{name}.json"), "w") as f:
                json.dump(fold, f)
            with open(os.path.join(out, f"list-{name}.txt"), "w") as f:
                f.write(f"{family} {'x'.join(map(str, shape))}\n")


if __name__ == "__main__":
    main()
