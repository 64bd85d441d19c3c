#!/usr/bin/env bash
# The SDK's generated half: clients/python/icebatch_client/_generated/, made from the committed
# spec clients/openapi.json by the pinned openapi-python-client. Never edit it by hand: change
# the API, run `python -m scripts.openapi` (the spec), then this.
#   scripts/generate_client.sh          regenerate in place
#   scripts/generate_client.sh --check  fail (exit 1) when the committed code differs
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ICEBATCH_VENV:-$ROOT/.venv}"
TARGET="$ROOT/clients/python/icebatch_client/_generated"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
PATH="$VENV/bin:$PATH" "$VENV/bin/openapi-python-client" generate --meta none \
  --path "$ROOT/clients/openapi.json" --config "$ROOT/clients/generator.yaml" >/dev/null
if [ "${1:-}" = "--check" ]; then
  if ! diff -r -q -x __pycache__ "$work/_generated" "$TARGET" >/dev/null 2>&1; then
    diff -r -x __pycache__ "$work/_generated" "$TARGET" | head -40 >&2 || true
    echo "the SDK's generated code is stale: run scripts/generate_client.sh and commit it" >&2
    exit 1
  fi
  exit 0
fi
rm -rf "$TARGET"
cp -r "$work/_generated" "$TARGET"
echo "generated $TARGET from clients/openapi.json"
