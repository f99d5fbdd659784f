"""Seaway's table sinks: Kafka topics into Apache Iceberg and Delta Lake tables, exactly once.

* :class:`IcebergSinkConnector` (``org.apache.iceberg.connect.IcebergSinkConnector``): Apache Iceberg's
  Kafka Connect sink config names; data files written by every task, committed by one committer per
  connector through the control topic, the offsets in each snapshot's summary (pyiceberg).
* :class:`DeltaSinkConnector` (``DeltaSink``): one Delta table per topic, the offsets in ``txn`` actions as
  kafka-delta-ingest keeps them (delta-rs).

Both build on the lake sinks' shared code (:mod:`seaway.connectors.lake`: rotation, records -> Arrow,
the pipelined task). ``seaway lake compact|expire`` keeps the tables (:mod:`.maintenance`). See README.md
beside the distribution and docs/lake-tables.md.
"""

from seaway.connectors.lake_tables.delta_config import DeltaSinkConfig
from seaway.connectors.lake_tables.delta_task import DeltaSinkConnector, DeltaSinkTask, delta_app_id
from seaway.connectors.lake_tables.iceberg_config import IcebergSinkConfig
from seaway.connectors.lake_tables.iceberg_task import IcebergSinkConnector, IcebergSinkTask
from seaway.connectors.lake_tables.offsets import snapshot_offsets, table_offsets

__all__ = [
    "DeltaSinkConfig",
    "DeltaSinkConnector",
    "DeltaSinkTask",
    "IcebergSinkConfig",
    "IcebergSinkConnector",
    "IcebergSinkTask",
    "delta_app_id",
    "snapshot_offsets",
    "table_offsets",
]
