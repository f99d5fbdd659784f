#!/usr/bin/env bash
# Install Seaway into ./.venv and start it on embedded defaults (data under ./data).
#
# Prints one line per install step (pip's own output goes to .venv/seaway-install.log, shown
# when a step fails). The first run installs about 860 MB (PySpark is half of it) in a minute
# or two; later runs skip the install when nothing it depends on changed (the pyproject.toml
# files, the build hook, the Python version: their hash is kept in .venv/seaway-install.stamp)
# and start Seaway in seconds. SEAWAY_REINSTALL=1 installs again regardless.
# Arguments go to `seaway up` (e.g. --data-dir DIR, --broker-port N; `seaway up --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
STAMP=.venv/seaway-install.stamp
LOG=.venv/seaway-install.log

say() { printf 'seaway: %s\n' "$*"; }

# What the install depends on: editable installs pick up source changes by themselves, but not
# new dependencies or entry points (pyproject.toml) nor the compiled broker helper (hatch_build.py).
install_hash() {
  {
    .venv/bin/python -c 'import sys; print(sys.version)'
    cat pyproject.toml hatch_build.py broker/seaway/broker/log/_record_walk.c connectors/*/pyproject.toml 2>/dev/null || true
  } | sha256sum | cut -d' ' -f1
}

# step LABEL PIP-ARGS...: one line, pip's noise in $LOG, the log's tail when it fails
step() {
  local label=$1 started=$SECONDS
  shift
  printf 'seaway: [%d/%d] %s ... ' "$STEP" "$STEPS" "$label"
  if python -m pip install --disable-pip-version-check "$@" >>"$LOG" 2>&1; then
    printf 'done (%ds)\n' $((SECONDS - started))
  else
    printf 'FAILED\n'
    say "pip's output (all of it in $LOG):"
    tail -n 25 "$LOG" | sed 's/^/    /'
    exit 1
  fi
  STEP=$((STEP + 1))
}

if [ ! -x .venv/bin/python ]; then
  say "creating the virtualenv .venv with $("$PY" --version 2>&1)"
  "$PY" -m venv .venv
fi
. .venv/bin/activate

if [ "${SEAWAY_REINSTALL:-0}" != 1 ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(install_hash)" ]; then
  say "already installed in .venv, nothing changed since (SEAWAY_REINSTALL=1 installs again)"
else
  rm -f "$STAMP"
  : >"$LOG"
  CONNECTORS=()
  for c in connectors/*/; do
    if [ -f "$c/pyproject.toml" ]; then CONNECTORS+=("${c%/}"); fi
  done
  STEP=1
  STEPS=$((2 + ${#CONNECTORS[@]}))
  say "installing Seaway into .venv (about 860 MB the first time; pip's output goes to $LOG)"
  step "pip itself" --upgrade pip
  step "Seaway itself: broker, Connect runtime, schema registry, CLI" -e .
  for c in "${CONNECTORS[@]}"; do
    case $c in
      connectors/spark-sink) what="Spark sink (PySpark: about 490 MB)" ;;
      connectors/spark-source) what="format(\"seaway\") for PySpark (reads and writes topics)" ;;
      connectors/s3) what="S3 sink (boto3, pyarrow)" ;;
      connectors/jdbc) what="JDBC source and sink (SQLAlchemy, psycopg, PyMySQL)" ;;
      connectors/lake-tables) what="Iceberg and Delta table sinks (pyiceberg, deltalake)" ;;
      connectors/lake-common) what="what the lake sinks share (pyarrow)" ;;
      connectors/mirror) what="MirrorMaker 2" ;;
      connectors/file) what="FileStream source and sink" ;;
      *) what=$c ;;
    esac
    step "$c: $what" -e "$c"
  done
  install_hash >"$STAMP"
  say "installed; the next run skips this step until a pyproject.toml changes"
fi

[ -n "${JAVA_HOME:-}" ] || command -v java >/dev/null 2>&1 ||
  say "note: no java on PATH; the Spark sink needs Java 17 at run time (e.g. apt-get install openjdk-17-jre-headless)"
say "starting: seaway up --data-dir ./data${*:+ $*}"
exec seaway up --data-dir ./data "$@"
