"""The wheel's build hook: protoc writes the descriptor set of cutune.proto into the package
(cutune/cutune_v1.desc), from which cutune builds its message classes at import. protoc is taken
from $PROTOC, else PATH, else grpc_tools (python -m grpc_tools.protoc); the .proto from
$CUTUNE_PROTO_DIR, else the checkout this directory is in (../../proto)."""

import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = "cutune/v1/cutune.proto"


def proto_dir():
    d = os.environ.get("CUTUNE_PROTO_DIR") or os.path.join(HERE, "..", "..", "proto")
    if not os.path.isfile(os.path.join(d, PROTO)):
        sys.exit(f"cutune: {PROTO} is not under {os.path.abspath(d)}: build the package from a "
                 "cutune checkout (pip install ./client/python) or set CUTUNE_PROTO_DIR")
    return d


def protoc():
    path = os.environ.get("PROTOC") or shutil.which("protoc")
    if path:
        return [path]
    try:
        import grpc_tools.protoc  # noqa: F401
    except ImportError:
        sys.exit("cutune: building the package needs protoc (on PATH or $PROTOC) or grpcio-tools")
    return [sys.executable, "-m", "grpc_tools.protoc"]


class BuildPy(build_py):
    def run(self):
        super().run()
        out = os.path.join(self.build_lib, "cutune", "cutune_v1.desc")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.run(protoc() + [f"-I{proto_dir()}", "--include_imports",
                                   f"--descriptor_set_out={out}", PROTO], check=True)


setup(cmdclass={"build_py": BuildPy})
