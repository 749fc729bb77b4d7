#!/usr/bin/env python3
"""quick against brute force on one daemon (issue 14's check): for each shape, a `quick` sweep,
then a `brute_force` sweep of the same problem; quick's winner is looked up among the brute-force
sweep's own rows, so both figures come from one sweep (two sweeps of one configuration differ by
up to ~2% on small shapes). Prints a table; needs a GPU daemon holding the shipped tables.

  quick_vs_brute.py --cli cutune --server ADDR family:SHAPE ...
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
    p.add_argument("problems", nargs="+")
    args = p.parse_args()
    print("| problem | quick evals | quick wall s | brute best us | quick's winner in the brute sweep us | gap |")
    print("|---|---|---|---|---|---|")
    for problem in args.problems:
        family, shape = problem.split(":")
        quick, quick_wall = sweep(args.cli, args.server, family, shape, "quick")
        brute, _ = sweep(args.cli, args.server, family, shape, "brute_force")
        winner = quick["job"]["best"]["params"]
        rows = {json.dumps(r["params"], sort_keys=True): r["time_us"] for r in brute["top"]}
        best = brute["top"][0]["time_us"]
        found = rows.get(json.dumps(winner, sort_keys=True))
        gap = "not in the brute rows" if found is None else f"{100 * (found / best - 1):.2f}%"
        print(f"| {family} {shape} | {quick['job']['done']} | {quick_wall:.2f} | {best:.2f} | "
              f"{found if found is not None else '-'} | {gap} |", flush=True)


if __name__ == "__main__":
    main()
