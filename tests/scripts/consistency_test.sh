#!/usr/bin/env bash
# Keeps the set-up paths in step: the Dockerfile installs its build dependencies through
# scripts/install-deps.sh and nothing else, targets the same CUDA version the script expects,
# and CI runs the README's test command.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "consistency: $*" >&2; exit 1; }

grep -q 'bash scripts/install-deps.sh' "$root/Dockerfile" ||
  fail "the Dockerfile does not run scripts/install-deps.sh"
if grep -n 'apt-get install' "$root/Dockerfile"; then
  fail "the Dockerfile installs packages itself; add them to scripts/install-deps.sh instead"
fi
script_cuda=$(grep -o 'CUDA 13\.[0-9]' "$root/scripts/install-deps.sh" | head -1 | cut -d' ' -f2)
docker_cuda=$(sed -n 's/^ARG CUDA_VERSION=\([0-9]*\.[0-9]*\).*/\1/p' "$root/Dockerfile")
[[ -n $script_cuda && $script_cuda == "$docker_cuda" ]] ||
  fail "CUDA version differs: install-deps.sh expects '$script_cuda', Dockerfile builds '$docker_cuda'"
grep -q 'scripts/install-deps.sh' "$root/.ci/run" || fail ".ci/run does not install dependencies"
grep -q 'scripts/test.sh' "$root/.ci/run" || fail ".ci/run does not run scripts/test.sh"
grep -q 'bash scripts/test.sh' "$root/README.md" || fail "README.md does not give scripts/test.sh"
grep -q 'bash scripts/demo.sh' "$root/README.md" || fail "README.md does not give scripts/demo.sh"
# Every package the script names must be a known Debian package name shape (no typos with spaces).
while read -r pkg; do
  [[ $pkg =~ ^[a-z0-9][a-z0-9+.-]+$ ]] || fail "odd package name '$pkg' in install-deps.sh"
done < <(sed -n '/^PACKAGES=(/,/^)/p' "$root/scripts/install-deps.sh" | sed '1d;$d' | tr ' ' '\n' | sed '/^$/d')
echo "consistency: ok"
