"""A stand-in for CuPy, for tests/python/launch_test.py: the names cutune uses (runtime,
driver, nvrtc, Module/Function, streams, ndarray, empty, from_dlpack) over host memory, so that
the package's whole launch path runs on a machine without a GPU. Arrays live in numpy buffers at
made-up device addresses; a launch records what it was given and then does what the real
kernel does (by the signature the test sets in `kernel_semantics`), reading and writing those
buffers through the pointers and dimensions it was passed, so a wrong argument order, pointer
or dimension gives a wrong result."""

import hashlib
import types

import numpy

float32 = numpy.float32
nan = numpy.nan

memory = {}        # address -> numpy array (1-D float32 buffer)
launches = []      # one dict per launch
modules = []       # images loaded, in order
attributes = []    # (function id, attribute, value) set
compiles = []      # (source, options) compiled
kernel_semantics = None  # "matmul" (A, B, C, M, N, K) or "transpose" (in, out, rows, cols)
device_count = 1
current_device = 0
device_name = b"NVIDIA H200"   # with 9.0 and 132 SMs: getDeviceProperties
fail_compile = None   # a log: the next compile fails with it
fail_load = None      # a message: the next module load fails with it
_next_address = [0x10000000000]


def reset():
    memory.clear()
    launches.clear()
    modules.clear()
    attributes.clear()
    compiles.clear()
    _current_stream[0] = _null_stream
    globals().update(kernel_semantics=None, device_count=1, current_device=0, fail_compile=None,
                     fail_load=None, device_name=b"NVIDIA H200")


def _allocate(nbytes):
    address = _next_address[0]
    _next_address[0] += (nbytes + 4096) // 4096 * 4096 + 4096
    return address


class _Data:
    def __init__(self, ptr):
        self.ptr = ptr


class ndarray:
    def __init__(self, host, ptr=None, device=0):
        self._host = numpy.ascontiguousarray(host, dtype=numpy.float32)
        self.shape = self._host.shape
        self.dtype = self._host.dtype
        self.strides = self._host.strides
        if ptr is None:
            ptr = _allocate(self._host.nbytes)
        self.data = _Data(ptr)
        self.device = types.SimpleNamespace(id=device)
        memory[ptr] = self._host.reshape(-1)

    def get(self):
        return memory[self.data.ptr][:self._host.size].reshape(self.shape).copy()


def asarray(host, device=0):
    return ndarray(numpy.asarray(host), device=device)


def empty(shape, dtype=float32):
    return ndarray(numpy.full(shape, numpy.nan, dtype=numpy.float32))


def from_dlpack(x):
    return x._array


class CUDADriverError(RuntimeError):
    pass


class CUDARuntimeError(RuntimeError):
    pass


class NVRTCError(RuntimeError):
    pass


class _Stream:
    def __init__(self, ptr):
        self.ptr = ptr

    def __enter__(self):
        self._saved = _current_stream[0]
        _current_stream[0] = self
        return self

    def __exit__(self, *exc):
        _current_stream[0] = self._saved


_null_stream = _Stream(0)
_current_stream = [_null_stream]


def _get_current_stream():
    return _current_stream[0]


class Function:
    def __init__(self, module, name):
        self.module, self.name, self.ptr = module, name, id(self)

    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        ptr = _current_stream[0].ptr if stream is None else stream.ptr
        launches.append({"function": self, "image": self.module.image, "grid": grid,
                         "block": block, "args": list(args), "shared_mem": shared_mem,
                         "stream": ptr})
        _run(kernel_semantics, args)


def _buffer(ptr, n):
    return memory[ptr][:n]


def _run(semantics, args):
    if semantics == "matmul":
        a, b, c, m, n, k = args
        assert all(type(d) is numpy.int32 for d in (m, n, k)), [type(d) for d in (m, n, k)]
        m, n, k = int(m), int(n), int(k)
        _buffer(c, m * n)[:] = (_buffer(a, m * k).reshape(m, k) @
                                _buffer(b, k * n).reshape(k, n)).reshape(-1)
    elif semantics == "transpose":
        x, out, rows, cols = args
        assert type(rows) is numpy.int32 and type(cols) is numpy.int32
        rows, cols = int(rows), int(cols)
        _buffer(out, rows * cols)[:] = _buffer(x, rows * cols).reshape(rows, cols).T.reshape(-1)
    else:
        raise AssertionError(f"kernel_semantics not set: {semantics!r}")


class Module:
    def load(self, image):
        if fail_load:
            raise CUDADriverError(fail_load)
        assert isinstance(image, bytes)
        self.image = image
        modules.append(image)

    def get_function(self, name):
        return Function(self, name)


def _func_set_attribute(function_ptr, attribute, value):
    attributes.append((function_ptr, attribute, value))


def _pointer_attributes(ptr):
    for start, buffer in memory.items():
        if start <= ptr < start + buffer.nbytes:
            return types.SimpleNamespace(device=0, type=2)
    return types.SimpleNamespace(device=-2, type=0)


def _device_properties(device):
    return {"name": device_name, "major": 9, "minor": 0, "multiProcessorCount": 132}


def _device_count():
    return device_count


class _Program:
    def __init__(self, source):
        self.source = source


def _compile(program, options):
    compiles.append((program.source, list(options)))
    if fail_compile:
        program.log = fail_compile
        raise NVRTCError("NVRTC_ERROR_COMPILATION (6)")
    program.cubin = b"STAND-IN CUBIN " + hashlib.sha256(
        repr(options).encode() + program.source.encode()).hexdigest().encode()


runtime = types.SimpleNamespace(
    getDeviceCount=_device_count, getDevice=lambda: current_device,
    getDeviceProperties=_device_properties, pointerGetAttributes=_pointer_attributes,
    CUDARuntimeError=CUDARuntimeError)
driver = types.SimpleNamespace(CUDADriverError=CUDADriverError,
                               funcSetAttribute=_func_set_attribute)
nvrtc = types.SimpleNamespace(
    NVRTCError=NVRTCError, getVersion=lambda: (13, 0),
    createProgram=lambda source, name, headers, include_names: _Program(source),
    compileProgram=_compile, getProgramLog=lambda p: getattr(p, "log", ""),
    getCUBIN=lambda p: p.cubin, destroyProgram=lambda p: None)
cuda = types.SimpleNamespace(
    runtime=runtime, driver=driver, nvrtc=nvrtc,
    function=types.SimpleNamespace(Module=Module),
    ExternalStream=_Stream, Stream=lambda non_blocking=False: _Stream(_allocate(64)),
    get_current_stream=_get_current_stream)
