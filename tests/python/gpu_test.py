#!/usr/bin/env python3
"""The cutune package launching tuned kernels on a GPU (label gpu): matmul on 10 shapes
(odd and prime sizes, skinny, K-heavy, split-K answers) and transpose on 6, from a daemon's
cubins and offline from the shipped H200 table (the source compiled here with NVRTC), each
compared with numpy on fresh random inputs (float64 reference, relative L2 error <= 1e-4 for
matmul; transpose exact); torch tensors on torch's streams; a DLPack-only object; a split-K
answer launched on two streams at once; real arrays that break the checks. Exits 77 (ctest:
skipped) without CuPy or a GPU.

On a GPU host, with the build's binaries and build/python carried along:
    PYTHONPATH=client/python:BUILD/python python3 tests/python/gpu_test.py \\
        --cutuned BIN/cutuned --fake-worker BIN/fake-worker --cli BIN/cutune \\
        --shipped-tables tables --shipped-table tables/nvidia-h200.json \\
        --example examples/python/matmul_transpose.py
"""

import argparse
import os
import subprocess
import sys
import tempfile
import unittest

ARGS = None
NOWHERE = "unix:/nonexistent/cutuned.sock"
SKIPPED = 77

# matmul shapes are M, N, K (a is M×K, b is K×N). In the shipped H200 table 64x4096x4096 and
# 127x8192x4096 are EXACT with splitk 4 and 2, 1000x1000x1000 EXACT with splitk 2.
MATMUL_SHAPES = [(257, 509, 1021), (1000, 1000, 77), (64, 4096, 4096), (127, 8192, 4096),
                 (4096, 4096, 4096), (1, 1, 1), (33, 65, 17), (4097, 1023, 777),
                 (1000, 1000, 1000), (3001, 2003, 1009)]
TRANSPOSE_SHAPES = [(8191, 4097), (1, 1000), (1000, 1), (3000, 20000), (1023, 769), (4096, 4096)]
SPLIT_K = (64, 4096, 4096)


def rel_error(c, ref):
    return float(numpy.linalg.norm(c.astype(numpy.float64) - ref) / numpy.linalg.norm(ref))


