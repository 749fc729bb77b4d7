#!/usr/bin/env python3
"""Session 29: does session 28's coalesce prediction hold? Reads coalesce.sh's lab.log; exits 0
when every variant checked ok and the coalesced big and wide tiles at 4096x1023x776 are within
5% of the same tiles at 4096x1024x776 (the aligned module) and faster than the old scalar path."""
import re
import sys

times, bad = {}, []
shape = None
for line in open(sys.argv[1]):
    m = re.match(r"# .* matmul (\S+) ", line)
    if m:
        shape = m.group(1)
        continue
    m = re.match(r"(\w+): ok=(\w+) .* ([\d.]+) us \(", line)
    if m:
        times[(shape, m.group(1))] = float(m.group(3))
        if m.group(2) != "True":
            bad.append((shape, m.group(1)))
    elif re.match(r"\w+: (compile|launch) failed", line):
        bad.append((shape, line.strip()))
print("not ok:", bad or "none")
holds = not bad
for tile in ("big", "wide"):
    a, m, old = (times.get(("4096x1024x776", tile)), times.get(("4096x1023x776", tile)),
                 times.get(("4096x1023x776", tile + "0")))
    if None in (a, m, old):
        print(tile, "missing"); holds = False; continue
    print(f"{tile}: aligned {a:.1f} us, misaligned {m:.1f} us ({m / a:.3f}x), old {old:.1f} us")
    holds &= m <= 1.05 * a and m < old
print("prediction", "holds" if holds else "fails")
sys.exit(0 if holds else 1)
