#!/usr/bin/python3
"""A cutune client in Python (Debian's python3-grpcio), proving the API works from another language.

Generates stubs from proto/cutune/v1/cutune.proto (and cli.proto) with protoc and grpc_python_plugin, starts the
real cutuned as a table server (no GPU: a worker that reports "no CUDA driver"; the fixture tables
imported with --tables), and calls ListFamilies, ListDevices, GetBestConfig, ExportTable and an
RPC that must fail with NOT_FOUND; and reads `cutune ... --json` back with json_format (the CLI
prints protobuf's JSON mapping). Run by ctest (label service) with /usr/bin/python3.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ARGS = None


def generate_stubs(out_dir):
    subprocess.run(
        [ARGS.protoc, f"-I{ARGS.proto_dir}", f"--python_out={out_dir}", f"--grpc_out={out_dir}",
         f"--plugin=protoc-gen-grpc={ARGS.grpc_python_plugin}",
         os.path.join(ARGS.proto_dir, "cutune/v1/cutune.proto"),
         os.path.join(ARGS.proto_dir, "cutune/v1/cli.proto")],
        check=True)
    sys.path.insert(0, out_dir)


class TableServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="cutune-py-")
        generate_stubs(cls.tmp.name)
        global grpc, json_format, pb, pb_grpc, cli_pb
        import grpc
        from google.protobuf import json_format
        from cutune.v1 import cli_pb2 as cli_pb
        from cutune.v1 import cutune_pb2 as pb
        from cutune.v1 import cutune_pb2_grpc as pb_grpc

        worker = os.path.join(cls.tmp.name, "no-gpu-worker")
        with open(worker, "w") as f:
            f.write(f'#!/bin/sh\nexec {ARGS.fake_worker} "$@" --fail-start\n')
        os.chmod(worker, 0o755)
        socket = os.path.join(cls.tmp.name, "cutuned.sock")
        cls.server = f"unix:{socket}"
        cls.log = open(os.path.join(cls.tmp.name, "cutuned.log"), "w+")
        cls.daemon = subprocess.Popen(
            [ARGS.cutuned, "--listen", f"unix:{socket}", "--db", os.path.join(cls.tmp.name, "t.db"),
             "--cache-dir", os.path.join(cls.tmp.name, "cache"), "--worker", worker,
             "--tables", ARGS.tables],
            stdout=cls.log, stderr=subprocess.STDOUT)
        cls.channel = grpc.insecure_channel(f"unix:{socket}")
        try:
            grpc.channel_ready_future(cls.channel).result(timeout=30)
        except grpc.FutureTimeoutError:
            cls.tearDownClass()
            raise
        cls.stub = pb_grpc.TunerStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        cls.daemon.send_signal(signal.SIGTERM)
        code = cls.daemon.wait(timeout=15)
        cls.log.seek(0)
        log = cls.log.read()
        cls.log.close()
        cls.tmp.cleanup()
        if code != 0:
            raise AssertionError(f"cutuned exited {code}:\n{log}")

    def test_list_families(self):
        reply = self.stub.ListFamilies(pb.ListFamiliesRequest(), timeout=10)
        families = {f.name: f for f in reply.families}
        self.assertEqual(set(families), {"transpose", "matmul"})
        self.assertEqual(list(families["transpose"].dims), ["rows", "cols"])
        self.assertEqual(list(families["matmul"].dims), ["M", "N", "K"])
        self.assertIn("tile", {p.name for p in families["transpose"].parameters})
        self.assertEqual(families["transpose"].default_params["tile"], 32)
        self.assertGreater(families["transpose"].space_size, 100)

    def test_list_devices_on_a_table_server(self):
        reply = self.stub.ListDevices(pb.ListDevicesRequest(), timeout=10)
        self.assertEqual(len(reply.devices), 0)
        self.assertIn("no CUDA driver", reply.no_gpu_reason)
        self.assertRegex(reply.nvrtc_version, r"^\d+\.\d+$")

    def lookup(self, shape, **kwargs):
        return self.stub.GetBestConfig(
            pb.GetBestConfigRequest(
                problem=pb.Problem(family="transpose", shape=shape, dtype="f32"),
                device=pb.DeviceSelector(model="NVIDIA H200"), **kwargs),
            timeout=10)

    def test_get_best_config_exact(self):
        reply = self.lookup([8192, 8192], include_source=True)
        self.assertEqual(reply.rung, pb.GetBestConfigResponse.RUNG_EXACT)
        self.assertEqual(reply.device_model, "NVIDIA H200")
        self.assertEqual(dict(reply.params),
                         {"minb": 0, "pad": 1, "rows": 8, "smem": 1, "swizzle": 0, "tile": 64,
                          "vec": 1})
        self.assertAlmostEqual(reply.time_us, 131.07)
        self.assertIn("-DCT_TILE=64", reply.compile_options)
        self.assertEqual(list(reply.geometry.block), [64, 8, 1])
        self.assertIn("__global__", reply.source)
        # The fixture was "measured" with another kernel source: flagged, not hidden.
        self.assertTrue(any("kernel source hash differs" in s for s in reply.stale), reply.stale)

    def test_get_best_config_nearest_shape(self):
        reply = self.lookup([4000, 4096])
        self.assertEqual(reply.rung, pb.GetBestConfigResponse.RUNG_NEAREST_SHAPE)
        self.assertEqual(list(reply.tuned_shape), [4096, 4096])
        self.assertEqual(reply.params["tile"], 32)
        self.assertGreater(reply.shape_distance, 0)

    def test_export_table(self):
        reply = self.stub.ExportTable(pb.ExportTableRequest(device_model="NVIDIA H200"), timeout=10)
        table = json.loads(reply.json)
        self.assertEqual(table["format"], "cutune-table")
        self.assertEqual(table["version"], 1)
        [device] = table["devices"]
        self.assertEqual(device["model"], "NVIDIA H200")
        self.assertEqual(sorted(tuple(w["shape"]) for w in device["winners"]),
                         [(4096, 4096), (8192, 8192)])
        with open(os.path.join(ARGS.tables, "fixture_h200.json")) as f:
            self.assertEqual(reply.json, f.read())

    def cutune(self, *args):
        run = subprocess.run([ARGS.cutune, *args], capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout

    def test_cli_json_parses_back_into_the_messages(self):
        server = ["--server", self.server, "--json"]
        answer = json_format.Parse(
            self.cutune("get", "transpose", "--shape", "8192x8192", "--model", "NVIDIA H200",
                        *server),
            pb.GetBestConfigResponse())
        self.assertEqual(answer, self.lookup([8192, 8192]))
        devices = json_format.Parse(self.cutune("devices", *server), pb.ListDevicesResponse())
        self.assertEqual(devices, self.stub.ListDevices(pb.ListDevicesRequest(), timeout=10))
        space = json_format.Parse(self.cutune("space", "show", "matmul", "--json"),
                                  cli_pb.SpaceReport())
        families = self.stub.ListFamilies(pb.ListFamiliesRequest(), timeout=10).families
        self.assertEqual(space.family, next(f for f in families if f.name == "matmul"))
        self.assertGreater(space.valid_size, 0)

    def test_errors_carry_grpc_codes(self):
        with self.assertRaises(grpc.RpcError) as caught:
            self.stub.GetBestConfig(
                pb.GetBestConfigRequest(problem=pb.Problem(family="fft", shape=[64], dtype="f32")),
                timeout=10)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertIn("unknown kernel family 'fft'", caught.exception.details())
        with self.assertRaises(grpc.RpcError) as caught:
            self.stub.CancelJob(pb.CancelJobRequest(job_id="job-none"), timeout=10)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.NOT_FOUND)
        with self.assertRaises(grpc.RpcError) as caught:
            self.stub.StartTuning(
                pb.StartTuningRequest(problem=pb.Problem(family="transpose", shape=[64, 64])),
                timeout=10)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)
        with self.assertRaises(grpc.RpcError) as caught:
            self.lookup([64, 64, 64])
        self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--cutuned", "--cutune", "--fake-worker", "--protoc", "--grpc-python-plugin",
                 "--proto-dir", "--tables"):
        parser.add_argument(flag, required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
