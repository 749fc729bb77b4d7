#!/usr/bin/python3
"""`pip install ./client/python` works from a fresh checkout: the package directory and the
.proto are copied into an empty directory laid out as a clone, installed into a new virtual
environment (system site packages for grpcio, protobuf and setuptools; no network), and the
installed package, imported from outside any source or build tree, answers a table server."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from table_server import TableServer

ARGS = None

CHECK = """
import os, sys, cutune
assert os.path.realpath(cutune.__file__).startswith(os.path.realpath(sys.prefix)), cutune.__file__
answer = cutune.Client(sys.argv[1], model="NVIDIA H200").get("matmul", (64, 4096, 4096))
print(answer.rung, answer.params["splitk"] > 1, answer.concurrency)  # the shipped winner splits K
"""


class InstallTest(unittest.TestCase):
    def test_pip_install_from_a_fresh_checkout(self):
        with tempfile.TemporaryDirectory(prefix="cutune-install-") as tmp:
            clone = os.path.join(tmp, "clone")
            shutil.copytree(os.path.join(ARGS.source_dir, "client", "python"),
                            os.path.join(clone, "client", "python"),
                            ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
            shutil.copytree(os.path.join(ARGS.source_dir, "proto"), os.path.join(clone, "proto"))
            venv = os.path.join(tmp, "venv")
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv],
                           check=True)
            python = os.path.join(venv, "bin", "python")
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            install = subprocess.run(
                [python, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                 "--no-index", "--quiet", "./client/python"],
                cwd=clone, env=env, capture_output=True, text=True)
            self.assertEqual(install.returncode, 0, install.stdout + install.stderr)
            wheel_files = subprocess.run(
                [python, "-m", "pip", "show", "--files", "cutune"], env=env,
                capture_output=True, text=True, check=True).stdout
            self.assertIn("cutune/cutune_v1.desc", wheel_files)
            server = TableServer(ARGS.cutuned, ARGS.fake_worker, ARGS.shipped_tables)
            try:
                done = subprocess.run([python, "-c", CHECK, server.address], cwd=tmp, env=env,
                                      capture_output=True, text=True, timeout=60)
            finally:
                server.stop()
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(done.stdout.split(), ["exact", "True", "one_module_per_stream"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    for flag in ("--cutuned", "--fake-worker", "--cli", "--source-dir", "--shipped-tables"):
        parser.add_argument(flag, required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
