#!/usr/bin/env python3
"""Two `ncu --page raw --csv` files of one kernel: the numeric metrics that differ by more than
5% (and by more than a tiny absolute amount), largest ratio first."""
import csv
import io
import sys


def metrics(path):
    text = open(path, errors="replace").read()
    start = text.find('"ID"')
    rows = list(csv.reader(io.StringIO(text[start:])))
    names, units = rows[0], rows[1]
    values = [r for r in rows[2:] if len(r) == len(names)][-1]
    out = {}
    for n, u, v in zip(names, units, values):
        try:
            out[n] = (float(v.replace(",", "")), u)
        except ValueError:
            pass
    return out


a, b = metrics(sys.argv[1]), metrics(sys.argv[2])
moved = []
for name in a.keys() & b.keys():
    (x, unit), (y, _) = a[name], b[name]
    if max(abs(x), abs(y)) < 1e-3 or abs(y - x) <= 0.05 * max(abs(x), abs(y)):
        continue
    ratio = (y + 1e-9) / (x + 1e-9)
    moved.append((abs(__import__("math").log(abs(ratio) + 1e-12)), name, x, y, unit))
print(f"{len(a)} metrics; {len(moved)} moved by more than 5% ({sys.argv[1]} -> {sys.argv[2]})")
for _, name, x, y, unit in sorted(moved, reverse=True):
    print(f"{name:90s} {x:14.4g} {y:14.4g} {unit}")
