"""Issue 31's exactly-once proof on the shared catalog and the object store: the same 500,000 records,
6 partitions and 5 SIGKILLs as test_lake_tables_kill9.py (the body is lake_tables_kill.py), for Iceberg on
a PostgreSQL catalog (a catalog name of the test's own in ``SEAWAY_TEST_POSTGRES_URL``'s database, the
warehouse a ``file://`` folder) and on an ``s3://`` warehouse on moto's S3 server (a bucket of the test's
own), and for Delta on ``s3://``.

A file of its own: the suite's pytest-xdist processes take one file each, so these run beside the
SQLite ones rather than after them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lake_tables_fixtures import make_warehouse
from lake_tables_kill import run_sigkill_while_records_flow

from tests.support.broker import BrokerProcess


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("table_format", "kind"), [("iceberg", "postgresql"), ("iceberg", "s3"), ("delta", "s3")])
def test_sigkill_while_records_flow_lands_each_offset_once_remote(table_format: str, kind: str,
                                                                  broker: BrokerProcess, tmp_path: Path,
                                                                  request: pytest.FixtureRequest) -> None:
    s3 = request.getfixturevalue("s3_server") if kind == "s3" else None
    run_sigkill_while_records_flow(table_format, make_warehouse(kind, tmp_path, s3), broker, tmp_path)
