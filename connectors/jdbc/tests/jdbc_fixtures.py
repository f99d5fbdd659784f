"""Fixtures for the JDBC connector tests: a real broker and real PostgreSQL, MariaDB and SQLite databases.

PostgreSQL and MariaDB are found through ``SEAWAY_TEST_POSTGRES_URL`` and
``SEAWAY_TEST_MARIADB_URL`` (``scripts/start_databases.sh`` starts them and exports both;
the defaults are its addresses). A server that does not answer fails the test with that
advice: nothing here is skipped. Each test gets a namespace of its own (a PostgreSQL schema,
a MariaDB database, a SQLite file) and drops it afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from jdbc_support import Db, make_db
from seaway.connect.testing import EmbeddedBroker

DEFAULTS = {
    "postgresql": ("SEAWAY_TEST_POSTGRES_URL", "postgresql://seaway:seaway@127.0.0.1:5432/seaway"),
    "mariadb": ("SEAWAY_TEST_MARIADB_URL", "mysql://seaway:seaway@127.0.0.1:3306/seaway"),
}


def server_url(kind: str) -> str:
    variable, default = DEFAULTS[kind]
    return os.environ.get(variable) or default


@pytest.fixture(scope="session")
def jdbc_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    # short consumer sessions allowed: a worker killed with -9 leaves its group within a second
    with EmbeddedBroker(tmp_path_factory.mktemp("jdbc-broker"), {"group.min.session.timeout.ms": "500"}) as broker:
        yield broker


@pytest.fixture(params=["postgresql", "mariadb", "sqlite"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Db]:
    """A fresh, empty namespace in each of the three databases."""
    kind = request.param
    database = make_db(kind, None if kind == "sqlite" else server_url(kind), tmp_path,
                       f"seaway_{uuid.uuid4().hex[:10]}")
    try:
        yield database
    finally:
        database.drop()


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[Db]:
    database = make_db("postgresql", server_url("postgresql"), tmp_path, f"seaway_{uuid.uuid4().hex[:10]}")
    try:
        yield database
    finally:
        database.drop()
