#!/usr/bin/env bash
# Measures origin-rendered Fetch API item reads (depth 1, fetch flavour) with
# wrk on this machine: a demo instance in a scratch database, the rate limit
# off, 2 wrk threads and 64 connections for 15 s.
#
#   bash scripts/bench/fetch-origin.sh            # needs wrk (apt-get install wrk)
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "wrk is not installed: apt-get install -y wrk" >&2; exit 1; }
db=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/edgecms_bench?sslmode=disable}
addr=127.0.0.1:${BENCH_PORT:-18181}
go build -o bin/edgecms ./cmd/edgecms
creds=$(DATABASE_URL=$db bin/edgecms demo --guid bench)
key=$(sed -n 's/.*"fetchKey": *"\([^"]*\)".*/\1/p' <<<"$creds")
DATABASE_URL=$db EDGECMS_FETCH_RATE_LIMIT=0 bin/edgecms origin --addr "$addr" >/tmp/edgecms-bench.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for _ in $(seq 50); do curl -sf "http://$addr/healthz" >/dev/null && break; sleep 0.2; done
url="http://$addr/bench/fetch/en-us/item/${BENCH_ITEM:-17}"
curl -sf -H "APIKey: $key" "$url" >/dev/null
wrk -t2 -c64 -d${BENCH_SECONDS:-15}s --latency -H "APIKey: $key" "$url"
