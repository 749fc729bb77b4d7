#!/usr/bin/env python3
"""The held start against the idle start, from one noise call (call.sh OUT noise): per shape, the
spread of each member's three timings (max-min over median; median and max over the members),
the sample spread of the sweeps' winners (rel_spread, median over the rounds), and the held
median over the idle median per member (median over the members).
  python3 bench/lab/session35/ab.py OUT"""
import glob, json, os, re, statistics, sys

def sweeps(d):
    """{shape: [(members: {params: (time_us, rel_spread)}, best rel_spread)] per round}"""
    out = {}
    for path in sorted(glob.glob(os.path.join(d, "r*-*.json"))):
        shape = re.match(r"r\d+-(.*)\.json", os.path.basename(path)).group(1)
        doc = json.load(open(path))
        members = {}
        for row in doc.get("top", []):
            key = tuple(sorted((k, int(v)) for k, v in row["params"].items()))
            members[key] = (float(row["time_us"]), float(row.get("rel_spread", 0)))
        best = doc["job"]["best"]
        out.setdefault(shape, []).append((members, float(best.get("rel_spread", 0))))
    return out

def main(out):
    idle, held = sweeps(os.path.join(out, "noise-idle")), sweeps(os.path.join(out, "noise-held"))
    print(f"{'shape':>14}  {'3-run spread idle: med/max':>27}  {'held: med/max':>14}  "
          f"{'winner rel_spread idle/held':>28}  {'held/idle time':>14}")
    for shape in sorted(idle, key=lambda s: [int(x) for x in s.split("x")]):
        def spread(rounds):
            keys = set.intersection(*(set(m) for m, _ in rounds))
            s = []
            for k in keys:
                t = [m[k][0] for m, _ in rounds]
                s.append((max(t) - min(t)) / statistics.median(t))
            return statistics.median(s), max(s), keys
        si, mi, ki = spread(idle[shape])
        sh, mh, kh = spread(held[shape])
        ratio = statistics.median(
            statistics.median(m[k][0] for m, _ in held[shape]) /
            statistics.median(m[k][0] for m, _ in idle[shape]) for k in ki & kh)
        wi = statistics.median(b for _, b in idle[shape])
        wh = statistics.median(b for _, b in held[shape])
        print(f"{shape:>14}  {si:>12.1%} / {mi:>6.1%}        {sh:>5.1%} / {mh:>5.1%}"
              f"  {wi:>14.1%} / {wh:>5.1%}        {ratio:>8.3f}")

if __name__ == "__main__":
    main(sys.argv[1])
