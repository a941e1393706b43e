#!/usr/bin/env bash
# make profile: where the CPU of one request goes, by process and by function (docs/benchmarks.md, "The cost of a
# request"). Release binaries (as make bench), a private PostgreSQL with pg_stat_statements and Redis, identity and the
# gateway; then for each target of PROFILE_TARGETS (default: all of identity-direct, gateway, hello and their
# -callgrind runs):
#   wrk at 64 connections for PROFILE_SECONDS (10) under `perf record -a -g` (the whole machine: every process of the
#   request path, the kernel included), and writes to .lantern/profile/:
#     <target>.wrk.txt    wrk's figures
#     <target>.cpu.txt    CPU per request by process (scripts/bench/cpu.py)
#     <target>.perf.txt   each process's functions by their own share of its samples (perf report --no-children)
#     <target>.pg.txt     the statements PostgreSQL ran, with calls and mean time (pg_stat_statements)
#   and for the -callgrind targets, <target>.callgrind.txt: instructions per request by function (see callgrind below).
# PROFILE_NO_BUILD=1 uses the release binaries as they are. perf needs kernel.perf_event_paranoid ≤ 1 or root.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/services.sh"

PG_PORT="${LANTERN_PROFILE_PG_PORT:-54341}"
REDIS_PORT="${LANTERN_PROFILE_REDIS_PORT:-63811}"
SECONDS_EACH="${PROFILE_SECONDS:-10}"
TARGETS=",${PROFILE_TARGETS:-identity-direct,gateway,hello,identity-callgrind,gateway-callgrind,hello-callgrind},"
OUT="$STATE/profile"
mkdir -p "$OUT"

ensure_packages --bench
command -v perf > /dev/null || die "perf is not installed (Debian: linux-perf)"
if [ -z "${PROFILE_NO_BUILD:-}" ]; then
  say "building release binaries"
  for product in identity gateway lantern-bench; do swift_build -c release --product "$product"; done
fi
BIN="$(cd "$ROOT" && swift build -c release --show-bin-path)"

start_postgres profile "$PG_PORT" "-c fsync=off -c synchronous_commit=off -c shared_preload_libraries=pg_stat_statements"
start_redis profile "$REDIS_PORT"
ADMIN_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/postgres"
psql_url "$ADMIN_URL" "DROP DATABASE IF EXISTS lantern_profile WITH (FORCE)"
psql_url "$ADMIN_URL" "CREATE DATABASE lantern_profile"
DB_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern_profile"
psql_url "$DB_URL" "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"

PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done; done
  stop_redis profile "$REDIS_PORT"; stop_postgres profile
}
trap cleanup EXIT

# The same settings as make bench: rate limits lifted, access lines off (LOG_LEVEL=warning), pool of 8.
export DATABASE_URL="$DB_URL?pool=8"
export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0" LOG_LEVEL=warning HTTP_HOST=127.0.0.1 LANTERN_ENVIRONMENT=development
export RATE_LIMIT_USER_PER_MINUTE=10000000 RATE_LIMIT_SIGNIN_PER_MINUTE=100000 RATE_LIMIT_DEVICE_SIGNIN_PER_DAY=1000000
export_service_urls 127.0.0.1 20000
export_service_secrets "$OUT/service-secret"
HTTP_PORT=28081 "$BIN/identity" > "$OUT/identity.log" 2>&1 & PIDS+=($!)
wait_http http://127.0.0.1:29081/health/ready 60 || die "identity did not start (see $OUT/identity.log)"
HTTP_PORT=28080 "$BIN/gateway" > "$OUT/gateway.log" 2>&1 & PIDS+=($!)
wait_http http://127.0.0.1:28080/health/live 60 || die "gateway did not start (see $OUT/gateway.log)"
"$BIN/lantern-bench" hello-server --port 28096 > "$OUT/hello.log" 2>&1 & PIDS+=($!)
wait_http http://127.0.0.1:28096/health/live 30 || die "the hello server did not start"

