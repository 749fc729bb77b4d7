#!/usr/bin/env python3
"""Leave-one-shape-out of the nearest-shape rule on one GPU's own full sweeps (session 23).

For each matmul shape of the tables' rows, the winner of the nearest other shape (sum over
dimensions of |log2(asked / tuned)|, the ladder's distance) is timed at the shape from the
same sweep's rows, against that shape's own best: what NEAREST_SHAPE would answer a GPU whose
store held only the other shapes' winners.
  bench/lab/session23/own_nearest.py ROWS.json [ROWS.json...]   (cutune table export --rows)
"""
import json
import math
import sys

rows = {}
for path in sys.argv[1:]:
    d = json.load(open(path))
    for sw in d['devices'][0]['sweeps']:
        if sw['family'] != 'matmul': continue
        t = {json.dumps(r['params'], sort_keys=True): r['time_us'] for r in sw['rows'] if r['outcome'] == 'ok'}
        rows[tuple(sw['shape'])] = t
win = {s: min(t, key=t.get) for s, t in rows.items()}
def dist(a, b): return sum(abs(math.log2(x / y)) for x, y in zip(a, b))
ratios = []
for s in rows:
    others = [t for t in rows if t != s]
    near = min(others, key=lambda t: dist(s, t))
    cfg = win[near]
    r = rows[s][win[s]] / rows[s][cfg] if cfg in rows[s] else float('nan')
    ratios.append(r)
    print(f"{'x'.join(map(str,s)):16s} nearest {'x'.join(map(str,near)):16s} d={dist(s,near):.2f} {100*r:.1f}%")
ratios.sort()
print(f"own nearest, {len(ratios)} shapes: median {100*ratios[len(ratios)//2]:.1f}%, worst {100*ratios[0]:.1f}%")
