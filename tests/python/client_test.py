#!/usr/bin/python3
"""The cutune Python package without a GPU: answers from a real cutuned table server (fake
worker, no GPU), the in-process cache, the offline fallback through `cutune get --table`,
fresh_only, errors, and every input check with fake arrays that carry only a
__cuda_array_interface__ (no memory behind them: the checks must fire before any GPU call).
Run by ctest (label python) with PYTHONPATH=client/python:build/python."""

import argparse
import json
import os
import subprocess
import sys
import unittest

import cutune
from cutune import arrays, launch

from support import environment
from table_server import TableServer

ARGS = None
H200 = "NVIDIA H200"
H100 = "NVIDIA H100 80GB HBM3"
NOWHERE = "unix:/nonexistent/cutuned.sock"  # nothing listens there: offline at once


class FakeArray:
    """A __cuda_array_interface__ and nothing else. Pointers are far apart so that no two
    fakes overlap unless a test says so."""

    _next = 0x7F0000000000

    def __init__(self, shape, typestr="<f4", strides=None, ptr=None, readonly=False):
        if ptr is None:
            ptr = FakeArray._next
            FakeArray._next += 1 << 36
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (ptr, readonly), "strides": strides,
                                         "version": 3}


class HostArray:
    """What numpy looks like to DLPack: host memory."""

    def __dlpack__(self, stream=None):
        raise AssertionError("must not be converted")

    def __dlpack_device__(self):
        return (1, 0)


def cupy_importable():
    try:
        import cupy  # noqa: F401
        return True
    except Exception:
        return False


def setUpModule():
    global SHIPPED, FIXTURE
    SHIPPED = TableServer(ARGS.cutuned, ARGS.fake_worker, ARGS.shipped_tables)
    FIXTURE = TableServer(ARGS.cutuned, ARGS.fake_worker, ARGS.fixture_tables,
                          read_tokens=["reader-token"])


def tearDownModule():
    SHIPPED.stop()
    FIXTURE.stop()


class GetTest(unittest.TestCase):
    def test_get_answers_with_the_launch_contract(self):
        client = cutune.Client(SHIPPED.address, model=H200)
        answer = client.get("matmul", (64, 4096, 4096))
        self.assertIsInstance(answer, cutune.Answer)
        self.assertFalse(answer.offline)
        self.assertEqual(answer.rung, "exact")
        self.assertEqual((answer.family, answer.shape, answer.dtype),
                         ("matmul", (64, 4096, 4096), "f32"))
        self.assertEqual(answer.device_model, H200)
        self.assertEqual(answer.kernel, "cutune_kernel")
        splitk = answer.params["splitk"]
        self.assertGreater(splitk, 1)  # K 64 times M: the shipped winner splits K
        self.assertEqual(answer.concurrency, "one_module_per_stream")
        self.assertIn("--gpu-architecture=sm_90", answer.compile_options)
        self.assertIn(f"-DCT_SPLITK={splitk}", answer.compile_options)
        self.assertEqual(len(answer.geometry.grid), 3)
        self.assertEqual(len(answer.geometry.block), 3)
        self.assertTrue(answer.measured_at_asked_shape)
        self.assertGreater(answer.time_us, 0)
        contract = answer.launch
        self.assertEqual(contract.pointer_alignment, 16)
        self.assertEqual([(a.name, list(a.extent)) for a in contract.arguments],
                         [("A", ["M", "K"]), ("B", ["K", "N"]), ("C", ["M", "N"]), ("M", ["M"]),
                          ("N", ["N"]), ("K", ["K"])])
        self.assertEqual(answer.response.problem.shape, [64, 4096, 4096])
        self.assertIn("exact", repr(answer))

    def test_transpose_answers_and_a_predicted_rung(self):
        client = cutune.Client(SHIPPED.address)
        answer = client.get("transpose", "8191x4097", model=H200)
        self.assertIn(answer.rung, ("exact", "predicted"))
        self.assertEqual(answer.concurrency, "any")
        self.assertEqual([list(a.extent) for a in answer.launch.arguments],
                         [["rows", "cols"], ["cols", "rows"], ["rows"], ["cols"]])
        predicted = client.get("matmul", (3000, 500, 700), model=H200)
        self.assertEqual(predicted.rung, "predicted")
        self.assertGreaterEqual(predicted.expected_slowdown, 1.0)
        self.assertGreater(predicted.predicted_time_us, 0)
        self.assertFalse(predicted.measured_at_asked_shape)

    def test_source_and_cubin_on_request(self):
        client = cutune.Client(SHIPPED.address, model=H200)
        plain = client.get("transpose", (1000, 1000))
        self.assertEqual((plain.source, plain.cubin), ("", b""))
        full = client.get("transpose", (1000, 1000), include_source=True, include_cubin=True)
        self.assertIn("__global__", full.source)
        self.assertEqual(full.cubin[:4], b"\x7fELF")
        # The fuller answer replaced the cached one: asking without extras costs no RPC.
        rpcs = client.stats.rpcs
        self.assertIs(client.get("transpose", (1000, 1000)), full)
        self.assertEqual(client.stats.rpcs, rpcs)

    def test_a_repeated_get_costs_no_rpc(self):
        server = TableServer(ARGS.cutuned, ARGS.fake_worker, ARGS.shipped_tables)
        client = cutune.Client(server.address, model=H200)
        try:
            first = client.get("matmul", (1000, 1000, 77))
            self.assertEqual((client.stats.rpcs, client.stats.cache_hits), (1, 0))
        finally:
            server.stop()
        # The daemon is gone: only the cache can answer.
        again = client.get("matmul", (1000, 1000, 77))
        self.assertIs(again, first)
        self.assertEqual((client.stats.rpcs, client.stats.cache_hits), (1, 1))
        with self.assertRaises(cutune.UnavailableError):
            client.get("matmul", (1000, 1000, 78))

    def test_token_from_argument_and_environment(self):
        with environment(CUTUNE_TOKEN=None):
            with self.assertRaises(cutune.ServerError) as caught:
                cutune.Client(FIXTURE.address).get("transpose", (8192, 8192), model=H200)
        self.assertEqual(caught.exception.code, "UNAUTHENTICATED")
        self.assertIn("Bearer", str(caught.exception))
        answer = cutune.Client(FIXTURE.address, token="reader-token").get(
            "transpose", (8192, 8192), model=H200)
        self.assertEqual(answer.rung, "exact")
        with environment(CUTUNE_TOKEN="reader-token", CUTUNE_SERVER=FIXTURE.address):
            client = cutune.Client()
            self.assertEqual(client.server, FIXTURE.address)
            self.assertEqual(client.get("transpose", (8192, 8192), model=H200).rung, "exact")

    def test_default_server(self):
        with environment(CUTUNE_SERVER=None):
            self.assertEqual(cutune.Client().server, "127.0.0.1:50051")


