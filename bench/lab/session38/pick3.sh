#!/usr/bin/env bash
# Session 38's last try: an H200 re-tunes its matmul grid with the held start
# (session35/call.sh h200-all-now); any other GPU does nothing (its work is done this session).
#   pick3.sh [SECONDS]
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "on $gpu"
case $gpu in
  *H200*) bash bench/lab/session35/call.sh "$OUT" h200-all-now "${1:-560}" 2>&1 | tail -40 ;;
  *) echo "not an H200: nothing to do" ;;
esac
