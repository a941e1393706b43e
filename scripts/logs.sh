#!/usr/bin/env bash
# make logs [SERVICE=name]: follow the local stack's logs (every process, each line prefixed with its name).
source "$(dirname "$0")/lib.sh"
cd "$STATE/logs" 2>/dev/null || die "no logs yet in $STATE/logs: start the stack with make up"
if [ -n "${1:-}" ]; then
  [ -f "$1.log" ] || die "no log for '$1' (have: $(ls *.log | sed 's/\.log$//' | tr '\n' ' '))"
  exec tail -n 50 -F "$1.log"
fi
# One tail per file, so each line can say whose it is.
pids=()
trap 'kill "${pids[@]}" 2>/dev/null' EXIT INT TERM
for file in *.log; do
  name="${file%.log}"
  tail -n 10 -F "$file" 2>/dev/null | sed -u "s/^/$(printf '%-13s' "$name") | /" &
  pids+=($!)
done
wait
