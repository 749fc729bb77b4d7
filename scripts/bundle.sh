#!/usr/bin/env bash
# Copies executables and the shared libraries they need (except glibc, libstdc++ and the CUDA
# driver/NVRTC/cuBLAS, which the target host provides) into DIR/bin and DIR/lib, with rpath-free
# launch via DIR/env.sh. Used by the Dockerfile's runtime stage.
#   bundle.sh DIR EXECUTABLE...
set -euo pipefail
out=$1; shift
mkdir -p "$out/bin" "$out/lib"
skip='/(libc|libm|libpthread|librt|libdl|libresolv|ld-linux[^/]*|libgcc_s|libstdc\+\+|libcuda|libnvrtc[^/]*|libcublas[^/]*|libcublasLt)\.so'
for b in "$@"; do
  cp -L "$b" "$out/bin/"
  ldd "$b" | awk '/=> \//{print $3}' | grep -Ev "$skip" | while read -r lib; do
    [[ -e $out/lib/$(basename "$lib") ]] || cp -L "$lib" "$out/lib/"
  done
done
cat >"$out/env.sh" <<'ENV'
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$here/bin:$PATH"
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
ENV
