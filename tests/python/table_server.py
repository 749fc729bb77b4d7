"""A real cutuned serving tables only, for the Python package's tests: its GPU worker is the
fake worker told to fail at start ("no CUDA driver"), so it never touches a GPU, as in
tests/service/python_client_test.py. Answers come from the tables imported with --tables."""

import os
import signal
import socket
import subprocess
import tempfile
import time


class TableServer:
    def __init__(self, cutuned, fake_worker, tables_dir, *, read_tokens=None):
        self._tmp = tempfile.TemporaryDirectory(prefix="cutune-py-server-")
        tmp = self._tmp.name
        worker = os.path.join(tmp, "no-gpu-worker")
        with open(worker, "w") as f:
            f.write(f'#!/bin/sh\nexec {fake_worker} "$@" --fail-start\n')
        os.chmod(worker, 0o755)
        self.socket = os.path.join(tmp, "cutuned.sock")
        self.address = f"unix:{self.socket}"
        command = [cutuned, "--listen", self.address, "--db", os.path.join(tmp, "t.db"),
                   "--cache-dir", os.path.join(tmp, "cache"), "--worker", worker,
                   "--tables", tables_dir]
        if read_tokens:
            tokens = os.path.join(tmp, "read-tokens")
            with open(tokens, "w") as f:
                f.write("\n".join(read_tokens) + "\n")
            os.chmod(tokens, 0o600)
            command += ["--read-tokens", tokens]
        self._log = open(os.path.join(tmp, "cutuned.log"), "w+")
        self._process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        # Ready once a connection is accepted: the socket file appears at bind, before listen.
        while not self._accepts():
            if self._process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"cutuned did not start:\n{self.stop(check=False)}")
            time.sleep(0.02)

    def _accepts(self):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            try:
                s.connect(self.socket)
                return True
            except OSError:
                return False

    def stop(self, check=True):
        """Stops the daemon (SIGTERM) and returns its log; raises if it did not exit 0."""
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
        try:
            code = self._process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._process.kill()
            code = self._process.wait()
        self._log.seek(0)
        log = self._log.read()
        self._log.close()
        self._tmp.cleanup()
        if check and code != 0:
            raise AssertionError(f"cutuned exited {code}:\n{log}")
        return log
