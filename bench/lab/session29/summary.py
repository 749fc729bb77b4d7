#!/usr/bin/env python3
"""staged.sh's lab.log in one line a shape: each variant's time without (NAME0) and with the
staged C stores (NAME), the change, and the staged one's share of cuBLAS."""
import re
import sys

t, order, shape = {}, [], None
for line in open(sys.argv[1]):
    m = re.match(r"# .* matmul (\S+) ", line)
    if m:
        shape = m.group(1)
        order.append(shape)
        continue
    m = re.match(r"(\w+): ok=(\w+) err=\S+ regs=(\d+) .* ([\d.]+) us \(.*-> ([\d.]+)%", line)
    if m:
        t[(shape, m.group(1))] = (float(m.group(4)), float(m.group(5)), m.group(3), m.group(2))
for s in order:
    row = []
    for v in ("big", "wide", "mid", "split", "sk", "w64"):
        if (s, v) in t and (s, v + "0") in t:
            (a, _, ra, _), (b, pct, rb, ok) = t[(s, v + "0")], t[(s, v)]
            row.append(f"{v} {a:.1f}->{b:.1f} ({(b / a - 1) * 100:+.1f}%, {pct:.1f}%, r{ra}->{rb})")
    print(f"{s:15s}", " | ".join(row))
