#!/usr/bin/env python3
"""Kernel lab: compile, check and time variants of kernels/*.cu on a GPU host with CuPy.

The GPU host has CuPy and NVRTC but no gRPC; this script lets one device call try many variants
of a kernel source (a parameter set, or an edited copy of the .cu file) against the same
references the worker uses: device-to-device copy for transpose, cublasSgemm itself (default
math mode: no tensor cores) for matmul. It is for kernel work (bench/results/kernel-notes.md);
the product measures through cutune-worker. Lab-only parameters of edited sources: `dyn=1`
launches a transpose variant with TILE*TILE*4 bytes of dynamic shared memory, `vstack=V` one
block per V input tiles, `persist=K` K blocks per SM (a grid-stride variant); `carve=P` sets
the preferred shared-memory carveout (percent; the rest of the 256 KiB is L1); `plain=1` compiles
with `__restrict__` defined away, so the input is read with plain `ld.global` instead of the
read-only path (`ld.global.nc`) NVVM picks for a const restrict pointer; `tex=1|2` passes a 1-D
linear (float4 texels with vec=4) or 2-D pitched texture object over the input in place of its
pointer (bench/lab/transpose_tex.cu). `sk=S` (with --src bench/lab/matmul_streamk.cu) launches the
stream-K grid, S blocks per SM. `cluster=C` (with --src of bench/lab/session33/cluster.patch's
matmul, compiled with clusters of C blocks) launches exactly `splitk` splits a tile, with at least
BM*BN floats of dynamic shared memory.

  python3 bench/kernel_lab.py transpose 16384x16384 "tile=64,rows=8,vec=4,swizzle=2,minb=4" ...
  python3 bench/kernel_lab.py matmul 4096x4096x4096 "bm=128,bn=128,..." --src my_matmul.cu

Each variant: NaN-poisoned output, fresh random inputs, exact (transpose) or rel. L2 <= 1e-4
(matmul, against a float64 product) check, then the median of --reps timed launches (CUDA events,
after warm-up), the reference timed interleaved with it, then the check once more. --profile launches each variant once
more, for ncu (--kernel-name cutune_kernel).
"""
import argparse
import math
import os
import sys

os.environ.pop("CUPY_TF32", None)
import cupy as cp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "..", "kernels")


def parse_params(text):
    params = {}
    for item in filter(None, text.split(",")):
        k, v = item.split("=")
        params[k.strip()] = int(v)
    return params


def compile_kernel(src, params, extra=()):
    opts = tuple(f"-DCT_{k.upper()}={v}" for k, v in sorted(params.items()))
    if params.get("ptxo") == 1:  # as the matmul family does
        opts += ("--ptxas-options=-O1",)
    if params.get("splitk", 1) > 1:  # split-K's per-tile turn counters, as the family sets them
        opts += ("-DCT_SEMAPHORES=65536", "-DCT_PARTIALS=4194304")
    if params.get("sk", 0) > 0:  # stream-K's per-block turn counters, as the family sets them
        opts += ("-DCT_SEMAPHORES=1024",)
    if params.get("plain") == 1:  # lab: plain ld.global for the input (no read-only path)
        opts += ("-D__restrict__=",)
    opts += ("-std=c++17", "-I" + KERNELS) + tuple(extra)  # CuPy compiles for the current device
    mod = cp.RawModule(code=src, options=opts, backend="nvrtc")
    fn = mod.get_function("cutune_kernel")
    if "carve" in params:  # lab: preferred shared-memory carveout, percent of the maximum
        fn.preferred_shared_memory_carveout = params["carve"]
    return fn


def alignment_class(shape, params):
    """The defines matmul's family adds for a shape (kernels/matmul_family.cc, ShapeDefines):
    float4 register-staged, double-buffered candidates load rows that are not 16-byte aligned as
    scalars, CT_SCALAR_A where K % 4 and CT_SCALAR_B where N % 4."""
    if len(shape) != 3 or params.get("vec") != 4 or params.get("db") != 1:
        return []
    return ((["-DCT_SCALAR_A=1"] if shape[2] % 4 else []) +
            (["-DCT_SCALAR_B=1"] if shape[1] % 4 else []))


