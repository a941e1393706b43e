#!/usr/bin/env bash
# make compose-secrets: the files docker-compose.yml mounts as secrets, made once with random values under
# .lantern/compose/ (kept out of git). The services read them through <VARIABLE>_FILE, so no secret is in a
# container's environment. Running it again keeps what exists; delete a file to make it anew (the database
# password is set only when PostgreSQL's volume is first created: change both, or neither).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
source "$ROOT/scripts/redis-users.sh"
DIR="${LANTERN_COMPOSE_SECRETS:-$ROOT/.lantern/compose}"
mkdir -p "$DIR/secrets" "$DIR/push"
# The folder keeps them from other users on the host; the files are readable so that the containers' non-root
# user can read its bind-mounted copy (compose without swarm cannot change a secret's owner).
chmod 700 "$DIR"
random() { head -c "$1" /dev/urandom | base64 | tr -d '\n'; }
token() { head -c 24 /dev/urandom | base64 | tr -d '\n/+='; }
write() {  # name value
  local file="$DIR/secrets/$1"
  [ -s "$file" ] && return 0
  printf '%s\n' "$2" > "$file"
  chmod 644 "$file"
  echo "made $file"
}
[ -s "$DIR/secrets/postgres-password" ] || write postgres-password "$(token)"
password="$(cat "$DIR/secrets/postgres-password")"
write database-url "postgres://postgres:$password@postgres:5432/lantern"
write identity-signing-key "$(random 32)"
[ -s "$DIR/secrets/content-service-secret" ] || write content-service-secret "$(token)"
write service-secrets "content=$(cat "$DIR/secrets/content-service-secret")"
write chart-fingerprint-key "$(random 32)"
# Each service's Redis user (docs/deploy.md, "Redis users"): its password, made once in redis-passwords/ (not
# mounted), its REDIS_URL, and Redis's ACL file. The last two follow the passwords and infra/redis/users.acl, so
# they are written again when either changed (then `docker compose up -d --force-recreate`: Redis reads its file
# at start).
follow() {  # name value
  local file="$DIR/secrets/$1"
  [ -f "$file" ] && [ "$(cat "$file")" = "$2" ] && return 0
  printf '%s\n' "$2" > "$file.tmp"
  chmod 644 "$file.tmp"
  mv "$file.tmp" "$file"
  echo "wrote $file"
}
redis_passwords "$DIR/redis-passwords"
services="$(redis_users)"
for service in $services; do
  url="$(redis_url "$DIR/redis-passwords" "$service" redis 6379)"
  follow "redis-url-$service" "$url"
done
acl="$(redis_acl_file "$DIR/redis-passwords")"
follow redis-users.acl "$acl"
echo "compose secrets in $DIR/secrets; push credentials (optional) go in $DIR/push (docs/deploy.md)"
