#!/usr/bin/env bash
# make bench: release build, a private PostgreSQL + Redis, identity and gateway with rate limits lifted, then
#   1. GET /v1/me through the gateway, through nginx and straight to identity (wrk, 64 connections), then
#      instructions per proxied request of the gateway and of nginx (callgrind),
#   2. the event bus (lantern-bench bus),
#   3. resident memory of each idle executable,
#   4. Pairly real-time (upload → WebSocket, idle sockets),
#   5. push-worker → fake APNs (TLS, HTTP/2) throughput,
#   6. astrology: a natal chart in process next to libswe's floor, and charts/s through the gateway,
#   7. Lucky Day: 8,000 users (BENCH_LUCKYDAY_USERS) with 30 days of history break their made-ahead cookies through
#      the gateway next to GET /v1/me of the same run (and at content; BENCH_PG_STATEMENTS=1 adds the statements and
#      sequential scans of PostgreSQL), breaking with an 8 s slow
#      model (5 s budget), the local generator and the router's overhead in process, content's idle memory,
#   8. AstroSvitla: purchase verification, local reports and PDFs in process; its catalogue through the gateway,
#   9. RoastMeLater: roasts written (local generator) and the large widget read through the gateway, each next to
#      GET /v1/me of the same run; the local generator and share cards in process,
#  10. gamification: check-ins (a write) and the profile (a read) through the gateway next to GET /v1/me of the
#      same run; roast events at 1,000/s (lag, none lost); its idle memory,
#  11. symbi: metrics uploads (a write) and the pet's state (a read) through the gateway next to GET /v1/me of the
#      same run; health-brain's purge of 1,000,000 raw rows next to a bare DELETE of as many; the day's brain for
#      100,000 users (BENCH_SYMBI_USERS) with a fake Gemini at its rate limit: none missed, none twice, memory.
#  12. evolution: evolution-worker's local drawing of a 1024×1024 evolution (p50, target ≤ 200 ms); a burst of 1,000
#      image jobs (BENCH_EVOLUTION_JOBS) against a fake Gemini image model at 5 requests/s (BENCH_EVOLUTION_RATE), below what the worker can draw:
#      none lost, none twice, memory by tenth of the jobs done.
# PostgreSQL pool: 8 connections (≈ 4 × cores); 32 measured worse here (p99 ×7 from backend contention).
# Every wrk run is followed by its CPU per request by process (cpu.<run>: gateway, the service, postgres, redis-server,
# wrk…). Figures go to stdout and .lantern/bench/results.txt; docs/benchmarks.md records them with the machine.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/services.sh"

PG_PORT="${LANTERN_BENCH_PG_PORT:-54339}"
REDIS_PORT="${LANTERN_BENCH_REDIS_PORT:-63809}"
DURATION="${BENCH_DURATION:-15s}"
CONNECTIONS="${BENCH_CONNECTIONS:-64}"
OUT="$STATE/bench/results.txt"
# BENCH_ONLY=realtime,push runs only those parts (http, instructions, bus, realtime, push, astrology, luckyday,
# astrosvitla, roastmelater, gamification, symbi, evolution); all by default.
ONLY=",${BENCH_ONLY:-http,instructions,bus,realtime,push,astrology,luckyday,astrosvitla,roastmelater,gamification,symbi,evolution},"
part() { [[ "$ONLY" == *",$1,"* ]]; }

ensure_packages --bench
# BENCH_PG_STATEMENTS=1: PostgreSQL counts its statements (pg_stat_statements), and the writes measured through the
# gateway (Lucky Day's breaks, roasts, check-ins, metrics uploads) are each followed by the statements that took the
# most time and the tables read by sequential scans.
PG_OPTIONS="-c fsync=off -c synchronous_commit=off"
[ -n "${BENCH_PG_STATEMENTS:-}" ] && PG_OPTIONS+=" -c shared_preload_libraries=pg_stat_statements"
start_postgres bench "$PG_PORT" "$PG_OPTIONS"
start_redis bench "$REDIS_PORT"
ADMIN_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/postgres"
psql_url "$ADMIN_URL" "DROP DATABASE IF EXISTS lantern_bench WITH (FORCE)"
psql_url "$ADMIN_URL" "CREATE DATABASE lantern_bench"
BENCH_DB_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern_bench"
[ -n "${BENCH_PG_STATEMENTS:-}" ] && psql_url "$BENCH_DB_URL" "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
# pg_counters_reset / pg_counters NAME: with BENCH_PG_STATEMENTS, zero PostgreSQL's counters, then print what ran since.
pg_counters_reset() {
  [ -n "${BENCH_PG_STATEMENTS:-}" ] || return 0
  psql_url "$BENCH_DB_URL" "SELECT pg_stat_statements_reset(), pg_stat_reset()" > /dev/null
}
pg_counters() {
  [ -n "${BENCH_PG_STATEMENTS:-}" ] || return 0
  psql_url "$BENCH_DB_URL" "SELECT format('pg.$1 statement calls=%s total=%sms mean=%sms rows=%s: %s', calls, round(total_exec_time), round(mean_exec_time::numeric, 3), rows, left(regexp_replace(query, '\s+', ' ', 'g'), 160)) FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 8" | tee -a "$OUT"
  psql_url "$BENCH_DB_URL" "SELECT format('pg.$1 table %s.%s seq_scan=%s seq_tup_read=%s idx_scan=%s', schemaname, relname, seq_scan, seq_tup_read, idx_scan) FROM pg_stat_user_tables WHERE seq_scan > 0 ORDER BY seq_tup_read DESC LIMIT 8" | tee -a "$OUT"
}

