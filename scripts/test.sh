#!/usr/bin/env bash
# make test: the same dependencies as the stack, on their own ports and data (isolated from the dev stack),
# then every test suite. Each suite makes its own database and stream prefix, so suites run in any order.
source "$(dirname "$0")/lib.sh"

PG_PORT="${LANTERN_TEST_PG_PORT:-54329}"
REDIS_PORT="${LANTERN_TEST_REDIS_PORT:-63799}"

ensure_packages --test
# The alert rules (promtool unit tests), the Grafana dashboard and the scrape config against the metrics the code
# exposes; fast, and it needs no build.
bash "$ROOT/scripts/observability-check.sh"
# Independent peers for the tests, from PyPI: an image decoder (metadata stripping must not break pictures), a
# real Socket.IO v4 client, and schemathesis (the OpenAPI document against the running stack).
python3 -c "import PIL, pillow_heif, socketio, websocket, schemathesis, kubernetes_validate, yaml, moto, boto3, flask, jsonschema" 2>/dev/null || {
  say "installing Pillow, pillow-heif, python-socketio, websocket-client, schemathesis, kubernetes-validate and moto's S3 server (PyPI) for the tests"
  python3 -m pip install -q pillow pillow-heif "python-socketio[client]" websocket-client schemathesis kubernetes-validate pyyaml "moto[server]" boto3 jsonschema
}
start_postgres test "$PG_PORT" "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
start_redis test "$REDIS_PORT"
cleanup() {
  if [ -z "${LANTERN_KEEP_TEST_SERVERS:-}" ]; then stop_redis test "$REDIS_PORT"; stop_postgres test; fi
}
trap cleanup EXIT

export LANTERN_PLACES_FILE="$(ensure_gazetteer)"
export LANTERN_TEST_POSTGRES_URL="postgres://postgres:$PG_PASSWORD@127.0.0.1:$PG_PORT/postgres"
export LANTERN_TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"

cd "$ROOT"
say "building executables and tests (a first build takes several minutes)"
swift_build --build-tests
export LANTERN_BIN_PATH="$(swift build --show-bin-path)"
say "running tests"
# At most 12 tests at a time (Swift Testing's own limit; the default is one per test): every suite starting its
# services at once on 2 cores made tests that take seconds alone take minutes, past their clients' timeouts. The
# whole run is also faster this way (330 s against 382 s, the same machine and build).
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-12}"
# Every problem any process answers goes to one file; after the suite, each `detail` must read as a sentence for a
# person (no type dumps, source paths or addresses). Only for a whole run: a filtered one proves nothing.
export LANTERN_PROBLEM_LOG="$STATE/test/problems.jsonl"
rm -f "$LANTERN_PROBLEM_LOG"
swift test --skip-build ${LANTERN_SWIFT_BUILD_FLAGS:-} "$@"
if [ $# -eq 0 ]; then python3 "$ROOT/scripts/problem-details-check.py" "$LANTERN_PROBLEM_LOG"; fi
