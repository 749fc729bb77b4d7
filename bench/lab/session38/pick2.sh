#!/usr/bin/env bash
# Session 38's later device calls, by the GPU lent: an H200 re-tunes its matmul grid with the held
# start (session35/call.sh h200-all-now; `session35/call.sh $OUT h200-all-grid` goes on); any other
# GPU runs call2.sh (quick on a bare daemon; cutune-bench's transposes under the held start).
#   pick2.sh [SECONDS]
set -uo pipefail
budget=${1:-560}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $gpu in
  *H200*) bash bench/lab/session35/call.sh "$OUT" h200-all-now "$budget" 2>&1 | tail -40 ;;
  *) bash bench/lab/session38/call2.sh "$budget" ;;
esac
