"""cutune.Client: answers from cutuned (or offline from a table), cached in the process, and
kernels launched from them on CuPy arrays, torch tensors and other GPU arrays."""

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

import grpc
from google.protobuf import json_format

from . import _proto, arrays, launch
from .answer import Answer
from .errors import (InputError, NotFoundError, OfflineError, ServerError, StaleAnswerError,
                     UnavailableError)

DEFAULT_SERVER = "127.0.0.1:50051"
SERVER_ENV, TOKEN_ENV, CLI_ENV = "CUTUNE_SERVER", "CUTUNE_TOKEN", "CUTUNE_CLI"
BUILD_TREE_FILE = "build_tree.json"  # written by CMake beside the build tree's descriptor set
_MAX_MESSAGE = 65 << 20  # as the daemon's limit (docs/api.md)
# The daemon could not be reached (or gave up in time): answer offline when a table was given.
_OFFLINE_CODES = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
_CLI_ERROR = re.compile(r"^error: ([A-Z_]+): (.*)$", re.MULTILINE)


@dataclasses.dataclass
class Stats:
    """What this client did: RPCs sent, answers from the CLI and the table, cache hits."""
    rpcs: int = 0
    offline_answers: int = 0
    cache_hits: int = 0
    modules_loaded: int = 0
    launches: int = 0


def _package_path():
    return sys.modules[__package__].__path__