class DLPackOnly:
    """A GPU array that offers DLPack and nothing else."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None, **kwargs):
        return self._array.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def setUpModule():
    global SERVER, CACHE
    from table_server import TableServer
    CACHE = tempfile.TemporaryDirectory(prefix="cutune-cubins-")
    os.environ["CUTUNE_CACHE_DIR"] = CACHE.name  # a cold NVRTC cache: offline compiles for real
    os.environ["CUTUNE_CLI"] = ARGS.cli
    SERVER = TableServer(ARGS.cutuned, ARGS.fake_worker, ARGS.shipped_tables)


def tearDownModule():
    SERVER.stop()
    CACHE.cleanup()


def random(shape):
    return cupy.random.standard_normal(shape, dtype=cupy.float32)


class Shapes:
    """The shapes through one client (the daemon's, or the offline one)."""

    def client(self):
        raise NotImplementedError

    def test_matmul_shapes(self):
        client = self.client()
        for m, n, k in MATMUL_SHAPES:
            with self.subTest(shape=(m, n, k)):
                a, b = random((m, k)), random((k, n))
                c = cupy.full((m, n), cupy.nan, dtype=cupy.float32)
                self.assertIs(client.matmul(a, b, out=c), c)
                ref = cupy.asnumpy(a).astype(numpy.float64) @ cupy.asnumpy(b).astype(numpy.float64)
                error = rel_error(cupy.asnumpy(c), ref)
                answer = client.get("matmul", (m, n, k), model=client.device_model())
                print(f"  matmul {m}x{n}x{k}: {answer.rung}, splitk {answer.params['splitk']}, "
                      f"{'offline' if answer.offline else 'daemon'}: rel. L2 error {error:.2e}")
                self.assertLessEqual(error, 1e-4)

    def test_transpose_shapes(self):
        client = self.client()
        for rows, cols in TRANSPOSE_SHAPES:
            with self.subTest(shape=(rows, cols)):
                x = random((rows, cols))
                t = client.transpose(x)  # out allocated (cupy.empty)
                self.assertIsInstance(t, cupy.ndarray)
                self.assertEqual(t.shape, (cols, rows))
                self.assertTrue(numpy.array_equal(cupy.asnumpy(t), cupy.asnumpy(x).T))

    def test_a_second_call_comes_from_the_cache(self):
        client = self.client()
        a, b = random((257, 1021)), random((1021, 509))
        client.matmul(a, b)
        before = (client.stats.rpcs, client.stats.offline_answers, client.stats.modules_loaded)
        c = client.matmul(a, b)
        self.assertEqual(before, (client.stats.rpcs, client.stats.offline_answers,
                                  client.stats.modules_loaded))
        ref = cupy.asnumpy(a).astype(numpy.float64) @ cupy.asnumpy(b).astype(numpy.float64)
        self.assertLessEqual(rel_error(cupy.asnumpy(c), ref), 1e-4)


class DaemonTest(Shapes, unittest.TestCase):
    def client(self):
        import cutune
        return cutune.Client(SERVER.address)

    def test_split_k_answer(self):
        import cutune
        client = cutune.Client(SERVER.address)
        answer = client.get("matmul", SPLIT_K, model=client.device_model())
        self.assertGreater(answer.params["splitk"], 1, answer)
        self.assertEqual(answer.concurrency, "one_module_per_stream")

    def test_split_k_on_two_streams_at_once(self):
        import cutune
        client = cutune.Client(SERVER.address)
        m, n, k = SPLIT_K
        streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(2)]
        inputs = [(random((m, k)), random((k, n))) for _ in streams]
        outs = [cupy.full((m, n), cupy.nan, dtype=cupy.float32) for _ in streams]
        cupy.cuda.Device().synchronize()
        for _ in range(20):  # interleaved, never waiting: the two streams overlap
            for stream, (a, b), c in zip(streams, inputs, outs):
                with stream:
                    client.matmul(a, b, out=c)
        for s in streams:
            s.synchronize()
        self.assertEqual(client.stats.modules_loaded, 2)  # one module per stream
        for (a, b), c in zip(inputs, outs):
            ref = cupy.asnumpy(a).astype(numpy.float64) @ cupy.asnumpy(b).astype(numpy.float64)
            self.assertLessEqual(rel_error(cupy.asnumpy(c), ref), 1e-4)

    def test_torch_tensors_on_torch_streams(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        import cutune
        client = cutune.Client(SERVER.address)
        for m, n, k in ((257, 509, 1021), SPLIT_K):
            a = torch.randn(m, k, device="cuda")
            b = torch.randn(k, n, device="cuda")
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                c = client.matmul(a, b)  # on `side`, allocated by torch
            side.synchronize()
            self.assertIsInstance(c, torch.Tensor)
            self.assertEqual(tuple(c.shape), (m, n))
            ref = a.double().cpu().numpy() @ b.double().cpu().numpy()
            self.assertLessEqual(rel_error(c.cpu().numpy(), ref), 1e-4)
        x = torch.randn(8191, 4097, device="cuda")
        t = client.transpose(x)
        self.assertTrue(torch.equal(t, x.t()))
        with self.assertRaises(cutune.InputError) as caught:
            client.transpose(x.t())
        self.assertIn(".contiguous()", str(caught.exception))
        with self.assertRaises(cutune.InputError) as caught:
            client.transpose(torch.randn(4, 4))
        self.assertIn("torch tensor on cpu", str(caught.exception))
        with self.assertRaises(cutune.InputError) as caught:
            client.transpose(torch.randn(4, 4, device="cuda", dtype=torch.float64))
        self.assertIn("float64", str(caught.exception))

    def test_dlpack_only_object(self):
        import cutune
        client = cutune.Client(SERVER.address)
        x = random((1023, 769))
        t = client.transpose(DLPackOnly(x))
        self.assertTrue(numpy.array_equal(cupy.asnumpy(t), cupy.asnumpy(x).T))

    def test_real_arrays_that_break_the_checks(self):
        import cutune
        client = cutune.Client(SERVER.address)
        misaligned = cupy.zeros(64 * 64 + 1, dtype=cupy.float32)[1:].reshape(64, 64)
        with self.assertRaises(cutune.InputError) as caught:
            client.transpose(misaligned)
        self.assertIn("4 bytes past a 16-byte boundary", str(caught.exception))
        with self.assertRaises(cutune.InputError) as caught:
            client.transpose(cupy.zeros((64, 64), dtype=cupy.float32)[:, ::2])
        self.assertIn("not C-contiguous", str(caught.exception))
        with self.assertRaises(cutune.InputError) as caught:
            client.transpose(numpy.zeros((64, 64), dtype=numpy.float32))
        self.assertIn("host memory", str(caught.exception))


class OfflineTest(Shapes, unittest.TestCase):
    def client(self):
        import cutune
        return cutune.Client(NOWHERE, table=ARGS.shipped_table)

    def test_offline_compiles_the_source(self):
        client = self.client()
        a, b = random((1000, 77)), random((77, 1000))
        client.matmul(a, b)
        answer = client.get("matmul", (1000, 1000, 77), model=client.device_model())
        self.assertTrue(answer.offline)
        self.assertEqual(answer.cubin, b"")  # compiled here from answer.source
        self.assertTrue(os.listdir(os.path.join(CACHE.name, "python")))  # kept for next time

    def test_example(self):
        done = subprocess.run([sys.executable, ARGS.example, "--table", ARGS.shipped_table,
                               "--server", NOWHERE], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        print(done.stdout)
        self.assertIn("relative error", done.stdout)
        self.assertIn("exact: True", done.stdout)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--cutuned", "--fake-worker", "--cli", "--shipped-tables", "--shipped-table",
                 "--example"):
        parser.add_argument(flag, required=True)
    ARGS, rest = parser.parse_known_args()
    try:
        import cupy
        import numpy
        if cupy.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError("no CUDA device")
    except Exception as e:
        print(f"SKIPPED: the GPU test needs CuPy and a GPU ({type(e).__name__}: {e})")
        sys.exit(SKIPPED)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
