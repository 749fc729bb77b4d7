#!/usr/bin/python3
"""The package's launch path on the CPU, with tests/python/stand_in/cupy in place of CuPy: the
module loaded is the daemon's cubin as it came, or offline the answer's source compiled with
exactly its compile_options (and taken from the disk cache the next time); the launch has the
answer's geometry and its arguments in the contract's order (the stand-in runs the kernel's
semantics through the pointers and int32 dimensions it was given, so the result shows a wrong
order); one module per stream for split-K; streams of the input's framework; errors of
devices, NVRTC and the driver."""

import argparse
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "stand_in"))
import cupy  # noqa: E402  (the stand-in)
import numpy  # noqa: E402

import cutune  # noqa: E402
from cutune import arrays, launch  # noqa: E402

from support import environment  # noqa: E402
from table_server import TableServer  # noqa: E402

ARGS = None
H200 = "NVIDIA H200"
NOWHERE = "unix:/nonexistent/cutuned.sock"
RNG = numpy.random.default_rng(7)


def random(*shape):
    return cupy.asarray(RNG.standard_normal(shape).astype(numpy.float32))


def close(c, a, b):
    ref = a.get().astype(numpy.float64) @ b.get().astype(numpy.float64)
    return numpy.linalg.norm(c.get() - ref) / numpy.linalg.norm(ref) <= 1e-5


class DLPackOnly:
    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None):
        return None

    def __dlpack_device__(self):
        return (2, 0)


class Interface:
    """Another framework's array: __cuda_array_interface__ with a stream, over `array`'s memory."""

    def __init__(self, array, stream):
        self.__cuda_array_interface__ = {"shape": array.shape, "typestr": "<f4",
                                         "data": (array.data.ptr, False), "strides": None,
                                         "version": 3, "stream": stream}


def setUpModule():
    global SHIPPED
    SHIPPED = TableServer(ARGS.cutuned, ARGS.fake_worker, ARGS.shipped_tables)


def tearDownModule():
    SHIPPED.stop()


