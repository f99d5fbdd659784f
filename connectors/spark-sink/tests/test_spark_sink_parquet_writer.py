"""parquet.writer: Spark writes by default (its jobs show in Spark's event log); pyarrow lands the same files."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pytest
from seaway.connect.api import (
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SinkRecord,
    Struct,
    Time,
    Timestamp,
    TimestampType,
    TopicPartition,
)
from seaway.connectors.lake import PartitionBuffer
from seaway.connectors.spark_sink import LakeFileSystem, SparkSinkConfig, make_partitioner
from seaway.connectors.spark_sink.writer import JOB_DESCRIPTION, LakeWriter

from tests.lake_cluster.spark_session import event_log, jobs

INNER = SchemaBuilder.struct().name("Inner").field("city", Schema.STRING_SCHEMA).build()
ROW = (SchemaBuilder.struct().name("Row").version(1).field("id", Schema.INT64_SCHEMA)
       .field("small", Schema.INT8_SCHEMA).field("region", Schema.OPTIONAL_STRING_SCHEMA)
       .field("price", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
       .field("day", Date.builder().build()).field("at", Timestamp.builder().build())
       .field("clock", Time.builder().optional().build()).field("raw", Schema.OPTIONAL_BYTES_SCHEMA)
       .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
       .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).optional().build())
       .field("inner", INNER).build())


def row(i: int) -> Struct:
    return (Struct(ROW).put("id", i).put("small", i % 100).put("region", ("eu", "us", None)[i % 3])
            .put("price", decimal.Decimal(f"{i}.25")).put("day", datetime.date(2024, 1, 1 + i % 28))
            .put("at", datetime.datetime.fromtimestamp(1_700_000_000 + i, datetime.UTC))
            .put("clock", datetime.time(1, 2, i % 60)).put("raw", bytes([i % 256]))
            .put("tags", [f"t{i}"]).put("attrs", {"n": i}).put("inner", Struct(INNER).put("city", f"c{i % 4}")))


def land(spark: Any, lake: Path, writer_kind: str | None) -> list[Any]:
    """100 records in sets of 25 across three field-partitioner folders; the rows as Spark reads them."""
    props = {"lake.path": str(lake), "flush.size": "25", "partitioner.class": "field",
             "partition.field.name": "region", "include.kafka.metadata": "true"}
    if writer_kind is not None:
        props["parquet.writer"] = writer_kind
    config = SparkSinkConfig.from_props(props)
    writer = LakeWriter(spark, LakeFileSystem(spark, config.lake_path), config)
    assert (writer.local_root is not None) == (writer_kind == "pyarrow")
    buffer = PartitionBuffer(TopicPartition("w", 0), config, make_partitioner(config))
    records = [SinkRecord("w", 0, None, f"k{i}", ROW, row(i), i, 1_700_000_000_000 + i, TimestampType.CREATE_TIME)
               for i in range(100)]
    writer.write(buffer.add(records, 0))
    assert writer.commit_log("w", 0).last_committed() == 100
    return sorted(spark.read.parquet(str(lake / "w")).collect(), key=lambda r: r["id"])


def data_files(lake: Path) -> list[str]:
    return sorted(str(p.relative_to(lake)) for p in lake.rglob("*.parquet") if "_" not in p.relative_to(lake).parts[0])


def sink_jobs(spark: Any) -> list[dict[str, Any]]:
    return [j for j in jobs(event_log(spark)) if j["description"].startswith(JOB_DESCRIPTION)
            and "warm-up" not in j["description"]]


@pytest.mark.timeout(180)
def test_spark_writes_by_default_and_pyarrow_lands_the_same_files(spark: Any, tmp_path: Path) -> None:
    before = len(sink_jobs(spark))
    by_spark = land(spark, tmp_path / "default", None)  # parquet.writer unset
    after_spark = sink_jobs(spark)
    # four sets of 25 records in one write: one Spark job for their 12 files (a set has a file per region)
    assert [j["description"] for j in after_spark[before:]] == [f"{JOB_DESCRIPTION} 12 files, 100 records"]
    by_pyarrow = land(spark, tmp_path / "pyarrow", "pyarrow")
    assert len(sink_jobs(spark)) == len(after_spark)  # pyarrow ran no Spark job
    assert data_files(tmp_path / "default") == data_files(tmp_path / "pyarrow") and \
        len(data_files(tmp_path / "default")) == 12
    assert len(by_pyarrow) == 100
    assert [r.asDict(recursive=True) for r in by_pyarrow] == [r.asDict(recursive=True) for r in by_spark]
    first = by_pyarrow[1].asDict(recursive=True)
    assert (first["price"], first["day"], first["small"], first["region"], first["attrs"], first["inner"]) == \
        (decimal.Decimal("1.25"), datetime.date(2024, 1, 2), 1, "us", {"n": 1}, {"city": "c1"})
    assert first["at"].timestamp() == 1_700_000_001 and first["kafka_offset"] == 1
    assert not list((tmp_path / "default" / "_tmp").rglob("*.parquet"))
    assert not list((tmp_path / "pyarrow" / "_tmp").rglob("*.parquet"))
