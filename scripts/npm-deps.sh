#!/usr/bin/env bash
# npm_deps NAME: installs the pinned npm packages of package.json and
# package-lock.json in the current folder once per lock file, into
# ~/.cache/edgecms/NAME/<hash> (outside the checkout), and links them as
# ./node_modules. Sourced by scripts/studio.sh and scripts/nextjs.sh.
npm_deps() {
  local name=$1 cache=${EDGECMS_CACHE:-$HOME/.cache/edgecms} sum dir tmp
  sum=$(cat package.json package-lock.json | sha256sum | cut -c1-16)
  dir=$cache/$name/$sum
  if [ ! -d "$dir/node_modules" ]; then
    mkdir -p "$cache/$name"
    tmp=$(mktemp -d "$cache/$name/install.XXXXXX")
    cp package.json package-lock.json "$tmp/"
    (cd "$tmp" && npm ci --no-audit --no-fund --loglevel=error --cache "$cache/npm-cache" >&2)
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp" # another run installed it meanwhile
  fi
  if [ -e node_modules ] && [ ! -L node_modules ]; then
    rm -rf node_modules
  fi
  ln -sfn "$dir/node_modules" node_modules
}
