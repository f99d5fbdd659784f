"""Reading the tables in Spark: through pyiceberg and deltalake, as Arrow, into Spark DataFrames.

Spark's own readers of both formats are jars that must match Spark's version: Apache Iceberg publishes
``iceberg-spark-runtime-<spark>_2.13`` and Delta ``delta-spark_2.13``, and neither has a build for
Spark 4.3, the Spark of PySpark 4.3.0 that Seaway uses (Maven Central has no
``iceberg-spark-runtime-4.3_2.13``; ``delta-spark`` 4.4.1 supports PySpark up to 4.2.0). So these read
the table with the format's Python library (the snapshot or version asked for: time travel) and hand
the Arrow table to ``spark.createDataFrame`` (Spark 4's Arrow path), registering it as a view when a
name is given, so ``spark.read.table(name)`` and SQL work. The whole snapshot is read into the driver:
this is for tables that fit a driver's memory; with a matching Spark runtime jar
(``spark.jars.packages``) Spark reads the same tables itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["read_delta", "read_iceberg"]


def read_iceberg(spark: Any, catalog_props: Mapping[str, str], table: str, *, snapshot_id: int | None = None,
                 as_of_ms: int | None = None, columns: Sequence[str] | None = None, view: str | None = None,
                 catalog_name: str = "iceberg") -> Any:
    """An Iceberg table (``iceberg.catalog.*`` properties, without the prefix) as a Spark DataFrame: the
    current snapshot, ``snapshot_id``, or the snapshot current at ``as_of_ms``; registered as ``view``."""
    from seaway.connectors.lake_tables.catalog import load_catalog

    loaded = load_catalog(catalog_name, catalog_props).load_table(table)
    if as_of_ms is not None:
        snapshot = loaded.snapshot_as_of_timestamp(as_of_ms)
        if snapshot is None:
            raise ValueError(f"{table} has no snapshot at or before {as_of_ms}")
        snapshot_id = snapshot.snapshot_id
    scan = loaded.scan(snapshot_id=snapshot_id, selected_fields=tuple(columns) if columns else ("*",))
    frame = spark.createDataFrame(scan.to_arrow())
    if view:
        frame.createOrReplaceTempView(view)
    return frame


def read_delta(spark: Any, uri: str, *, version: int | None = None, columns: Sequence[str] | None = None,
               view: str | None = None, storage_options: Mapping[str, str] | None = None) -> Any:
    """A Delta table as a Spark DataFrame: its current version, or ``version`` (time travel)."""
    from deltalake import DeltaTable

    table = DeltaTable(uri, version=version, storage_options=dict(storage_options or {}) or None)
    frame = spark.createDataFrame(table.to_pyarrow_table(columns=list(columns) if columns else None))
    if view:
        frame.createOrReplaceTempView(view)
    return frame