class Client:
    """A cutuned client with an in-process cache and an offline fallback.

    server: "host:port" or "unix:PATH" (default $CUTUNE_SERVER, else 127.0.0.1:50051).
    token: sent as "authorization: Bearer <token>" (default $CUTUNE_TOKEN).
    table: a tuning table file (tables/nvidia-h200.json), or a directory of them (tables/: every
        *.json, as `cutuned --tables` imports them), to answer from, through the `cutune` CLI
        ($CUTUNE_CLI, else the build tree's, else PATH), when the daemon is unreachable.
    offline: always answer from `table`, never contacting a daemon.
    model: the device model to ask about ("NVIDIA H200"); default: get() lets the daemon choose,
        matmul/transpose ask for the current GPU's name.
    fresh_only: refuse (StaleAnswerError) answers whose provenance differs.
    timeout: seconds per RPC.
    credentials: grpc.ChannelCredentials for TLS (default plaintext).
    """

    def __init__(self, server=None, *, token=None, table=None, offline=False, model=None,
                 fresh_only=False, timeout=10.0, credentials=None):
        self.server = server or os.environ.get(SERVER_ENV) or DEFAULT_SERVER
        token = os.environ.get(TOKEN_ENV, "") if token is None else token
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        if table is not None and not (os.path.isfile(table) or os.path.isdir(table)):
            raise OfflineError(f"table file or directory {os.fspath(table)!r} does not exist")
        self.table = os.fspath(table) if table is not None else None
        if offline and self.table is None:
            raise OfflineError("offline=True needs table=FILE to answer from")
        self.offline = offline
        self.model = model
        self.fresh_only = fresh_only
        self.timeout = timeout
        self.stats = Stats()
        self._protos = _proto.load(_package_path())
        options = [("grpc.max_receive_message_length", _MAX_MESSAGE),
                   ("grpc.max_send_message_length", _MAX_MESSAGE)]
        if credentials is None:
            self._channel = grpc.insecure_channel(self.server, options=options)
        else:
            self._channel = grpc.secure_channel(self.server, credentials, options=options)
        self._get_best_config = self._protos.unary(self._channel, "GetBestConfig")
        self._answers = {}  # (model, family, shape, dtype) -> Answer
        self._plans = {}    # (device, model, family, shape, dtype) -> launch.Plan
        self._lock = threading.Lock()
        self._gpu = None

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def clear_cache(self):
        """Forget every answer and loaded kernel: the next call asks again."""
        with self._lock:
            self._answers.clear()
            self._plans.clear()

    # --- answers ---------------------------------------------------------------------------

    def get(self, family, shape, dtype="f32", *, model=None, include_source=False,
            include_cubin=False):
        """The best known configuration for `family` at `shape` ("4096x4096x4096" or a sequence
        of ints: transpose rows, cols; matmul M, N, K) as an Answer. Repeated questions are
        answered from the process's cache without an RPC."""
        shape = _parse_shape(shape)
        model = self.model if model is None else model
        answer = self._answers.get((model, family, shape, dtype))
        if (answer is not None and (answer.source or not include_source)
                and (answer.cubin or not include_cubin)):
            self.stats.cache_hits += 1
        else:
            answer = self._fetch(model, family, shape, dtype, include_source, include_cubin,
                                 answer)
        self._check_fresh(answer)
        return answer

    def _launch_answer(self, model, family, shape, dtype):
        """An answer with something to load: a cubin from the daemon, or offline the source."""
        key = (model, family, shape, dtype)
        answer = self._answers.get(key)
        if answer is not None and (answer.cubin or answer.source):
            self.stats.cache_hits += 1
        else:
            answer = self._fetch(model, family, shape, dtype, False, True, answer,
                                 offline_source=True)
        self._check_fresh(answer)
        return answer

    def _fetch(self, model, family, shape, dtype, include_source, include_cubin, cached,
               offline_source=False):
        # Ask for what the cached answer already had too, so the cache only ever grows.
        if cached is not None:
            include_source = include_source or bool(cached.source)
            include_cubin = include_cubin or bool(cached.cubin)
        p = self._protos
        request = p.GetBestConfigRequest(
            problem=p.Problem(family=family, shape=list(shape), dtype=dtype),
            include_source=include_source, include_cubin=include_cubin)
        described = self._described(model)
        if model:
            request.device.model = model
            if described:
                (request.device.cc_major, request.device.cc_minor,
                 request.device.sm_count) = described
        # A launch compiles an offline answer's source in the process (and keeps the cubin on
        # disk) rather than have the CLI compile it again at every start.
        offline = (model, family, shape, dtype, include_source or offline_source,
                   include_cubin and not offline_source)
        with self._lock:
            if self.offline:
                answer = self._offline(*offline)
                self._answers[(model, family, shape, dtype)] = answer
                return answer
            self.stats.rpcs += 1
            try:
                response = self._get_best_config(request, timeout=self.timeout,
                                                 metadata=self._metadata)
                answer = Answer(response, offline=False, protos=p)
            except grpc.RpcError as e:
                code, details = e.code(), e.details()
                if code not in _OFFLINE_CODES:
                    raise _server_error(code.name, details, f"cutuned at {self.server}") from None
                if self.table is None:
                    raise UnavailableError(
                        f"cannot reach cutuned at {self.server} ({code.name}: {details}); start "
                        f"it, point ${SERVER_ENV} or Client(server=...) at one, or pass "
                        "table=FILE to answer offline from a tuning table") from None
                answer = self._offline(*offline)
            self._answers[(model, family, shape, dtype)] = answer
        return answer

    def _offline(self, model, family, shape, dtype, include_source, include_cubin):
        """The answer from the table file, by `cutune get --table` (the daemon's lookup ladder,
        in the CLI's process)."""
        cli = find_cli()
        with tempfile.TemporaryDirectory(prefix="cutune-") as tmp:
            command = [cli, "get", family, "--shape", "x".join(map(str, shape)), "--dtype", dtype,
                       "--json", "--table", self.table]
            if model:
                command += ["--model", model]
                described = self._described(model)
                if described:
                    command += ["--arch", f"sm_{described[0]}{described[1]}"]
                    if described[2] > 0:
                        command += ["--sm-count", str(described[2])]
            source_file, cubin_file = os.path.join(tmp, "source.cu"), os.path.join(tmp, "k.cubin")
            if include_source:
                command += ["--source", source_file]
            if include_cubin:
                command += ["--cubin", cubin_file]
            try:
                done = subprocess.run(command, capture_output=True, text=True,
                                      timeout=max(self.timeout, 120.0))
            except (OSError, subprocess.TimeoutExpired) as e:
                raise OfflineError(f"running {command[0]} failed: {e}") from e
            where = f"the table {self.table} (offline, by {cli})"
            if done.returncode != 0:
                found = _CLI_ERROR.search(done.stderr)
                if found:
                    raise _server_error(found.group(1), found.group(2), where)
                raise OfflineError(f"`{' '.join(command)}` failed (exit {done.returncode}): "
                                   f"{done.stderr.strip() or done.stdout.strip()}")
            try:
                data = json.loads(done.stdout)
                # With --source/--cubin the CLI names the files there instead of the contents.
                data.pop("source", None)
                data.pop("cubin", None)
                response = json_format.ParseDict(data, self._protos.GetBestConfigResponse(),
                                                 ignore_unknown_fields=True)
            except (ValueError, json_format.ParseError) as e:
                raise OfflineError(f"{cli} printed no answer this client can read ({e}): "
                                   f"{done.stdout[:200]!r}") from e
            if include_source:
                with open(source_file) as f:
                    response.source = f.read()
            if include_cubin:
                with open(cubin_file, "rb") as f:
                    response.cubin = f.read()
        self.stats.offline_answers += 1
        return Answer(response, offline=True, protos=self._protos)

    def _check_fresh(self, answer):
        if self.fresh_only and answer.stale:
            where = "the table" if answer.offline else f"cutuned at {self.server}"
            raise StaleAnswerError(
                f"{answer.family} {'x'.join(map(str, answer.shape))} {answer.dtype} on "
                f"{answer.device_model}: fresh_only=True refuses this answer from {where}, "
                f"whose provenance differs: {'; '.join(answer.stale)} (re-tune it, or pass "
                "fresh_only=False to use it anyway)", answer=answer)

    # --- launching -------------------------------------------------------------------------

    def matmul(self, a, b, out=None):
        """out = a @ b for float32 a (M×K) and b (K×N) on the current GPU; out (M×N) is
        allocated like a (torch.empty for a torch tensor, else cupy.empty) when not given.
        Launched on a's stream (torch's current stream for torch tensors, else CuPy's)."""
        return self._run(arrays.SIGNATURES["matmul"], (a, b), out)

    def transpose(self, x, out=None):
        """out = x.T for a float32 x (rows×cols), out cols×rows; otherwise as matmul."""
        return self._run(arrays.SIGNATURES["transpose"], (x,), out)

    def device_model(self):
        """The model matmul/transpose ask about: `model` if given, else the current GPU's name."""
        if self.model is not None:
            return self.model
        gpu = self._require_gpu()
        return gpu.device_name(gpu.current_device())

    def _described(self, model):
        """(cc_major, cc_minor, sm_count) of the current GPU when `model` is its name, so that a
        table without that model answers from another of its architecture; else None."""
        gpu = self._gpu
        if gpu is None or not model:
            return None
        device = gpu.current_device()
        if gpu.device_name(device) != model:
            return None
        return gpu.capability(device) + (gpu.sm_count(device),)

    def _require_gpu(self):
        if self._gpu is None:
            self._gpu = launch.Gpu()
        return self._gpu

    def _run(self, sig, inputs, out):
        views = [arrays.inspect(name, x) for (name, _), x in zip(sig.inputs, inputs)]
        out_view = arrays.inspect("out", out) if out is not None else None
        if any(v.kind == "dlpack" for v in views + [out_view] if v is not None):
            gpu = self._require_gpu()
            views = [arrays.inspect(v.name, gpu.from_dlpack(v.obj)) if v.kind == "dlpack" else v
                     for v in views]
            if out_view is not None and out_view.kind == "dlpack":
                out_view = arrays.inspect("out", gpu.from_dlpack(out))
        for v in views:
            arrays.check_array(v, sig)
        dims = arrays.bind_dims(sig, views)
        if out_view is not None:
            arrays.check_array(out_view, sig)
            arrays.check_out(out_view, views, sig, dims)
        shape = tuple(dims[d] for d in sig.dims)

        # Without a GPU in use yet, the model must come from the client and the answer's
        # contract decides the alignment before CuPy is needed (CPU tests rely on this order).
        gpu, model = self._gpu, self.model
        if model is None:
            gpu = self._require_gpu()
        device = gpu.current_device() if gpu is not None else None
        if model is None:
            model = gpu.device_name(device)
        # The cached call: a plan made earlier holds its answer, so the answer cache (and the
        # answer's cubin bytes) is not touched again.
        plan = self._plans.get((device, model, sig.family, shape, "f32")) if gpu else None
        if plan is not None:
            answer = plan.answer
            self.stats.cache_hits += 1
            self._check_fresh(answer)
        else:
            answer = self._launch_answer(model, sig.family, shape, "f32")
        checked = views + [out_view] if out_view is not None else views
        arrays.check_alignment(checked, answer.launch.pointer_alignment)
        if gpu is None:
            gpu = self._require_gpu()
            device = gpu.current_device()
        for v in checked:
            on = gpu.device_of(v)
            if on != device:
                raise InputError(f"{v.name} is on GPU {on} but the current device is GPU "
                                 f"{device}: make GPU {on} current first (with "
                                 f"cupy.cuda.Device({on}) or torch.cuda.device({on}))")
        if plan is None:
            plan = self._make_plan(gpu, device, model, sig, shape, dims, answer)

        first = views[0]
        stream, stream_ptr = self._stream(gpu, first)
        if out is None:
            out_shape = tuple(dims[d] for d in sig.output)
            if first.kind == "torch":
                out = sys.modules["torch"].empty(out_shape, dtype=first.obj.dtype,
                                                 device=first.obj.device)
            else:
                out = gpu.cupy.empty(out_shape, dtype=gpu.cupy.float32)
            out_ptr = out.data_ptr() if first.kind == "torch" else out.data.ptr
        else:
            out_ptr = out_view.ptr
        before = len(plan.functions)
        plan.launch(gpu, [v.ptr for v in views] + [out_ptr], stream, stream_ptr)
        self.stats.modules_loaded += len(plan.functions) - before
        self.stats.launches += 1
        return out

    def _make_plan(self, gpu, device, model, sig, shape, dims, answer):
        arguments = launch.plan_arguments(answer.launch, sig, dims)
        where = (f"{sig.family} {'x'.join(map(str, shape))} ({answer.rung} answer for {model}, "
                 f"{' '.join(answer.compile_options)}) on GPU {device} "
                 f"({gpu.device_name(device)}, {gpu.arch(device)})")
        image = answer.cubin or gpu.compile(answer.source, answer.compile_options)
        plan = launch.Plan(gpu, answer, arguments, image, where)
        with self._lock:
            self._plans[(device, model, sig.family, shape, "f32")] = plan
        return plan

    def _stream(self, gpu, view):
        """The stream to launch on (None: CuPy's current one) and its handle."""
        if view.kind == "torch":
            torch = sys.modules["torch"]
            ptr = torch.cuda.current_stream(view.obj.device).cuda_stream
            return gpu.external_stream(ptr), ptr
        if view.kind == "cai" and isinstance(view.stream, int):
            return gpu.external_stream(view.stream), view.stream
        return None, gpu.cupy.cuda.get_current_stream().ptr


