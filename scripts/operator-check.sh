#!/usr/bin/env bash
# An operator's walk through a built checkout, without a GPU (the fake worker): install to a prefix,
# start from a config file, scrape metrics, a sweep with a fault and its logs, the manifests'
# checks, a batch of shapes, a sweep sharded across two fake GPUs.
set -uo pipefail
clone=${1:?usage: operator-check.sh BUILT_CLONE   (a checkout whose build/ scripts/test.sh made)}
cd "$clone"
P=/tmp/op-prefix; rm -rf $P /tmp/op; mkdir -p /tmp/op
step() { echo; echo "\$ $*"; "$@"; echo "(exit $?)"; }
step cmake --install build --prefix $P
echo; find $P -maxdepth 3 | sort | head -40
cat > /tmp/op/cutuned.toml <<TOML
listen = "127.0.0.1:50990"
http-listen = "127.0.0.1:50991"
db = "/tmp/op/cutune.db"
tables = "$P/share/cutune/tables"
cache-dir = "/tmp/op/cache"
log-format = "text"
log-level = "info"
worker = "$clone/build/bin/fake-worker"
TOML
echo; echo '$ cat /tmp/op/cutuned.toml'; cat /tmp/op/cutuned.toml
step $P/bin/cutuned --version
FAKE_WORKER_DEVICES=2 FAKE_WORKER_RUN_MS=10 FAKE_WORKER_CRASH_FILE=/tmp/op/crash \
  $P/bin/cutuned --config /tmp/op/cutuned.toml > /tmp/op/cutuned.log 2>&1 &
daemon=$!
for _ in $(seq 50); do $P/bin/cutune devices --server 127.0.0.1:50990 >/dev/null 2>&1 && break; sleep 0.2; done
export CUTUNE_SERVER=127.0.0.1:50990
step $P/bin/cutune --version
step $P/bin/cutune devices
touch /tmp/op/crash   # the next candidate run kills its worker (a faulting candidate)
step $P/bin/cutune sweep transpose --shape 512x512 --param tile=32 --param vec=1,2 --param smem=1 --top 2
printf '# CI shapes\n256x256\n1024x256\n' > /tmp/op/shapes.txt
step $P/bin/cutune sweep transpose --shapes /tmp/op/shapes.txt --param tile=32 --param vec=1 --param smem=1 --top 1
step $P/bin/cutune sweep transpose --shape 2048x512 --param tile=32 --param vec=1,2 --param smem=1 --devices all --top 1
echo; echo '$ curl -s http://127.0.0.1:50991/metrics | grep -E "^cutune_(jobs|candidates|worker_restarts|lookups)" | head -20'
curl -s http://127.0.0.1:50991/metrics | grep -E "^cutune_(jobs|candidates|worker_restarts|lookups)" | head -20
echo; echo '$ curl -s -o /dev/null -w "%{http_code} %{content_type}\n" http://127.0.0.1:50991/'
curl -s -o /dev/null -w "%{http_code} %{content_type}\n" http://127.0.0.1:50991/
kill -TERM $daemon; wait $daemon; echo "cutuned exit $?"
echo; echo '$ grep -E "job\.|candidate\.|worker\.|daemon\." /tmp/op/cutuned.log | cut -c1-220'
grep -E "job\.|candidate\.|worker\.|daemon\." /tmp/op/cutuned.log | cut -c1-220 | head -40
step ctest --test-dir build -L scripts
