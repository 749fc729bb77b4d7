#!/usr/bin/env python3
"""How long the Python package takes from process start to its first launch, and per call
from its in-process cache, on a GPU host (CuPy). Three scenarios, each in fresh processes:

  daemon        a warm cutuned (the answer and its cubin already asked for once)
  table, cold   offline from a table file, NVRTC cache empty: the CLI looks up, NVRTC compiles
  table, warm   offline again: the cubin comes from the on-disk NVRTC cache

Each child process times: interpreter start (from the parent's spawn), `import cupy` with the
CUDA context and the inputs (the program's own work, not cutune's), `import cutune`, Client(),
the lookup (RPC or CLI), the first launch (module load or compile, then launch, synchronized),
and then, for a small problem already in the cache, the host time of one client call against
a raw CuPy launch of the same loaded kernel (median of many, not synchronized).

    PYTHONPATH=client/python:build/python python3 bench/python_first_launch.py \\
        --cutuned build/bin/cutuned --fake-worker build/bin/fake-worker --cli build/bin/cutune \\
        --tables tables --table tables/nvidia-h200.json
(--server ADDR uses a running daemon instead of starting a table server.)
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, statistics, sys, time
t0 = time.monotonic()
spec = json.loads(sys.argv[1])
import cupy, numpy
m, n, k = spec["shape"]
a = cupy.random.rand(m, k, dtype=cupy.float32)
b = cupy.random.rand(k, n, dtype=cupy.float32)
sm, sn, sk = spec["small"]
sa = cupy.random.rand(sm, sk, dtype=cupy.float32)
sb = cupy.random.rand(sk, sn, dtype=cupy.float32)
sc = cupy.empty((sm, sn), dtype=cupy.float32)
cupy.cuda.Device().synchronize()
t1 = time.monotonic()
import cutune
t2 = time.monotonic()
client = cutune.Client(spec["server"], table=spec["table"])
t3 = time.monotonic()
model = client.device_model()
client._launch_answer(model, "matmul", (m, n, k), "f32")
t4 = time.monotonic()
c = client.matmul(a, b)
cupy.cuda.Device().synchronize()
t5 = time.monotonic()

# The cache: a small problem, loaded once, then many calls.
client.matmul(sa, sb, out=sc)
cupy.cuda.Device().synchronize()
plan = client._plans[(cupy.cuda.runtime.getDevice(), model, "matmul", (sm, sn, sk), "f32")]
function = plan.function(client._gpu, cupy.cuda.get_current_stream().ptr)
args = list(plan.template)
for position, index in plan.pointer_slots:
    args[position] = (sa.data.ptr, sb.data.ptr, sc.data.ptr)[index]
def per_call(f, calls=2000):
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            f()
        times.append((time.perf_counter() - start) / calls)
        cupy.cuda.Device().synchronize()
    return statistics.median(times)
cached = per_call(lambda: client.matmul(sa, sb, out=sc))
raw = per_call(lambda: function(plan.grid, plan.block, args, shared_mem=plan.shared))
start = time.perf_counter()
client.matmul(a, b)
cupy.cuda.Device().synchronize()
second = time.perf_counter() - start
print(json.dumps({"t0": t0, "t1": t1, "t2": t2, "t3": t3, "t4": t4, "t5": t5,
                  "cached_call_us": cached * 1e6, "raw_launch_us": raw * 1e6,
                  "second_call_synced_ms": second * 1e3, "rpcs": client.stats.rpcs,
                  "offline": client.stats.offline_answers}))
"""

COLUMNS = [("start→first launch", lambda r: r["t5"] - r["spawn"]),
           ("interpreter", lambda r: r["t0"] - r["spawn"]),
           ("cupy+context+inputs", lambda r: r["t1"] - r["t0"]),
           ("import cutune", lambda r: r["t2"] - r["t1"]),
           ("Client()", lambda r: r["t3"] - r["t2"]),
           ("lookup", lambda r: r["t4"] - r["t3"]),
           ("load+launch", lambda r: r["t5"] - r["t4"]),
           ("cutune only", lambda r: r["t5"] - r["t1"])]


def run_child(spec, env):
    spawn = time.monotonic()
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        sys.exit(f"child failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["spawn"] = spawn
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", help="a running cutuned (default: start a table server)")
    parser.add_argument("--cutuned")
    parser.add_argument("--fake-worker")
    parser.add_argument("--tables", help="directory of tables for the table server")
    parser.add_argument("--table", required=True, help="table file for the offline runs")
    parser.add_argument("--cli", help="the cutune CLI (default $CUTUNE_CLI, PATH)")
    parser.add_argument("--shape", default="4096x4096x4096", help="matmul MxNxK, first launch")
    parser.add_argument("--small", default="256x256x256", help="matmul MxNxK, cached calls")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    shape = [int(d) for d in args.shape.split("x")]
    small = [int(d) for d in args.small.split("x")]
    env = dict(os.environ)
    if args.cli:
        env["CUTUNE_CLI"] = args.cli

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "tests", "python"))
    from table_server import TableServer
    server = None
    if args.server is None:
        server = TableServer(args.cutuned, args.fake_worker, args.tables)
        address = server.address
    else:
        address = args.server
    nowhere = "unix:/nonexistent/cutuned.sock"
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="cutune-bench-") as cache:
            env["CUTUNE_CACHE_DIR"] = cache
            # Warm the daemon: its lookup and cubin compile are done once before timing.
            run_child({"shape": shape, "small": small, "server": address, "table": None}, env)
            daemon = [run_child({"shape": shape, "small": small, "server": address,
                                 "table": None}, env) for _ in range(args.repeat)]
            rows.append(("daemon (warm)", daemon))
            cold, warm = [], []
            for i in range(args.repeat):
                for f in os.listdir(cache):  # cold: every cubin gone, the python/ folder too
                    path = os.path.join(cache, f)
                    shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
                spec = {"shape": shape, "small": small, "server": nowhere, "table": args.table}
                cold.append(run_child(spec, env))
                warm.append(run_child(spec, env))
            rows.append(("table (daemon down), cold NVRTC cache", cold))
            rows.append(("table (daemon down), warm NVRTC cache", warm))
    finally:
        if server is not None:
            server.stop()

    print(f"matmul {args.shape} first launch, {args.small} cached calls; medians of "
          f"{args.repeat} processes each, ms (cached/raw call: us)")
    header = ["scenario"] + [c for c, _ in COLUMNS] + ["cached call us", "raw launch us",
                                                       "2nd call synced ms"]
    print(" | ".join(header))
    for name, results in rows:
        cells = [name] + [f"{statistics.median(f(r) for r in results) * 1e3:.1f}"
                          for _, f in COLUMNS]
        cells += [f"{statistics.median(r['cached_call_us'] for r in results):.1f}",
                  f"{statistics.median(r['raw_launch_us'] for r in results):.1f}",
                  f"{statistics.median(r['second_call_synced_ms'] for r in results):.2f}"]
        print(" | ".join(cells))
        print(f"    (rpcs {results[0]['rpcs']}, offline answers {results[0]['offline']} "
              "per process)")


if __name__ == "__main__":
    main()
