#!/usr/bin/env bash
# Builds cutune and runs every test that needs no GPU (label gpu excluded). The whole tree is also
# built as Release (-O3, what the Dockerfile ships; g++ warns differently there) in a second build
# directory, before the tests so that their summary ends the output; the tests run once, on the
# first build. CUTUNE_RELEASE_BUILD=0 skips the Release build (15-20 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
RELEASE_BUILD=${RELEASE_BUILD_DIR:-build-release}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD" -j "$(nproc)"
if [[ ${CUTUNE_RELEASE_BUILD:-1} != 0 ]]; then
  cmake -S . -B "$RELEASE_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake --build "$RELEASE_BUILD" -j "$(nproc)"
fi
ctest --test-dir "$BUILD" --output-on-failure -LE gpu -j "$(nproc)"