say "building release binaries (a first release build takes ~12 minutes)"
# Each executable's own module (its main.swift) is compiled anew: in release, cross-module optimization bakes into it
# the layout of types from modules it does not import (health-brain's configuration holds LanternLLM's), and the
# incremental build does not notice when those change. A stale main.swift.o once read the configuration's last
# field 8 bytes off and health-brain crashed at start. These modules are one small file each. Only their objects go:
# the build plan's files beside them (output-file-map.json) are written only when SwiftPM plans anew, so a build
# whose plan is unchanged fails without them.
for entry in "${LANTERN_SERVICES[@]}" "astrology-bench" "lantern-bench"; do
  set -- $entry; rm -f "$ROOT/.build/release/${1//-/_}.build/"*.o
done
for entry in "${LANTERN_SERVICES[@]}" "astrology-bench" "lantern-bench"; do
  set -- $entry; swift_build -c release --product "$1"
done
BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)"

mkdir -p "$STATE/bench"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  # Every executable gone before its database and Redis are: one still shutting down would outlive the run (and hold
  # its port for the next) if they went first; one that has not stopped after 10 s is killed and named.
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then warn "$(ps -o comm= -p "$pid") ($pid) did not stop within 10 s of SIGTERM; killing it"; kill -KILL "$pid" 2>/dev/null || true; fi
  done
  if [ -s "$STATE/bench/nginx/nginx.pid" ]; then kill -QUIT "$(cat "$STATE/bench/nginx/nginx.pid")" 2>/dev/null || true; fi
  stop_redis bench "$REDIS_PORT"; stop_postgres bench
}
trap cleanup EXIT

export DATABASE_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern_bench?pool=8"
export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0" LOG_LEVEL=warning HTTP_HOST=127.0.0.1 LANTERN_ENVIRONMENT=development
export RATE_LIMIT_USER_PER_MINUTE=10000000 RATE_LIMIT_SIGNIN_PER_MINUTE=100000 RATE_LIMIT_DEVICE_SIGNIN_PER_DAY=1000000 DEVICE_SIGNIN_APPS=luckyday,pairly,astrosvitla,roastmelater,symbi
# Thousands of idle WebSockets need file descriptors (gateway and the client side).
ulimit -n 65536 2>/dev/null || ulimit -n 16384 2>/dev/null || true
# Each service on its port of Services/services.tsv + 10000; every <NAME>_URL points there.
export_service_urls 127.0.0.1 10000
export_service_secrets "$STATE/bench/service-secret"
HTTP_PORT=18081 "$BIN/identity" > "$STATE/bench/identity.log" 2>&1 & PIDS+=($!); IDENTITY_PID=$!
wait_http http://127.0.0.1:19081/health/ready 60 || die "identity did not start"
HTTP_PORT=18082 MEDIA_STORAGE_DIR="$STATE/bench/media" "$BIN/media" > "$STATE/bench/media.log" 2>&1 & PIDS+=($!)
wait_http http://127.0.0.1:19082/health/ready 60 || die "media did not start"
HTTP_PORT=18083 PLACES_FILE="$(ensure_gazetteer)" "$BIN/astrology" > "$STATE/bench/astrology.log" 2>&1 & PIDS+=($!)
wait_http http://127.0.0.1:19083/health/ready 60 || die "astrology did not start"
# content writes with its local grammars here (no model); the slow-model run below restarts it.
start_content() {
  HTTP_PORT=18084 SCHEDULER_INTERVAL_SECONDS=0.2 "$@" "$BIN/content" >> "$STATE/bench/content.log" 2>&1 & PIDS+=($!); CONTENT_PID=$!
  wait_http http://127.0.0.1:19084/health/ready 60 || die "content did not start"
}
start_content env
HTTP_PORT=18085 "$BIN/gamification" > "$STATE/bench/gamification.log" 2>&1 & PIDS+=($!); GAMIFICATION_PID=$!
wait_http http://127.0.0.1:19085/health/ready 60 || die "gamification did not start"
start_health_brain() {
  HTTP_PORT=18086 PURGE_INTERVAL_SECONDS=1 SYMBI_STORAGE_DIR="$STATE/bench/symbi" "$@" "$BIN/health-brain" >> "$STATE/bench/health-brain.log" 2>&1 & PIDS+=($!); HEALTH_BRAIN_PID=$!
  echo "$HEALTH_BRAIN_PID" > "$STATE/bench/health-brain.pid"
}
start_health_brain env
wait_http http://127.0.0.1:19086/health/ready 60 || die "health-brain did not start"
HTTP_PORT=18080 "$BIN/gateway" > "$STATE/bench/gateway.log" 2>&1 & PIDS+=($!); GATEWAY_PID=$!
wait_http http://127.0.0.1:19080/health/ready 60 || die "gateway did not start"

sleep 3
: > "$OUT"
"$BIN/lantern-bench" memory identity=$IDENTITY_PID gateway=$GATEWAY_PID content=$CONTENT_PID gamification=$GAMIFICATION_PID health-brain=$HEALTH_BRAIN_PID | tee -a "$OUT"

