#!/usr/bin/env bash
# The Python package on a GPU host (issue 15's Python evidence), from a bundle made by
#   ../shared/tools/gpu-bundle .gpu build/bin/cutuned build/bin/cutune build/bin/cutune-worker \
#       build/bin/fake-worker -- build/python
# (build/python holds the descriptor set the package needs). Runs the CPU tests again under the
# host's own grpcio and protobuf, python_gpu_test (daemon cubins and the offline table), the
# example both ways, and bench/python_first_launch.py.
#   scripts/gpu-python.sh OUT_DIR
set -uo pipefail
out=${1:?usage: gpu-python.sh OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/.gpu/env.sh"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH=$root/client/python:$root/.gpu/python:$root/tests/python
export CUTUNE_CLI=$root/.gpu/bin/cutune
python=${PYTHON:-python3}
log=$out/python.log
say() { echo "$@" | tee -a "$log"; }
bin=$root/.gpu/bin
servers=(--cutuned "$bin/cutuned" --fake-worker "$bin/fake-worker" --cli "$bin/cutune")
table=$root/tables/nvidia-h200.json
fixture=$root/tests/service/assets/tables

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$log"
"$python" -c 'import sys, grpc, google.protobuf as p, cupy, numpy
print("python", sys.version.split()[0], "grpcio", grpc.__version__, "protobuf", p.__version__,
      "cupy", cupy.__version__, "numpy", numpy.__version__)' 2>&1 | tee -a "$log"
for t in client launch gpu; do
  args=("${servers[@]}" --shipped-tables "$root/tables" --shipped-table "$table")
  case $t in
    client) args+=(--fixture-tables "$fixture" --fixture-table "$fixture/fixture_h200.json"
                   --example "$root/examples/python/matmul_transpose.py") ;;
    gpu) args+=(--example "$root/examples/python/matmul_transpose.py") ;;
  esac
  "$python" "$root/tests/python/${t}_test.py" "${args[@]}" >"$out/${t}_test.log" 2>&1
  say "${t}_test exit $?: $(grep -E '^(OK|FAILED|Ran)' "$out/${t}_test.log" | tr '\n' ' ')"
done
grep -E '^  matmul ' "$out/gpu_test.log" | tee -a "$log"
say "== example, offline =="
"$python" "$root/examples/python/matmul_transpose.py" --table "$table" \
  --server unix:/nonexistent/cutuned.sock 2>&1 | tee -a "$log"
say "== bench/python_first_launch.py =="
"$python" "$root/bench/python_first_launch.py" "${servers[@]}" --tables "$root/tables" \
  --table "$table" --repeat 3 2>&1 | tee -a "$log"
