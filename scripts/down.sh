#!/usr/bin/env bash
# make down: stop every executable, then Redis and PostgreSQL of the dev stack. Data stays in .lantern/.
source "$(dirname "$0")/lib.sh"
PG_PORT="${LANTERN_PG_PORT:-54320}"
REDIS_PORT="${LANTERN_REDIS_PORT:-63790}"
for pidfile in "$STATE"/run/*.pid; do
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile"); name=$(basename "$pidfile" .pid)
  if kill -0 "$pid" 2>/dev/null; then
    say "stopping $name"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
done
rm -f "$STATE/run/signin"
stop_redis dev "$REDIS_PORT"
stop_postgres dev
say "Lantern is down"
