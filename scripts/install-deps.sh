#!/usr/bin/env bash
# Installs every Debian 12 package that building and testing cutune needs, and is the one list of
# what its binaries need at run time. The Dockerfile runs this script too, so the two never drift
# (tests/scripts/consistency_test.sh and docker_test.py check that).
#   install-deps.sh              build and test packages; the CUDA 13.0 toolkit (nvcc, NVRTC,
#                                headers) is expected at /usr/local/cuda already (CI, developers)
#   install-deps.sh --with-cuda  the same, plus the CUDA 13.0 toolkit from NVIDIA's Debian 12 apt
#                                repository (the Dockerfile's build stage)
#   install-deps.sh --runtime    only the libraries cutuned, cutune and cutune-worker load, from
#                                Debian and NVIDIA's repository; for images (the runtime stage):
#                                it empties apt's lists afterwards
set -euo pipefail
mode=build
case ${1:-} in
  "") ;;
  --with-cuda) mode=with-cuda ;;
  --runtime) mode=runtime ;;
  *) echo "usage: install-deps.sh [--with-cuda | --runtime]" >&2; exit 2 ;;
esac
# python3-venv, -pip, -setuptools and -wheel: the Python package's install test runs
# `pip install ./client/python` into a fresh venv without network or build isolation;
# python3-numpy: its launch test, where a stand-in for CuPy runs the kernels on the CPU;
# python3-yaml: tests/scripts/kubernetes_test.py parses the manifests in deploy/kubernetes;
# libcpp-httplib-dev: cutuned's HTTP server (Prometheus /metrics) and the tests' scrapes.
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev sqlite3 libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libcpp-httplib-dev chromium
  python3 python3-grpcio python3-protobuf python3-yaml
  python3-venv python3-pip python3-setuptools python3-wheel python3-numpy
)
# What `ldd` lists for build/bin/cutuned, cutune and cutune-worker, by Debian package (glibc aside;
# tests/scripts/docker_test.py maps each library to its package and checks this list), plus
# ca-certificates for `cutune --tls` and NVIDIA's repository.
RUNTIME_PACKAGES=(
  libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libre2-9 libc-ares2
  libsqlite3-0 libssl3 zlib1g libstdc++6 libgcc-s1 ca-certificates
  libcpp-httplib0.11 libbrotli1
)
# From NVIDIA's repository: NVRTC (linked by all three) and cuBLAS (loaded by cutune-worker for
# the SGEMM reference). The driver, libcuda.so.1, is the GPU host's own.
CUDA_RUNTIME_PACKAGES=(cuda-nvrtc-13-0 libcublas-13-0)
# The whole CUDA 13.0 toolkit, as on CI's machines, installed under /usr/local/cuda-13.0.
CUDA_PACKAGES=(cuda-toolkit-13-0)
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
apt_install() { $SUDO apt-get install -y -qq --no-install-recommends "$@"; }

# NVIDIA's Debian 12 repository, as the CUDA installation guide for Linux sets it up: the
# cuda-keyring package installs the signing key and the source list
# (/etc/apt/sources.list.d/cuda-debian12-*.list).
add_cuda_repository() {
  local arch keyring=/tmp/cuda-keyring.deb had_curl=0
  case $(dpkg --print-architecture) in
    amd64) arch=x86_64 ;;
    arm64) arch=sbsa ;;
    *) echo "install-deps: NVIDIA has no Debian 12 CUDA repository for $(dpkg --print-architecture)" >&2; exit 1 ;;
  esac
  dpkg-query -W -f="\${Status}" curl 2>/dev/null | grep "ok installed" >/dev/null && had_curl=1
  apt_install ca-certificates curl
  curl -fsSL -o "$keyring" \
    "https://developer.download.nvidia.com/compute/cuda/repos/debian12/$arch/cuda-keyring_1.1-1_all.deb"
  $SUDO dpkg -i "$keyring"
  rm -f "$keyring"
  [[ $had_curl == 1 ]] || $SUDO apt-get purge -y -qq --auto-remove curl
  $SUDO apt-get update -qq
}

$SUDO apt-get update -qq
case $mode in
  runtime)
    apt_install "${RUNTIME_PACKAGES[@]}"
    add_cuda_repository
    apt_install "${CUDA_RUNTIME_PACKAGES[@]}"
    # The packages install the libraries under /usr/local/cuda-13.0/targets/ARCH-linux/lib;
    # where the loader does not know that directory yet, register it (no LD_LIBRARY_PATH needed).
    for lib in libnvrtc.so.13 libcublas.so.13; do
      ldconfig -p | grep -F "$lib" >/dev/null && continue
      found=$(find /usr/local/cuda-13.0/ -name "$lib" -print -quit)
      [[ -n $found ]] || { echo "install-deps: $lib is not installed" >&2; exit 1; }
      dirname "$found" | $SUDO tee -a /etc/ld.so.conf.d/cutune-cuda-13-0.conf >/dev/null
      $SUDO ldconfig
    done
    $SUDO rm -rf /var/lib/apt/lists/*
    exit 0
    ;;
  with-cuda)
    add_cuda_repository
    apt_install "${CUDA_PACKAGES[@]}"
    # The toolkit's packages point /usr/local/cuda at it through alternatives; make sure.
    [[ -e /usr/local/cuda ]] || $SUDO ln -s /usr/local/cuda-13.0 /usr/local/cuda
    ;;
esac
apt_install "${PACKAGES[@]}"
if [[ ! -x /usr/local/cuda/bin/nvcc && ! -e /usr/local/cuda/include/nvrtc.h ]]; then
  echo "install-deps: the CUDA 13.0 toolkit is not at /usr/local/cuda; install it first" >&2
  echo "  (or run install-deps.sh --with-cuda to take it from NVIDIA's Debian 12 repository)" >&2
  exit 1
fi
