#!/usr/bin/env bash
# The executables of the stack, read from the one list, Services/services.tsv (name, port, URL variable), in start
# order. Sourced after lib.sh.
LANTERN_SERVICES=()
while read -r name port variable _; do
  case "$name" in ''|'#'*) continue ;; esac
  LANTERN_SERVICES+=("$name $port $variable")
done < "$ROOT/Services/services.tsv"

# export_service_urls HOST [PORT_OFFSET] [keep]: every `<NAME>_URL` of the list, pointing at HOST and the service's
# port (plus an offset, for the benchmark's ports); with `keep`, a variable already set stays as it is.
export_service_urls() {
  local host="$1" offset="${2:-0}" keep="${3:-}" entry
  for entry in "${LANTERN_SERVICES[@]}"; do
    set -- $entry
    [ "$3" = "-" ] && continue
    [ "$keep" = keep ] && [ -n "${!3+set}" ] && continue
    export "$3=http://$host:$(($2 + offset))"
  done
}

# service_folder NAME: the folder of an executable under Services/ (push-worker → PushWorker).
service_folder() {
  awk -F- '{ for (i = 1; i <= NF; i++) printf "%s", toupper(substr($i, 1, 1)) substr($i, 2) }' <<< "$1"
}

# export_service_secrets FILE: one random secret for this machine's stack (kept in FILE), given to every service as
# SERVICE_SECRET and listed for identity in SERVICE_SECRETS, so services can ask identity for service tokens.
export_service_secrets() {
  local file="$1"
  if [ ! -s "$file" ]; then
    mkdir -p "$(dirname "$file")"
    (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$file")
  fi
  export SERVICE_SECRET="$(cat "$file")"
  export_service_secret_list
}

# export_service_secret_list: SERVICE_SECRETS for identity, every service of the list with SERVICE_SECRET.
export_service_secret_list() {
  local entry list=""
  for entry in "${LANTERN_SERVICES[@]}"; do
    set -- $entry
    list="$list${list:+,}$1=$SERVICE_SECRET"
  done
  export SERVICE_SECRETS="$list"
}
