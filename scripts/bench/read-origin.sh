#!/usr/bin/env bash
# Issue 18's targets, side by side in one run: the origin's uncached Fetch
# API reads (render cache off) at instance sizes 1k..100k, against
# PocketBase on the same 1,000 records; item creation through the
# management API at the smallest and largest size; RenderMany (the
# publisher's renders from Postgres) per item at each size.
#
# For each size N a database holds an instance with a container of N
# published posts in two locales (title, ~500-character HTML body, number,
# slug), seeded by SQL in bulk and analyzed (read-tool seed). An origin per
# size (EDGECMS_RENDER_CACHE_BYTES=0, no rate limit) serves it; wrk -t2 -c64
# reads one item (depth 1) and a list page (take=10&skip=20). CPU is that
# of the origin process plus its Postgres backends (/proc/<pid>/stat of the
# origin and of the database's pg_stat_activity pids), per request; queries
# per request come from pg_stat_database (xact_commit), at the first size.
# The machine is shared and noisy: reads and creates are measured in
# BENCH_ROUNDS rounds that alternate the sizes (and PocketBase), and the
# medians are compared.
#
#   bash scripts/bench/read-origin.sh        # needs wrk (apt-get install wrk), jq, bc
#   BENCH_SIZES="1000 100000" BENCH_SECONDS=5 BENCH_ROUNDS=1 bash scripts/bench/read-origin.sh
#   BENCH_PB=0 ...     # without PocketBase;  BENCH_KEEP=1 ... keeps the databases
#
# PocketBase v0.39.11 is built once with go install into
# ${EDGECMS_CACHE:-~/.cache/edgecms}/bench (never into the repository).
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in wrk jq bc; do
  command -v $tool >/dev/null || { echo "$tool is not installed: apt-get install -y $tool" >&2; exit 1; }
