"""cutune: answers from the cutune kernel autotuner, and its kernels launched on GPU arrays.

    import cupy, cutune
    client = cutune.Client(table="tables/nvidia-h200.json")   # daemon, else this table offline
    c = client.matmul(cupy.random.rand(1000, 77, dtype=cupy.float32),
                      cupy.random.rand(77, 1000, dtype=cupy.float32))
    client.get("matmul", (4096, 4096, 4096), model="NVIDIA H200").rung   # "exact"

See client/python/README.md.
"""

import pkgutil

# A build tree's python/cutune/ (the descriptor set CMake generates) joins this package's path
# when it is on sys.path too: PYTHONPATH=client/python:build/python.
__path__ = pkgutil.extend_path(__path__, __name__)

from .answer import Answer, Geometry  # noqa: E402
from .client import Client, Stats, find_cli  # noqa: E402
from .errors import (CompileError, ContractError, Error, InputError, LaunchError,  # noqa: E402
                     NoGpuError, NotFoundError, OfflineError, ServerError, StaleAnswerError,
                     UnavailableError)

__version__ = "0.1.0"

__all__ = ["Answer", "Client", "CompileError", "ContractError", "Error", "Geometry",
           "InputError", "LaunchError", "NoGpuError", "NotFoundError", "OfflineError",
           "ServerError", "StaleAnswerError", "Stats", "UnavailableError", "find_cli"]