class ErrorTest(unittest.TestCase):
    def test_unknown_family_names_the_known_ones(self):
        with self.assertRaises(cutune.NotFoundError) as caught:
            cutune.Client(SHIPPED.address).get("fft", (64,), model=H200)
        self.assertEqual(caught.exception.code, "NOT_FOUND")
        self.assertIn("unknown kernel family 'fft' (known: transpose, matmul)",
                      str(caught.exception))
        self.assertIsInstance(caught.exception, cutune.ServerError)

    def test_bad_shapes(self):
        client = cutune.Client(SHIPPED.address, model=H200)
        with self.assertRaises(cutune.ServerError) as caught:
            client.get("matmul", (64, 64))
        self.assertEqual(caught.exception.code, "INVALID_ARGUMENT")
        self.assertIn("expected 3 dimensions", str(caught.exception))
        for bad in ("64xx64", (0, 64), (), "sixty"):
            with self.assertRaises(cutune.InputError):
                client.get("transpose", bad)
        self.assertEqual(client.stats.rpcs, 1)

    def test_unreachable_daemon_without_a_table(self):
        client = cutune.Client(NOWHERE)
        with self.assertRaises(cutune.UnavailableError) as caught:
            client.get("transpose", (64, 64), model=H200)
        message = str(caught.exception)
        self.assertIn(f"cannot reach cutuned at {NOWHERE}", message)
        self.assertIn("table=FILE", message)

    def test_missing_table_file(self):
        with self.assertRaises(cutune.OfflineError) as caught:
            cutune.Client(NOWHERE, table="/nonexistent/h200.json")
        self.assertIn("does not exist", str(caught.exception))
        with self.assertRaises(cutune.OfflineError) as caught:
            cutune.Client(NOWHERE, table="/nonexistent/tables/")
        self.assertIn("table file or directory", str(caught.exception))

    def test_fresh_only_refuses_a_stale_answer(self):
        # The fixture table was "measured" with another kernel source.
        client = cutune.Client(FIXTURE.address, token="reader-token", model=H200,
                               fresh_only=True)
        with self.assertRaises(cutune.StaleAnswerError) as caught:
            client.get("transpose", (8192, 8192))
        message = str(caught.exception)
        self.assertIn("fresh_only=True refuses", message)
        self.assertIn("kernel source hash differs", message)
        self.assertEqual(caught.exception.answer.rung, "exact")
        self.assertTrue(caught.exception.stale)
        # Refused again from the cache, and taken without fresh_only.
        with self.assertRaises(cutune.StaleAnswerError):
            client.get("transpose", (8192, 8192))
        self.assertEqual(client.stats.rpcs, 1)
        lenient = cutune.Client(FIXTURE.address, token="reader-token", model=H200)
        self.assertTrue(lenient.get("transpose", (8192, 8192)).stale)

    def test_fresh_answers_pass_fresh_only(self):
        answer = cutune.Client(SHIPPED.address, model=H200, fresh_only=True).get(
            "matmul", (4096, 4096, 4096))
        self.assertEqual(answer.stale, [])


