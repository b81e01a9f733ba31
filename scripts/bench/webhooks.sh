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
# receiver run in one process: scripts/bench/whbench.
#
#   bash scripts/bench/webhooks.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
go run ./scripts/bench/whbench \
  -db "${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/edgecms_bench_webhooks?sslmode=disable}" \
  -n "${BENCH_DELIVERIES:-30000}" -rate "${BENCH_RATE:-200}" -seconds "${BENCH_SECONDS:-20}" \
  -workers "${BENCH_WORKERS:-64}"
