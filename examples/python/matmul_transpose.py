#!/usr/bin/env python3
"""matmul and transpose with cutune's tuned kernels on CuPy arrays.

    # a daemon ($CUTUNE_SERVER, else 127.0.0.1:50051), else offline from the H200 table:
    python3 examples/python/matmul_transpose.py --table tables/nvidia-h200.json

Needs the cutune package: `pip install ./client/python`, or from a build tree
PYTHONPATH=client/python:build/python. Without CuPy or a GPU it shows the answers and stops.
"""

import argparse

import cutune


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", help="cutuned address (default $CUTUNE_SERVER)")
    parser.add_argument("--table", help="tuning table to answer from when the daemon is down")
    parser.add_argument("--model", help="device model to ask about (default: this GPU's)")
    args = parser.parse_args()
    client = cutune.Client(args.server, table=args.table, model=args.model)

    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        # No GPU here: what the tuner would launch is still worth a look.
        model = args.model or "NVIDIA H200"
        for family, shape in (("matmul", (1000, 1000, 77)), ("transpose", (8191, 4097))):
            answer = client.get(family, shape, model=model)
            print(f"{family} {'x'.join(map(str, shape))} on {model}: {answer.rung}, "
                  f"{answer.params}, grid {answer.geometry.grid}, block {answer.geometry.block}")
        print(f"no GPU here ({type(e).__name__}): stopping before the launches")
        return

    a = cupy.random.rand(1000, 77, dtype=cupy.float32)   # M×K
    b = cupy.random.rand(77, 1000, dtype=cupy.float32)   # K×N
    c = client.matmul(a, b)                              # M×N, on CuPy's current stream
    error = float(cupy.linalg.norm(c - a @ b) / cupy.linalg.norm(a @ b))
    answer = client.get("matmul", (1000, 1000, 77), model=client.device_model())  # cached
    print(f"matmul 1000x1000x77: {answer.rung}, {answer.params}; relative error {error:.1e}")

    x = cupy.random.rand(8191, 4097, dtype=cupy.float32)
    t = client.transpose(x)
    answer = client.get("transpose", (8191, 4097), model=client.device_model())
    print(f"transpose 8191x4097: {answer.rung}, {answer.params}; "
          f"exact: {bool((t == x.T).all())}")


if __name__ == "__main__":
    main()