def _parse_shape(shape):
    if isinstance(shape, str):
        parts = shape.lower().split("x")
        if not all(p.strip().isdigit() for p in parts):
            raise InputError(f"shape {shape!r} is not like 4096x4096x4096")
        shape = [int(p) for p in parts]
    try:
        shape = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise InputError(f"shape {shape!r} is not a sequence of ints") from None
    if not shape or min(shape) < 1:
        raise InputError(f"shape {shape} needs at least one dimension, each at least 1")
    return shape


def _server_error(code, details, where):
    cls = NotFoundError if code == "NOT_FOUND" else ServerError
    return cls(f"{details} ({code} from {where})", code=code)


def find_cli():
    """The cutune CLI: $CUTUNE_CLI, else the build tree's (next to this package's build
    directory), else `cutune` on PATH."""
    path = os.environ.get(CLI_ENV)
    if path:
        if not os.access(path, os.X_OK):
            raise OfflineError(f"${CLI_ENV}={path!r} is not an executable")
        return path
    for directory in _package_path():
        info = os.path.join(directory, BUILD_TREE_FILE)
        if os.path.isfile(info):
            with open(info) as f:
                cli = json.load(f).get("cli", "")
            if cli and os.access(cli, os.X_OK):
                return cli
    cli = shutil.which("cutune")
    if cli is None:
        raise OfflineError(f"answering offline from a table needs the cutune CLI: set ${CLI_ENV} "
                           "to it or put it on PATH (none beside this package's build tree "
                           "either)")
    return cli
