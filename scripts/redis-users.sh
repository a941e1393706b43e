#!/usr/bin/env bash
# Each service's own Redis user (docs/deploy.md, "Redis users"): the rules are infra/redis/users.acl, made from
# RedisAccess.all (Shared/LanternContracts/RedisAccess.swift); the passwords are one file per service in a folder
# kept out of git. Sourced by up.sh, compose-secrets.sh and k8s.sh for its functions, or run:
#   bash scripts/redis-users.sh passwords DIR                 make the missing password files of DIR
#   bash scripts/redis-users.sh acl DIR                       print the ACL file (redis-server --aclfile)
#   bash scripts/redis-users.sh apply DIR PORT [HOST]         ACL SETUSER every service's user in a running Redis
#   bash scripts/redis-users.sh url DIR SERVICE HOST PORT     print the service's REDIS_URL
# REDIS_USERS_PREFIX (default lantern) is the STREAM_PREFIX the users are for (the template's is lantern). apply
# signs in as redis-cli does (REDISCLI_AUTH for a Redis with a password) and leaves the default user alone.
set -euo pipefail

REDIS_USERS_TEMPLATE="${REDIS_USERS_TEMPLATE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/infra/redis/users.acl}"

redis_users_fail() { printf '\033[1;31mxx\033[0m redis-users: %s\n' "$*" >&2; return 1; }

# redis_user_lines: the template's `user` lines (its comments dropped: Redis refuses them), the key patterns moved
# to REDIS_USERS_PREFIX. Every pattern of the template starts ~lantern. or ~lantern: (%R~ when read-only).
redis_user_lines() {
  local prefix="${REDIS_USERS_PREFIX:-lantern}"
  [ -s "$REDIS_USERS_TEMPLATE" ] || redis_users_fail "no $REDIS_USERS_TEMPLATE" || return 1
  [[ "$prefix" =~ ^[A-Za-z0-9_.-]+$ ]] || redis_users_fail "REDIS_USERS_PREFIX '$prefix' is not a plain name" || return 1
  grep '^user ' "$REDIS_USERS_TEMPLATE" | sed -e "s/~lantern\([.:]\)/~$prefix\1/g"
}

# redis_users: the services that have a user (every `user` line but default's), in the template's order.
redis_users() {
  local lines
  lines="$(redis_user_lines)" || return 1
  awk '$2 != "default" { print $2 }' <<< "$lines"
}

# redis_password DIR SERVICE: the password as AUTH sends it (the file's content without a trailing line break).
redis_password() {
  local file="$1/$2" password
  [ -s "$file" ] || redis_users_fail "no password for $2 in $1 (bash scripts/redis-users.sh passwords $1)" || return 1
  password="$(cat "$file")"
  # It goes into a URL as it is: only characters that need no percent-encoding.
  [[ "$password" =~ ^[A-Za-z0-9._~-]+$ ]] || redis_users_fail "$file: letters, digits and . _ ~ - only" || return 1
  printf '%s' "$password"
}

# redis_password_hash DIR SERVICE: the lowercase hex SHA-256 of exactly those bytes (Redis's `#<hash>`).
redis_password_hash() {
  local password
  password="$(redis_password "$1" "$2")" || return 1
  printf '%s' "$password" | sha256sum | cut -d' ' -f1
}

# redis_passwords DIR: a random password (32 bytes as 64 hex digits, no line break, mode 600) for every service of
# the template that has none in DIR; existing files are kept.
redis_passwords() {
  local dir="$1" services service
  services="$(redis_users)" || return 1
  mkdir -p "$dir"
  chmod 700 "$dir"
  for service in $services; do
    [ -s "$dir/$service" ] && continue
    (umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/$service")
  done
}

# redis_acl_file DIR: the ACL file for Redis: the template's user lines, each {sha256:<service>} replaced by the
# SHA-256 of that service's password in DIR.
redis_acl_file() {
  local dir="$1" lines line service hash
  lines="$(redis_user_lines)" || return 1
  while IFS= read -r line; do
    if [[ "$line" =~ \{sha256:([a-z0-9-]+)\} ]]; then
      service="${BASH_REMATCH[1]}"
      hash="$(redis_password_hash "$dir" "$service")" || return 1
      line="${line/"{sha256:$service}"/$hash}"
    fi
    printf '%s\n' "$line"
  done <<< "$lines"
}

# redis_apply_users DIR PORT [HOST]: creates or resets every service's user in a running Redis: ACL SETUSER with
# the template's rules (they start with `reset`) and the password's hash, so no password is on a command line.
# The default user is left as it is.
redis_apply_users() {
  local dir="$1" port="$2" host="${3:-127.0.0.1}" lines line service rules hash reply globbing=on
  lines="$(redis_user_lines)" || return 1
  [[ $- == *f* ]] && globbing=off
  while IFS= read -r line; do
    read -r _ service rules <<< "$line"
    [ "$service" = default ] && continue
    [[ "$rules" == *" #{sha256:$service}" ]] || redis_users_fail "the line of $service does not end with #{sha256:$service}" || return 1
    rules="${rules% "#{sha256:$service}"}"
    hash="$(redis_password_hash "$dir" "$service")" || return 1
    # Split into words on purpose (Redis merges a selector's words, `(+xadd ~a ~b)`), but no globbing of `~lantern.*`.
    set -f
    # shellcheck disable=SC2086
    reply="$(redis-cli -h "$host" -p "$port" ACL SETUSER "$service" $rules "#$hash" 2>&1)" || true
    [ "$globbing" = on ] && set +f
    [ "$reply" = OK ] || redis_users_fail "ACL SETUSER $service at $host:$port: $reply" || return 1
  done <<< "$lines"
}

# redis_url DIR SERVICE HOST PORT: the service's REDIS_URL, signed in as its own user.
redis_url() {
  local password
  password="$(redis_password "$1" "$2")" || return 1
  printf 'redis://%s:%s@%s:%s/0\n' "$2" "$password" "$3" "$4"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  usage="usage: bash scripts/redis-users.sh passwords DIR | acl DIR | apply DIR PORT [HOST] | url DIR SERVICE HOST PORT"
  case "${1:-} $#" in
    "passwords 2") redis_passwords "$2" ;;
    "acl 2") redis_acl_file "$2" ;;
    "apply 3"|"apply 4") redis_apply_users "${@:2}" ;;
    "url 5") redis_url "${@:2}" ;;
    *) redis_users_fail "$usage" ;;
  esac
fi
