#!/usr/bin/env bash
# Install everything Seaway's test suite needs into ./.venv, then run lint, types,
# the import contract and the whole pytest suite. Safe to run on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

# kcat (client tests), iproute2's ss (reads the broker's socket buffers in a test)
MISSING=""
command -v kcat >/dev/null 2>&1 || MISSING="$MISSING kcat"
command -v ss >/dev/null 2>&1 || MISSING="$MISSING iproute2"
if [ -n "$MISSING" ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq $MISSING >/dev/null
fi

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q -e '.[dev]'
for c in connectors/*/; do
  [ -f "$c/pyproject.toml" ] && python -m pip install -q -e "$c[dev]"
done

ruff check .
mypy
lint-imports
python -m pytest "$@"
