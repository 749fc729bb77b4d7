"""Rectangular-tile transpose vs device-to-device copy (see README.md)."""
import os
import sys

import cupy as cp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from kernel_lab import median_time  # noqa: E402

src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rect_transpose.cu")).read()


def t(fn, reps=40):
    for _ in range(3):
        fn()
    return median_time(fn, reps)[0]


for n in (16384, 8192):
    x = cp.random.rand(n, n, dtype=cp.float32)
    y = cp.empty_like(x)
    z = cp.empty_like(x)
    for tr, tc in [(64, 64), (128, 64), (128, 32), (256, 32), (64, 128), (32, 64), (32, 128),
                   (64, 32)]:
        f = cp.RawModule(code=src, options=("-std=c++17", f"-DTR={tr}", f"-DTC={tc}")
                         ).get_function("rect")

        def k():
            f(((n // tr) * (n // tc),), (256,), (x, y, cp.int32(n), cp.int32(n)))

        y.fill(cp.nan)
        k()
        ok = bool(cp.array_equal(y, x.T))
        res = [(t(k), t(lambda: z.data.copy_from_device_async(x.data, x.nbytes)))
               for _ in range(3)]
        tk = sorted(r[0] for r in res)[1]
        tm = sorted(r[1] for r in res)[1]
        print(f"{n} TR={tr} TC={tc}: ok={ok} {tk:.1f} us memcpy {tm:.1f} -> {100 * tm / tk:.1f}%",
              flush=True)
