"""Issue 31's exactly-once proof on the embedded catalog: 500,000 records across 6 partitions, the worker
SIGKILLed 5 times while they flow, land in an Iceberg table (SQLite catalog, ``file://`` warehouse) and
in a Delta table (``file://``) once each, every snapshot or commit holding exactly its offsets.

The proof itself is lake_tables_kill.py; test_lake_tables_kill9_remote.py runs it on a PostgreSQL
catalog and on an ``s3://`` warehouse.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lake_tables_fixtures import make_warehouse
from lake_tables_kill import run_sigkill_while_records_flow

from tests.support.broker import BrokerProcess


@pytest.mark.timeout(600)
@pytest.mark.parametrize("table_format", ["iceberg", "delta"])
def test_sigkill_while_records_flow_lands_each_offset_once(table_format: str, broker: BrokerProcess,
                                                           tmp_path: Path) -> None:
    run_sigkill_while_records_flow(table_format, make_warehouse("file", tmp_path, None), broker, tmp_path)
