"""The writer and commit log against a real SparkSession on file://: layout, values, crash recovery."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import pytest
from seaway.connect.api import Date, Decimal, Schema, SchemaBuilder, Struct, Time, Timestamp, TopicPartition
from seaway.connectors.lake.rotation import FileSet, PartitionBuffer
from seaway.connectors.spark_sink import (
    CommitEntry,
    CommitLog,
    FileMove,
    LakeFileSystem,
    SparkSinkConfig,
    make_partitioner,
)
from seaway.connectors.spark_sink.writer import LakeWriter

from tests.connectors.spark_sink.conftest import record

ADDRESS = SchemaBuilder.struct().name("Address").field("city", Schema.STRING_SCHEMA) \
    .field("zip", Schema.OPTIONAL_STRING_SCHEMA).build()
ORDER = (SchemaBuilder.struct().name("Order").version(1)
         .field("id", Schema.INT64_SCHEMA)
         .field("region", Schema.OPTIONAL_STRING_SCHEMA)
         .field("qty", Schema.INT32_SCHEMA)
         .field("price", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
         .field("day", Date.builder().build())
         .field("at", Timestamp.builder().build())
         .field("clock", Time.builder().optional().build())
         .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
         .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).optional().build())
         .field("ship_to", ADDRESS)
         .build())
T0 = 1_700_000_000_000


def order(i: int, region: str | None = "eu") -> Struct:
    return (Struct(ORDER).put("id", i).put("region", region).put("qty", i % 7)
            .put("price", decimal.Decimal(f"{i}.25")).put("day", datetime.date(2024, 1, 1 + i % 28))
            .put("at", datetime.datetime.fromtimestamp((T0 + i) / 1000, datetime.UTC))
            .put("clock", datetime.time(1, 2, 3)).put("tags", [f"t{i}", "x"]).put("attrs", {"n": i})
            .put("ship_to", Struct(ADDRESS).put("city", f"c{i % 3}")))


def make(tmp_path: Path, spark: Any, **props: str) -> tuple[SparkSinkConfig, LakeWriter]:
    config = SparkSinkConfig.from_props({"lake.path": str(tmp_path / "lake"), **props})
    return config, LakeWriter(spark, LakeFileSystem(spark, config.lake_path), config)


def land(config: SparkSinkConfig, writer: LakeWriter, topic: str, partitions: int, count: int,
         value: Any = order) -> list[FileSet]:
    partitioner = make_partitioner(config)
    closed: list[FileSet] = []
    for p in range(partitions):
        buffer = PartitionBuffer(TopicPartition(topic, p), config, partitioner)
        closed += buffer.add([record(topic, p, o, value(o), ORDER) for o in range(count)], 0)
    writer.write(closed)
    return closed


def data_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.parquet")
                  if not any(part.startswith(("_", ".")) for part in p.relative_to(root).parts))


@pytest.mark.timeout(120)
def test_default_layout_columns_and_values(spark: Any, tmp_path: Path) -> None:
    config, writer = make(tmp_path, spark, **{"flush.size": "4", "include.kafka.metadata": "true"})
    land(config, writer, "orders", 2, 10)
    assert data_files(tmp_path / "lake") == [
        f"orders/partition={p}/orders+{p}+{s:020d}+{e:020d}.parquet"
        for p in (0, 1) for s, e in ((0, 3), (4, 7))]
    df = spark.read.parquet(str(tmp_path / "lake" / "orders"))  # one topic, one table
    assert {f.name: f.dataType.simpleString() for f in df.schema.fields} == {
        "id": "bigint", "region": "string", "qty": "int", "price": "decimal(10,2)", "day": "date",
        "at": "timestamp", "clock": "int", "tags": "array<string>", "attrs": "map<string,bigint>",
        "ship_to": "struct<city:string,zip:string>", "kafka_topic": "string", "kafka_partition": "int",
        "kafka_offset": "bigint", "kafka_timestamp": "timestamp", "kafka_key": "string", "partition": "int"}
    rows = {(r["kafka_partition"], r["kafka_offset"]): r for r in df.collect()}
    assert sorted(rows) == [(p, o) for p in (0, 1) for o in range(8)]
    r = rows[(1, 5)]
    assert (r["id"], r["qty"], r["price"], r["day"], r["clock"], r["tags"], r["attrs"], r["ship_to"]["city"]) == \
        (5, 5, decimal.Decimal("5.25"), datetime.date(2024, 1, 6), 3_723_000, ["t5", "x"], {"n": 5}, "c2")
    assert (r["kafka_topic"], r["partition"]) == ("orders", 1)
    assert CommitLog(writer.lake, "orders", 1).last_committed() == 8


@pytest.mark.timeout(120)
def test_field_partitioner_folders_escape_and_null(spark: Any, tmp_path: Path) -> None:
    config, writer = make(tmp_path, spark, **{"flush.size": "6", "partitioner.class": "field",
                                              "partition.field.name": "region,ship_to.city"})
    regions = ["eu", "us/west", None]
    land(config, writer, "orders", 1, 6, lambda i: order(i, regions[i % 3]))
    assert data_files(tmp_path / "lake") == sorted([
        f"orders/region=eu/city=c0/orders+0+{0:020d}+{3:020d}.parquet",
        f"orders/region=us%2Fwest/city=c1/orders+0+{1:020d}+{4:020d}.parquet",
        f"orders/region=__HIVE_DEFAULT_PARTITION__/city=c2/orders+0+{2:020d}+{5:020d}.parquet"])
    rows = spark.read.parquet(str(tmp_path / "lake" / "orders")).select("id", "region", "city").collect()
    assert sorted((r["id"], r["region"], r["city"]) for r in rows) == [
        (0, "eu", "c0"), (1, "us/west", "c1"), (2, None, "c2"), (3, "eu", "c0"), (4, "us/west", "c1"),
        (5, None, "c2")]


@pytest.mark.timeout(120)
def test_time_partitioner_folders_in_timezone(spark: Any, tmp_path: Path) -> None:
    config, writer = make(tmp_path, spark, **{
        "flush.size": "100", "partitioner.class": "time", "partition.duration.ms": "3600000",
        "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", "timezone": "Asia/Kolkata"})
    hour = 3_600_000
    base = 1_704_067_200_000  # 2024-01-01T00:00:00Z = 05:30 in Kolkata
    partitioner = make_partitioner(config)
    buffer = PartitionBuffer(TopicPartition("ev", 0), config, partitioner)
    recs = [record("ev", 0, i, order(i), ORDER, timestamp=base + i * hour // 2) for i in range(4)]
    buffer.add(recs, 0)
    assert buffer.open is not None
    writer.write([buffer.open])
    assert data_files(tmp_path / "lake") == [
        f"ev/year=2024/month=01/day=01/hour=05/ev+0+{0:020d}+{0:020d}.parquet",
        f"ev/year=2024/month=01/day=01/hour=06/ev+0+{1:020d}+{2:020d}.parquet",
        f"ev/year=2024/month=01/day=01/hour=07/ev+0+{3:020d}+{3:020d}.parquet"]
    hours = spark.read.parquet(str(tmp_path / "lake" / "ev")).select("id", "hour").collect()
    assert sorted((r["id"], r["hour"]) for r in hours) == [(0, 5), (1, 6), (2, 6), (3, 7)]


@pytest.mark.timeout(120)
def test_schemaless_and_primitive_values(spark: Any, tmp_path: Path) -> None:
    config, writer = make(tmp_path, spark, **{"flush.size": "2"})
    partitioner = make_partitioner(config)
    a = PartitionBuffer(TopicPartition("json", 0), config, partitioner)
    b = PartitionBuffer(TopicPartition("text", 0), config, partitioner)
    closed = a.add([record("json", 0, 0, {"b": [1, 2.5], "a": "x", "raw": b"\x00"}, None),
                    record("json", 0, 1, "plain", None)], 0)
    closed += b.add([record("text", 0, 0, "hello", Schema.STRING_SCHEMA),
                     record("text", 0, 1, None, Schema.STRING_SCHEMA)], 0)
    writer.write(closed)
    got = spark.read.parquet(str(tmp_path / "lake" / "json")).orderBy("value").collect()
    assert [r["value"] for r in got] == ['"plain"', '{"a":"x","b":[1,2.5],"raw":"AA=="}']
    text = spark.read.parquet(str(tmp_path / "lake" / "text")).collect()
    assert {r["value"] for r in text} == {"hello", None}


@pytest.mark.timeout(120)
def test_crash_between_rename_and_commit_is_adopted(spark: Any, tmp_path: Path) -> None:
    config, writer = make(tmp_path, spark, **{"flush.size": "3", "partitioner.class": "field",
                                              "partition.field.name": "region"})
    regions = ["eu", "us"]
    land(config, writer, "o", 1, 3, lambda i: order(i, regions[i % 2]))  # offsets 0..2 committed
    partitioner = make_partitioner(config)
    buffer = PartitionBuffer(TopicPartition("o", 0), config, partitioner, committed=3)
    [fs] = buffer.add([record("o", 0, o, order(o, regions[o % 2]), ORDER) for o in range(3, 6)], 0)
    moves: dict[int, Any] = {}
    writer._write_group([(fs, part) for part in fs.by_folder()], moves)
    entry = CommitEntry("o", 0, 3, 6, tuple(moves[id(fs)]))
    log = CommitLog(writer.lake, "o", 0)
    log.begin(entry)
    assert writer.lake.rename(entry.files[0].temp, entry.files[0].final)  # the crash: one visible, no commit
    (tmp_path / "lake" / "_tmp" / "o" / "0" / "junk.parquet").write_bytes(b"partial")
    assert log.last_committed() == 3
    assert CommitLog(writer.lake, "o", 0).recover() == 6  # rolled forward: both files adopted
    assert not (tmp_path / "lake" / "_tmp" / "o" / "0").exists()
    assert sorted(p.rsplit("/", 1)[-1] for p in data_files(tmp_path / "lake")) == sorted(
        f"o+0+{s:020d}+{e:020d}.parquet" for s, e in ((0, 2), (1, 1), (3, 5), (4, 4)))
    ids = sorted(r["id"] for r in spark.read.parquet(str(tmp_path / "lake" / "o")).collect())
    assert ids == list(range(6))


@pytest.mark.timeout(120)
def test_pending_with_lost_temp_is_rolled_back(spark: Any, tmp_path: Path) -> None:
    config, writer = make(tmp_path, spark, **{"flush.size": "2"})
    land(config, writer, "o", 1, 2)
    log = CommitLog(writer.lake, "o", 0)
    final = f"o/partition=0/o+0+{2:020d}+{3:020d}.parquet"
    (tmp_path / "lake" / "o" / "partition=0" / final.rsplit("/", 1)[1]).write_bytes(b"x")
    log.begin(CommitEntry("o", 0, 2, 4, (
        FileMove("_tmp/o/0/renamed.parquet", final, 2, 3, 2),
        FileMove("_tmp/o/0/lost.parquet", "o/partition=1/o+0+00000000000000000002+00000000000000000003.parquet",
                 2, 3, 1))))
    assert log.recover() == 2
    assert not (tmp_path / "lake" / final).exists()
    assert [e.next for e in log.entries()] == [2]


@pytest.mark.timeout(120)
def test_replay_is_deterministic_and_recovery_by_listing(spark: Any, tmp_path: Path) -> None:
    config, writer = make(tmp_path, spark, **{"flush.size": "3", "rotate.interval.ms": "2"})
    land(config, writer, "o", 1, 10)
    first = data_files(tmp_path / "lake")
    before = sorted(spark.read.parquet(str(tmp_path / "lake" / "o")).collect())
    land(config, writer, "o", 1, 10)  # same records again: same names, skipped, no duplicates
    assert data_files(tmp_path / "lake") == first == [
        f"o/partition=0/o+0+{s:020d}+{e:020d}.parquet" for s, e in ((0, 1), (2, 3), (4, 5), (6, 7))]
    assert sorted(spark.read.parquet(str(tmp_path / "lake" / "o")).collect()) == before
    for commit in (tmp_path / "lake" / "_commits").rglob("*.json"):
        commit.unlink()
    assert CommitLog(writer.lake, "o", 0).recover() == 8


@pytest.mark.timeout(120)
def test_no_pending_record_outlives_its_commit(spark: Any, tmp_path: Path) -> None:
    """Step 5 of the commit protocol right after step 4: a lake at rest holds commit records only (issue 27.14).

    The pending record of a committed set is stale; it used to wait for a batch of ten deletes, so
    pending-*.json files of long-committed sets sat in every partition's log folder.
    """
    config, writer = make(tmp_path, spark, **{"flush.size": "2"})
    land(config, writer, "o", 2, 8)  # four sets per partition, written and committed
    commits = tmp_path / "lake" / "_commits" / "o"
    assert not list(commits.rglob("pending-*.json"))
    for p in (0, 1):
        assert sorted(f.name for f in (commits / str(p)).iterdir() if not f.name.startswith(".")) == [
            f"commit-{n:020d}.json" for n in (2, 4, 6, 8)]
