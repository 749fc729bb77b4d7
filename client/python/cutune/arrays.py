"""What a GPU array handed to matmul/transpose is, and whether a kernel can take it.

Everything here runs on the CPU: a torch tensor or anything with __cuda_array_interface__ is
read without CuPy or a GPU call, so a wrong dtype, rank, shape, layout or alignment is reported
before anything is asked of the daemon or the GPU. (A DLPack-only object is converted with
cupy.from_dlpack first, then checked the same way.)

Each family's arrays are named by the dimension names of its launch contract: matmul(a, b) takes
a as M×K and b as K×N and writes M×N; transpose(x) takes rows×cols and writes cols×rows. Which
kernel argument each array fills is read from the answer's contract (launch.py).
"""

import collections
import sys

from .errors import InputError

# The user-facing signature of one family: its inputs (name, extents) in the order the
# contract's ROLE_INPUT arguments come, its output's extents, and its Problem.shape dimensions.
Signature = collections.namedtuple("Signature", "family inputs output dims")

SIGNATURES = {
    "matmul": Signature("matmul", (("a", ("M", "K")), ("b", ("K", "N"))), ("M", "N"),
                        ("M", "N", "K")),
    "transpose": Signature("transpose", (("x", ("rows", "cols")),), ("cols", "rows"),
                           ("rows", "cols")),
}

F32 = "f4"  # the typestr of float32 without its byte order
_INT32_MAX = 2**31 - 1
_KINDS = {"f": "float", "i": "int", "u": "uint", "b": "bool", "c": "complex"}

# kind: "torch" (a torch.Tensor), "cupy" (a cupy.ndarray), "cai" (another object with
# __cuda_array_interface__) or "dlpack" (only __dlpack__; shape etc. known after conversion).
# strides are in bytes, None for C-contiguous; device is None where only the GPU can tell.
View = collections.namedtuple(
    "View", "name obj kind shape typestr strides ptr readonly device stream")


def dtype_name(typestr):
    """'<f4' -> 'float32'; unusual ones as they are."""
    order, kind, size = typestr[:1], typestr[1:2], typestr[2:]
    if kind not in _KINDS or not size.isdigit():
        return repr(typestr)
    name = "bool" if kind == "b" else f"{_KINDS[kind]}{int(size) * 8}"
    return f"{name} (big-endian)" if order == ">" and int(size) > 1 else name


def _torch_view(name, t):
    if not t.is_cuda:
        raise InputError(f"{name} is a torch tensor on {t.device}; cutune launches on a CUDA "
                         f"GPU: move it there first ({name}.cuda())")
    typestr = {"torch.float32": "<f4", "torch.float64": "<f8", "torch.float16": "<f2",
               "torch.int32": "<i4", "torch.int64": "<i8"}.get(str(t.dtype), str(t.dtype))
    itemsize = t.element_size()
    return View(name, t, "torch", tuple(t.shape), typestr,
                tuple(s * itemsize for s in t.stride()), t.data_ptr(), False, t.device.index,
                None)


def _cupy_view(name, x):
    return View(name, x, "cupy", tuple(x.shape), x.dtype.str, tuple(x.strides), x.data.ptr,
                False, x.device.id, None)


def _cai_view(name, x, cai):
    if not isinstance(cai, dict) or not {"shape", "typestr", "data"} <= cai.keys():
        raise InputError(f"{name}.__cuda_array_interface__ is not a valid interface dict "
                         f"(needs shape, typestr and data): {cai!r}")
    if cai.get("mask") is not None:
        raise InputError(f"{name} has a mask (__cuda_array_interface__['mask']); cutune takes "
                         "dense arrays only")
    ptr, readonly = cai["data"]
    return View(name, x, "cai", tuple(cai["shape"]), cai["typestr"],
                tuple(cai["strides"]) if cai.get("strides") is not None else None, ptr,
                bool(readonly), None, cai.get("stream"))


