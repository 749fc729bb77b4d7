#!/usr/bin/env bash
# deploy/systemd/cutuned.service against the real cutuned: every flag of its ExecStart is one
# `cutuned --help` lists, the binary and tables paths are where `cmake --install --prefix
# /usr/local` puts them, and the store and cache live in the directories systemd creates.
#   systemd_test.sh CUTUNED UNIT
set -euo pipefail
cutuned=$1 unit=$2
help=$("$cutuned" --help)
# ExecStart with its continuation lines joined.
exec_start=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | sed 's/\\$//' | tr -s ' \n' ' ' | sed 's/^ExecStart=//')
[[ -n $exec_start ]] || { echo "no ExecStart in $unit" >&2; exit 1; }
read -r -a words <<<"$exec_start"
[[ ${words[0]} == /usr/local/bin/cutuned ]] || { echo "ExecStart runs ${words[0]}" >&2; exit 1; }
flags=0
for w in "${words[@]:1}"; do
  [[ $w == --* ]] || continue
  flags=$((flags + 1))
  grep -qE -- "(^|[ ,])${w}([ =]|$)" <<<"$help" || { echo "cutuned --help has no $w" >&2; exit 1; }
done
[[ $flags -ge 4 ]] || { echo "only $flags flags parsed from ExecStart" >&2; exit 1; }
value() { local i; for ((i = 1; i < ${#words[@]}; i++)); do [[ ${words[i]} == "$1" ]] && echo "${words[i+1]}"; done; }
[[ $(value --db) == /var/lib/cutune/* ]] || { echo "--db is not under StateDirectory" >&2; exit 1; }
[[ $(value --cache-dir) == /var/cache/cutune/* ]] || { echo "--cache-dir is not under CacheDirectory" >&2; exit 1; }
[[ $(value --tables) == /usr/local/share/cutune/tables ]] || { echo "--tables is not the installed tables" >&2; exit 1; }
grep -q '^StateDirectory=cutune$' "$unit" && grep -q '^CacheDirectory=cutune$' "$unit"
if command -v systemd-analyze >/dev/null 2>&1; then
  # Only syntax: the binary need not be installed here.
  systemd-analyze verify "$unit" 2>&1 | grep -vE "cutuned: No such file|Command .* is not executable|not found" \
    | grep -E "\[(Unit|Service|Install)\]|Unknown|Invalid" && exit 1
fi
echo "systemd unit: $flags flags, all known to cutuned --help; paths match the install tree"
