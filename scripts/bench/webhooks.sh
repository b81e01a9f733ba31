#!/usr/bin/env bash
# Webhook delivery on this machine, against a scratch database
# (BENCH_DATABASE_URL, default edgecms_bench_webhooks on the local Postgres;
# dropped and created):
#
# 1. throughput: a backlog of BENCH_DELIVERIES (30000) Saved events for one
#    signed webhook; deliveries/s until every one was received (and verified)
#    by a local receiver, and until every one was recorded as succeeded;
# 2. latency: BENCH_RATE (200) publishes per second for BENCH_SECONDS (20) of
#    distinct items through content.Store; p50/p90/p99 from the publish call
#    to receipt. No publisher runs: add its publish-to-visible time for the
#    confirmation a real deployment waits for.
#
# The dispatcher (64 workers, LISTEN on, as in edgecms serve) and the
# receiver run in one process: scripts/bench/whbench. Both runs deliver to
# one webhook, so BENCH_ENDPOINT_CONCURRENCY (default 0: the dispatcher's
# default, 4 in flight) bounds them; the instance cap is lifted to the
# workers. Another instance's latency while 100 endpoints hang is
# BenchmarkHangingNeighbour (go test ./webhooks -run X -bench HangingNeighbour
# -benchtime 1x).
#
# An event is readable only once every older transaction of the Postgres
# server has ended, so on a server shared with other work the latency shows
# that work's transactions. BENCH_PRIVATE_PG=1 runs the benchmark on a
# Postgres server of its own (initdb in a temporary folder, a free port,
# default settings; needs the server binaries, /usr/lib/postgresql/*/bin).
#
#   bash scripts/bench/webhooks.sh
#   BENCH_PRIVATE_PG=1 bash scripts/bench/webhooks.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
db=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/edgecms_bench_webhooks?sslmode=disable}
if [ "${BENCH_PRIVATE_PG:-}" = 1 ]; then
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  tmp=$(mktemp -d)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  as=()
  if [ "$(id -u)" = 0 ]; then chown postgres "$tmp"; as=(runuser -u postgres --); fi
  "${as[@]}" "$bin/initdb" -D "$tmp/data" -U postgres -A trust >/dev/null
  "${as[@]}" "$bin/pg_ctl" -D "$tmp/data" -o "-p $port -k $tmp -c listen_addresses=127.0.0.1 -c max_connections=200" -l "$tmp/log" -w start >/dev/null
  trap '"${as[@]}" "$bin/pg_ctl" -D "$tmp/data" -m fast stop >/dev/null; rm -rf "$tmp"' EXIT
  db="postgres://postgres@127.0.0.1:$port/edgecms_bench_webhooks?sslmode=disable"
fi
go run ./scripts/bench/whbench -db "$db" \
  -n "${BENCH_DELIVERIES:-30000}" -rate "${BENCH_RATE:-200}" -seconds "${BENCH_SECONDS:-20}" \
  -workers "${BENCH_WORKERS:-64}" -endpoint-concurrency "${BENCH_ENDPOINT_CONCURRENCY:-0}"