class OfflineTest(unittest.TestCase):
    def test_offline_answers_as_the_table_server_does(self):
        online = cutune.Client(SHIPPED.address, model=H200)
        with environment(CUTUNE_CLI=ARGS.cli):
            offline = cutune.Client(NOWHERE, table=ARGS.shipped_table, model=H200)
            for family, shape in (("matmul", (64, 4096, 4096)), ("matmul", (257, 509, 1021)),
                                  ("matmul", (3000, 500, 700)), ("transpose", (8191, 4097)),
                                  ("transpose", (1, 1000))):
                a, b = offline.get(family, shape), online.get(family, shape)
                self.assertTrue(a.offline)
                self.assertEqual((a.rung, a.params, a.geometry, a.compile_options),
                                 (b.rung, b.params, b.geometry, b.compile_options),
                                 f"{family} {shape}")
                self.assertEqual(a.launch, b.launch)
                self.assertEqual(a.shape, b.shape)
            self.assertEqual(offline.stats.offline_answers, 5)
            self.assertEqual(offline.get("matmul", (64, 4096, 4096)).rung, "exact")
            self.assertEqual(offline.stats.offline_answers, 5)  # from the cache

    def test_offline_from_the_tables_directory(self):
        # tables/ holds a file per GPU model. Offline from the directory, an H100 gets what the
        # table server holding the directory gives it: its own transposes, and its matmuls from
        # whichever model holds them.
        online = cutune.Client(SHIPPED.address, model=H100)
        with environment(CUTUNE_CLI=ARGS.cli):
            offline = cutune.Client(NOWHERE, table=ARGS.shipped_tables, model=H100)
            for family, shape, rung in (("transpose", (8191, 4097), "exact"),
                                        ("matmul", (3000, 500, 700), None)):
                a, b = offline.get(family, shape), online.get(family, shape)
                self.assertTrue(a.offline)
                if rung:
                    self.assertEqual(a.rung, rung, f"{family} {shape}")
                self.assertNotEqual(a.rung, "family_default", f"{family} {shape}")
                self.assertEqual((a.rung, a.params, a.geometry, a.compile_options),
                                 (b.rung, b.params, b.geometry, b.compile_options),
                                 f"{family} {shape}")

    def test_offline_never_asks_the_daemon(self):
        with environment(CUTUNE_CLI=ARGS.cli):
            client = cutune.Client(SHIPPED.address, table=ARGS.shipped_table, offline=True,
                                   model=H200)
            answer = client.get("matmul", (64, 4096, 4096))
        self.assertTrue(answer.offline)
        self.assertEqual((client.stats.rpcs, client.stats.offline_answers), (0, 1))
        with self.assertRaises(cutune.OfflineError) as caught:
            cutune.Client(offline=True)
        self.assertIn("offline=True needs table=FILE", str(caught.exception))

    def test_offline_source_and_cubin(self):
        with environment(CUTUNE_CLI=ARGS.cli):
            client = cutune.Client(NOWHERE, table=ARGS.shipped_table, model=H200)
            answer = client.get("transpose", (4096, 4096), include_source=True,
                                include_cubin=True)
        self.assertIn("__global__", answer.source)
        self.assertEqual(answer.cubin[:4], b"\x7fELF")

    def test_offline_errors(self):
        with environment(CUTUNE_CLI=ARGS.cli):
            client = cutune.Client(NOWHERE, table=ARGS.shipped_table, model=H200)
            with self.assertRaises(cutune.NotFoundError) as caught:
                client.get("fft", (64,))
        self.assertIn("unknown kernel family 'fft'", str(caught.exception))
        self.assertIn("offline", str(caught.exception))

    def test_offline_fresh_only(self):
        with environment(CUTUNE_CLI=ARGS.cli):
            client = cutune.Client(NOWHERE, table=ARGS.fixture_table, model=H200,
                                   fresh_only=True)
            with self.assertRaises(cutune.StaleAnswerError) as caught:
                client.get("transpose", (8192, 8192))
        self.assertIn("the table", str(caught.exception))


