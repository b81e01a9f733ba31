#!/usr/bin/env bash
# Edge cache-hit throughput against nginx serving the same object files.
#
# edgeseed writes a folder store (1000 items of ~1 KiB, the key manifest);
# nginx serves the folder as static files, the edge ("edgecms edge", no
# database, the origin unused) serves the same objects through the Fetch API
# with its key check and headers. Both are measured with the same wrk
# settings on the same item, one run each; the script prints both figures
# and the ratio. Targets: edge >= 1.0x nginx, edge p99 <= 2 ms at 64
# connections.
#
#   bash scripts/bench/edge-nginx.sh      # needs nginx and wrk (apt-get install -y nginx wrk)
#
# BENCH_SECONDS (default 10), BENCH_CONNECTIONS (64), BENCH_SIZE (body
# bytes, 1024) change the run; BENCH_NGINX_PORT and BENCH_EDGE_PORT fix the
# loopback ports (default: free ones).
#
# wrk and the servers share the machine. Unpinned, on a small machine they
# compete for the same cores, and the figures measure how the kernel shares
# them more than the servers. So by default (BENCH_PIN=1, on 2 CPUs or more)
# wrk runs on CPU 0 and each server on the other CPUs (taskset), the same
# for both servers; BENCH_WORKERS (default: one per server CPU) is nginx's
# worker_processes and the edge's GOMAXPROCS, and wrk runs BENCH_THREADS
# threads (default 1, one per wrk CPU). BENCH_PIN=0 runs all unpinned, with
# BENCH_WORKERS defaulting to auto (nginx and Go each use every CPU) and
# BENCH_THREADS to 2.
#
# nginx serves the files as one would tune it for objects this small:
# sendfile off (BENCH_NGINX_SENDFILE=on puts back sendfile with tcp_nopush,
# the usual setting for large files, which for 1 KiB costs two setsockopt
# calls and a second send per response: about a quarter fewer requests per
# second), open file cache, no access log.
#
# Besides throughput and p99 the script prints each server's CPU time per
# request and how busy the server and wrk were (% of one CPU). A server well
# below 100 % was waiting for wrk or preempted by other work on the
# machine; wrk near 100 % set the pace itself (on one CPU of the
# development machine it tops out near 200,000 requests/s). Either way the
# throughput is then not the server's own, and its CPU time per request is
# the fairer figure.
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in nginx wrk; do
  command -v $tool >/dev/null || [ -x /usr/sbin/$tool ] || { echo "$tool is not installed: apt-get install -y nginx wrk" >&2; exit 1; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
secs=${BENCH_SECONDS:-10}
conns=${BENCH_CONNECTIONS:-64}
size=${BENCH_SIZE:-1024}
ncpu=$(nproc)
pin=${BENCH_PIN:-1}
[ "$ncpu" -ge 2 ] || pin=0
srvpin=() wrkpin=()
if [ "$pin" = 1 ]; then
  wrkcpus=0 srvcpus=1
  [ "$ncpu" -eq 2 ] || srvcpus=1-$((ncpu - 1))
  wrkpin=(taskset -c "$wrkcpus") srvpin=(taskset -c "$srvcpus")
  workers=${BENCH_WORKERS:-$((ncpu - 1))}
  threads=${BENCH_THREADS:-1}
  placement="wrk on CPU $wrkcpus, servers on CPU $srvcpus"
else
  workers=${BENCH_WORKERS:-auto}
  threads=${BENCH_THREADS:-2}
  placement="$ncpu CPUs shared by wrk and the server"
fi
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

# nginx: a foreground master on a free loopback port (see above for its
# settings).
nport=${BENCH_NGINX_PORT:-$(freeport)}
mkdir -p "$tmp/nginx"
sendfile="sendfile off;"
[ "${BENCH_NGINX_SENDFILE:-off}" = off ] || sendfile="sendfile on; tcp_nopush on;"
cat >"$tmp/nginx/nginx.conf" <<EOF
daemon off;
worker_processes $workers;
pid $tmp/nginx/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  $sendfile
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
${srvpin[@]+"${srvpin[@]}"} "$NGINX" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" 2>"$tmp/nginx.log" &
npid=$!
pids+=($npid)

eport=${BENCH_EDGE_PORT:-$(freeport)}
${srvpin[@]+"${srvpin[@]}"} env -u DATABASE_URL ${goprocs[@]+"${goprocs[@]}"} EDGECMS_STORE="$tmp/store" EDGECMS_ORIGIN_URL=http://127.0.0.1:9 EDGECMS_ADDR=127.0.0.1:$eport \
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
hz=$(getconf CLK_TCK)

# Steal: clock ticks the hypervisor gave the machine's CPUs to others (0
# on bare metal). A virtual machine that loses a few percent of its time
# loses it in pauses of milliseconds, which show in p99 whatever the
# server: the script prints it beside each run.
steal() { local f; read -r -a f </proc/stat; echo "${f[8]:-0}"; }

run() { # name url pid
  echo "== $1: ${wrkpin[*]} wrk -t$threads -c$conns -d${secs}s --latency $2" >&2
  local before start stolen; before=$(ticks "$3") start=$(date +%s%N) stolen=$(steal)
  # wrk's own CPU time, from bash's time (user + system of the child).
  { TIMEFORMAT='%U %S'; time ${wrkpin[@]+"${wrkpin[@]}"} wrk -t"$threads" -c"$conns" -d"${secs}s" --latency -H "APIKey: $key" "$2" >"$tmp/$1.wrk"; } 2>"$tmp/$1.wrkcpu"
  echo "$(( $(ticks "$3") - before )) $(( ($(date +%s%N) - start) / 1000000 )) $(( $(steal) - stolen ))" >"$tmp/$1.ticks" # ticks, ms, stolen ticks
  cat "$tmp/$1.wrk" >&2
}
load0=$(cut -d' ' -f1 /proc/loadavg)
run nginx "$nurl" "$npid"
run edge "$eurl" "$epid"

rps() { awk '/^Requests\/sec:/ {print $2}' "$tmp/$1.wrk"; }
p99() { awk '$1 == "99%" {print $2}' "$tmp/$1.wrk"; }
cpu() { read -r t _ <"$tmp/$1.ticks"; awk -v t="$t" -v hz="$hz" '/requests in/ {printf "%.1f", t / hz * 1e6 / $1}' "$tmp/$1.wrk"; }
busy() { read -r t el _ <"$tmp/$1.ticks"; awk -v t="$t" -v hz="$hz" -v el="$el" 'BEGIN {printf "%.0f", t / hz / el * 1e5}'; }
stolen() { read -r _ el st <"$tmp/$1.ticks"; awk -v st="$st" -v hz="$hz" -v el="$el" -v n="$ncpu" 'BEGIN {printf "%.1f", st / hz / (el / 1000 * n) * 100}'; }
wrkbusy() { read -r u s <"$tmp/$1.wrkcpu"; awk -v u="$u" -v s="$s" -v el="$secs" 'BEGIN {printf "%.0f", (u + s) / el * 100}'; }
echo
echo "body $(printf %s "$ebody" | wc -c) bytes, $conns connections, $threads wrk threads, ${secs}s each, server workers $workers, $placement, nginx $sendfile load average $load0 before, $(cut -d' ' -f1 /proc/loadavg) after"
for s in nginx edge; do
  printf '%-6s %10s req/s   p99 %-8s  %5s us CPU/request   server %3s%% busy, wrk %3s%%, %4s%% stolen\n' $s "$(rps $s)" "$(p99 $s)" "$(cpu $s)" "$(busy $s)" "$(wrkbusy $s)" "$(stolen $s)"
done
awk -v e="$(rps edge)" -v n="$(rps nginx)" 'BEGIN { printf "edge / nginx = %.2fx (target >= 1.0x; edge p99 target <= 2 ms)\n", e / n }'
