"""Launching an answer's kernel, driven by its launch contract.

plan_arguments() reads the contract (CPU only): which kernel argument each array fills, by role
and extents, and which dimension each int carries. Gpu holds what needs CuPy: the current
device, module loading (a cubin from the daemon, or the source compiled with NVRTC and exactly
the answer's compile_options), function attributes and the launch itself.
"""

import hashlib
import os
import tempfile

from .errors import CompileError, ContractError, InputError, LaunchError, NoGpuError

# C types a ROLE_DIMENSION argument may have, as the numpy scalar type it is packed as.
_DIMENSION_TYPES = {"int": "int32", "int32_t": "int32", "unsigned": "uint32",
                    "unsigned int": "uint32", "long long": "int64", "int64_t": "int64"}

INPUT, OUTPUT, DIMENSION = 1, 2, 3  # KernelArgument.Role values


def plan_arguments(contract, sig, dims, dtype="f32"):
    """The kernel's arguments in order: ("pointer", i) for the i-th of (inputs..., out), or
    ("value", numpy type name, value) for a dimension. Raises ContractError when the contract's
    pointers do not match the family's arrays by role and extents."""
    plan, inputs, outputs = [], 0, 0
    for arg in contract.arguments:
        extent = tuple(arg.extent)
        if arg.role == INPUT or arg.role == OUTPUT:
            if arg.role == INPUT:
                if inputs >= len(sig.inputs):
                    raise ContractError(f"{sig.family}'s contract has more inputs than this "
                                        f"client knows ({len(sig.inputs)}): {arg.name}")
                user, expected, index = sig.inputs[inputs][0], sig.inputs[inputs][1], inputs
                inputs += 1
            else:
                if outputs:
                    raise ContractError(f"{sig.family}'s contract has two outputs")
                user, expected, index = "out", sig.output, len(sig.inputs)
                outputs += 1
            if extent != tuple(expected):
                raise ContractError(
                    f"{sig.family}'s contract passes {arg.name} as {'×'.join(extent)} but this "
                    f"client fills it with {user}, {'×'.join(expected)}: the daemon's family "
                    "changed; update the cutune package")
            if arg.element_type and arg.element_type != dtype:
                raise ContractError(f"{arg.name} has element type {arg.element_type}, not {dtype}")
            if not arg.type.endswith("*"):
                raise ContractError(f"{arg.name} is a buffer passed as {arg.type!r}, not a pointer")
            plan.append(("pointer", index))
        elif arg.role == DIMENSION:
            if len(extent) != 1 or extent[0] not in dims:
                raise ContractError(f"{sig.family}'s contract passes dimension {arg.name} as "
                                    f"{list(extent)}; this client knows {sorted(dims)}")
            ctype = _DIMENSION_TYPES.get(arg.type)
            if ctype is None:
                raise ContractError(f"dimension {arg.name} is passed as {arg.type!r}, a C type "
                                    f"this client cannot pack (knows {sorted(_DIMENSION_TYPES)})")
            plan.append(("value", ctype, dims[extent[0]]))
        else:
            raise ContractError(f"argument {arg.name} has role {arg.role}, unknown to this client")
    if inputs != len(sig.inputs) or outputs != 1:
        raise ContractError(f"{sig.family}'s contract has {inputs} inputs and {outputs} outputs; "
                            f"this client fills {len(sig.inputs)} and 1")
    return plan


def cache_dir():
    """Where cubins compiled here are kept between processes: python/ in the compile cache
    directory the daemon and the C++ client use ($CUTUNE_CACHE_DIR, else
    $XDG_CACHE_HOME/cutune/nvrtc, else ~/.cache/cutune/nvrtc; empty or relative values are
    ignored, as the XDG spec asks). Its own folder: the daemon's entries have another format."""
    for variable, below in (("CUTUNE_CACHE_DIR", ()), ("XDG_CACHE_HOME", ("cutune", "nvrtc"))):
        value = os.environ.get(variable, "")
        if os.path.isabs(value):
            return os.path.join(value, *below, "python")
    home = os.environ.get("HOME", "")
    return os.path.join(home, ".cache", "cutune", "nvrtc", "python") if os.path.isabs(home) else None


