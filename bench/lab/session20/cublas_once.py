#!/usr/bin/env python3
"""One cublasSgemm (default math: no tensor cores) per shape between cudaProfilerStart/Stop, as
bench/kernel_lab.py calls it, so that `ncu --profile-from-start off` sees cuBLAS's own kernels
and nothing else.   python3 bench/lab/session20/cublas_once.py 256x256x16384 ..."""
import sys

import cupy as cp
import numpy as np
from cupy_backends.cuda.libs import cublas

handle = cp.cuda.device.get_cublas_handle()
cublas.setMathMode(handle, 0)
one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
for text in sys.argv[1:]:
    m, n, k = (int(v) for v in text.split("x"))
    a = cp.random.rand(m, k, dtype=cp.float32)
    b = cp.random.rand(k, n, dtype=cp.float32)
    c = cp.empty((m, n), cp.float32)

    def run():
        cublas.setPointerMode(handle, 0)
        cublas.sgemm(handle, 0, 0, n, m, k, one.ctypes.data, b.data.ptr, n, a.data.ptr, k,
                     zero.ctypes.data, c.data.ptr, n)
    run()  # cuBLAS's heuristics and module loads happen outside the profiled range
    cp.cuda.Device().synchronize()
    cp.cuda.runtime.profilerStart()
    run()
    cp.cuda.Device().synchronize()
    cp.cuda.runtime.profilerStop()
    print(f"{text}: done", flush=True)
