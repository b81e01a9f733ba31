#!/usr/bin/env bash
# Measures a full republish of a generated instance (10,000 items x 2
# locales) into MinIO with the publisher, and MinIO's own PUT rate for the
# same object sizes with a plain minio-go loop; prints both and their ratio
# (target >= 70 %). Needs Postgres (BENCH_DATABASE_URL, default local) and
# installs the pinned MinIO server with scripts/minio.sh if missing.
#
#   bash scripts/bench/republish.sh                 # 10,000 items
#   bash scripts/bench/republish.sh -items 2000 -workers 32
#   bash scripts/bench/republish.sh -keep            # keep the generated database
#   bash scripts/bench/republish.sh -reuse edgecms_bench_republish_N -once -cpuprofile cpu.prof
set -euo pipefail
cd "$(dirname "$0")/../.."
export EDGECMS_MINIO_BIN=$(sh scripts/minio.sh)
echo "cpus $(nproc), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
go run ./scripts/bench/republish "$@"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
