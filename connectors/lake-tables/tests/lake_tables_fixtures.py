"""Fixtures of the table sinks' tests: a broker per test, moto's S3 server per session, catalogs and warehouses.

``warehouse`` gives the places the proofs run on: the embedded default (a SQLite catalog and a ``file://``
warehouse), a PostgreSQL catalog (``SEAWAY_TEST_POSTGRES_URL``, which ``scripts/start_databases.sh`` exports;
its default is that script's address), an ``s3://`` warehouse on moto's S3 server (a real S3 HTTP API in a
process of its own) and a REST catalog (Apache Iceberg's own ``RESTCatalogServer`` in a JVM of its own,
tests/lake_cluster/iceberg_rest.py). Each test has a catalog name of its own in PostgreSQL (pyiceberg's SQL
catalog keys every table by it), a bucket of its own on moto and a REST server of its own, so parallel test
processes share nothing and PostgreSQL needs no cleanup between tests. Delta has no catalog: its tables are
``file://`` but for the ``s3`` warehouse.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.lake_cluster.iceberg_rest import IcebergRestCatalog
from tests.lake_cluster.moto import KEYS, REGION, MotoS3
from tests.support.broker import BrokerProcess

POSTGRES = os.environ.get("SEAWAY_TEST_POSTGRES_URL") or "postgresql://seaway:seaway@127.0.0.1:5432/seaway"
BROKER = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000"}


@dataclass
class Warehouse:
    """Where a test's tables live: the connector keys for Iceberg and for Delta, and how to read Delta."""

    kind: str
    iceberg: dict[str, str]
    delta_location: str
    delta_storage: dict[str, str] = field(default_factory=dict)

    @property
    def catalog(self) -> dict[str, str]:
        """``iceberg.catalog.*`` without the prefix (what pyiceberg and the test helpers take)."""
        return {k[len("iceberg.catalog."):]: v for k, v in self.iceberg.items() if k.startswith("iceberg.catalog.")}

    @property
    def catalog_name(self) -> str:
        """``iceberg.catalog``: the SQL catalog keeps it with each table (another name sees other tables)."""
        return self.iceberg.get("iceberg.catalog", "iceberg")

    def delta(self) -> dict[str, str]:
        return {"delta.tables.location": self.delta_location,
                **{f"delta.storage.{k}": v for k, v in self.delta_storage.items()}}


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MotoS3]:
    with MotoS3(tmp_path_factory.mktemp("moto")) as server:
        yield server


def make_warehouse(kind: str, tmp_path: Path, s3: MotoS3 | None = None,
                   rest: IcebergRestCatalog | None = None) -> Warehouse:
    """``kind``'s keys for a test in ``tmp_path`` (``s3`` needs the moto server, ``rest`` a started REST catalog)."""
    if kind == "file":
        return Warehouse(kind, {"iceberg.catalog.type": "sql", "iceberg.catalog.uri": f"sqlite:///{tmp_path}/catalog.db",
                                "iceberg.catalog.warehouse": f"file://{tmp_path}/warehouse"},
                         f"file://{tmp_path}/delta")
    if kind == "postgresql":
        host = POSTGRES.split("://", 1)[1]
        return Warehouse(kind, {"iceberg.catalog": f"cat_{uuid.uuid4().hex[:12]}", "iceberg.catalog.type": "jdbc",
                                "iceberg.catalog.uri": f"jdbc:postgresql://{host.rsplit('@', 1)[1]}",
                                "iceberg.catalog.jdbc.user": host.split(":", 1)[0],
                                "iceberg.catalog.jdbc.password": host.split(":", 1)[1].rsplit("@", 1)[0],
                                "iceberg.catalog.warehouse": f"file://{tmp_path}/warehouse"},
                         f"file://{tmp_path}/delta")
    if kind == "rest":
        assert rest is not None
        # the server says where tables live (its warehouse); pyiceberg writes data files there itself
        return Warehouse(kind, {"iceberg.catalog.type": "rest", "iceberg.catalog.uri": rest.uri},
                         f"file://{tmp_path}/delta")
    assert s3 is not None
    bucket = s3.new_bucket()
    fileio = {"s3.endpoint": s3.endpoint, "s3.access-key-id": KEYS["access"], "s3.secret-access-key": KEYS["secret"],
              "s3.region": REGION}
    return Warehouse(kind, {"iceberg.catalog.type": "sql", "iceberg.catalog.uri": f"sqlite:///{tmp_path}/catalog.db",
                            "iceberg.catalog.warehouse": f"s3://{bucket}/warehouse",
                            **{f"iceberg.catalog.{k}": v for k, v in fileio.items()}},
                     f"s3://{bucket}/delta",
                     {"AWS_ENDPOINT_URL": s3.endpoint, "AWS_ACCESS_KEY_ID": KEYS["access"],
                      "AWS_SECRET_ACCESS_KEY": KEYS["secret"], "AWS_REGION": REGION, "AWS_ALLOW_HTTP": "true"})


@pytest.fixture(params=["file", "postgresql", "s3", "rest"])
def warehouse(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Warehouse]:
    """The embedded default, a PostgreSQL catalog, an s3:// warehouse on moto, Iceberg's REST catalog server."""
    if request.param == "rest":
        with IcebergRestCatalog(tmp_path / "iceberg-rest") as rest:
            yield make_warehouse("rest", tmp_path, rest=rest)
        return
    s3 = request.getfixturevalue("s3_server") if request.param == "s3" else None
    yield make_warehouse(request.param, tmp_path, s3)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    """A real Seaway broker of this test's own on a loopback port."""
    with BrokerProcess(tmp_path / "broker-data", BROKER) as b:
        yield b
