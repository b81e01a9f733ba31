#!/usr/bin/env bash
# Builds the Studio (studio/: Svelte 5 + Vite) into studio/dist, which is
# committed and embedded in the binary, so that `go build` needs no Node.js.
#
#   bash scripts/studio.sh deps    install the pinned npm packages
#   bash scripts/studio.sh build   rebuild studio/dist (go tool task studio)
#   bash scripts/studio.sh check   fail when studio/dist is not what the sources build
#
# The packages of package-lock.json are installed once per lock file into
# ~/.cache/edgecms/studio-npm/<hash> (outside the checkout) and linked as
# studio/node_modules.
set -euo pipefail
# shellcheck source=npm-deps.sh
source "$(dirname "$0")/npm-deps.sh"
cd "$(dirname "$0")/../studio"
deps() { npm_deps studio-npm; }

# build OUT: a production build into OUT, and its size report.
build() {
  node_modules/.bin/vite build --logLevel warn --outDir "$1" --emptyOutDir
  node scripts/size.mjs "$1"
}

case "${1:-build}" in
deps) deps ;;
build)
  deps
  build "$PWD/dist"
  ;;
check)
  deps
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  build "$out/dist" >/dev/null
  if ! diff -r "$out/dist" dist >/dev/null; then
    diff -r "$out/dist" dist | head -20 >&2 || true
    echo "studio/dist is stale: the sources build something else; run 'go tool task studio' and commit studio/dist" >&2
    exit 1
  fi
  echo "studio/dist is up to date"
  ;;
*)
  echo "usage: $0 deps|build|check" >&2
  exit 2
  ;;
esac
