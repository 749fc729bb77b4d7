#!/usr/bin/env bash
# Keeps the set-up paths in step: the Dockerfile builds and runs on Debian 12 like the README says,
# installs its packages through scripts/install-deps.sh and nothing else (both stages), takes
# the CUDA version the script and the README name, .dockerignore leaves out what git ignores, and
# CI runs the README's test command, which also builds Release. What needs the built binaries
# (flags, ports, libraries) is docker_test.py's.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "consistency: $*" >&2; exit 1; }
deps=$root/scripts/install-deps.sh
# The words of install-deps.sh's arrays whose names match the regex $1, one per line.
packages() {
  awk -v name="^($1)=\\(" '$0 ~ name { on = 1; sub(/^[^(]*\(/, "") }
    on { done = sub(/\).*/, ""); n = split($0, w, /[ \t]+/); for (i = 1; i <= n; i++) if (w[i] != "") print w[i]; if (done) on = 0 }' "$deps"
}

# Base images: Debian 12 only, the build stage the full image, the runtime stage the slim one.
mapfile -t bases < <(sed -n 's/^FROM[[:space:]]\{1,\}\([^[:space:]]*\).*/\1/p' "$root/Dockerfile")
[[ ${#bases[@]} -eq 2 ]] || fail "the Dockerfile has ${#bases[@]} stages, expected build and runtime"
[[ ${bases[0]} == debian:12 || ${bases[0]} == debian:12@sha256:* ]] ||
  fail "the build stage is FROM ${bases[0]}, not debian:12"
[[ ${bases[1]} == debian:12-slim || ${bases[1]} == debian:12-slim@sha256:* ]] ||
  fail "the runtime stage is FROM ${bases[1]}, not debian:12-slim"

grep -q 'bash scripts/install-deps.sh --with-cuda' "$root/Dockerfile" ||
  fail "the Dockerfile's build stage does not run scripts/install-deps.sh --with-cuda"
grep -qE 'bash [^ ]*install-deps.sh --runtime' "$root/Dockerfile" ||
  fail "the Dockerfile's runtime stage does not run install-deps.sh --runtime"
if grep -nE 'apt-get|apt install|dpkg -i' "$root/Dockerfile"; then
  fail "the Dockerfile installs packages itself; add them to scripts/install-deps.sh instead"
fi

# One CUDA version: the script's comments, every CUDA package it names, and the README.
script_cuda=$(grep -o 'CUDA 13\.[0-9]' "$deps" | head -1 | cut -d' ' -f2)
[[ -n $script_cuda ]] || fail "install-deps.sh names no CUDA version"
if grep -o 'CUDA [0-9][0-9]*\.[0-9]' "$deps" | grep -v "CUDA $script_cuda"; then
  fail "install-deps.sh names more than one CUDA version"
fi
suffix=${script_cuda/./-}
while read -r pkg; do
  [[ $pkg == *-"$suffix" ]] || fail "CUDA package '$pkg' is not of CUDA $script_cuda (-$suffix)"
done < <(packages 'CUDA[A-Z_]*PACKAGES')
grep -q "CUDA $script_cuda toolkit" "$root/README.md" ||
  fail "README.md does not name the CUDA $script_cuda toolkit install-deps.sh installs"
grep -q 'Debian 12' "$root/README.md" || fail "README.md does not name Debian 12"
grep -q "cuda-$script_cuda" "$deps" || fail "install-deps.sh does not name /usr/local/cuda-$script_cuda"

# .dockerignore keeps out everything git ignores (a pattern anchored or not, '**/' for any depth).
while read -r pattern; do
  [[ -z $pattern || $pattern == \#* ]] && continue
  p=${pattern#/}
  grep -qxF -e "$p" -e "**/$p" "$root/.dockerignore" ||
    fail ".gitignore ignores '$pattern' but .dockerignore does not"
done <"$root/.gitignore"

grep -q 'scripts/install-deps.sh' "$root/.ci/run" || fail ".ci/run does not install dependencies"
grep -q 'scripts/test.sh' "$root/.ci/run" || fail ".ci/run does not run scripts/test.sh"
grep -q 'bash scripts/test.sh' "$root/README.md" || fail "README.md does not give scripts/test.sh"
grep -q 'CMAKE_BUILD_TYPE=Release' "$root/scripts/test.sh" || fail "scripts/test.sh builds no Release tree"
release_dir=$(sed -n 's/^RELEASE_BUILD=\${RELEASE_BUILD_DIR:-\(.*\)}$/\1/p' "$root/scripts/test.sh")
[[ $release_dir == build* ]] ||
  fail "scripts/test.sh's Release build directory '$release_dir' is not one .gitignore and .dockerignore leave out (build*)"
grep -q 'bash scripts/demo.sh' "$root/README.md" || fail "README.md does not give scripts/demo.sh"
# Every package the script names must be a known Debian package name shape (no typos with spaces).
count=0
while read -r pkg; do
  [[ $pkg =~ ^[a-z0-9][a-z0-9+.-]+$ ]] || fail "odd package name '$pkg' in install-deps.sh"
  count=$((count + 1))
done < <(packages '[A-Z_]*PACKAGES')
[[ $count -ge 30 ]] || fail "only $count package names read from install-deps.sh"
echo "consistency: ok ($count packages)"
