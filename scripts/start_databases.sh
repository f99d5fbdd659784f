#!/usr/bin/env bash
# PostgreSQL and MariaDB on loopback for the JDBC connector's tests (connectors/jdbc/tests).
#
# Installs the servers with apt-get when they are missing, starts each one that is not
# already running (never a second copy), and creates the test role/user and database
# `seaway` (password `seaway`), all idempotently: a second run only checks and exports.
# Nothing is stopped at the end (CI machines are thrown away).
#
# Source it (`. scripts/start_databases.sh`, as scripts/test.sh does) to get the variables
# the tests read; run it (`bash scripts/start_databases.sh`) to just start the servers:
#   SEAWAY_TEST_POSTGRES_URL  postgresql://seaway:seaway@127.0.0.1:5432/seaway
#   SEAWAY_TEST_MARIADB_URL   mysql://seaway:seaway@127.0.0.1:3306/seaway
# Set either beforehand to use a server of your own (then nothing is installed for it).

_seaway_db_main() {
  local sudo="" missing=""
  [ "$(id -u)" = 0 ] || sudo="sudo"

  if [ -z "${SEAWAY_TEST_POSTGRES_URL:-}" ]; then
    ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || missing="$missing postgresql"
  fi
  if [ -z "${SEAWAY_TEST_MARIADB_URL:-}" ]; then
    command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || missing="$missing mariadb-server"
  fi
  if [ -n "$missing" ]; then
    echo "start_databases: installing$missing" >&2
    $sudo apt-get update -qq
    # policy-rc.d in containers refuses service starts during install; we start them below
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
  fi

  if [ -z "${SEAWAY_TEST_POSTGRES_URL:-}" ]; then
    _seaway_start_postgres "$sudo" || return 1
    export SEAWAY_TEST_POSTGRES_URL="postgresql://seaway:seaway@127.0.0.1:5432/seaway"
  fi
  if [ -z "${SEAWAY_TEST_MARIADB_URL:-}" ]; then
    _seaway_start_mariadb "$sudo" || return 1
    export SEAWAY_TEST_MARIADB_URL="mysql://seaway:seaway@127.0.0.1:3306/seaway"
  fi
  echo "start_databases: PostgreSQL at ${SEAWAY_TEST_POSTGRES_URL#*@}, MariaDB at ${SEAWAY_TEST_MARIADB_URL#*@}" >&2
}

_seaway_start_postgres() {
  local sudo="$1" version
  version=$(ls /usr/lib/postgresql | sort -V | tail -1)
  local as_pg="$sudo runuser -u postgres --"
  [ -n "$sudo" ] && as_pg="sudo -u postgres"
  local status
  status=$(pg_lsclusters -h 2>/dev/null | awk -v v="$version" '$1 == v && $2 == "main" {print $4}')
  if [ -z "$status" ]; then
    $sudo pg_createcluster "$version" main >/dev/null
    status=down
  fi
  case "$status" in
    online*) ;;
    *) $sudo pg_ctlcluster "$version" main start ;;
  esac
  local i
  for i in $(seq 1 100); do
    $as_pg psql -q -tAc "SELECT 1" >/dev/null 2>&1 && break
    sleep 0.1
  done
  # CREATEROLE: the secrets test makes a role with a password of its own
  $as_pg psql -v ON_ERROR_STOP=1 -q -tA >/dev/null <<'SQL'
SELECT 'CREATE ROLE seaway LOGIN CREATEDB PASSWORD ''seaway'''
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'seaway') \gexec
ALTER ROLE seaway CREATEDB CREATEROLE;
SELECT 'CREATE DATABASE seaway OWNER seaway'
 WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'seaway') \gexec
SQL
}

_seaway_start_mariadb() {
  local sudo="$1"
  if ! $sudo mariadb-admin ping >/dev/null 2>&1; then
    # the init script starts mysqld_safe in the background and waits until it answers
    $sudo /etc/init.d/mariadb start >/dev/null
  fi
  local i
  for i in $(seq 1 100); do
    $sudo mariadb-admin ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  # databases seaway and seaway_* (tests make one per test module) belong to the test user
  $sudo mariadb <<'SQL'
CREATE DATABASE IF NOT EXISTS seaway;
CREATE USER IF NOT EXISTS 'seaway'@'127.0.0.1' IDENTIFIED BY 'seaway';
CREATE USER IF NOT EXISTS 'seaway'@'localhost' IDENTIFIED BY 'seaway';
GRANT ALL PRIVILEGES ON `seaway%`.* TO 'seaway'@'127.0.0.1';
GRANT ALL PRIVILEGES ON `seaway%`.* TO 'seaway'@'localhost';
SQL
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  _seaway_db_main
else
  _seaway_db_main || return 1
fi
