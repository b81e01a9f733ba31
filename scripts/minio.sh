#!/bin/sh
# Ensures the MinIO server binary that the S3 tests use (store/miniotest)
# and prints its path. It installs the pinned version with `go install`
# only when the binary is missing, so running it again is cheap.
#
#   scripts/minio.sh                 # install if missing, print the path
#   EDGECMS_CACHE=/tmp/c scripts/minio.sh
#
# The binary goes to ${EDGECMS_CACHE:-$HOME/.cache/edgecms}/bin/minio, where
# miniotest looks for it (EDGECMS_MINIO_BIN overrides both).
set -eu

version=v0.0.0-20260212201848-7aac2a2c5b7c
cache=${EDGECMS_CACHE:-$HOME/.cache/edgecms}
bin=${EDGECMS_MINIO_BIN:-$cache/bin/minio}

if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi

bindir=$(dirname "$bin")
mkdir -p "$bindir"

# Two runs at once (parallel CI jobs) install once: the second waits for the
# first under a lock when flock(1) is available.
lock="$bindir/.minio-install.lock"
if command -v flock >/dev/null 2>&1; then
	exec 9>"$lock"
	flock 9
	if [ -x "$bin" ]; then
		echo "$bin"
		exit 0
	fi
fi

echo "installing minio $version into $bindir (this compiles MinIO: a few minutes)" >&2
tmp=$(mktemp -d "$bindir/.install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Outside any module, so that the project's go.mod plays no part.
(cd "$tmp" && GOBIN="$tmp" GOFLAGS=-buildvcs=false go install "github.com/minio/minio@$version")
mv "$tmp/minio" "$bin"
echo "$bin"
