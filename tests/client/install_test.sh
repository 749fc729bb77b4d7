#!/usr/bin/env bash
# The install tree works for a program outside this repository: `cmake --install` into a fresh
# prefix, then examples/cpp configured against it with find_package(cutune), built and run
# (offline, from the installed H200 table; without a GPU it stops before the launch).
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
for f in bin/cutuned bin/cutune-worker bin/cutune include/cutune/client.h \
         lib/cmake/cutune/cutuneConfig.cmake lib/cmake/cutune/cutuneConfigVersion.cmake \
         share/cutune/tables/nvidia-h200.json share/doc/cutune/api.md share/doc/cutune/client.md \
         share/cutune/systemd/cutuned.service; do
  [[ -e $work/prefix/$f ]] || { echo "install tree lacks $f" >&2; exit 1; }
done
ls "$work"/prefix/lib*/libcutune_client.so* >/dev/null
# The public header stands alone: only the C++ standard library.
echo '#include <cutune/client.h>
int main() { cutune::client::ClientOptions o; return o.offline ? 1 : 0; }' >"$work/alone.cc"
c++ -std=c++17 -fsyntax-only -I"$work/prefix/include" "$work/alone.cc"
cmake -S "$source/examples/cpp" -B "$work/example" -DCMAKE_PREFIX_PATH="$work/prefix" \
      >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/example" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
out=$("$work/example/cutune-example" --offline --table "$work/prefix/share/cutune/tables/nvidia-h200.json" \
      --model "NVIDIA H200" 1000 3000 500)
echo "$out"
grep -q "^matmul 1000x3000x500: exact answer for NVIDIA H200 (from the table file)" <<<"$out"
grep -q "^transpose 1000x500: predicted answer" <<<"$out"
echo "install tree and find_package(cutune) example: ok"
