"""Rectangular-tile transpose vs device-to-device copy (see README.md)."""
import cupy as cp
src=open('bench/lab/rect_transpose.cu').read()
s,e=cp.cuda.Event(),cp.cuda.Event()
def t(fn,reps=40):
    for _ in range(3): fn()
    ts=[]
    for _ in range(reps):
        s.record(); fn(); e.record(); e.synchronize(); ts.append(cp.cuda.get_elapsed_time(s,e)*1e3)
    ts.sort(); return ts[len(ts)//2]
for n in (16384, 8192):
    x=cp.random.rand(n,n,dtype=cp.float32); y=cp.empty_like(x); z=cp.empty_like(x)
    for tr,tc in [(64,64),(128,64),(128,32),(256,32),(64,128),(32,64),(32,128),(64,32)]:
        f=cp.RawModule(code=src, options=("-std=c++17",f"-DTR={tr}",f"-DTC={tc}")).get_function('rect')
        k=lambda: f(((n//tr)*(n//tc),),(256,),(x,y,cp.int32(n),cp.int32(n)))
        y.fill(cp.nan); k(); ok=bool(cp.array_equal(y,x.T))
        res=[]
        for _ in range(3):
            res.append((t(k), t(lambda: z.data.copy_from_device_async(x.data,x.nbytes))))
        tk=sorted(r[0] for r in res)[1]; tm=sorted(r[1] for r in res)[1]
        print(f"{n} TR={tr} TC={tc}: ok={ok} {tk:.1f} us memcpy {tm:.1f} -> {100*tm/tk:.1f}%", flush=True)
