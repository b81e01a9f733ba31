#!/usr/bin/env bash
# The publisher at real size (issue 11): one container of N posts behind a
# dynamic page in channel website, a few other pages, a webhook receiver;
# origin, publisher, dispatcher and 2 edges as separate processes on a
# folder store, on a throwaway Postgres cluster of their own (port 22010).
# For each N and each binary: objects rendered per edit and per new item,
# publish -> every edge, publish -> webhook, the new item's background
# fan-out, 10 publishes/s for 5 minutes (latency over time, publisher CPU
# per publish), full republish objects/s, peak RSS, and `edgecms verify`
# when the binary has it. Binaries given together are measured one after
# the other in the same run (baseline and new side by side).
#
#   bash scripts/bench/publish-scale.sh -n 1k,10k                       # this checkout
#   bash scripts/bench/publish-scale.sh -src main=/tmp/main -src pub=../wt-pub -n 1k,10k,100k
#   bash scripts/bench/publish-scale.sh -n 1k -edits 5 -news 5 -sustain 20s   # a quick look
#   bash scripts/bench/publish-scale.sh -bin old=/tmp/edgecms-old -mode serve -n 100k
set -euo pipefail
cd "$(dirname "$0")/../.."
echo "cpus $(nproc), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./scripts/bench/publish-scale "$@"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
