#!/usr/bin/env bash
# make reset: stop the local stack and delete what it keeps (PostgreSQL's and Redis's data, photos, logs, the
# development keys), after a confirmation. The build and the gazetteer stay. `LANTERN_RESET_CONFIRM=yes` skips the
# question (scripts).
source "$(dirname "$0")/lib.sh"
# The dev PostgreSQL cluster (pg_datadir: under $STATE/dev, or /var/tmp when run as root), Redis's append-only
# file, photos, Symbi's evolution pictures and the development identity provider's key are all under the "dev" state
# folder.
targets=("$(pg_datadir dev)" "$STATE/dev" "$STATE/logs" "$STATE/run" "$STATE/demo")
echo "This stops the local stack and deletes its data: every account, pairing, photo, chart, fortune and pet."
if [ "${LANTERN_RESET_CONFIRM:-}" != yes ]; then
  read -r -p "Type 'reset' to go on: " answer
  [ "$answer" = reset ] || { echo "nothing deleted"; exit 1; }
fi
bash "$ROOT/scripts/down.sh"
for target in "${targets[@]}"; do rm -rf "$target"; done
say "local data deleted; make up starts afresh"
