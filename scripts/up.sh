#!/usr/bin/env bash
# make up: install what is missing, start PostgreSQL and Redis, build and start every executable, wait until
# all are healthy, print the gateway URL.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/services.sh"

PG_PORT="${LANTERN_PG_PORT:-54320}"
REDIS_PORT="${LANTERN_REDIS_PORT:-63790}"
CONFIG="${LANTERN_BUILD:-debug}"
HOST=127.0.0.1

ensure_packages
start_postgres dev "$PG_PORT"
start_redis dev "$REDIS_PORT" persist
ADMIN_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/postgres"
if [ "$(psql_url "$ADMIN_URL" "SELECT 1 FROM pg_database WHERE datname = 'lantern'")" != "1" ]; then
  say "creating database lantern"
  psql_url "$ADMIN_URL" "CREATE DATABASE lantern"
fi

say "building Lantern ($CONFIG; a first build takes several minutes)"
swift_build -c "$CONFIG"
BIN="$(cd "$ROOT" && swift build -c "$CONFIG" --show-bin-path)"

mkdir -p "$STATE/logs" "$STATE/run"
export DATABASE_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern"
export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export HTTP_HOST="$HOST" LOG_LEVEL="${LOG_LEVEL:-info}"
export PLACES_FILE="$(ensure_gazetteer)"
export MEDIA_STORAGE_DIR="$STATE/dev/media"
export_service_urls "$HOST"
export_service_secrets "$STATE/dev/service-secret"
for entry in "${LANTERN_SERVICES[@]}"; do
  set -- $entry; name=$1; port=$2
  pidfile="$STATE/run/$name.pid"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    say "$name already running (pid $(cat "$pidfile"))"; continue
  fi
  say "starting $name on $HOST:$port"
  HTTP_PORT="$port" nohup "$BIN/$name" >>"$STATE/logs/$name.log" 2>&1 &
  echo $! > "$pidfile"
  wait_http "http://$HOST:$port/health/ready" 60 || { tail -n 30 "$STATE/logs/$name.log" >&2; die "$name did not become ready"; }
done
say "Lantern is up: http://$HOST:$(for e in "${LANTERN_SERVICES[@]}"; do set -- $e; [ "$1" = gateway ] && echo "$2"; done)  (logs in $STATE/logs, stop with: make down)"