def inspect(name, x):
    """The View of `x`, or an InputError saying why it is no GPU array cutune can take."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return _torch_view(name, x)
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return _cupy_view(name, x)
    try:
        cai = x.__cuda_array_interface__
    except AttributeError:
        cai = None
    except Exception as e:  # e.g. a producer that refuses to export this array
        raise InputError(f"{name}.__cuda_array_interface__ failed: {e}") from e
    if cai is not None:
        return _cai_view(name, x, cai)
    if hasattr(x, "__dlpack__"):
        device = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else None
        # DLPack device types: 1 CPU, 2 CUDA, 3 CUDA host (pinned), 13 CUDA managed.
        if device is not None and int(device[0]) not in (2, 13):
            where = {1: "host memory", 3: "pinned host memory"}.get(
                int(device[0]), f"DLPack device type {int(device[0])}")
            raise InputError(f"{name} ({type(x).__module__}.{type(x).__qualname__}) is in "
                             f"{where}; cutune launches on a CUDA GPU: copy it there first "
                             f"(e.g. cupy.asarray({name}))")
        return View(name, x, "dlpack", None, None, None, None, False, None, None)
    raise InputError(f"{name} is a {type(x).__module__}.{type(x).__qualname__}, not a GPU array: "
                     "pass a CuPy array, a torch CUDA tensor, or anything with "
                     "__cuda_array_interface__ or __dlpack__")


def _extents(names):
    return "×".join(names)


def _describe(sig):
    parts = [f"{n} is {_extents(e)}" for n, e in sig.inputs]
    return f"{sig.family} takes " + ", ".join(parts) + f" and writes {_extents(sig.output)}"


def _contiguity_hint(view):
    if view.kind == "torch":
        return f"{view.name}.contiguous()"
    return f"cupy.ascontiguousarray({view.name})"


def check_array(view, sig):
    """dtype float32, 2-D, non-empty, int32-sized, dense row-major."""
    name, shape = view.name, view.shape
    if view.typestr[1:] != F32 or view.typestr[:1] == ">":
        convert = f"{name}.float()" if view.kind == "torch" else f"{name}.astype('float32')"
        raise InputError(f"{name} has dtype {dtype_name(view.typestr)}; cutune's {sig.family} "
                         f"takes float32 (f32): convert it first ({convert})")
    if len(shape) != 2:
        raise InputError(f"{name} has {len(shape)} dimension{'s' if len(shape) != 1 else ''} "
                         f"(shape {shape}); {_describe(sig)}: 2-D arrays only")
    if min(shape) < 1:
        raise InputError(f"{name} is empty (shape {shape}); every dimension must be at least 1")
    if max(shape) > _INT32_MAX:
        raise InputError(f"{name} has shape {shape}; the kernels take dimensions up to "
                         f"{_INT32_MAX} (int)")
    if view.strides is not None:
        rows, cols = shape
        dense = (cols * 4, 4)
        # A dimension of extent 1 is never stepped over: its stride does not matter.
        ok = (rows == 1 or view.strides[0] == dense[0]) and (cols == 1 or view.strides[1] == 4)
        if not ok:
            what = " (a transposed, column-major view)" if view.strides == (4, rows * 4) else ""
            raise InputError(
                f"{name} is not C-contiguous{what}: shape {shape} with strides {view.strides} "
                f"bytes, where a dense row-major float32 array has {dense}; pass a contiguous "
                f"copy ({_contiguity_hint(view)})")


def bind_dims(sig, views):
    """The problem's dimensions from the input arrays' shapes, or an InputError naming the two
    arrays that disagree."""
    dims = {}
    for (name, extent), view in zip(sig.inputs, views):
        for axis, (dim, n) in enumerate(zip(extent, view.shape)):
            if dim in dims and dims[dim][0] != n:
                seen, first, first_axis = dims[dim]
                shapes = " and ".join(
                    f"{v.name} is {'x'.join(map(str, v.shape))}" for v in views)
                raise InputError(
                    f"{sig.family}: {shapes}, but {_describe(sig)}: {dim} is {seen} in {first} "
                    f"(axis {first_axis}) and {n} in {name} (axis {axis})")
            dims.setdefault(dim, (n, name, axis))
    return {dim: n for dim, (n, _, _) in dims.items()}


def check_out(out, views, sig, dims):
    """out's shape is the output's extents, it is writable and shares no memory with an input."""
    expected = tuple(dims[d] for d in sig.output)
    if out.shape != expected:
        raise InputError(f"out has shape {out.shape}; {sig.family} of "
                         + " and ".join(f"{v.name} {'x'.join(map(str, v.shape))}" for v in views)
                         + f" writes {'x'.join(map(str, expected))} ({_extents(sig.output)})")
    if out.readonly:
        raise InputError("out is read-only (__cuda_array_interface__['data'][1] is True)")
    out_end = out.ptr + _nbytes(out.shape)
    for v in views:
        if v.ptr < out_end and out.ptr < v.ptr + _nbytes(v.shape):
            raise InputError(f"out overlaps {v.name}: the kernel reads {v.name} while it writes "
                             "out, so the result would be garbage; pass a separate out")


def check_alignment(views, alignment):
    """Every pointer aligned as the contract asks (16 bytes: the kernels' vector loads)."""
    if alignment <= 1:
        return
    for v in views:
        if v.ptr % alignment:
            raise InputError(
                f"{v.name}'s data pointer 0x{v.ptr:x} is {v.ptr % alignment} bytes past a "
                f"{alignment}-byte boundary, and the kernel needs every pointer aligned to "
                f"{alignment} bytes (its vector loads); a sliced view that starts inside a row "
                f"does this: pass a copy ({v.name}.copy())")


def _nbytes(shape):
    n = 4
    for d in shape:
        n *= d
    return n