done
sizes=${BENCH_SIZES:-"1000 10000 50000 100000"}
secs=${BENCH_SECONDS:-8}
rounds=${BENCH_ROUNDS:-3}
server=${BENCH_POSTGRES:-postgres://postgres@127.0.0.1:5432}
prefix=${BENCH_DB_PREFIX:-edgecms_bench_read}
port=${BENCH_PORT:-18180} # port: an origin, port+1: PocketBase
pbport=$((port + 1))
work=$(mktemp -d)
psql_() { psql "$server/$1?sslmode=disable" -XtAq "${@:2}"; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

go build -o bin/edgecms ./cmd/edgecms
go build -o bin/read-tool ./scripts/bench/read-tool
echo "cpus $(nproc), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
hz=$(getconf CLK_TCK)

# ticks sums the CPU ticks (user + system) of the pids given.
ticks() {
  local t=0 p
  for p in "$@"; do
    [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo "$t"
}
# backends lists the pids of the Postgres backends connected to database $1.
backends() { psql_ postgres -c "SELECT pid FROM pg_stat_activity WHERE datname = '$1' AND backend_type = 'client backend'"; }
commits() { psql_ postgres -c "SELECT xact_commit FROM pg_stat_database WHERE datname = '$1'"; }
# median prints the median of its arguments.
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# measure NAME DB PID URL [wrk args]: runs wrk and prints req/s, latency and
# CPU per request of PID plus the backends of DB (none when DB is "-"), and
# leaves the CPU per request in $work/last-us. With COUNT_QUERIES set, it
# also counts the database's transactions (each query outside a
# transaction is one), waiting for the backends to report them.
measure() {
  local name=$1 db=$2 pid=$3 url=$4; shift 4
  wrk -t2 -c64 -d2s "$@" "$url" >/dev/null # warm: connections, statements
  local before=("$pid") after t0 o0 q0 t1 o1 all
  [ "$db" != - ] && before+=($(backends "$db"))
  [ -n "${COUNT_QUERIES:-}" ] && { sleep 11; q0=$(commits "$db"); }
  t0=$(ticks "${before[@]}")
  o0=$(ticks "$pid")
  wrk -t2 -c64 -d"${secs}s" --latency "$@" "$url" >"$work/wrk.out"
  after=("$pid")
  [ "$db" != - ] && after+=($(backends "$db"))
  all=$(printf '%s\n' "${before[@]}" "${after[@]}" | sort -u)
  t1=$(ticks $all)
  o1=$(ticks "$pid")
  local n rate p50 p99 errors
  n=$(awk '/requests in/ {print $1}' "$work/wrk.out")
  rate=$(awk '/Requests\/sec/ {printf "%.0f", $2}' "$work/wrk.out")
  p50=$(awk '$1 == "50%" {print $2}' "$work/wrk.out")
  p99=$(awk '$1 == "99%" {print $2}' "$work/wrk.out")
  errors=$(awk '/Non-2xx|Socket errors/ {print}' "$work/wrk.out")
  local us=$(( (t1 - t0) * 1000000 / hz / n )) ous=$(( (o1 - o0) * 1000000 / hz / n )) split="" queries=""
  [ "$db" != - ] && split=" ($ous + postgres $((us - ous)))"
  if [ -n "${COUNT_QUERIES:-}" ]; then
    sleep 11
    queries=$(awk -v a="$q0" -v b="$(commits "$db")" -v n="$n" 'BEGIN {printf "  %.2f queries/request", (b - a) / n}')
  fi
  printf '%-48s %6s req/s  p50 %-8s p99 %-8s %5d us CPU/request%s%s %s\n' "$name" "$rate" "$p50" "$p99" "$us" "$split" "$queries" "$errors"
  echo "$us" >"$work/last-us"
}

# startOrigin DB N PORT [env...]: starts an origin on the database at
# 127.0.0.1:PORT, render cache off; sets opid. One origin runs at a time
# (each keeps up to 32 connections).
startOrigin() {
  local db=$1 n=$2 p=$3; shift 3
  env DATABASE_URL="$server/$db?sslmode=disable" EDGECMS_ADDR="127.0.0.1:$p" EDGECMS_FETCH_RATE_LIMIT=0 \
    EDGECMS_STORE="$work/store-$n" EDGECMS_RENDER_CACHE_BYTES=0 "$@" bin/edgecms origin >"$work/origin-$p.log" 2>&1 &
  opid=$!
  pids+=("$opid")
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$p/healthz" >/dev/null && return; sleep 0.1; done
  echo "origin did not start:" >&2; cat "$work/origin-$p.log" >&2; exit 1
}
stopOrigin() { kill "$opid"; wait "$opid" 2>/dev/null || true; }

declare -A creds us rates
echo
echo "== seed (posts per instance: $sizes)"
for n in $sizes; do
  db=${prefix}_$n
  psql_ postgres -c "DROP DATABASE IF EXISTS \"$db\"" -c "CREATE DATABASE \"$db\""
  start=$(date +%s.%N)
  creds[$n]=$(bin/read-tool seed -database-url "$server/$db?sslmode=disable" -items "$n")
  printf '%7d posts seeded in %.1f s\n' "$n" "$(echo "$(date +%s.%N) - $start" | bc)"
done
first=$(echo $sizes | awk '{print $1}')
last=$(echo $sizes | awk '{print $NF}')

pbpid=
if [ "${BENCH_PB:-1}" != 0 ]; then
  echo
  echo "== PocketBase v0.39.11 on the same 1,000 records (request logs off)"
  pbbin=${EDGECMS_CACHE:-$HOME/.cache/edgecms}/bench/pocketbase-v0.39.11
  if [ ! -x "$pbbin" ]; then
    mkdir -p "$(dirname "$pbbin")"
    GOBIN="$work/gobin" GOFLAGS=-mod=mod go install github.com/pocketbase/pocketbase/examples/base@v0.39.11
    mv "$work/gobin/base" "$pbbin"
  fi
  pbdir=$work/pb
  "$pbbin" superuser upsert bench@example.com benchbench123 --dir="$pbdir" >/dev/null
  "$pbbin" serve --http="127.0.0.1:$pbport" --dir="$pbdir" >"$work/pb.log" 2>&1 &
  pbpid=$!
  pids+=("$pbpid")
  pb="http://127.0.0.1:$pbport"
  for _ in $(seq 100); do curl -sf "$pb/api/health" >/dev/null && break; sleep 0.1; done
  token=$(curl -sf "$pb/api/collections/_superusers/auth-with-password" -H 'Content-Type: application/json' \
    -d '{"identity":"bench@example.com","password":"benchbench123"}' | jq -r .token)
  curl -sf -X PATCH "$pb/api/settings" -H "Authorization: $token" -H 'Content-Type: application/json' \
    -d '{"logs":{"maxDays":0}}' >/dev/null
  curl -sf "$pb/api/collections" -H "Authorization: $token" -H 'Content-Type: application/json' -d '{"name":"posts","type":"base",
    "listRule":"","viewRule":"","fields":[{"name":"title","type":"text"},{"name":"body","type":"editor"},
    {"name":"number","type":"number"},{"name":"slug","type":"text"}]}' >/dev/null
  body=$(printf 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. %.0s' $(seq 8))
  seq 1000 | xargs -P4 -I{} curl -sf -o /dev/null "$pb/api/collections/posts/records" -H "Authorization: $token" \
    -H 'Content-Type: application/json' -d "{\"title\":\"Post {} en-us\",\"body\":\"<p>$body</p>\",\"number\":{},\"slug\":\"post-{}\"}"
  pbid=$(curl -sf "$pb/api/collections/posts/records?perPage=1&page=500&skipTotal=1" | jq -r '.items[0].id')
  echo "1000 records created"
fi

echo
echo "== uncached reads: one item (depth 1), a list page (take=10&skip=20); wrk -t2 -c64 -d${secs}s, $rounds rounds"
for r in $(seq "$rounds"); do
  echo "-- round $r"
  for n in $sizes; do
    db=${prefix}_$n
    key=$(jq -r .fetchKey <<<"${creds[$n]}")
    item=$(( $(jq -r .firstItem <<<"${creds[$n]}") + n / 2 ))
    base="http://127.0.0.1:$port/bench/fetch/en-us"
    if [ "$r" = 1 ] && [ "$n" = "$first" ]; then export COUNT_QUERIES=1; fi
    startOrigin "$db" "$n" "$port"
    measure "item, $n posts" "$db" "$opid" "$base/item/$item" -H "APIKey: $key"
    us[item,$n]+=" $(cat "$work/last-us")"
    measure "list take=10 skip=20, $n posts" "$db" "$opid" "$base/list/posts?take=10&skip=20" -H "APIKey: $key"
    us[list,$n]+=" $(cat "$work/last-us")"
    stopOrigin
    unset COUNT_QUERIES
  done
  if [ -n "$pbpid" ]; then
    measure "PocketBase getOne, 1000 records" - "$pbpid" "$pb/api/collections/posts/records/$pbid"
    us[item,pb]+=" $(cat "$work/last-us")"
    measure "PocketBase list perPage=10 page=3, 1000 records" - "$pbpid" "$pb/api/collections/posts/records?perPage=10&page=3"
    us[list,pb]+=" $(cat "$work/last-us")"
  fi
done
echo "-- medians of the rounds, us of CPU per request (origin + Postgres; PocketBase: its process)"
for n in $sizes; do
  it=$(median ${us[item,$n]}) li=$(median ${us[list,$n]})
  it1=$(median ${us[item,$first]}) li1=$(median ${us[list,$first]})
  printf '%7d posts: item %4d us (%.2fx %d posts), list %4d us (%.2fx)\n' "$n" "$it" "$(echo "$it / $it1" | bc -l)" "$first" \
    "$li" "$(echo "$li / $li1" | bc -l)"
done
if [ -n "$pbpid" ]; then
  it=$(median ${us[item,pb]}) li=$(median ${us[list,pb]})
  printf 'PocketBase:    item %4d us, list %4d us; edgecms at %d posts: item %.2fx, list %.2fx PocketBase'"'"'s\n' "$it" "$li" \
    "$first" "$(echo "$(median ${us[item,$first]}) / $it" | bc -l)" "$(echo "$(median ${us[list,$first]}) / $li" | bc -l)"
fi

echo
echo "== the same item with the render cache on (hits), $first posts"
startOrigin "${prefix}_$first" "$first" "$port" EDGECMS_RENDER_CACHE_BYTES=67108864
measure "item, cache hit, $first posts" "${prefix}_$first" "$opid" \
  "http://127.0.0.1:$port/bench/fetch/en-us/item/$(( $(jq -r .firstItem <<<"${creds[$first]}") + first / 2 ))" \
  -H "APIKey: $(jq -r .fetchKey <<<"${creds[$first]}")"
stopOrigin

echo
echo "== item creation through the management API, one container; wrk -t2 -c8 -d${secs}s, $rounds rounds"
lorem=$(printf 'Lorem ipsum dolor sit amet. %.0s' $(seq 16))
printf '%s\n' 'wrk.method = "POST"' 'wrk.headers["Content-Type"] = "application/json"' \
  "wrk.body = '{\"referenceName\":\"posts\",\"fields\":{\"title\":\"New post\",\"body\":\"<p>$lorem</p>\",\"number\":7,\"slug\":\"new-post\"}}'" \
  >"$work/create.lua"
for r in $(seq "$rounds"); do
  for n in $first $last; do
    db=${prefix}_$n
    url="http://127.0.0.1:$port/api/v1/instance/bench/en-us/items"
    token=$(jq -r .managementToken <<<"${creds[$n]}")
    startOrigin "$db" "$n" "$port"
    wrk -t2 -c8 -d2s -s "$work/create.lua" -H "Authorization: Bearer $token" "$url" >/dev/null
    before=("$opid" $(backends "$db"))
    t0=$(ticks "${before[@]}")
    wrk -t2 -c8 -d"${secs}s" -s "$work/create.lua" -H "Authorization: Bearer $token" "$url" >"$work/wrk.out"
    all=$(printf '%s\n' "${before[@]}" $(backends "$db") | sort -u)
    t1=$(ticks $all)
    reqs=$(awk '/requests in/ {print $1}' "$work/wrk.out")
    rate=$(awk '/Requests\/sec/ {printf "%.0f", $2}' "$work/wrk.out")
    rates[$n]+=" $rate"
    printf '%-48s %6s creates/s  %5d us CPU/create  %s\n' "create items, $n posts (round $r)" "$rate" \
      $(( (t1 - t0) * 1000000 / hz / reqs )) "$(awk '/Non-2xx/ {print}' "$work/wrk.out")"
    stopOrigin
  done
done
printf 'median rate at %d posts %d/s, at %d posts %d/s: %.2fx\n' "$first" "$(median ${rates[$first]})" "$last" \
  "$(median ${rates[$last]})" "$(echo "$(median ${rates[$last]}) / $(median ${rates[$first]})" | bc -l)"

echo
echo "== RenderMany (the publisher's renders from Postgres), every post, fetch en-us, depth 1"
for n in $sizes; do
  echo "-- $n posts"
  bin/read-tool render-many -database-url "$server/${prefix}_$n?sslmode=disable"
done

echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "${BENCH_KEEP:-}" ]; then
  [ -n "$pbpid" ] && kill "$pbpid"
  for n in $sizes; do psql_ postgres -c "DROP DATABASE IF EXISTS \"${prefix}_$n\" WITH (FORCE)"; done
fi