class CliDiscoveryTest(unittest.TestCase):
    def test_no_cli_is_a_clear_error(self):
        with environment(CUTUNE_CLI="/nonexistent/cutune"):
            client = cutune.Client(NOWHERE, table=ARGS.shipped_table, model=H200)
            with self.assertRaises(cutune.OfflineError) as caught:
                client.get("transpose", (64, 64))
        self.assertIn("$CUTUNE_CLI='/nonexistent/cutune' is not an executable",
                      str(caught.exception))

    def test_the_build_trees_cli_is_found(self):
        recorded = []
        for d in cutune.__path__:
            if os.path.isfile(os.path.join(d, "build_tree.json")):
                with open(os.path.join(d, "build_tree.json")) as f:
                    recorded.append(os.path.realpath(json.load(f)["cli"]))
        if os.path.realpath(ARGS.cli) not in recorded:  # e.g. a bundle carried to a GPU host
            self.skipTest(f"{ARGS.cli} is not the CLI of the build tree on PYTHONPATH")
        with environment(CUTUNE_CLI=None):
            self.assertEqual(os.path.realpath(cutune.find_cli()), os.path.realpath(ARGS.cli))


class InputCheckTest(unittest.TestCase):
    """Bad arrays are refused with a message saying what is wrong, before any RPC (stats) and
    before any GPU call (the fakes have no memory; CuPy is not needed)."""

    def setUp(self):
        self.client = cutune.Client(SHIPPED.address, model=H200)

    def refused(self, call, *args, **kwargs):
        with self.assertRaises(cutune.InputError) as caught:
            call(*args, **kwargs)
        return str(caught.exception)

    def test_dtype(self):
        message = self.refused(self.client.matmul, FakeArray((8, 8), "<f8"), FakeArray((8, 8)))
        self.assertIn("a has dtype float64", message)
        self.assertIn("takes float32", message)
        message = self.refused(self.client.transpose, FakeArray((8, 8), "<i4"))
        self.assertIn("x has dtype int32", message)
        self.assertIn("big-endian", self.refused(self.client.transpose, FakeArray((8, 8), ">f4")))
        self.assertEqual(self.client.stats.rpcs, 0)

    def test_rank(self):
        message = self.refused(self.client.matmul, FakeArray((2, 8, 8)), FakeArray((8, 8)))
        self.assertIn("a has 3 dimensions (shape (2, 8, 8))", message)
        self.assertIn("a is M×K, b is K×N", message)
        self.assertIn("1 dimension (", self.refused(self.client.transpose, FakeArray((8,))))
        self.assertEqual(self.client.stats.rpcs, 0)

    def test_empty(self):
        self.assertIn("x is empty", self.refused(self.client.transpose, FakeArray((0, 8))))

    def test_inner_dimensions(self):
        message = self.refused(self.client.matmul, FakeArray((100, 50)), FakeArray((60, 20)))
        self.assertIn("a is 100x50 and b is 60x20", message)
        self.assertIn("K is 50 in a (axis 1) and 60 in b (axis 0)", message)
        self.assertEqual(self.client.stats.rpcs, 0)

    def test_strides(self):
        transposed = FakeArray((64, 32), strides=(4, 256))
        message = self.refused(self.client.transpose, transposed)
        self.assertIn("x is not C-contiguous (a transposed, column-major view)", message)
        self.assertIn("strides (4, 256) bytes", message)
        self.assertIn("(128, 4)", message)
        every_other_row = FakeArray((64, 32), strides=(256, 4))
        self.assertIn("not C-contiguous", self.refused(self.client.transpose, every_other_row))
        # Dense strides given explicitly, and any stride over an extent of 1, are fine
        # (the check passes, so these fail later, at the GPU or the alignment check).
        for fine in (FakeArray((64, 32), strides=(128, 4)), FakeArray((1, 32), strides=(8, 4))):
            arrays.check_array(arrays.inspect("x", fine), arrays.SIGNATURES["transpose"])

    def test_out(self):
        a, b = FakeArray((100, 50)), FakeArray((50, 20))
        message = self.refused(self.client.matmul, a, b, out=FakeArray((20, 100)))
        self.assertIn("out has shape (20, 100)", message)
        self.assertIn("writes 100x20 (M×N)", message)
        self.assertIn("float16", self.refused(self.client.matmul, a, b,
                                              out=FakeArray((100, 20), "<f2")))
        self.assertIn("out is read-only", self.refused(self.client.matmul, a, b,
                                                        out=FakeArray((100, 20), readonly=True)))
        x = FakeArray((64, 64))
        inside = FakeArray((64, 64), ptr=x.__cuda_array_interface__["data"][0] + 1024)
        self.assertIn("out overlaps x", self.refused(self.client.transpose, x, out=inside))
        self.assertEqual(self.client.stats.rpcs, 0)

    def test_not_gpu_arrays(self):
        self.assertIn("x is a builtins.list, not a GPU array",
                      self.refused(self.client.transpose, [[1.0]]))
        self.assertIn("is in host memory", self.refused(self.client.transpose, HostArray()))
        bad = type("Bad", (), {"__cuda_array_interface__": {"shape": (2, 2)}})()
        self.assertIn("not a valid interface dict", self.refused(self.client.transpose, bad))

    def test_alignment_per_the_contract(self):
        # A view that starts one float into a row: the contract's 16-byte alignment is broken.
        base = FakeArray((64, 64)).__cuda_array_interface__["data"][0]
        message = self.refused(self.client.transpose, FakeArray((63, 64), ptr=base + 4))
        self.assertIn("x's data pointer", message)
        self.assertIn("4 bytes past a 16-byte boundary", message)
        self.assertIn("sliced view", message)
        self.assertEqual(self.client.stats.rpcs, 1)  # the contract came from the daemon

    def test_good_fakes_need_a_gpu(self):
        if cupy_importable():
            self.skipTest("CuPy is importable here: the fakes would reach the GPU checks")
        with self.assertRaises(cutune.NoGpuError) as caught:
            self.client.matmul(FakeArray((257, 1021)), FakeArray((1021, 509)))
        self.assertIn("needs CuPy", str(caught.exception))