TOKEN=$(curl -fsS -X POST http://127.0.0.1:18080/v1/auth/device -H 'Content-Type: application/json' \
  -d "{\"deviceId\":\"$(cat /proc/sys/kernel/random/uuid)\",\"app\":\"luckyday\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')
export TOKEN

run_wrk() {
  local name="$1" url="$2" connections="${3:-$CONNECTIONS}" script="${4:-bearer.lua}"
  say "wrk $name: $connections connections, $DURATION"
  # CPU time per request of each process (scripts/bench/cpu.py): where a write's extra cost goes next to the floor's.
  python3 "$ROOT/scripts/bench/cpu.py" snapshot "$STATE/bench/cpu-$name.before"
  local TIMEFORMAT="%U %S" perf=""
  # BENCH_PERF=1: each run under `perf record -a -g` too (the whole machine), its functions by process in
  # perf-<run>.txt (as make profile writes them); the figures of such a run include perf's own cost.
  if [ -n "${BENCH_PERF:-}" ]; then
    perf record -a -g -F 999 -o "$STATE/bench/perf-$name.data" -- sleep "${DURATION%s}" 2> /dev/null & perf=$!
  fi
  { time wrk -t1 -c"$connections" -d"$DURATION" --latency -s "$ROOT/scripts/bench/$script" "$url" > "$STATE/bench/wrk-$name.txt"; } \
    2> "$STATE/bench/wrk-$name.err"
  if [ -n "$perf" ]; then
    wait "$perf" || true
    perf report -i "$STATE/bench/perf-$name.data" --no-children --sort comm,dso,symbol --percent-limit 0.3 --stdio 2> /dev/null \
      | grep -E '^ +[0-9]' > "$STATE/bench/perf-$name.txt" || true
  fi
  head -n -1 "$STATE/bench/wrk-$name.err" >&2  # wrk's own complaints; the last line is its CPU time
  python3 "$ROOT/scripts/bench/cpu.py" snapshot "$STATE/bench/cpu-$name.after"
  local rps p50 p99 non2xx
  rps=$(awk '/Requests\/sec/ {print $2}' "$STATE/bench/wrk-$name.txt")
  p50=$(awk '$1 == "50%" {print $2}' "$STATE/bench/wrk-$name.txt")
  p99=$(awk '$1 == "99%" {print $2}' "$STATE/bench/wrk-$name.txt")
  non2xx=$(awk '/Non-2xx/ {print $4}' "$STATE/bench/wrk-$name.txt")
  echo "http.$name rps=$rps p50=$p50 p99=$p99 non2xx=${non2xx:-0}" | tee -a "$OUT"
  python3 "$ROOT/scripts/bench/cpu.py" report "$name" "$STATE/bench/cpu-$name.before" "$STATE/bench/cpu-$name.after" \
    "$STATE/bench/wrk-$name.txt" "$(tail -n 1 "$STATE/bench/wrk-$name.err" | awk '{print $1 + $2}')" | tee -a "$OUT"
}
# nginx_conf NAME PROCESS-DIRECTIVES WORKER-CONNECTIONS PORT: $STATE/bench/nginx/NAME.conf, nginx proxying the bench's
# identity (18081) on PORT with keep-alive upstream connections; it checks no token and counts no limit.
nginx_conf() {
  mkdir -p "$STATE/bench/nginx"
  cat > "$STATE/bench/nginx/$1.conf" <<NGINX
$2
pid $STATE/bench/nginx/$1.pid;
error_log $STATE/bench/nginx/error.log warn;
events { worker_connections $3; }
http {
  access_log off;
  client_body_temp_path $STATE/bench/nginx/body;
  proxy_temp_path $STATE/bench/nginx/proxy;
  upstream identity { server 127.0.0.1:18081; keepalive 64; }
  server {
    listen 127.0.0.1:$4;
    # Host as the client sent it (127.0.0.1:<port>): the services of a development stack answer only their own names.
    location / { proxy_pass http://identity; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Host \$host; }
  }
}
NGINX
}
if part http; then
# Warm-up, then the measured runs.
wrk -t1 -c8 -d3s -s "$ROOT/scripts/bench/bearer.lua" http://127.0.0.1:18080/v1/me > /dev/null
run_wrk identity-direct http://127.0.0.1:18081/v1/me
run_wrk gateway http://127.0.0.1:18080/v1/me
# The peer: nginx (Debian) proxying the same identity in the same run, keep-alive upstream connections, one worker
# per core (the gateway runs one event loop per core); it checks no token and counts no limit.
nginx_conf nginx "worker_processes auto;" 4096 18090
NGINX_BIN="$(command -v nginx || echo /usr/sbin/nginx)"
"$NGINX_BIN" -p "$STATE/bench/nginx" -c "$STATE/bench/nginx/nginx.conf"
wait_http http://127.0.0.1:18090/health/live 10 || warn "nginx did not start"
run_wrk nginx http://127.0.0.1:18090/v1/me
"$NGINX_BIN" -p "$STATE/bench/nginx" -c "$STATE/bench/nginx/nginx.conf" -s stop || true
# Unloaded latency (one connection): what the gateway hop itself adds.
run_wrk identity-direct-1conn http://127.0.0.1:18081/v1/me 1
run_wrk gateway-1conn http://127.0.0.1:18080/v1/me 1
# The floors of issue #45, in the same run: H, a bare Hummingbird server's CPU per request (lantern-bench
# hello-server, the same server stack, a fixed body), and B, PostgreSQL's cost of one prepared key lookup (pgbench -S
# -M prepared, 16 clients, on the same server: two cores ÷ its rate).
"$BIN/lantern-bench" hello-server --port 18097 > "$STATE/bench/hello.log" 2>&1 & PIDS+=($!); HELLO_PID=$!
wait_http http://127.0.0.1:18097/health/live 30 || die "the hello server did not start"
run_wrk hello http://127.0.0.1:18097/v1/me
kill -TERM "$HELLO_PID" 2>/dev/null || true
psql_url "$ADMIN_URL" "DROP DATABASE IF EXISTS lantern_pgbench WITH (FORCE)"
psql_url "$ADMIN_URL" "CREATE DATABASE lantern_pgbench"
PGPASSWORD="$PG_PASSWORD" "$(pg_bindir)/pgbench" -h 127.0.0.1 -p "$PG_PORT" -U postgres -i -q -s 10 lantern_pgbench > /dev/null 2>&1
PGPASSWORD="$PG_PASSWORD" "$(pg_bindir)/pgbench" -h 127.0.0.1 -p "$PG_PORT" -U postgres -S -M prepared -c 16 -j 2 -T "${DURATION%s}" lantern_pgbench \
  > "$STATE/bench/pgbench.txt" 2>&1 || warn "pgbench failed (see $STATE/bench/pgbench.txt)"
PGBENCH_TPS=$(awk '/^tps = / {print $3; exit}' "$STATE/bench/pgbench.txt")
echo "pgbench.select tps=${PGBENCH_TPS:-0} B=$(awk -v t="${PGBENCH_TPS:-0}" 'BEGIN { printf "%.1f", (t > 0 ? 2e6 / t : 0) }')µs" | tee -a "$OUT"
# BENCH_BASELINE_BIN=<folder of release binaries of another commit> (scripts/bench-baseline.sh builds one): that
# commit's identity and gateway beside this one's, on a database and a Redis database of their own, and the floor
# through each gateway in turns (this, that, this, that): an A/B of the same run.
if [ -n "${BENCH_BASELINE_BIN:-}" ]; then
  psql_url "$ADMIN_URL" "DROP DATABASE IF EXISTS lantern_bench_base WITH (FORCE)"
  psql_url "$ADMIN_URL" "CREATE DATABASE lantern_bench_base"
  BASE_ENV=(DATABASE_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern_bench_base?pool=8"
            REDIS_URL="redis://127.0.0.1:$REDIS_PORT/1" IDENTITY_URL=http://127.0.0.1:18181)
  env "${BASE_ENV[@]}" HTTP_PORT=18181 OPS_PORT=19181 "$BENCH_BASELINE_BIN/identity" > "$STATE/bench/identity-base.log" 2>&1 & PIDS+=($!)
  wait_http http://127.0.0.1:19181/health/ready 60 || die "the baseline identity did not start (see $STATE/bench/identity-base.log)"
  env "${BASE_ENV[@]}" HTTP_PORT=18180 OPS_PORT=19180 "$BENCH_BASELINE_BIN/gateway" > "$STATE/bench/gateway-base.log" 2>&1 & PIDS+=($!)
  wait_http http://127.0.0.1:19180/health/ready 60 || die "the baseline gateway did not start (see $STATE/bench/gateway-base.log)"
  BASE_TOKEN=$(curl -fsS -X POST http://127.0.0.1:18180/v1/auth/device -H 'Content-Type: application/json' \
    -d "{\"deviceId\":\"$(cat /proc/sys/kernel/random/uuid)\",\"app\":\"luckyday\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')
  TOKEN="$BASE_TOKEN" wrk -t1 -c8 -d3s -s "$ROOT/scripts/bench/bearer.lua" http://127.0.0.1:18180/v1/me > /dev/null
  for turn in 1 2; do
    run_wrk "gateway-ab$turn" http://127.0.0.1:18080/v1/me
    TOKEN="$BASE_TOKEN" run_wrk "gateway-base-ab$turn" http://127.0.0.1:18180/v1/me
  done
  awk '$1 ~ /^http\.gateway-ab[12]$/ { sub("rps=", "", $2); now += $2 } $1 ~ /^http\.gateway-base-ab[12]$/ { sub("rps=", "", $2); base += $2 }
       END { printf "ab.floor this=%.0f baseline=%.0f ratio=%.2f (GET /v1/me through each gateway, mean of two turns)\n", now / 2, base / 2, (base > 0 ? now / base : 0) }' "$OUT" | tee -a "$OUT"
fi
# The targets' ratios, from this run's figures (cpu.<run> … <process>=<µs>µs).
cpu_of() { awk -v run="cpu.$1" -v process="$2" '$1 == run { for (i = 2; i <= NF; i++) if (index($i, process "=") == 1) { v = substr($i, length(process) + 2); sub("µs", "", v); print v } }' "$OUT"; }
rps_of() { awk -v run="http.$1" '$1 == run { sub("rps=", "", $2); print $2 }' "$OUT"; }
H=$(cpu_of hello lantern-bench); B=$(awk -v t="${PGBENCH_TPS:-0}" 'BEGIN { print (t > 0 ? 2e6 / t : 0) }')
awk -v identity="$(cpu_of identity-direct identity)" -v postgres="$(cpu_of identity-direct postgres)" -v gateway="$(cpu_of gateway gateway)" \
    -v h="$H" -v b="$B" -v through="$(rps_of gateway)" -v nginx="$(rps_of nginx)" 'BEGIN {
  printf "ratios.floor H=%sµs B=%.1fµs identity/H=%.2f postgres/B=%.2f gateway/H=%.2f gateway-rps/nginx-rps=%.2f\n",
    h, b, (h > 0 ? identity / h : 0), (b > 0 ? postgres / b : 0), (h > 0 ? gateway / h : 0), (nginx > 0 ? through / nginx : 0) }' | tee -a "$OUT"
fi

# Instructions per proxied request: the gateway and nginx each under callgrind (instruction counts do not move with
# the machine's load as times do), 300 warm-up requests, then 1,000 GET /v1/me on one keep-alive connection; the
# same time left idle afterwards is counted too and taken off (timers, rate-limit syncs).
count_instructions() {
  local name="$1" url="$2"; shift 2
  local out="$STATE/bench/callgrind-$name"
  rm -f "$out".*
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" "$@" > "$STATE/bench/valgrind-$name.log" 2>&1 &
  local vg=$!
  wait_http "$url/health/live" 300 || { warn "$name did not start under valgrind (see $STATE/bench/valgrind-$name.log)"; kill "$vg"; return; }
  callgrind_control -i on "$vg" > /dev/null
  python3 "$ROOT/scripts/bench/requests.py" "$url/v1/me" 300 > /dev/null
  callgrind_control -z "$vg" > /dev/null
  local run; run=$(python3 "$ROOT/scripts/bench/requests.py" "$url/v1/me" 1000)
  callgrind_control -d busy "$vg" > /dev/null
  sleep "$(sed 's/.*seconds=\([0-9.]*\).*/\1/' <<< "$run")"
  callgrind_control -d idle "$vg" > /dev/null
  kill -TERM "$vg"; wait "$vg" 2>/dev/null || true
  local busy idle
  busy=$(awk '/^summary:/ {print $2}' "$out.1"); idle=$(awk '/^summary:/ {print $2}' "$out.2")
  echo "instructions.$name per-request=$(( (busy - idle) / 1000 )) $run" | tee -a "$OUT"
}
if part instructions; then
say "instructions per proxied request (callgrind): gateway and nginx in front of the same identity"
TOKEN=$(curl -fsS -X POST http://127.0.0.1:18081/v1/auth/device -H 'Content-Type: application/json' \
  -d "{\"deviceId\":\"$(cat /proc/sys/kernel/random/uuid)\",\"app\":\"luckyday\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')
# valgrind 3.19 cannot read Swift's DWARF 5 debug information (a stripped copy keeps the symbols), and needs the
# sigsuspend shim (scripts/bench/sigsuspend-shim.c).
strip --strip-debug -o "$STATE/bench/gateway-callgrind" "$BIN/gateway"
clang -shared -fPIC -O2 -o "$STATE/bench/sigsuspend-shim.so" "$ROOT/scripts/bench/sigsuspend-shim.c"
HTTP_PORT=18095 OPS_PORT=19095 LD_PRELOAD="$STATE/bench/sigsuspend-shim.so" count_instructions gateway http://127.0.0.1:18095 "$STATE/bench/gateway-callgrind"
nginx_conf callgrind "daemon off; master_process off; worker_processes 1;" 1024 18091
# The floor: a bare Hummingbird server answering /v1/me itself (no token, no upstream).
strip --strip-debug -o "$STATE/bench/lantern-bench-callgrind" "$BIN/lantern-bench"
LD_PRELOAD="$STATE/bench/sigsuspend-shim.so" count_instructions hummingbird-floor http://127.0.0.1:18096 "$STATE/bench/lantern-bench-callgrind" hello-server --port 18096
count_instructions nginx http://127.0.0.1:18091 "$(command -v nginx || echo /usr/sbin/nginx)" -p "$STATE/bench/nginx" -c "$STATE/bench/nginx/callgrind.conf"
fi

if part bus; then
say "event bus"
"$BIN/lantern-bench" bus --redis "redis://127.0.0.1:$REDIS_PORT/0" | tee -a "$OUT"
fi

if part realtime; then
say "Pairly real-time: upload → WebSocket at 50 uploads/s, then ${BENCH_IDLE_SOCKETS:-5000} idle WebSockets"
"$BIN/lantern-bench" realtime --gateway http://127.0.0.1:18080 --image "$ROOT/Tests/ImageSanitizerTests/Fixtures/with-exif.jpg" \
  --rate 50 --seconds 10 --idle "${BENCH_IDLE_SOCKETS:-5000}" --gateway-pid "$GATEWAY_PID" | tee -a "$OUT"
fi

if part push; then
say "push-worker → fake APNs over HTTP/2"
"$BIN/lantern-bench" push --worker "$BIN/push-worker" --database-url "$DATABASE_URL" --redis "$REDIS_URL" \
  --users "${BENCH_PUSH_USERS:-1000}" --jobs "${BENCH_PUSH_JOBS:-20000}" | tee -a "$OUT"
fi

if part astrology; then
say "astrology: natal chart in process (vs the library's floor), then through the gateway"
PLACES_FILE="$(ensure_gazetteer)" "$BIN/astrology-bench" 5000 | tee -a "$OUT"
run_wrk astrology-natal-gateway http://127.0.0.1:18080/v1/astrology/charts/natal 16 natal.lua
# Place search under 50 concurrent requests: names being typed (prefix stage only), typos and other spellings
# (similarity stage), and a mix of both (about a quarter need the similarity stage); at the service itself, then
# through the gateway (where wrk, the gateway and the service share the machine's cores).
PLACES=typed run_wrk astrology-places-prefix-direct http://127.0.0.1:18083/v1/astrology/places 50 places.lua
PLACES=typos run_wrk astrology-places-typos-direct http://127.0.0.1:18083/v1/astrology/places 50 places.lua
PLACES=mixed run_wrk astrology-places-mixed-direct http://127.0.0.1:18083/v1/astrology/places 50 places.lua
PLACES=typed run_wrk astrology-places-prefix http://127.0.0.1:18080/v1/astrology/places 50 places.lua
PLACES=typos run_wrk astrology-places-typos http://127.0.0.1:18080/v1/astrology/places 50 places.lua
PLACES=mixed run_wrk astrology-places-mixed http://127.0.0.1:18080/v1/astrology/places 50 places.lua
fi

if part luckyday; then
LUCKYDAY_USERS="${BENCH_LUCKYDAY_USERS:-8000}"
say "Lucky Day: $LUCKYDAY_USERS users with profiles, then each breaks a cookie made ahead (64 in flight)"
"$BIN/lantern-bench" luckyday setup --users "$LUCKYDAY_USERS" --tokens "$STATE/bench/luckyday-tokens.txt" | tee -a "$OUT"
# The next fortune of every user is made in the background; wait until all are.
LUCKYDAY_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern_bench"
for _ in $(seq 1 1200); do
  made=$(psql_url "$LUCKYDAY_URL" "SELECT count(*) FROM content.next_fortunes")
  [ "$made" -ge "$LUCKYDAY_USERS" ] && break; sleep 0.5
done
say "fortunes made ahead: $made"
# A service that has run for a while: 30 days of revealed fortunes per user (the latest opened more than 24 hours
# ago, so every cookie is ready to break), then VACUUM ANALYZE, as pgbench does before it measures, so that plans are
# made on the tables' real sizes.
psql_url "$LUCKYDAY_URL" "
  INSERT INTO content.fortunes (id, user_id, text, text_hash, artisanal, source, revealed_at, opens_again_at)
  SELECT gen_random_uuid(), p.user_id, 'A past fortune, day ' || d || ', for ' || p.user_id, sha256(convert_to(d || p.user_id::text, 'UTF8')),
         true, 'local', now() - make_interval(days => d + 1), now() - make_interval(days => d)
  FROM content.luckyday_profiles p, generate_series(1, 30) AS d;
  UPDATE content.luckyday_profiles p SET latest_fortune_id = (SELECT id FROM content.fortunes f WHERE f.user_id = p.user_id
                                                               ORDER BY revealed_at DESC LIMIT 1)" > /dev/null
psql_url "$LUCKYDAY_URL" "VACUUM ANALYZE" > /dev/null
say "history: $(psql_url "$LUCKYDAY_URL" "SELECT count(*) FROM content.fortunes") fortunes revealed before the run"
# Three quarters break through the gateway, next to the floor of the same run before and after (wrk, 64 connections,
# GET /v1/me as the same users); the rest straight to content. Each user breaks once (break.lua).
head -n $(( LUCKYDAY_USERS * 3 / 4 )) "$STATE/bench/luckyday-tokens.txt" > "$STATE/bench/luckyday-gateway.txt"
tail -n +$(( LUCKYDAY_USERS * 3 / 4 + 1 )) "$STATE/bench/luckyday-tokens.txt" > "$STATE/bench/luckyday-direct.txt"
TOKENS_FILE="$STATE/bench/luckyday-gateway.txt" run_wrk luckyday-me-gateway http://127.0.0.1:18080/v1/me 64 users.lua
pg_counters_reset
TOKENS_FILE="$STATE/bench/luckyday-gateway.txt" CONNECTIONS=64 DURATION=120s \
  run_wrk luckyday-break-gateway http://127.0.0.1:18080/v1/fortunes/today/break 64 break.lua
pg_counters luckyday-break-gateway
TOKENS_FILE="$STATE/bench/luckyday-gateway.txt" run_wrk luckyday-me-gateway-after http://127.0.0.1:18080/v1/me 64 users.lua
TOKENS_FILE="$STATE/bench/luckyday-direct.txt" CONNECTIONS=64 DURATION=120s \
  run_wrk luckyday-break-direct http://127.0.0.1:18084/v1/fortunes/today/break 64 break.lua
say "fortunes revealed: $(psql_url "$LUCKYDAY_URL" "SELECT count(*) FROM content.fortunes")"

say "Lucky Day with a model 8 s slow: 64 new users break at once, before any fortune is made ahead (budget 5 s)"
"$BIN/lantern-bench" fake-llm --delay 8 --port-file "$STATE/bench/fake-llm.port" > "$STATE/bench/fake-llm.log" 2>&1 & PIDS+=($!); FAKE_PID=$!
for _ in $(seq 1 100); do [ -s "$STATE/bench/fake-llm.port" ] && break; sleep 0.1; done
kill -TERM "$CONTENT_PID"; wait "$CONTENT_PID" 2>/dev/null || true
start_content env GEMINI_API_KEY=test-gemini-key GEMINI_BASE_URL="http://127.0.0.1:$(cat "$STATE/bench/fake-llm.port")" \
  LLM_MODELS=gemini:gemini-2.5-flash LLM_MODELS_PROFILE=local
"$BIN/lantern-bench" luckyday setup --users 64 --concurrency 64 --tokens "$STATE/bench/luckyday-slow.txt" > /dev/null
"$BIN/lantern-bench" luckyday break --url http://127.0.0.1:18080 --tokens "$STATE/bench/luckyday-slow.txt" --name break-model-8s-slow | tee -a "$OUT"
kill -TERM "$FAKE_PID" 2>/dev/null || true

say "the LLM layer in process"
"$BIN/lantern-bench" llm --catalogue "$ROOT/Services/Content/Sources/LuckyDay/Catalogue/luckyday.json" | tee -a "$OUT"
fi

if part astrosvitla; then
say "AstroSvitla: purchase verification, local reports and PDFs in process; the catalogue through the gateway"
ASTRO_TOKEN=$(curl -fsS -X POST http://127.0.0.1:18080/v1/auth/device -H 'Content-Type: application/json' \
  -d "{\"deviceId\":\"$(cat /proc/sys/kernel/random/uuid)\",\"app\":\"astrosvitla\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')
# A real chart picture for the PDFs (Kyiv, 1990-05-17 14:35), from astrology itself.
curl -fsS -X POST http://127.0.0.1:18080/v1/astrology/charts/natal.svg -H "Authorization: Bearer $ASTRO_TOKEN" -H 'Content-Type: application/json' \
  -d '{"date":"1990-05-17","time":"14:35","place":{"latitude":50.45,"longitude":30.52,"timeZone":"Europe/Kyiv"}}' > "$STATE/bench/chart.svg"
"$BIN/lantern-bench" astrosvitla --svg "$STATE/bench/chart.svg" | tee -a "$OUT"
CHART=$(printf '%064d' 0)
wrk -t1 -c8 -d3s -s "$ROOT/scripts/bench/bearer.lua" "http://127.0.0.1:18080/v1/reports/areas?chart=$CHART" > /dev/null
# The catalogue at 64 connections through the gateway, next to the floor of the same run (GET /v1/me, one SELECT).
TOKEN="$ASTRO_TOKEN" run_wrk astrosvitla-catalogue-gateway "http://127.0.0.1:18080/v1/reports/areas?chart=$CHART" 64
TOKEN="$ASTRO_TOKEN" run_wrk astrosvitla-me-gateway http://127.0.0.1:18080/v1/me 64
TOKEN="$ASTRO_TOKEN" run_wrk astrosvitla-catalogue-direct "http://127.0.0.1:18084/v1/reports/areas?chart=$CHART" 64
fi

# bus_settled LABEL SERVICE: waits (at most 60 s) until SERVICE's outbox is empty and every consumer group of its
# stream has read and acknowledged everything; prints how long that took.
bus_settled() {
  local started=$SECONDS db="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern_bench"
  while [ $((SECONDS - started)) -lt 60 ]; do
    local left waiting last
    left=$(psql_url "$db" "SELECT count(*) FROM $2.outbox")
    # Caught up: nothing pending, and the last entry delivered is the stream's last (a group's `lag` can be unknown
    # once the stream has been trimmed).
    last=$(redis-cli -p "$REDIS_PORT" XINFO STREAM "lantern.events.$2" 2>/dev/null | awk 'prev == "last-generated-id" { print; exit } { prev = $0 }')
    waiting=$(redis-cli -p "$REDIS_PORT" XINFO GROUPS "lantern.events.$2" 2>/dev/null \
      | awk -v last="$last" '(prev == "pending" && $0 != "0") || (prev == "last-delivered-id" && $0 != last) { n++ } { prev = $0 } END { print n + 0 }')
    [ "$left" = 0 ] && [ "$waiting" = 0 ] && { say "bus settled after $((SECONDS - started)) s (${1##*/})"; return 0; }
    sleep 0.5
  done
  say "bus not settled after 60 s (${1##*/}): measuring anyway"
}

# device_users APP FILE [COUNT]: COUNT (64) new device accounts of APP, one access token per line.
device_users() {
  : > "$2"
  for _ in $(seq 1 "${3:-64}"); do
    curl -fsS -X POST http://127.0.0.1:18080/v1/auth/device -H 'Content-Type: application/json' \
      -d "{\"deviceId\":\"$(cat /proc/sys/kernel/random/uuid)\",\"app\":\"$1\"}" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])' >> "$2"
  done
}
roastmelater_users() { device_users roastmelater "$@"; }
if part roastmelater; then
say "RoastMeLater: 64 device users; roasts written and the large widget read through the gateway, next to GET /v1/me"
roastmelater_users "$STATE/bench/roastmelater-tokens.txt"
# Each user's widget, and its roast of the day made ahead by content's periodic work (the local grammar).
while read -r token; do
  curl -fsS -X PUT http://127.0.0.1:18080/v1/widgets/roastmelater/settings -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"categories":["meetings","tech","email"],"maxSpice":4,"language":"vi","timeZone":"Asia/Ho_Chi_Minh"}' > /dev/null
done < "$STATE/bench/roastmelater-tokens.txt"
ROAST_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern_bench"
for _ in $(seq 1 120); do
  made=$(psql_url "$ROAST_URL" "SELECT count(*) FROM content.roasts_of_the_day")
  [ "$made" -ge 64 ] && break; sleep 0.5
done
say "roasts of the day made ahead: $made"
export TOKENS_FILE="$STATE/bench/roastmelater-tokens.txt"
run_wrk roastmelater-me-gateway http://127.0.0.1:18080/v1/me 64 users.lua
pg_counters_reset
run_wrk roastmelater-roast-gateway http://127.0.0.1:18080/v1/roasts 64 roast.lua
pg_counters roast
# The widget is measured once the roasts' events are through: content's outbox relayed and every group that reads
# content's stream (gamification counts each roast) caught up, so the read is not measured against their catch-up.
bus_settled "$STATE/bench/roastmelater-roast-gateway" content
run_wrk roastmelater-widget-gateway "http://127.0.0.1:18080/v1/widgets/roastmelater?size=large" 64 users.lua
run_wrk roastmelater-me-gateway-after http://127.0.0.1:18080/v1/me 64 users.lua
"$BIN/lantern-bench" roastmelater | tee -a "$OUT"
fi

if part gamification; then
# 640 users, ten per connection: a user opens the app now and then, not ten times a second (with 64, every
# check-in would race the same users' other check-ins, which no app does).
say "gamification: 640 RoastMeLater users; check-ins and the profile through the gateway next to GET /v1/me; roast events at 1,000/s"
roastmelater_users "$STATE/bench/gamification-tokens.txt" 640
export TOKENS_FILE="$STATE/bench/gamification-tokens.txt"
run_wrk gamification-me-gateway http://127.0.0.1:18080/v1/me 64 users.lua
pg_counters_reset
run_wrk gamification-checkin-gateway http://127.0.0.1:18080/v1/gamification/check-ins 64 checkin.lua
pg_counters checkin
run_wrk gamification-profile-gateway http://127.0.0.1:18080/v1/gamification/profile 64 users.lua
run_wrk gamification-me-gateway-after http://127.0.0.1:18080/v1/me 64 users.lua
"$BIN/lantern-bench" gamification --redis "$REDIS_URL" --database-url "postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern_bench" \
  --rate "${BENCH_GAMIFICATION_RATE:-1000}" --seconds 10 | tee -a "$OUT"
fi

if part symbi; then
say "Symbi: 640 device users; metrics uploads and the state through the gateway next to GET /v1/me; the raw-data purge; the day's brain"
device_users symbi "$STATE/bench/symbi-tokens.txt" 640
export TOKENS_FILE="$STATE/bench/symbi-tokens.txt"
run_wrk symbi-me-gateway http://127.0.0.1:18080/v1/me 64 users.lua
pg_counters_reset
run_wrk symbi-metrics-gateway http://127.0.0.1:18080/v1/symbi/metrics 64 symbi-metrics.lua
pg_counters upload
run_wrk symbi-state-gateway http://127.0.0.1:18080/v1/symbi/state 64 users.lua
run_wrk symbi-me-gateway-after http://127.0.0.1:18080/v1/me 64 users.lua
SYMBI_DB="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern_bench"
"$BIN/lantern-bench" symbi purge --database-url "$SYMBI_DB" --rows "${BENCH_SYMBI_PURGE_ROWS:-1000000}" | tee -a "$OUT"
# The day's brain: health-brain again, now with a fake Gemini that takes 1,000 requests a second (then 429 with
# RetryInfo), asked for at most 80 every 0.1 s, all 80 at once.
kill -TERM "$HEALTH_BRAIN_PID"; for _ in $(seq 1 100); do kill -0 "$HEALTH_BRAIN_PID" 2>/dev/null || break; sleep 0.1; done
rm -f "$STATE/bench/fake-gemini.port" "$STATE/bench/health-brain.pid"
"$BIN/lantern-bench" symbi brain --database-url "$SYMBI_DB" --users "${BENCH_SYMBI_USERS:-100000}" --rate 1000 \
  --port-file "$STATE/bench/fake-gemini.port" --ready http://127.0.0.1:19086 --pid-file "$STATE/bench/health-brain.pid" > "$STATE/bench/symbi-brain.txt" &
BRAIN_BENCH=$!
for _ in $(seq 1 100); do [ -s "$STATE/bench/fake-gemini.port" ] && break; sleep 0.1; done
start_health_brain env GEMINI_API_KEY=test-gemini-key GEMINI_BASE_URL="http://127.0.0.1:$(cat "$STATE/bench/fake-gemini.port")" \
  LLM_MODELS_SYMBI_BRAIN=gemini:gemini-bench BRAIN_CALLS_PER_PASS=80 BRAIN_INTERVAL_SECONDS=0.1 BRAIN_CONCURRENCY=80
wait "$BRAIN_BENCH" || die "the brain benchmark failed (see $STATE/bench/health-brain.log)"
tee -a "$OUT" < "$STATE/bench/symbi-brain.txt"
fi

if part evolution; then
say "evolution-worker: the local drawing of 1024×1024 evolutions; ${BENCH_EVOLUTION_JOBS:-1000} image jobs against a fake image model at ${BENCH_EVOLUTION_RATE:-5} requests/s"
"$BIN/lantern-bench" evolution draw --size 1024 --count 60 | tee -a "$OUT"
"$BIN/lantern-bench" evolution burst --worker "$BIN/evolution-worker" --database-url "postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern_bench" \
  --redis "$REDIS_URL" --jobs "${BENCH_EVOLUTION_JOBS:-1000}" --rate "${BENCH_EVOLUTION_RATE:-5}" | tee -a "$OUT"
fi

"$BIN/lantern-bench" memory identity=$IDENTITY_PID gateway=$GATEWAY_PID content=$CONTENT_PID gamification=$GAMIFICATION_PID health-brain=$HEALTH_BRAIN_PID | sed 's/^memory/after-load.memory/' | tee -a "$OUT"
say "results in $OUT"
