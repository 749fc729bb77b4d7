#!/usr/bin/env bash
# Session 32's device calls. Each carries one bundle, which becomes .gpu:
#   .gpu-tall (cutune-bench and cutune-worker of branch staged-c with tall.patch: register-tiled
#   blocks up to 4:1, 128x32 and 32x128 among them; and nvrtc-cache-6841f878.tar.xz)
#   .gpu-m32 (main 4b2e939's cutuned, cutune, cutune-worker: the space enumerated depth-first;
#   and nvrtc-cache-c2108cfd.tar.xz)
#   bench/lab/session32/call.sh OUT_DIR verify   [.gpu-m32] session 29's quick.sh: the 12 unseen
#       shapes, then quick at 4096^3 three times against one fresh daemon (the first job's wall
#       without the enumeration)
#   bench/lab/session32/call.sh OUT_DIR tall [SHAPE...]   [.gpu-tall]   cutune-bench's full and quick sweeps of
#       these awkward shapes (default: the skinny and K-heavy ones), each printing the best 4:1
#       tile against the best other ("LAB best" lines)
set -uo pipefail
usage="usage: call.sh OUT_DIR verify|tall [SHAPE...]"
out=${1:?$usage}
mode=${2:?$usage}
shift 2
mkdir -p "$out"
start=$(date +%s)
for bundle in .gpu-tall .gpu-m32; do
  if [[ -d $bundle ]]; then rm -rf .gpu && mv $bundle .gpu && break; fi
done
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$gpu, bundle $(cat .gpu/COMMIT 2>/dev/null || echo none)" | tee -a "$out/gpu.txt"
left() { echo $(( ${1} - ($(date +%s) - start) )); }
case $mode in
  tall)
    export CUTUNE_CACHE_DIR=/tmp/cutune-tall-cache
    mkdir -p $CUTUNE_CACHE_DIR
    [[ -n $(ls -A $CUTUNE_CACHE_DIR) ]] || python3 scripts/grid_tool.py extract .gpu/nvrtc-cache-*.tar.xz $CUTUNE_CACHE_DIR
    # shellcheck disable=SC1091
    source .gpu/env.sh
    table=tables/nvidia-h200.json
    [[ $gpu == *H100* ]] && table=tables/nvidia-h100.json
    shapes=("$@")
    [[ ${#shapes[@]} -gt 0 ]] || shapes=(8192x32x8192 256x256x16384 16x8192x8192 127x8192x4096 64x16384x4096 2048x512x8192)
    only=()
    for s in "${shapes[@]}"; do only+=(--only "$s"); done
    echo "+ cutune-bench --skip-transpose --awkward-only ${only[*]} --table $table --cache-dir $CUTUNE_CACHE_DIR" | tee "$out/tall.log"
    timeout "$(left 580)" cutune-bench --skip-transpose --awkward-only "${only[@]}" --table $table \
      --cache-dir $CUTUNE_CACHE_DIR --json "$out/tall.json" >>"$out/tall.log" 2>&1
    echo "cutune-bench: rc $? at $(( $(date +%s) - start )) s"
    grep -E '^\[|LAB|winner' "$out/tall.log" ;;
  verify)
    bash bench/lab/session29/quick.sh "$out/quick"
    tar czf "$out/quick.tgz" -C "$out" quick && rm -rf "$out/quick" ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
