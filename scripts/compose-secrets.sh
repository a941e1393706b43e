#!/usr/bin/env bash
# make compose-secrets: the files docker-compose.yml mounts as secrets, made once with random values under
# .lantern/compose/ (kept out of git). The services read them through <VARIABLE>_FILE, so no secret is in a
# container's environment. Running it again keeps what exists; delete a file to make it anew (the database
# password is set only when PostgreSQL's volume is first created: change both, or neither).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
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
echo "compose secrets in $DIR/secrets; push credentials (optional) go in $DIR/push (docs/deploy.md)"