class Gpu:
    """CuPy, imported on first need, and what this process has loaded on its GPUs."""

    def __init__(self):
        try:
            import cupy
            import numpy
        except Exception as e:  # ImportError, or a CuPy that cannot find its CUDA libraries
            raise NoGpuError(f"launching a kernel needs CuPy (e.g. pip install cupy-cuda13x): "
                             f"import failed: {e}") from e
        self.cupy, self.numpy = cupy, numpy
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:  # CUDARuntimeError: no driver, no device
            raise NoGpuError(f"no usable CUDA device: {e}") from e
        if count == 0:
            raise NoGpuError("no CUDA device on this host")
        self._properties = {}
        self._streams = {}

    def current_device(self):
        return self.cupy.cuda.runtime.getDevice()

    def _props(self, device):
        p = self._properties.get(device)
        if p is None:
            p = self.cupy.cuda.runtime.getDeviceProperties(device)
            self._properties[device] = p
        return p

    def device_name(self, device):
        name = self._props(device)["name"]
        return name.decode() if isinstance(name, bytes) else name

    def arch(self, device):
        major, minor = self.capability(device)
        return f"sm_{major}{minor}"

    def capability(self, device):
        p = self._props(device)
        return (p["major"], p["minor"])

    def sm_count(self, device):
        return self._props(device)["multiProcessorCount"]

    def device_of(self, view):
        """The device a View's memory is on, asking the driver for plain interface objects."""
        if view.device is not None:
            return view.device
        try:
            attributes = self.cupy.cuda.runtime.pointerGetAttributes(view.ptr)
        except Exception as e:
            raise InputError(f"{view.name}'s pointer 0x{view.ptr:x} is not CUDA memory: {e}") from e
        if attributes.type not in (2, 3):  # cudaMemoryTypeDevice, cudaMemoryTypeManaged
            raise InputError(f"{view.name}'s pointer 0x{view.ptr:x} is not device memory "
                             f"(cudaMemoryType {attributes.type}); cutune launches on the GPU")
        return attributes.device

    def from_dlpack(self, x):
        try:
            return self.cupy.from_dlpack(x)
        except Exception as e:
            raise InputError(f"cupy.from_dlpack could not take a {type(x).__qualname__}: {e}") from e

    def external_stream(self, ptr):
        s = self._streams.get(ptr)
        if s is None:
            s = self.cupy.cuda.ExternalStream(ptr)
            self._streams[ptr] = s
        return s

    def compile(self, source, options):
        """A cubin of `source` compiled with exactly `options`, from the disk cache when an
        identical compile (same NVRTC, options and source) was done before."""
        nvrtc = self.cupy.cuda.nvrtc  # CuPy's thin NVRTC binding: no options of CuPy's own
        version = nvrtc.getVersion()
        key = hashlib.sha256(repr((version, tuple(options))).encode() + b"\0" +
                             source.encode()).hexdigest()
        directory = cache_dir()
        path = os.path.join(directory, f"{key}.cubin") if directory else None
        if path and os.path.isfile(path):
            with open(path, "rb") as f:
                return f.read()
        program = nvrtc.createProgram(source, "cutune_kernel.cu", (), ())
        try:
            try:
                nvrtc.compileProgram(program, list(options))
            except nvrtc.NVRTCError as e:
                log = nvrtc.getProgramLog(program)
                raise CompileError(f"NVRTC {version[0]}.{version[1]} refused the answer's source "
                                   f"with {' '.join(options)}: {e}\n{log}", log=log) from e
            cubin = nvrtc.getCUBIN(program)
        finally:
            nvrtc.destroyProgram(program)
        if path:
            _write_atomically(path, cubin)
        return cubin


    def load(self, image, kernel, attributes, where):
        """The kernel function of a freshly loaded module, its attributes set."""
        cupy = self.cupy
        try:
            module = cupy.cuda.function.Module()
            module.load(bytes(image))
            function = module.get_function(kernel)
            for a in attributes:
                cupy.cuda.driver.funcSetAttribute(function.ptr, a.driver_attribute, a.value)
        except cupy.cuda.driver.CUDADriverError as e:
            raise LaunchError(f"loading {where} failed: {e}") from e
        return function


def _write_atomically(path, data):
    # The cache only saves time: a directory that cannot be written costs a compile, no error.
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


class Plan:
    """One problem's answer made launchable on one device: the image, geometry and argument
    template, and its loaded functions (one per stream when launches must not overlap)."""

    __slots__ = ("answer", "image", "kernel", "attributes", "grid", "block", "shared",
                 "per_stream", "template", "pointer_slots", "functions", "where")

    def __init__(self, gpu, answer, arguments, image, where):
        self.answer = answer
        self.image = image
        self.kernel = answer.kernel
        self.attributes = list(answer.launch.function_attributes)
        g = answer.response.geometry
        if len(g.grid) != 3 or len(g.block) != 3:
            raise ContractError(f"the answer's geometry is not 3-D: grid {list(g.grid)}, "
                                f"block {list(g.block)}")
        self.grid, self.block, self.shared = tuple(g.grid), tuple(g.block), g.dynamic_shared_bytes
        self.per_stream = answer.concurrency == "one_module_per_stream"
        self.template, self.pointer_slots = [], []
        for position, slot in enumerate(arguments):
            if slot[0] == "pointer":
                self.template.append(None)
                self.pointer_slots.append((position, slot[1]))
            else:
                self.template.append(getattr(gpu.numpy, slot[1])(slot[2]))
        self.functions = {}
        self.where = where

    def function(self, gpu, stream_ptr):
        key = stream_ptr if self.per_stream else None
        f = self.functions.get(key)
        if f is None:
            f = gpu.load(self.image, self.kernel, self.attributes, self.where)
            self.functions[key] = f
        return f

    def launch(self, gpu, pointers, stream, stream_ptr):
        args = list(self.template)
        for position, index in self.pointer_slots:
            args[position] = pointers[index]
        try:
            self.function(gpu, stream_ptr)(self.grid, self.block, args,
                                           shared_mem=self.shared, stream=stream)
        except gpu.cupy.cuda.driver.CUDADriverError as e:
            raise LaunchError(f"launching {self.where} (grid {self.grid}, block {self.block}, "
                              f"{self.shared} B dynamic shared) failed: {e}") from e
