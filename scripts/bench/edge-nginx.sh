#!/usr/bin/env bash
# Edge cache-hit throughput against nginx serving the same object files.
#
# edgeseed writes a folder store (1000 items of ~1 KiB, the key manifest);
# nginx serves the folder as static files, the edge ("edgecms edge", no
# database, the origin unused) serves the same objects through the Fetch API
# with its key check and headers. Both are measured with the same wrk
# settings on the same item, one run each; the script prints both figures
# and the ratio. Targets (issue 4): edge >= 1.0x nginx, edge p99 <= 2 ms at
# 64 connections.
#
#   bash scripts/bench/edge-nginx.sh      # needs nginx and wrk (apt-get install -y nginx wrk)
#
# BENCH_SECONDS (default 10), BENCH_CONNECTIONS (64), BENCH_THREADS (2),
# BENCH_SIZE (body bytes, 1024) change the run. BENCH_WORKERS=N (default
# auto: one per CPU) runs nginx with N worker processes and the edge with
# GOMAXPROCS=N: with wrk on the same CPUs, one worker each compares the
# servers without the Go scheduler's cost of several threads competing with
# wrk for the same cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in nginx wrk; do
  command -v $tool >/dev/null || [ -x /usr/sbin/$tool ] || { echo "$tool is not installed: apt-get install -y nginx wrk" >&2; exit 1; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
secs=${BENCH_SECONDS:-10}
conns=${BENCH_CONNECTIONS:-64}
threads=${BENCH_THREADS:-2}
size=${BENCH_SIZE:-1024}
workers=${BENCH_WORKERS:-auto}
goprocs=()
[ "$workers" = auto ] || goprocs=(GOMAXPROCS="$workers")

tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
waitup() { for _ in $(seq 100); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done; echo "not up: $1" >&2; return 1; }

go build -o "$tmp/edgecms" ./cmd/edgecms
key=$(go run ./scripts/bench/edgeseed -dir "$tmp/store" -items 1000 -size "$size")
chmod -R a+rX "$tmp"

# nginx: a foreground master on a free loopback port, tuned as one would
# for static files (sendfile, open file cache, no access log).
nport=$(freeport)
mkdir -p "$tmp/nginx"
cat >"$tmp/nginx/nginx.conf" <<EOF
daemon off;
worker_processes $workers;
pid $tmp/nginx/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_requests 1000000;
  open_file_cache max=10000 inactive=60s;
  open_file_cache_valid 60s;
  types { application/json json; }
  default_type application/octet-stream;
  client_body_temp_path $tmp/nginx/body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
  server {
    listen 127.0.0.1:$nport;
    root $tmp/store;
    location ~ /\. { deny all; }
  }
}
EOF
"$NGINX" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" 2>"$tmp/nginx.log" &
npid=$!
pids+=($npid)

eport=$(freeport)
env -u DATABASE_URL "${goprocs[@]}" EDGECMS_STORE="$tmp/store" EDGECMS_ORIGIN_URL=http://127.0.0.1:9 EDGECMS_ADDR=127.0.0.1:$eport \
  "$tmp/edgecms" edge 2>"$tmp/edge.log" &
epid=$!
pids+=($epid)

item=${BENCH_ITEM:-17}
nurl="http://127.0.0.1:$nport/bench/fetch/en-us/item/$item/d1.json"
eurl="http://127.0.0.1:$eport/bench/fetch/en-us/item/$item"
waitup "$nurl"
waitup "$eurl"
# Same bytes from both, and the edge answers from memory.
nbody=$(curl -sf -H "APIKey: $key" "$nurl")
ebody=$(curl -sf -H "APIKey: $key" "$eurl")
[ "$nbody" = "$ebody" ] || { echo "nginx and the edge serve different bodies" >&2; exit 1; }
curl -sf -D - -o /dev/null -H "APIKey: $key" "$eurl" | grep -qi '^x-cache: HIT' || { echo "the edge does not answer from its cache" >&2; exit 1; }

# CPU time (clock ticks) used so far by a process and its children (nginx's
# workers): a figure that other load on the machine disturbs less than
# throughput.
ticks() { local t=0 f; for p in $1 $(pgrep -P "$1"); do read -r -a f <"/proc/$p/stat"; t=$((t + f[13] + f[14])); done; echo $t; }

run() { # name url pid
  echo "== $1: wrk -t$threads -c$conns -d${secs}s --latency $2" >&2
  local before; before=$(ticks "$3")
  wrk -t"$threads" -c"$conns" -d"${secs}s" --latency -H "APIKey: $key" "$2" | tee "$tmp/$1.wrk" >&2
  echo $(( $(ticks "$3") - before )) >"$tmp/$1.ticks"
}
run nginx "$nurl" "$npid"
run edge "$eurl" "$epid"

rps() { awk '/^Requests\/sec:/ {print $2}' "$tmp/$1.wrk"; }
p99() { awk '$1 == "99%" {print $2}' "$tmp/$1.wrk"; }
cpu() { awk -v t="$(cat "$tmp/$1.ticks")" -v hz="$(getconf CLK_TCK)" '/requests in/ {printf "%.1f", t / hz * 1e6 / $1}' "$tmp/$1.wrk"; }
echo
echo "body $(printf %s "$ebody" | wc -c) bytes, $conns connections, $threads wrk threads, ${secs}s each, server workers $workers, $(nproc) CPUs shared by wrk and the server, load average $(cut -d' ' -f1 /proc/loadavg)"
printf '%-6s %10s req/s   p99 %-8s  %6s us CPU/request\n' nginx "$(rps nginx)" "$(p99 nginx)" "$(cpu nginx)" edge "$(rps edge)" "$(p99 edge)" "$(cpu edge)"
awk -v e="$(rps edge)" -v n="$(rps nginx)" 'BEGIN { printf "edge / nginx = %.2fx (target >= 1.0x; edge p99 target <= 2 ms)\n", e / n }'
