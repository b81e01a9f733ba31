#!/usr/bin/env bash
# The npm packages of the Next.js example site (examples/nextjs), pinned in
# its package-lock.json, installed once per lock file into
# ~/.cache/edgecms/nextjs-npm/<hash> (outside the checkout) and linked as
# examples/nextjs/node_modules; go test ./examples/nextjs builds the site
# with them.
#
#   bash scripts/nextjs.sh deps
set -euo pipefail
# shellcheck source=npm-deps.sh
source "$(dirname "$0")/npm-deps.sh"
cd "$(dirname "$0")/../examples/nextjs"
case "${1:-deps}" in
deps) npm_deps nextjs-npm ;;
*)
  echo "usage: $0 deps" >&2
  exit 2
  ;;
esac
