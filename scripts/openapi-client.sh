#!/usr/bin/env bash
# make client: regenerates the Swift client of the API (Clients/LanternClient/Sources/LanternClient/Generated) from
# docs/api/openapi.yaml with swift-openapi-generator, built once from the mirror in Tools/openapi-generator. The
# generated code is committed, so no build pays for the generator; OpenAPIDocument.sha256 next to it records which
# document it was made from, and `--check` (run by the tests) fails when the document changed since.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/Clients/LanternClient/Sources/LanternClient/Generated"
DOC="$ROOT/docs/api/openapi.yaml"
stamp() { echo "$(sha256sum "$DOC" | cut -d' ' -f1)  docs/api/openapi.yaml (swift-openapi-generator 1.14.3)"; }

if [ "${1:-}" = "--check" ]; then
  if [ "$(cat "$OUT/OpenAPIDocument.sha256" 2>/dev/null)" != "$(stamp)" ]; then
    echo "Clients/LanternClient is not generated from the current docs/api/openapi.yaml: run make client" >&2
    exit 1
  fi
  exit 0
fi
echo "==> building swift-openapi-generator (Tools/openapi-generator; once)"
swift build -c release --package-path "$ROOT/Tools/openapi-generator" --product swift-openapi-generator 2>&1 | { grep -E "error|complete" || true; } | tail -3
GEN="$(swift build -c release --package-path "$ROOT/Tools/openapi-generator" --show-bin-path)/swift-openapi-generator"
mkdir -p "$OUT"
"$GEN" generate --config "$ROOT/Clients/LanternClient/openapi-generator-config.yaml" --output-directory "$OUT" "$DOC"
stamp > "$OUT/OpenAPIDocument.sha256"
echo "==> wrote $(ls "$OUT" | tr '\n' ' ')"
