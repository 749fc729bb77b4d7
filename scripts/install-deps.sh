#!/usr/bin/env bash
# Installs every Debian 12 package that building and testing cutune needs. The CUDA 13.0 toolkit
# (nvcc, NVRTC, headers) is expected at /usr/local/cuda already. The Dockerfile runs this script
# too, so the two never drift (tests/scripts/consistency_test.sh checks that).
set -euo pipefail
# python3-venv, -pip, -setuptools and -wheel: the Python package's install test runs
# `pip install ./client/python` into a fresh venv without network or build isolation;
# python3-numpy: its launch test, where a stand-in for CuPy runs the kernels on the CPU.
# libcpp-httplib-dev: cutuned's HTTP server (Prometheus /metrics) and the tests' scrapes.
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev sqlite3 libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libcpp-httplib-dev chromium
  python3 python3-grpcio python3-protobuf
  python3-venv python3-pip python3-setuptools python3-wheel python3-numpy
)
# CUTUNE_DEPS_NO_BROWSER=1 leaves out Chromium (only the CLI report test needs it; the Docker build
# skips it).
if [[ ${CUTUNE_DEPS_NO_BROWSER:-0} == 1 ]]; then
  kept=()
  for p in "${PACKAGES[@]}"; do [[ $p == chromium ]] || kept+=("$p"); done
  PACKAGES=("${kept[@]}")
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}"
if [[ ! -x /usr/local/cuda/bin/nvcc && ! -e /usr/local/cuda/include/nvrtc.h ]]; then
  echo "install-deps: the CUDA 13.0 toolkit is not at /usr/local/cuda; install it first" >&2
  exit 1
fi