class LaunchTest(unittest.TestCase):
    def setUp(self):
        cupy.reset()
        self._cache = tempfile.TemporaryDirectory(prefix="cutune-cubins-")
        self._env = environment(CUTUNE_CACHE_DIR=self._cache.name, CUTUNE_CLI=ARGS.cli)
        self._env.__enter__()

    def tearDown(self):
        self._env.__exit__(None, None, None)
        self._cache.cleanup()

    def test_matmul_launches_the_daemons_cubin(self):
        client = cutune.Client(SHIPPED.address)
        cupy.kernel_semantics = "matmul"
        a, b = random(257, 1021), random(1021, 509)
        c = client.matmul(a, b)
        self.assertIsInstance(c, cupy.ndarray)
        self.assertEqual(c.shape, (257, 509))
        self.assertTrue(close(c, a, b))
        answer = client.get("matmul", (257, 509, 1021), model=H200)  # the one launched, cached
        self.assertEqual(answer.cubin[:4], b"\x7fELF")
        self.assertEqual(cupy.modules, [answer.cubin])
        self.assertEqual(cupy.compiles, [])
        [run] = cupy.launches
        self.assertEqual(run["function"].name, "cutune_kernel")
        self.assertEqual(run["grid"], answer.geometry.grid)
        self.assertEqual(run["block"], answer.geometry.block)
        self.assertEqual(run["shared_mem"], answer.geometry.dynamic_shared_bytes)
        self.assertEqual(run["stream"], 0)  # CuPy's current stream
        self.assertEqual(run["args"][:3], [a.data.ptr, b.data.ptr, c.data.ptr])
        self.assertEqual(run["args"][3:], [257, 509, 1021])
        self.assertEqual((client.stats.rpcs, client.stats.modules_loaded,
                          client.stats.launches), (1, 1, 1))

    def test_a_second_call_costs_no_rpc_and_no_load(self):
        client = cutune.Client(SHIPPED.address)
        cupy.kernel_semantics = "transpose"
        x = random(1023, 769)
        client.transpose(x)
        out = cupy.empty((769, 1023))
        self.assertIs(client.transpose(x, out=out), out)
        self.assertTrue(numpy.array_equal(out.get(), x.get().T))
        self.assertEqual((client.stats.rpcs, client.stats.modules_loaded, len(cupy.launches)),
                         (1, 1, 2))
        self.assertEqual(cupy.launches[1]["args"][:2], [x.data.ptr, out.data.ptr])

    def test_offline_compiles_the_source_with_exactly_its_options(self):
        cupy.kernel_semantics = "matmul"
        a, b = random(1000, 77), random(77, 1000)
        client = cutune.Client(NOWHERE, table=ARGS.shipped_table)
        self.assertTrue(close(client.matmul(a, b), a, b))
        answer = client.get("matmul", (1000, 1000, 77), model=H200)
        self.assertTrue(answer.offline)
        self.assertEqual(cupy.compiles, [(answer.source, answer.compile_options)])
        self.assertIn("--gpu-architecture=sm_90", cupy.compiles[0][1])
        self.assertEqual(len(cupy.modules), 1)
        self.assertEqual(len(os.listdir(os.path.join(self._cache.name, "python"))), 1)
        # Another process (here: another client) takes the cubin from the disk cache.
        again = cutune.Client(NOWHERE, table=ARGS.shipped_table)
        again.matmul(a, b)
        self.assertEqual(len(cupy.compiles), 1)
        self.assertEqual(cupy.modules[1], cupy.modules[0])
        with tempfile.TemporaryDirectory() as empty, environment(CUTUNE_CACHE_DIR=empty):
            cutune.Client(NOWHERE, table=ARGS.shipped_table).matmul(a, b)
        self.assertEqual(len(cupy.compiles), 2)

    def test_a_gpu_the_table_lacks_is_answered_from_its_architecture(self):
        # An H100 with the H200 table: the client describes the GPU (sm_90, 132 SMs), so the
        # table answers from the H200 instead of NOT_FOUND, and the launch is right.
        cupy.device_name = b"NVIDIA H100 80GB HBM3"
        cupy.kernel_semantics = "matmul"
        a, b = random(300, 700), random(700, 500)
        client = cutune.Client(NOWHERE, table=ARGS.shipped_table)
        self.assertTrue(close(client.matmul(a, b), a, b))
        answer = client.get("matmul", (300, 500, 700), model="NVIDIA H100 80GB HBM3")
        self.assertEqual(answer.rung, "same_architecture")
        self.assertEqual(answer.device_model, H200)
        # Asked for a model the client cannot describe (not the current GPU's): NOT_FOUND.
        with self.assertRaises(cutune.NotFoundError):
            client.get("matmul", (300, 500, 700), model="NVIDIA H100 PCIe")

    def test_the_cache_directory_follows_the_daemons(self):
        with environment(CUTUNE_CACHE_DIR="/c", XDG_CACHE_HOME="/x", HOME="/h"):
            self.assertEqual(launch.cache_dir(), "/c/python")
        with environment(CUTUNE_CACHE_DIR="relative", XDG_CACHE_HOME="/x", HOME="/h"):
            self.assertEqual(launch.cache_dir(), "/x/cutune/nvrtc/python")
        with environment(CUTUNE_CACHE_DIR=None, XDG_CACHE_HOME=None, HOME="/h"):
            self.assertEqual(launch.cache_dir(), "/h/.cache/cutune/nvrtc/python")
        with environment(CUTUNE_CACHE_DIR=None, XDG_CACHE_HOME="", HOME=""):
            self.assertIsNone(launch.cache_dir())

    def test_split_k_loads_one_module_per_stream(self):
        client = cutune.Client(SHIPPED.address)
        answer = client.get("matmul", (64, 4096, 4096), model=H200)
        self.assertEqual(answer.concurrency, "one_module_per_stream")
        cupy.kernel_semantics = "matmul"
        a, b = random(64, 4096), random(4096, 4096)
        first, second = cupy.cuda.Stream(), cupy.cuda.Stream()
        outs = []
        for stream in (first, second, first):
            with stream:
                outs.append(client.matmul(a, b))
        self.assertEqual([r["stream"] for r in cupy.launches],
                         [first.ptr, second.ptr, first.ptr])
        functions = [r["function"] for r in cupy.launches]
        self.assertIs(functions[0], functions[2])
        self.assertIsNot(functions[0], functions[1])
        self.assertEqual(client.stats.modules_loaded, 2)
        self.assertTrue(all(close(c, a, b) for c in outs))

    def test_any_concurrency_shares_one_module_across_streams(self):
        client = cutune.Client(SHIPPED.address)
        cupy.kernel_semantics = "transpose"
        x = random(64, 48)
        for stream in (cupy.cuda.Stream(), cupy.cuda.Stream()):
            with stream:
                client.transpose(x)
        self.assertEqual(client.stats.modules_loaded, 1)
        self.assertNotEqual(cupy.launches[0]["stream"], cupy.launches[1]["stream"])

    def test_an_interface_arrays_stream_is_used(self):
        client = cutune.Client(SHIPPED.address)
        cupy.kernel_semantics = "transpose"
        x, out = random(300, 200), cupy.empty((200, 300))
        client.transpose(Interface(x, 0xABC0), out=Interface(out, 0xABC0))
        self.assertEqual(cupy.launches[0]["stream"], 0xABC0)
        self.assertTrue(numpy.array_equal(out.get(), x.get().T))

    def test_dlpack_only_objects_are_converted(self):
        client = cutune.Client(SHIPPED.address)
        cupy.kernel_semantics = "transpose"
        x = random(33, 65)
        t = client.transpose(DLPackOnly(x))
        self.assertTrue(numpy.array_equal(t.get(), x.get().T))

    def test_function_attributes_are_set_before_the_first_launch(self):
        client = cutune.Client(SHIPPED.address, model=H200)
        answer = client.get("matmul", (4096, 4096, 4096), include_cubin=True)
        response = type(answer.response)()
        response.CopyFrom(answer.response)
        attribute = response.launch.function_attributes.add(
            name="CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", driver_attribute=8,
            value=100000)
        big = cutune.Answer(response, offline=False, protos=answer._protos)
        gpu = launch.Gpu()
        sig = arrays.SIGNATURES["matmul"]
        arguments = launch.plan_arguments(big.launch, sig, {"M": 4096, "N": 4096, "K": 4096})
        plan = launch.Plan(gpu, big, arguments, big.cubin, "test")
        function = plan.function(gpu, 0)
        self.assertEqual(cupy.attributes, [(function.ptr, 8, attribute.value)])

    def test_arrays_on_another_device(self):
        client = cutune.Client(SHIPPED.address)
        x = random(64, 64)
        cupy.current_device = 1
        with self.assertRaises(cutune.InputError) as caught:
            client.transpose(x)
        self.assertIn("x is on GPU 0 but the current device is GPU 1", str(caught.exception))

    def test_memory_that_is_not_the_gpus(self):
        client = cutune.Client(SHIPPED.address)
        stray = Interface(random(64, 64), None)
        stray.__cuda_array_interface__["data"] = (0x40, False)
        with self.assertRaises(cutune.InputError) as caught:
            client.transpose(stray)
        self.assertIn("is not device memory", str(caught.exception))

    def test_nvrtc_refusing_the_source(self):
        cupy.fail_compile = "cutune_kernel.cu(12): error: boom"
        client = cutune.Client(NOWHERE, table=ARGS.shipped_table)
        with self.assertRaises(cutune.CompileError) as caught:
            client.transpose(random(64, 64))
        self.assertIn("boom", caught.exception.log)
        self.assertIn("NVRTC 13.0 refused the answer's source with -DCT_", str(caught.exception))

    def test_the_driver_refusing_the_module(self):
        cupy.fail_load = "CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available"
        client = cutune.Client(SHIPPED.address)
        with self.assertRaises(cutune.LaunchError) as caught:
            client.matmul(random(257, 1021), random(1021, 509))
        message = str(caught.exception)
        self.assertIn("loading matmul 257x509x1021 (", message)
        self.assertIn("answer for NVIDIA H200", message)
        self.assertIn("on GPU 0 (NVIDIA H200, sm_90) failed: CUDA_ERROR_NO_BINARY_FOR_GPU", message)

    def test_no_device(self):
        cupy.device_count = 0
        with self.assertRaises(cutune.NoGpuError) as caught:
            cutune.Client(SHIPPED.address).transpose(random(8, 8))
        self.assertIn("no CUDA device", str(caught.exception))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--cutuned", "--fake-worker", "--cli", "--shipped-tables", "--shipped-table"):
        parser.add_argument(flag, required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