TOKEN=$(curl -fsS -X POST http://127.0.0.1:28080/v1/auth/device -H 'Content-Type: application/json' \
  -d "{\"deviceId\":\"$(cat /proc/sys/kernel/random/uuid)\",\"app\":\"luckyday\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')
export TOKEN
wrk -t1 -c8 -d3s -s "$ROOT/scripts/bench/bearer.lua" http://127.0.0.1:28080/v1/me > /dev/null

# profile NAME URL: one target under perf.
profile() {
  local name="$1" url="$2"
  [[ "$TARGETS" == *",$name,"* ]] || return 0
  say "profiling $name: wrk 64 connections, ${SECONDS_EACH}s, perf record -a -g"
  psql_url "$DB_URL" "SELECT pg_stat_statements_reset()" > /dev/null
  python3 "$ROOT/scripts/bench/cpu.py" snapshot "$OUT/$name.cpu-before"
  perf record -a -g -F 999 -o "$OUT/$name.perf.data" -- sleep "$SECONDS_EACH" 2> "$OUT/$name.perf.log" &
  local perf=$!
  local TIMEFORMAT="%U %S"
  { time wrk -t1 -c64 -d"${SECONDS_EACH}s" --latency -s "$ROOT/scripts/bench/bearer.lua" "$url" > "$OUT/$name.wrk.txt"; } 2> "$OUT/$name.wrk.err"
  wait "$perf" || true
  python3 "$ROOT/scripts/bench/cpu.py" snapshot "$OUT/$name.cpu-after"
  python3 "$ROOT/scripts/bench/cpu.py" report "$name" "$OUT/$name.cpu-before" "$OUT/$name.cpu-after" "$OUT/$name.wrk.txt" \
    "$(tail -n 1 "$OUT/$name.wrk.err" | awk '{print $1 + $2}')" | tee "$OUT/$name.cpu.txt"
  perf report -i "$OUT/$name.perf.data" --no-children --sort comm,dso,symbol --percent-limit 0.3 --stdio 2> /dev/null \
    | grep -v '^$' | grep -v '^#' | grep -E '^ +[0-9]' > "$OUT/$name.perf.txt" || true
  psql_url "$DB_URL" "SELECT format('calls=%s mean=%sms rows=%s: %s', calls, round(mean_exec_time::numeric, 4), rows, left(regexp_replace(query, '\s+', ' ', 'g'), 200)) FROM pg_stat_statements ORDER BY calls DESC LIMIT 10" > "$OUT/$name.pg.txt"
  grep -E 'Requests/sec' "$OUT/$name.wrk.txt"
}
profile identity-direct http://127.0.0.1:28081/v1/me
profile gateway http://127.0.0.1:28080/v1/me
profile hello http://127.0.0.1:28096/v1/me

# callgrind NAME PORT EXECUTABLE [ARGS…]: EXECUTABLE under callgrind on PORT (the same database and Redis), 300
# warm-up requests, then 1,000 GET /v1/me on one keep-alive connection, one at a time; writes <name>.callgrind.txt,
# the instructions per request of each function (its own, not its callees'), the most first, and the total. Swift's
# async functions resume in jobs that callgrind cannot tie to their caller, so only own counts are meaningful.
callgrind() {
  local name="$1" port="$2" executable="$3"; shift 3
  [[ "$TARGETS" == *",$name,"* ]] || return 0
  command -v valgrind > /dev/null || { warn "valgrind is not installed: no $name"; return 0; }
  say "callgrind $name: 1,000 requests on one connection"
  local out="$OUT/$name.callgrind"
  rm -f "$out".*
  # valgrind 3.19 cannot read Swift's DWARF 5 (a copy without debug information keeps the symbols), and needs the
  # sigsuspend shim (scripts/bench/sigsuspend-shim.c).
  strip --strip-debug -o "$OUT/$name.bin" "$executable"
  clang -shared -fPIC -O2 -o "$OUT/sigsuspend-shim.so" "$ROOT/scripts/bench/sigsuspend-shim.c"
  HTTP_PORT="$port" OPS_PORT=$((port + 1000)) LD_PRELOAD="$OUT/sigsuspend-shim.so" \
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" "$OUT/$name.bin" "$@" > "$OUT/$name.valgrind.log" 2>&1 &
  local vg=$!
  wait_http "http://127.0.0.1:$port/health/live" 300 || { warn "$name did not start under valgrind"; kill "$vg"; return 0; }
  callgrind_control -i on "$vg" > /dev/null
  python3 "$ROOT/scripts/bench/requests.py" "http://127.0.0.1:$port/v1/me" 300 > /dev/null
  callgrind_control -z "$vg" > /dev/null
  python3 "$ROOT/scripts/bench/requests.py" "http://127.0.0.1:$port/v1/me" 1000
  callgrind_control -d busy "$vg" > /dev/null
  kill -TERM "$vg"; wait "$vg" 2>/dev/null || true
  callgrind_annotate --threshold=98 "$out.1" 2> /dev/null | swift demangle --simplified \
    | awk '/^[ 0-9,]+ \(/ || /PROGRAM TOTALS/ { gsub(",", "", $1); printf "%9d %s\n", $1 / 1000, substr($0, index($0, $2)) }' \
    > "$OUT/$name.callgrind.txt"
  head -n 1 "$OUT/$name.callgrind.txt"
}
callgrind identity-callgrind 28097 "$BIN/identity"
# The gateway under callgrind proxies to the identity above (IDENTITY_URL), which runs as usual.
callgrind gateway-callgrind 28099 "$BIN/gateway"
callgrind hello-callgrind 28098 "$BIN/lantern-bench" hello-server --port 28098
say "profiles in $OUT (<target>.perf.txt, .cpu.txt, .pg.txt); perf report -i $OUT/<target>.perf.data for call graphs"
