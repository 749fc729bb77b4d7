"""Helpers of the Python package's tests: environment variables set for a block, and the
offline CLI to use."""

import contextlib
import json
import os
import subprocess

# Until the CLI answers `get --table FILE` itself, a stand-in runs the same `cutune get` against
# the table server that imported FILE: the package's offline path (command line, JSON, --source
# and --cubin files, error lines) is exercised against the real CLI's output either way.
_STAND_IN = """#!/usr/bin/python3
import json, os, sys
args, servers = sys.argv[1:], json.loads(os.environ["CUTUNE_TEST_TABLE_SERVERS"])
i = args.index("--table")
server, token = servers[os.path.realpath(args[i + 1])]
os.execv(%r, [%r] + args[:i] + args[i + 2:] + ["--server", server, "--token", token])
"""


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


def cli_has_table(cli):
    done = subprocess.run([cli, "get", "--help"], capture_output=True, text=True)
    return "--table" in done.stdout


def offline_cli(cli, directory, servers):
    """`cli` when it has `get --table`, else a stand-in written to `directory` that answers for
    each table file from its server: servers = {table path: (address, token)}."""
    if cli_has_table(cli):
        return cli
    path = os.path.join(directory, "cutune")
    with open(path, "w") as f:
        f.write(_STAND_IN % (cli, cli))
    os.chmod(path, 0o755)
    os.environ["CUTUNE_TEST_TABLE_SERVERS"] = json.dumps(
        {os.path.realpath(table): list(server) for table, server in servers.items()})
    return path
