#!/usr/bin/env bash
# Runs every test of edgecms against real services: the Postgres at
# DATABASE_URL (default 127.0.0.1:5432), a MinIO server it installs on first
# use, and the npm packages of the client-compatibility tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/minio.sh >/dev/null
export EDGECMS_MINIO_BIN=${EDGECMS_MINIO_BIN:-${EDGECMS_CACHE:-$HOME/.cache/edgecms}/bin/minio}
if [ -f scripts/compat/package.json ]; then
  (cd scripts/compat && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
go vet ./...
go test -count=1 -timeout 20m ./... "$@"
