#!/usr/bin/env bash
# Builds cutune with AddressSanitizer (and LeakSanitizer) and UndefinedBehaviorSanitizer in
# build-asan/ and runs every test that needs no GPU there: the daemons and workers the service
# tests start are instrumented too. Not part of CI (about 35 minutes on 2 cores); run it after
# changes to memory handling, parsing or concurrency. Any sanitizer report fails its test.
#
# Left out: label slow (NVRTC over the whole space, past ctest's timeout when instrumented),
# client_install (builds an uninstrumented program against the instrumented client library) and
# scripts_docker (builds the image). Extra arguments go to ctest (e.g. -R Store).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build-asan}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
  -DCUTUNE_SANITIZE=address,undefined
cmake --build "$BUILD" -j "$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
ctest --test-dir "$BUILD" --output-on-failure -LE 'gpu|slow' -E '^(client_install|scripts_docker)$' \
  -j "$(nproc)" --timeout 900 "$@"
