"""Helpers of the Python package's tests."""

import contextlib
import os


@contextlib.contextmanager
def environment(**values):
    """os.environ with `values` set (None: unset) inside the block."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
