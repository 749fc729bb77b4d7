#!/usr/bin/env bash
# Session 36: the mode by the GPU lent (an H200 re-tunes its grid whole, an H100 tunes its matmul grid).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case $gpu in *H200*) mode=h200-all ;; *) mode=h100 ;; esac
echo "mode $mode on $gpu"
bash bench/lab/session35/call.sh $OUT $mode 570 2>&1 | tail -40
