"""The Delta sink on an hdfs:// warehouse: a real HDFS (Hadoop's own NameNode and DataNode).

delta-rs speaks HDFS's RPC protocol itself (no JVM, no libhdfs), so ``delta.tables.location`` can be
an ``hdfs://`` URI. Through the Connect runtime and a real broker: a topic lands in a Delta table on
HDFS, the worker stops, a new one runs the connector with a new consumer group (which starts from
the topic's beginning) after more records: the task resumes from the table's ``txn`` versions, so
the table equals the topic by (partition, offset), nothing twice.

The Iceberg sink has no such test: pyiceberg reaches ``hdfs://`` only through pyarrow's
HadoopFileSystem, which needs Hadoop's native libhdfs, shipped in Hadoop's binary tarball and in no
package this project installs from (docs/lake-tables.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from deltalake import DeltaTable
from lake_tables_support import assert_rows_equal_topic, delta_rows, wait_for
from seaway.connect.testing import EmbeddedConnect
from seaway.connectors.lake_tables import delta_app_id

from tests.connectors.spark_sink import lake_check
from tests.lake_cluster.hdfs import Hdfs
from tests.support.broker import BrokerProcess

PARTITIONS = 3
EVENTS = 4000
WORKER = {"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true",
          "key.converter": "org.apache.kafka.connect.storage.StringConverter", "offset.flush.interval.ms": "500",
          "task.shutdown.graceful.timeout.ms": "30000"}

@pytest.fixture
def hdfs(tmp_path: Path) -> Iterator[Hdfs]:
    with Hdfs(tmp_path / "hdfs") as cluster:
        yield cluster


def wait_delta(location: str, ends: dict[int, int]) -> None:
    def reached() -> bool:
        try:
            table = DeltaTable(location)
        except Exception:
            return False
        return all(table.transaction_version(delta_app_id("delta-hdfs", p)) == end - 1
                   for p, end in ends.items() if end)

    wait_for(reached, 90, f"the delta table on HDFS at {ends}")


@pytest.mark.timeout(300)
async def test_delta_sink_lands_a_topic_on_hdfs_exactly_once(hdfs: Hdfs, broker: BrokerProcess, tmp_path: Path) -> None:
    lake_check.create_topic(broker.bootstrap, "events", PARTITIONS)
    location = f"{hdfs.uri}/warehouse/delta"
    for phase in (1, 2):
        lake_check.produce_json(broker.bootstrap, "events", (phase - 1) * EVENTS, EVENTS, PARTITIONS)
        ends = lake_check.end_offsets(broker.bootstrap, "events", PARTITIONS)
        async with EmbeddedConnect(broker.bootstrap, tmp_path / f"connect-{phase}", worker_props=WORKER) as connect:
            await connect.create_connector("delta-hdfs", {
                "connector.class": "DeltaSink", "tasks.max": "2", "topics": "events",
                "delta.tables.location": location, "flush.size": "1500", "rotate.schedule.interval.ms": "1000",
                "include.kafka.metadata": "true", "consumer.override.group.id": f"delta-hdfs-{phase}"})
            await connect.wait_for_running("delta-hdfs", tasks=2)
            await asyncio.to_thread(wait_delta, f"{location}/events", ends)
    rows = delta_rows(f"{location}/events")
    assert assert_rows_equal_topic(rows, broker.bootstrap, "events", PARTITIONS) == 2 * EVENTS
    # the files are HDFS's: the NameNode (WebHDFS) lists the table's log and data files
    def listing(path: str) -> list[str]:
        url = f"http://127.0.0.1:{hdfs.ports['namenode.http']}/webhdfs/v1{path}?op=LISTSTATUS"
        return [s["pathSuffix"] for s in httpx.get(url, timeout=30).json()["FileStatuses"]["FileStatus"]]

    assert "00000000000000000000.json" in listing("/warehouse/delta/events/_delta_log")
    assert any(name.endswith(".parquet") for name in listing("/warehouse/delta/events"))
