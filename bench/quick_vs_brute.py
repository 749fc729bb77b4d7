#!/usr/bin/env python3
"""quick against brute force on one daemon (issue 14's check): for each shape, a `quick` sweep,
then a `brute_force` sweep of the same problem; quick's winner is looked up among the brute-force
sweep's own rows, so both figures come from one sweep (two sweeps of one configuration differ by
up to ~2% on small shapes), and compared with that sweep's winner: the same configuration, one
the brute-force sweep itself declared tied with its winner, within 1%, or missed. Prints a table;
needs a GPU daemon holding the shipped tables.

  quick_vs_brute.py --cli cutune --server ADDR [--save DIR] family:SHAPE ...

--save DIR writes each brute-force sweep's rows as DIR/<family>-<shape>.json (the recordings the
search replays read, once converted: bench/data/).
"""
import argparse
import json
import subprocess
import time


def sweep(cli, server, family, shape, strategy):
    t0 = time.monotonic()
    out = subprocess.run([cli, "sweep", family, "--shape", shape, "--strategy", strategy,
                          "--server", server, "--top", "2000", "--timeout", "600", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out), time.monotonic() - t0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", default="cutune")
    p.add_argument("--server", required=True)
    p.add_argument("--save", help="directory for the brute-force sweeps' JSON")
    p.add_argument("problems", nargs="+")
    args = p.parse_args()
    print("| problem | quick evals | quick wall s | brute winner us | quick's winner in the brute "
          "sweep us | gap | verdict |")
    print("|---|---|---|---|---|---|---|")
    for problem in args.problems:
        family, shape = problem.split(":")
        quick, quick_wall = sweep(args.cli, args.server, family, shape, "quick")
        brute, _ = sweep(args.cli, args.server, family, shape, "brute_force")
        if args.save:
            with open(f"{args.save}/{family}-{shape}.json", "w") as f:
                json.dump(brute, f)
        print(f"| {family} {shape} | {quick['job']['done']} | {quick_wall:.2f} | "
              + verdict(quick["job"]["best"]["params"], brute) + " |", flush=True)


def key(params):
    return json.dumps(params, sort_keys=True)


def verdict(winner, brute):
    """quick's winner against the brute-force sweep's own winner (its chosen best, re-measured;
    not its fastest row, which may be a lucky single time) and the rows it declared tied."""
    rows = {key(r["params"]): r["time_us"] for r in brute["top"]}
    best = brute["job"]["best"]
    tied = {key(best["params"])} | {key(r["params"]) for r in brute["job"].get("ties", [])}
    found = rows.get(key(winner))
    if found is None:
        return f"{best['time_us']:.2f} | - | - | not in the brute rows"
    gap = 100 * (found / best["time_us"] - 1)
    if key(winner) == key(best["params"]):
        word = "same winner"
    elif key(winner) in tied:
        word = "tied (the brute sweep's own tie)"
    else:
        word = "within 1%" if gap <= 1 else "missed"
    return f"{best['time_us']:.2f} | {found:.2f} | {gap:.2f}% | {word}"


if __name__ == "__main__":
    main()
