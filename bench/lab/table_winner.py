#!/usr/bin/env python3
"""The matmul winner a table holds for a shape, as bench/kernel_lab.py takes it (k=v,...).

  bench/lab/table_winner.py SHAPE [TABLE]   (TABLE: default tables/nvidia-h200.json)

Exits 1, saying so, when the table holds no matmul winner for SHAPE.
"""
import json
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    table = sys.argv[2] if len(sys.argv) == 3 else "tables/nvidia-h200.json"
    shape = [int(v) for v in sys.argv[1].split("x")]
    for device in json.load(open(table))["devices"]:
        for w in device["winners"]:
            if w["family"] == "matmul" and w["shape"] == shape:
                print(",".join(f"{k}={w['params'][k]}" for k in sorted(w["params"])))
                return
    sys.exit(f"no matmul winner for {sys.argv[1]} in {table}")


if __name__ == "__main__":
    main()
