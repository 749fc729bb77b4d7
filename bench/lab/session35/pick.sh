#!/usr/bin/env bash
# Session 36: call.sh's mode by the GPU lent (an H200 re-tunes its matmul grid whole, an H100
# tunes its own), or `pick.sh check [SECONDS]` for the held start's check alone.
#   pick.sh [grid|check] [SECONDS]
what=${1:-grid}
budget=${2:-570}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $what:$gpu in check:*) mode=check ;; mini:*) mode=mini ;; *H200*) mode=h200-all ;; *) mode=h100 ;; esac
echo "mode $mode on $gpu"
bash bench/lab/session35/call.sh "$OUT" $mode "$budget" 2>&1 | tail -40
