#!/usr/bin/env bash
# Install everything Seaway's test suite needs into ./.venv, then run lint, types,
# the import contract and the whole pytest suite. Safe to run on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."

# kcat (client tests), iproute2's ss (reads the broker's socket buffers in a test)
MISSING=""
command -v kcat >/dev/null 2>&1 || MISSING="$MISSING kcat"
command -v ss >/dev/null 2>&1 || MISSING="$MISSING iproute2"
# javac and mvn: the side-by-side tests (tests/peer/) compile against Apache Kafka's jars
command -v javac >/dev/null 2>&1 || MISSING="$MISSING openjdk-17-jdk-headless"
command -v mvn >/dev/null 2>&1 || MISSING="$MISSING maven"
# Debian's chromium: the web console's browser tests (tests/console/) drive it with Playwright
[ -x /usr/bin/chromium ] || MISSING="$MISSING chromium"
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

# Apache Kafka's jars for the side-by-side tests (tests/peer/), fetched with Maven into the
# git-ignored tests/peer/kafka/lib (cached: a no-op when present, a few seconds once ~/.m2 has them)
if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 && command -v mvn >/dev/null 2>&1; then
  timeout 600 python -m tests.peer.jars
  # Hadoop's own jars for the lake tests (tests/lake_cluster: HDFS's NameNode and DataNode, hadoop-aws for
  # s3a://), the Hadoop version pyspark ships, and Apache Iceberg's REST catalog server (RESTCatalogServer from
  # iceberg-open-api's test fixtures, for the table sinks' iceberg.catalog.type=rest test), into git-ignored
  # tests/lake_cluster/*/lib (a no-op when there)
  timeout 900 python -m tests.lake_cluster jars
  # spark-sql-kafka's jars (Spark's own Kafka source) for the side-by-side test of format("seaway")
  # (tests/peer/test_spark_source_peer.py), into git-ignored tests/connectors/spark_source/spark_kafka/lib
  timeout 600 python -m tests.connectors.spark_source.spark_kafka_jars >/dev/null
fi

# PostgreSQL and MariaDB on loopback for connectors/jdbc's tests: installed and started when
# missing, never twice; exports SEAWAY_TEST_POSTGRES_URL / SEAWAY_TEST_MARIADB_URL
. scripts/start_databases.sh

ruff check .
mypy
lint-imports
# several worker processes even on 2 cores: the suite mostly waits (JVMs, timeouts, restarts);
# how files are shared between them: tests/support/parallel.py. SEAWAY_TEST_WORKERS=0: one process
python -m pytest -n "${SEAWAY_TEST_WORKERS:-3}" --dist loadgroup "$@"
