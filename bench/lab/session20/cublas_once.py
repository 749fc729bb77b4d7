#!/usr/bin/env python3
"""One cublasSgemm per shape (bench/kernel_lab.py's reference: default math, no tensor cores)
between cudaProfilerStart/Stop, so that `ncu --profile-from-start off` sees cuBLAS's own kernels
and nothing else.   python3 bench/lab/session20/cublas_once.py 256x256x16384 ..."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import cupy as cp  # noqa: E402
from kernel_lab import Matmul  # noqa: E402

for text in sys.argv[1:]:
    run = Matmul(tuple(int(v) for v in text.split("x"))).reference()
    run()  # cuBLAS's heuristics and module loads happen outside the profiled range
    cp.cuda.Device().synchronize()
    cp.cuda.runtime.profilerStart()
    run()
    cp.cuda.Device().synchronize()
    cp.cuda.runtime.profilerStop()
    print(f"{text}: done", flush=True)