class ContractTest(unittest.TestCase):
    """Which kernel argument each array fills comes from the answer's contract."""

    def setUp(self):
        self.client = cutune.Client(SHIPPED.address, model=H200)

    def test_matmul_arguments(self):
        answer = self.client.get("matmul", (257, 509, 1021))
        plan = launch.plan_arguments(answer.launch, arrays.SIGNATURES["matmul"],
                                     {"M": 257, "N": 509, "K": 1021})
        self.assertEqual(plan, [("pointer", 0), ("pointer", 1), ("pointer", 2),
                                ("value", "int32", 257), ("value", "int32", 509),
                                ("value", "int32", 1021)])

    def test_transpose_arguments(self):
        answer = self.client.get("transpose", (8191, 4097))
        plan = launch.plan_arguments(answer.launch, arrays.SIGNATURES["transpose"],
                                     {"rows": 8191, "cols": 4097})
        self.assertEqual(plan, [("pointer", 0), ("pointer", 1), ("value", "int32", 8191),
                                ("value", "int32", 4097)])

    def test_a_contract_this_client_cannot_fill(self):
        answer = self.client.get("matmul", (64, 64, 64))
        sig, dims = arrays.SIGNATURES["matmul"], {"M": 64, "N": 64, "K": 64}
        swapped = type(answer.launch)()
        swapped.CopyFrom(answer.launch)
        swapped.arguments[0].extent[:] = ["K", "M"]
        with self.assertRaises(cutune.ContractError) as caught:
            launch.plan_arguments(swapped, sig, dims)
        self.assertIn("passes A as K×M but this client fills it with a, M×K", str(caught.exception))
        wide = type(answer.launch)()
        wide.CopyFrom(answer.launch)
        wide.arguments[3].type = "double"
        with self.assertRaises(cutune.ContractError) as caught:
            launch.plan_arguments(wide, sig, dims)
        self.assertIn("passed as 'double'", str(caught.exception))


class ExampleTest(unittest.TestCase):
    def test_example_runs_up_to_the_gpu(self):
        done = subprocess.run(
            [sys.executable, ARGS.example, "--server", SHIPPED.address, "--model", H200],
            capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("matmul 1000x1000x77", done.stdout)
        self.assertIn("transpose 8191x4097", done.stdout)
        if not cupy_importable():
            self.assertIn("no GPU here", done.stdout)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--cutuned", "--fake-worker", "--cli", "--shipped-tables", "--shipped-table",
                 "--fixture-tables", "--fixture-table", "--example"):
        parser.add_argument(flag, required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