def median_time(fn, reps):
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) * 1e3)
    times.sort()
    return times[len(times) // 2], times


class Transpose:
    def __init__(self, shape):
        self.rows, self.cols = shape
        self.x = cp.random.rand(self.rows, self.cols, dtype=cp.float32)
        self.out = cp.empty((self.cols, self.rows), dtype=cp.float32)
        self.copy_dst = cp.empty_like(self.x)
        self.nbytes = 2 * self.x.nbytes

    def launch(self, fn, p):
        tile, rows, vec = p.get("tile", 32), p.get("rows", 32), p.get("vec", 1)
        if p.get("smem", 1) == 0:
            block = (tile, rows, 1)
        else:
            block = (tile // vec, rows, 1)
        # align=1: one more tile row where output windows shift back by up to 7 (as the family)
        unit = p.get("unit", 8)  # lab: windows aligned to `unit` floats, as many halo rows
        tile_rows = ((self.rows + unit - 2) // tile + 1 if p.get("align", 0)
                     else math.ceil(self.rows / tile))
        grid = (tile_rows * math.ceil(self.cols / tile), 1, 1)
        if p.get("vstack", 1) > 1:  # lab variants: input tiles stacked per block
            grid = (grid[0] // p["vstack"], 1, 1)
        if p.get("persist", 0):  # lab variants: persist=k launches k blocks per SM
            sms = cp.cuda.Device().attributes["MultiProcessorCount"]
            grid = (min(grid[0], p["persist"] * sms), 1, 1)
        src = self.texture(p["tex"], vec) if p.get("tex", 0) else self.x
        args = (src, self.out, cp.int32(self.rows), cp.int32(self.cols))
        smem = tile * tile * 4 if p.get("dyn", 0) else 0  # lab variants with dynamic smem
        if smem > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = smem
        return lambda: fn(grid, block, args, shared_mem=smem)

    def texture(self, kind, vec):
        # lab: a texture object over the input (kept alive with the problem)
        from cupy.cuda import runtime, texture
        lanes = 4 if kind == 1 and vec == 4 else 1
        ch = texture.ChannelFormatDescriptor(32, 32 if lanes == 4 else 0, 32 if lanes == 4 else 0,
                                             32 if lanes == 4 else 0,
                                             runtime.cudaChannelFormatKindFloat)
        if kind == 1:
            res = texture.ResourceDescriptor(runtime.cudaResourceTypeLinear, arr=self.x, chDesc=ch,
                                             sizeInBytes=self.x.nbytes)
        else:
            res = texture.ResourceDescriptor(runtime.cudaResourceTypePitch2D, arr=self.x, chDesc=ch,
                                             width=self.cols, height=self.rows,
                                             pitchInBytes=self.cols * 4)
        desc = texture.TextureDescriptor(
            addressModes=(runtime.cudaAddressModeClamp, runtime.cudaAddressModeClamp),
            filterMode=runtime.cudaFilterModePoint, readMode=runtime.cudaReadModeElementType)
        obj = texture.TextureObject(res, desc)
        self._textures = getattr(self, "_textures", []) + [obj]
        return cp.uint64(obj.ptr)

    def check(self, run):
        self.x[...] = cp.random.rand(self.rows, self.cols, dtype=cp.float32)
        self.out.fill(cp.nan)
        run()
        cp.cuda.Device().synchronize()
        return bool(cp.array_equal(self.out, self.x.T)), 0.0

    def reference(self):
        return lambda: self.copy_dst.data.copy_from_device_async(self.x.data, self.x.nbytes)

    def figure(self, us):
        return f"{self.nbytes / us / 1e3:.0f} GB/s"


class Matmul:
    def __init__(self, shape):
        self.m, self.n, self.k = shape
        self.a = cp.random.rand(self.m, self.k, dtype=cp.float32) - 0.5
        self.b = cp.random.rand(self.k, self.n, dtype=cp.float32) - 0.5
        self.c = cp.empty((self.m, self.n), dtype=cp.float32)
        self.c_ref = cp.empty((self.m, self.n), dtype=cp.float32)
        self.flops = 2.0 * self.m * self.n * self.k

    def launch(self, fn, p):
        bm, bn, bk = p["bm"], p["bn"], p["bk"]
        threads = (bm // p["tm"]) * (bn // p["tn"])
        pad, at = p.get("pad", 0), p.get("at", 0)
        stage = (bk * (bm + pad) if at else bm * (bk + pad)) + bk * (bn + pad)
        stages = p.get("stages", 0) or (2 if p.get("db", 0) else 1)
        smem = stages * stage * 4
        tiles = math.ceil(self.m / bm) * math.ceil(self.n / bn)
        # as the family's Geometry: at most one split per K step, none past 65536 tiles
        splitk = 1 if tiles > 65536 else max(1, min(p.get("splitk", 1), math.ceil(self.k / bk)))
        if p.get("cluster", 0):  # lab: clusters of splits (exactly splitk), each block's
            splitk = p["splitk"]  # partial tile in its shared memory
            smem = max(smem, bm * bn * 4)
        if smem > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = smem
        grid = (tiles * splitk, 1, 1)
        if p.get("sk", 0) > 0:  # as the family's Geometry: sk blocks per SM, at most one per step
            sms = cp.cuda.Device().attributes["MultiProcessorCount"]
            grid = (min(tiles * math.ceil(self.k / bk), p["sk"] * sms, 1024), 1, 1)
        args = (self.a, self.b, self.c, cp.int32(self.m), cp.int32(self.n), cp.int32(self.k))
        return lambda: fn(grid, (threads, 1, 1), args, shared_mem=smem)

    def check(self, run):
        self.a[...] = cp.random.rand(self.m, self.k, dtype=cp.float32) - 0.5
        self.b[...] = cp.random.rand(self.k, self.n, dtype=cp.float32) - 0.5
        self.c.fill(cp.nan)
        run()
        ref = self.a.astype(cp.float64) @ self.b.astype(cp.float64)
        err = float(cp.linalg.norm(self.c - ref) / cp.linalg.norm(ref))
        return bool(err <= 1e-4), err

    def reference(self):
        # cublasSgemm itself (CuPy's matmul adds work around it): row-major C = A B is
        # column-major C^T = B^T A^T.
        import numpy as np
        from cupy_backends.cuda.libs import cublas
        handle = cp.cuda.device.get_cublas_handle()
        cublas.setMathMode(handle, 0)  # CUBLAS_DEFAULT_MATH: no tensor cores for f32
        self._one = np.ones(1, dtype=np.float32)
        self._zero = np.zeros(1, dtype=np.float32)
        m, n, k = self.m, self.n, self.k

        def run():
            cublas.setPointerMode(handle, 0)
            cublas.sgemm(handle, 0, 0, n, m, k,
                         self._one.ctypes.data, self.b.data.ptr, n, self.a.data.ptr, k,
                         self._zero.ctypes.data, self.c_ref.data.ptr, n)
        return run

    def figure(self, us):
        return f"{self.flops / us / 1e6:.2f} TFLOP/s"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("family", choices=["transpose", "matmul"])
    ap.add_argument("shape")
    ap.add_argument("variants", nargs="+",
                    help="k=v,... parameter sets; NAME:k=v,... to label; |OPT OPT for NVRTC options")
    ap.add_argument("--src", help="kernel source (default kernels/<family>.cu)")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--profile", action="store_true", help="one extra launch per variant, for ncu")
    ap.add_argument("--family-class", action="store_true",
                    help="compile each matmul variant in the alignment class the family picks for "
                         "the shape (CT_SCALAR_A/B), as the daemon and its answers do")
    args = ap.parse_args()

    shape = tuple(int(s) for s in args.shape.split("x"))
    src = open(args.src or os.path.join(KERNELS, args.family + ".cu")).read()
    prob = Transpose(shape) if args.family == "transpose" else Matmul(shape)
    dev = cp.cuda.Device()
    print(f"# {cp.cuda.runtime.getDeviceProperties(dev.id)['name'].decode()} "
          f"{args.family} {args.shape} src={args.src or 'kernels/' + args.family + '.cu'}")
    ref = prob.reference()
    for _ in range(3):
        ref()
    rows = []
    for text in args.variants:
        label, _, body = text.rpartition(":")
        body, _, extra = body.partition("|")
        params = parse_params(body)
        try:
            defines = alignment_class(shape, params) if args.family_class else []
            fn = compile_kernel(src, params, extra.split() + defines)
        except Exception as e:  # a variant that does not compile is reported, not fatal
            print(f"{label or body}: compile failed: {str(e).splitlines()[0]}")
            continue
        run = prob.launch(fn, params)
        try:
            ok, err = prob.check(run)
        except Exception as e:  # e.g. a block of more than 1024 threads: reported, not fatal
            print(f"{label or body}: launch failed: {str(e).splitlines()[0]}")
            continue
        if args.profile:
            run()
            dev.synchronize()
            rows.append((label or body, ok, err, getattr(fn, 'num_regs', -1), 0, 0))
            continue
        for _ in range(3):
            run()
        # interleave candidate and reference so clock drift hits both alike
        t_k, t_r = [], []
        for _ in range(3):
            t_k.append(median_time(run, args.reps // 3 + 1)[0])
            t_r.append(median_time(ref, args.reps // 3 + 1)[0])
        tk, tr = sorted(t_k)[1], sorted(t_r)[1]
        # checked again after the timed launches: state a launch leaves in module memory
        # (split-K's and stream-K's counters) must not spoil the next
        ok2, err2 = prob.check(run)
        ok, err = ok and ok2, max(err, err2)
        rows.append((label or body, ok, err, getattr(fn, 'num_regs', -1), tk, tr))
        print(f"{label or body}: ok={ok} err={err:.1e} regs={getattr(fn, 'num_regs', -1)} "
              f"local={getattr(fn, 'local_size_bytes', -1)} {tk:.1f} us ({prob.figure(tk)}) "
              f"ref {tr:.1f} us -> {100 * tr / tk:.1f}%  spread {min(t_k):.1f}-{max(t_k):.1f}",
              flush=True)
    print("\nvariant | ok | regs | us | % of reference")
    for label, ok, err, regs, tk, tr in rows:
        pct = f"{100 * tr / tk:.1f}%" if tk else "-"
        print(f"{label} | {ok} | {regs} | {tk:.1f} | {pct}")
    sys.exit(0 if all(r[1] for r in rows) else 1)


if __name__ == "__main__":
    main()
