#!/usr/bin/env python3
"""The Dockerfile against the built binaries, as far as it can be checked without Docker: every
flag of ENTRYPOINT and CMD is one `cutuned --help` lists, EXPOSE names exactly the ports the
command listens on, a non-loopback listen needs tokens (docs/api.md, "Exposure"), the store is
in the volume, the user is not root, and the runtime stage's package list (install-deps.sh
--runtime) is what `ldd` finds the binaries need, no more and no less.
  docker_test.py --root SRC --cutuned BIN --cutune BIN --worker BIN"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_help import CommandLine  # noqa: E402

# Libraries dpkg does not know on a machine whose CUDA toolkit is no Debian package (a runfile or
# tarball install), by soname: the package of NVIDIA's repository that ships them.
CUDA_SONAMES = {"libnvrtc.so.13": "cuda-nvrtc-13-0", "libcublas.so.13": "libcublas-13-0",
                "libcublasLt.so.13": "libcublas-13-0"}
# Libraries the binaries dlopen (ldd cannot see them), with the source that names them. libcuda
# is the GPU host's driver, never part of the image.
DLOPENED = {"libcublas.so.13": "server/cuda/cublas.cc"}
GLIBC = {"libc6"}
# In the runtime list for another reason than a library: `cutune --tls` verifies against the
# system roots, and apt needs them for NVIDIA's https repository.
NOT_LIBRARIES = {"ca-certificates"}

failures = []


def fail(message):
    failures.append(message)


def instructions(path):
    """(KEYWORD, argument text) of each Dockerfile instruction, continuation lines joined."""
    out, pending = [], ""
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.lstrip().startswith("#"):
                continue
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            line = (pending + line).strip()
            pending = ""
            if line:
                keyword, _, rest = line.partition(" ")
                out.append((keyword.upper(), rest.strip()))
    return out


def array(keyword, text):
    try:
        words = json.loads(text)
    except json.JSONDecodeError:
        fail(f"{keyword} is not in exec form (a JSON array): {text}")
        return []
    return words


def shell_array(root, name):
    """The words of a bash array NAME=(...) in scripts/install-deps.sh."""
    text = open(os.path.join(root, "scripts/install-deps.sh")).read()
    m = re.search(rf"^{name}=\(([^)]*)\)", text, re.M)
    if not m:
        fail(f"install-deps.sh has no {name}")
        return []
    return m.group(1).split()


def owners(paths):
    """{path: Debian package} for every path dpkg knows, asked in one call."""
    out = subprocess.run(["dpkg", "-S", *paths], capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        package, _, path = line.partition(": ")
        found[path.strip()] = package.split(":")[0].strip()  # "pkg:amd64" -> "pkg"
    return found


def aliases(library):
    """The names dpkg may know a library by: as given, resolved, with and without /usr (merged
    /usr: ldd says /lib/..., the package may say /usr/lib/... or the other way)."""
    names = [library, os.path.realpath(library)]
    for name in list(names):
        if name.startswith("/lib/"):
            names.append("/usr" + name)
        elif name.startswith("/usr/lib/"):
            names.append(name[len("/usr"):])
    return names


def needed_packages(binaries):
    users = {}
    for binary in binaries:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            m = re.match(r"\s*(\S+) => (/\S+)", line)
            if m:
                users.setdefault(m.group(2), set()).add(os.path.basename(binary))
            elif "not found" in line:
                fail(f"ldd {binary}: {line.strip()}")
    known = owners(sorted({a for library in users for a in aliases(library)}))
    needed = {}
    for library, used_by in sorted(users.items()):
        package = next((known[a] for a in aliases(library) if a in known),
                       CUDA_SONAMES.get(os.path.basename(library)))
        if package is None:
            fail(f"no package ships {library} (needed by {', '.join(sorted(used_by))}); "
                 "add it to CUDA_SONAMES or install it from a package")
            continue
        needed.setdefault(package, set()).update(used_by)
    return needed


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--root", "--cutuned", "--cutune", "--worker"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    steps = instructions(os.path.join(args.root, "Dockerfile"))

    entrypoint = [array(k, v) for k, v in steps if k == "ENTRYPOINT"]
    cmd = [array(k, v) for k, v in steps if k == "CMD"]
    if len(entrypoint) != 1 or len(cmd) != 1:
        fail("expected one ENTRYPOINT and one CMD")
        return
    argv = entrypoint[0] + cmd[0]
    if argv[:1] != ["cutuned"]:
        fail(f"the ENTRYPOINT runs {argv[:1]}, not cutuned")
    line = CommandLine(args.cutuned, argv[1:])
    for problem in line.problems:
        fail(f"Dockerfile ENTRYPOINT/CMD: {problem}")
    flags = sum(len(v) for v in line.values.values())
    if flags < 5:
        fail(f"only {flags} flags read from ENTRYPOINT and CMD")

    # Ports: what the command listens on is what EXPOSE says, nothing more.
    listened = set()
    for flag in ("--listen", "--http-listen", "--metrics-listen"):
        for value in line.values.get(flag) or line.guessed.get(flag) or []:
            host, _, port = (value or "").rpartition(":")
            if not port.isdigit():
                fail(f"{flag} {value}: no TCP port")
                continue
            listened.add(int(port))
            if host not in ("127.0.0.1", "localhost", "[::1]"):
                if not (line.value("--admin-tokens") or line.value("--read-tokens")
                        or line.value("--tls-client-ca")):
                    fail(f"{flag} {value} is not loopback but no tokens or client CA are required")
                if line.given("--allow-unauthenticated"):
                    fail("the image serves unauthenticated callers (--allow-unauthenticated)")
                if not (line.value("--tls-cert") or line.given("--allow-insecure-remote")):
                    fail(f"{flag} {value}: neither TLS nor --allow-insecure-remote")
    exposed = set()
    for keyword, text in steps:
        if keyword == "EXPOSE":
            exposed |= {int(p.split("/")[0]) for p in text.split()}
    if exposed != listened:
        fail(f"EXPOSE {sorted(exposed)} but the command listens on {sorted(listened)}")

    # The store lives in a volume; the process is not root.
    volumes = set()
    for keyword, text in steps:
        if keyword == "VOLUME":
            volumes |= set(json.loads(text) if text.startswith("[") else text.split())
    db = line.value("--db") or ""
    if os.path.dirname(db) not in volumes:
        fail(f"--db {db} is not in a VOLUME ({sorted(volumes)})")
    users = [text for keyword, text in steps if keyword == "USER"]
    if not users or not re.fullmatch(r"[1-9][0-9]*(:[1-9][0-9]*)?", users[-1]):
        fail(f"the runtime user must be a numeric non-root uid (USER {users[-1:]})")

    # Every binary the runtime stage copies is one whose libraries are checked below.
    built = next((text for keyword, text in steps if keyword == "RUN" and "--target" in text), "")
    for name in ("cutuned", "cutune", "cutune-worker"):
        if f"build/bin/{name}" not in built:
            fail(f"the build stage does not install build/bin/{name}")

    # The runtime packages are what the binaries load, no more and no less.
    runtime = set(shell_array(args.root, "RUNTIME_PACKAGES"))
    cuda_runtime = set(shell_array(args.root, "CUDA_RUNTIME_PACKAGES"))
    needed = needed_packages([args.cutuned, args.cutune, args.worker])
    for soname, source in DLOPENED.items():
        if soname not in open(os.path.join(args.root, source)).read():
            fail(f"{source} no longer loads {soname}: update DLOPENED")
        needed.setdefault(CUDA_SONAMES[soname], set()).add(f"dlopen in {source}")
    listed = runtime | cuda_runtime
    for package, users_of in sorted(needed.items()):
        if package not in listed and package not in GLIBC:
            fail(f"{package} ({', '.join(sorted(users_of))}) is missing from install-deps.sh's "
                 "runtime packages")
    for package in sorted(listed - set(needed) - NOT_LIBRARIES):
        fail(f"install-deps.sh's runtime package {package} is needed by no binary")
    for package in cuda_runtime:
        if not package.startswith(("cuda-", "libcublas-")):
            fail(f"{package} is in CUDA_RUNTIME_PACKAGES but is no NVIDIA package")

    if not failures:
        print(f"dockerfile: {flags} flags known to cutuned --help, ports {sorted(exposed)}, "
              f"{len(needed)} runtime packages match ldd")


if __name__ == "__main__":
    main()
    for message in failures:
        print(f"dockerfile: {message}", file=sys.stderr)
    sys.exit(1 if failures else 0)
