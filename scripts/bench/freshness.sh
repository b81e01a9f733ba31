#!/usr/bin/env bash
# Publish-to-visible latency (issue 4): p50/p99 over 100 publishes of one
# item, from the publish call returning to every edge serving the new
# version. Target: p99 <= 250 ms.
#
# Separate processes of one edgecms binary, as deployed: an origin (the
# management API), a publisher (LISTEN on) and 3 edges on a folder store,
# the edges without DATABASE_URL. The driver (scripts/bench/freshness) fills
# a scratch database (BENCH_DATABASE_URL, default edgecms_bench_freshness on
# the local Postgres; dropped and created) with the demo site, edits and
# publishes one item through the management API, and polls each edge every
# few ms until all serve the new version; it prints p50/p90/p99/max and the
# stages it can see (the chunk write, the item file, the feed, the
# confirmation).
#
#   flock -x /tmp/edgecms-bench.lock bash scripts/bench/freshness.sh
#   bash scripts/bench/freshness.sh -n 20 -feed-poll 25ms -poll 2ms
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/edgecms" ./cmd/edgecms
go build -o "$bin/freshness" ./scripts/bench/freshness
echo "cpus $(nproc), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin/freshness" -bin "$bin/edgecms" "$@"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
