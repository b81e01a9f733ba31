#!/usr/bin/env bash
# Runs every test of edgecms against real services: the Postgres at
# DATABASE_URL (default 127.0.0.1:5432), a MinIO server it installs on first
# use, the npm packages of the client-compatibility tests and of the Next.js
# example site, Debian's Chromium for the Studio's browser tests, and
# Debian's varnish and docker-compose for the tests of deploy/ (installed
# with apt when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/minio.sh >/dev/null
export EDGECMS_MINIO_BIN=${EDGECMS_MINIO_BIN:-${EDGECMS_CACHE:-$HOME/.cache/edgecms}/bin/minio}
if [ -f scripts/compat/package.json ]; then
  (cd scripts/compat && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
# The Next.js example site's packages, installed once per lock file
# outside the checkout (go test ./examples/nextjs builds the site with them).
bash scripts/nextjs.sh deps >/dev/null
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)            # the Studio's browser tests
command -v varnishd >/dev/null || missing+=(varnish)        # deploy: varnishd -C, Varnish in front of edges
command -v docker-compose >/dev/null || missing+=(docker-compose) # deploy: docker-compose config
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian's ${missing[*]} for the tests" >&2
  if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# The committed Studio build must be what its sources build.
bash scripts/studio.sh check
go vet ./...
# Four packages at a time on two cores: several of them (deploy, studio,
# examples/nextjs, compat) mostly wait on Varnish, Chromium or Node.js.
# go test starts the packages' tests in the order it is given them, so
# the longest come first (by their times in README.md): started last, one
# of them would run alone at the end while the cores idle.
longest=(publisher deploy examples/nextjs content studio origin webhooks cmd/edgecms archive edge compat render)
go test -count=1 -p 4 -timeout 20m "${longest[@]/#/./}" ./... "$@"
