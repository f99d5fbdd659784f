#!/usr/bin/env bash
# Install Seaway into ./.venv and start it on embedded defaults (data under ./data).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q -e .
for c in connectors/*/; do
  [ -f "$c/pyproject.toml" ] && python -m pip install -q -e "$c"
done
exec seaway up --data-dir ./data "$@"
