#!/usr/bin/env bash
# make up: install what is missing, start PostgreSQL and Redis, build and start every executable, wait until
# all are healthy, print the gateway URL.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/services.sh"
source "$(dirname "$0")/local-settings.sh"
source "$(dirname "$0")/redis-users.sh"
# Every variable a service reads can be set for the local stack: in the environment, or in local.env (not
# committed; local.env.example). What neither sets gets the development default below.
load_local_settings "$ROOT/local.env"

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
default_setting DATABASE_URL "postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/lantern"
# Each service signs in to Redis as its own user, with only the rights RedisAccess gives it (infra/redis/users.acl),
# as in a deployment: the passwords are made once under dev/redis-users, the users set again on every start (Redis
# keeps no users across restarts; the default user stays open for the developer's redis-cli). A caller's REDIS_URL
# (or REDIS_URL_FILE) is every service's, as it is.
REDIS_USERS=""
if [ -z "${REDIS_URL+set}${REDIS_URL_FILE+set}" ]; then
  REDIS_USERS="$STATE/dev/redis-users"
  redis_passwords "$REDIS_USERS"
  REDIS_USERS_PREFIX="${STREAM_PREFIX:-lantern}" redis_apply_users "$REDIS_USERS" "$REDIS_PORT" \
    || die "could not set the services' Redis users (Redis on 127.0.0.1:$REDIS_PORT)"
  say "Redis users: one per service (RedisAccess), passwords in $REDIS_USERS"
fi
# The local stack is development: the development identity provider and built-in keys are allowed (never in a
# deployment, where LANTERN_ENVIRONMENT is unset and means production).
default_setting LANTERN_ENVIRONMENT development
default_setting HTTP_HOST "$HOST"
default_setting LOG_LEVEL info
default_setting LOG_FORMAT text
[ -n "${PLACES_FILE+set}" ] || export PLACES_FILE="$(ensure_gazetteer)"
default_setting MEDIA_STORAGE_DIR "$STATE/dev/media"
# One folder for Symbi's evolution pictures: evolution-worker draws them there, health-brain serves them from it.
default_setting SYMBI_STORAGE_DIR "$STATE/dev/symbi"
# Every device account of a developer's stack comes from this machine's one address: make demo, make token and a
# simulator would soon meet the deployment's 20 a day.
default_setting RATE_LIMIT_DEVICE_SIGNIN_PER_DAY 100000

# The development identity provider (Tools/DevIdentity): made-up Google and Apple accounts for Pairly and the rest,
# so sign-in works with no Google or Apple project. Identity trusts its key sets only in development.
DEV_IDENTITY_PORT="${LANTERN_DEV_IDENTITY_PORT:-8089}"
pidfile="$STATE/run/dev-identity.pid"
if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
  say "dev-identity already running (pid $(cat "$pidfile"))"
else
  say "starting dev-identity on $HOST:$DEV_IDENTITY_PORT (made-up Google and Apple accounts: make token)"
  nohup "$BIN/lantern-dev-identity" --host "$HOST" --port "$DEV_IDENTITY_PORT" --key-file "$STATE/dev/identity-provider.pem" \
    >>"$STATE/logs/dev-identity.log" 2>&1 &
  echo $! > "$pidfile"
  wait_http "http://$HOST:$DEV_IDENTITY_PORT/google/jwks.json" 30 || { tail -n 30 "$STATE/logs/dev-identity.log" >&2; die "dev-identity did not start"; }
fi
# Read by identity only; each provider the caller configured itself is left as it is.
default_signin_providers "http://$HOST:$DEV_IDENTITY_PORT"
# The development App Store signer (Tools/DevAppStore): content trusts its root in development only, as it would
# Xcode's StoreKit testing certificate, so reports can be bought without Apple (make appstore-purchase, make demo).
# A caller who set APPSTORE_ROOT_CERTIFICATES (Xcode's own certificate, say) keeps it.
if [ -z "${APPSTORE_ROOT_CERTIFICATES+set}" ]; then
  export APPSTORE_ROOT_CERTIFICATES="$("$BIN/lantern-dev-appstore" root --folder "$STATE/dev/appstore")"
  default_setting APPSTORE_ENVIRONMENTS "Sandbox,Xcode"
fi
# Where the binaries are, for make appstore-purchase (scripts/dev.py).
echo "$BIN" > "$STATE/run/bin"
export_service_urls "$HOST" 0 keep
# The caller's SERVICE_SECRET is every service's; identity's SERVICE_SECRETS follows it unless set too.
if [ -z "${SERVICE_SECRET+set}" ]; then export_service_secrets "$STATE/dev/service-secret"
elif [ -z "${SERVICE_SECRETS+set}" ]; then export_service_secret_list; fi
# RoastMeLater's operator API (collections): the key of the development operator `local`.
default_operator_keys "$STATE/dev/roastmelater-operator-key"
for entry in "${LANTERN_SERVICES[@]}"; do
  set -- $entry; name=$1; port=$2
  pidfile="$STATE/run/$name.pid"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    say "$name already running (pid $(cat "$pidfile"))"; continue
  fi
  ops=$((port + 1000))
  say "starting $name on $HOST:$port (operations: $HOST:$ops)"
  if [ "$name" = identity ]; then
    signin_summary "http://$HOST:$DEV_IDENTITY_PORT" > "$STATE/run/signin"
    while read -r provider how; do say "  sign-in: $provider $how"; done < "$STATE/run/signin"
  fi
  # Signed in to Redis as itself.
  if [ -n "$REDIS_USERS" ]; then REDIS_URL="$(redis_url "$REDIS_USERS" "$name" 127.0.0.1 "$REDIS_PORT")"; export REDIS_URL; fi
  HTTP_PORT="$port" OPS_PORT="$ops" nohup "$BIN/$name" >>"$STATE/logs/$name.log" 2>&1 &
  echo $! > "$pidfile"
  wait_http "http://$HOST:$ops/health/ready" 60 || { tail -n 30 "$STATE/logs/$name.log" >&2; die "$name did not become ready"; }
done
gateway_port=$(for e in "${LANTERN_SERVICES[@]}"; do set -- $e; [ "$1" = gateway ] && echo "$2"; done)
say "Lantern is up: http://$HOST:$gateway_port  (API reference: http://$HOST:$gateway_port/docs)"
say "  see it work: make demo · sign in as anyone: make token APP=pairly NAME=Ada (or http://$HOST:$DEV_IDENTITY_PORT/)"
[[ "${ROASTMELATER_OPERATOR_KEYS:-}" == local:* ]] && say "  RoastMeLater's operator API (/v1/operator/roastmelater): Authorization: Bearer \$(cat $STATE/dev/roastmelater-operator-key)"
say "  make status · make logs · make down (data stays) · make reset (data goes)"
