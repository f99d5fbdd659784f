"""Each partitioner and each format through the sink's writer into a real S3 API, read back by pyarrow,
fastavro and json; schema changes under each schema.compatibility; every Connect type."""

from __future__ import annotations

import base64
import datetime
import decimal
import gzip
import io
import json
from typing import Any, BinaryIO, cast

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from s3_support import MotoServer, keys, read
from seaway.connect.api import (
    DataError,
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
from seaway.connectors.s3 import S3SinkConfig, S3SinkTask, S3Store, S3Writer, write_file

EVENT = (SchemaBuilder.struct().name("shop.Event").version(1).field("id", Schema.INT64_SCHEMA)
         .field("region", Schema.OPTIONAL_STRING_SCHEMA).field("amount", Schema.FLOAT64_SCHEMA).build())
JAN_1 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
FORMATS = ["io.confluent.connect.s3.format.parquet.ParquetFormat", "io.confluent.connect.s3.format.avro.AvroFormat",
           "io.confluent.connect.s3.format.json.JsonFormat"]


def record(offset: int, value: Any, schema: Schema | None = EVENT, partition: int = 0, ts: int | None = None,
           topic: str = "orders") -> SinkRecord:
    return SinkRecord(topic, partition, None, str(offset), schema, value, offset,
                      JAN_1 + offset * 60_000 if ts is None else ts, TimestampType.CREATE_TIME)


def event(i: int) -> Struct:
    return Struct(EVENT).put("id", i).put("region", ("eu", "us", None)[i % 3]).put("amount", i * 1.5)


def land(s3: MotoServer, bucket: str, records: list[SinkRecord], **props: str) -> S3SinkConfig:
    """Buffer ``records`` per partition and write every set, the open ones too (as close/flush would)."""
    config = S3SinkConfig.from_props(s3.props(bucket, **props))
    store = S3Store(s3.client(), config)  # the test server's client: the same keys, region and endpoint
    writer = S3Writer(store, config)
    partitioner = S3SinkTask().make_partitioner(config)
    by_partition: dict[int, list[SinkRecord]] = {}
    for r in records:
        by_partition.setdefault(r.kafka_partition or 0, []).append(r)
    for p, batch in by_partition.items():
        buffer = PartitionBuffer(TopicPartition(batch[0].topic, p), config, partitioner,
                                 writer.commit_log(batch[0].topic, p).recover())
        sets = buffer.add(batch, 0)
        if buffer.open is not None:
            sets.append(buffer.open)
        writer.write(sets)
    return config


def rows(s3: MotoServer, bucket: str, key: str) -> list[Any]:
    data = read(s3.client(), bucket, key)
    if key.endswith(".parquet"):
        # one thread: pyarrow's pool threads let go of this Python-owned buffer later, and one doing it while
        # the interpreter exits aborts the process (2-7% of runs here)
        return list(pq.read_table(pa.BufferReader(data), use_threads=False, pre_buffer=False).to_pylist())
    if key.endswith(".avro"):
        return list(fastavro.reader(io.BytesIO(data)))
    if key.endswith(".gz"):
        data = gzip.decompress(data)
    return [json.loads(line) for line in data.decode().splitlines()]


def landed(s3: MotoServer, bucket: str, prefix: str = "topics/") -> dict[str, list[Any]]:
    return {k: rows(s3, bucket, k) for k in keys(s3.client(), bucket, prefix)}


@pytest.mark.parametrize("fmt", FORMATS)
def test_default_partitioner_keys_and_rows(s3: MotoServer, bucket: str, fmt: str) -> None:
    records = [record(o, event(o), partition=o % 2) for o in range(10)]
    config = land(s3, bucket, records, **{"format.class": fmt, "flush.size": "3"})
    ext = config.extension
    got = landed(s3, bucket)
    assert list(got) == sorted(f"topics/orders/partition={p}/orders+{p}+{s:010d}{ext}"
                               for p, s in ((0, 0), (0, 6), (1, 1), (1, 7)))
    want = {(r.kafka_partition, r.kafka_offset): {"id": r.value.get("id"), "region": r.value.get("region"),
                                                  "amount": r.value.get("amount")} for r in records}
    seen = [row for k in sorted(got) for row in got[k]]
    assert sorted(seen, key=lambda r: r["id"]) == [want[(o % 2, o)] for o in range(10)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_field_partitioner(s3: MotoServer, bucket: str, fmt: str) -> None:
    land(s3, bucket, [record(o, event(o)) for o in range(6)],
         **{"format.class": fmt, "flush.size": "6", "partitioner.class":
            "io.confluent.connect.storage.partitioner.FieldPartitioner", "partition.field.name": "region"})
    got = landed(s3, bucket)
    folders = {k.rsplit("/", 1)[0]: [r["id"] for r in v] for k, v in got.items()}
    assert folders == {"topics/orders/region=eu": [0, 3], "topics/orders/region=us": [1, 4],
                       "topics/orders/region=__HIVE_DEFAULT_PARTITION__": [2, 5]}
    assert sorted(k.rsplit("+", 1)[1].split(".")[0] for k in got) == ["0000000000", "0000000001", "0000000002"]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("partitioner", "extra", "folders"), [
    ("io.confluent.connect.storage.partitioner.HourlyPartitioner", {},
     ["year=2024/month=01/day=01/hour=00", "year=2024/month=01/day=01/hour=01"]),
    ("io.confluent.connect.storage.partitioner.DailyPartitioner", {}, ["year=2024/month=01/day=01"]),
    ("io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
     {"path.format": "'dt'=YYYY-MM-dd/'m'=mm", "partition.duration.ms": "1800000"},
     ["dt=2024-01-01/m=00", "dt=2024-01-01/m=30", "dt=2024-01-01/m=00"]),
])
def test_time_partitioners(s3: MotoServer, bucket: str, fmt: str, partitioner: str, extra: dict[str, str],
                           folders: list[str]) -> None:
    # one record every 20 minutes: 00:00, 00:20, 00:40, 01:00, 01:20 (Record timestamps)
    records = [record(o, event(o), ts=JAN_1 + o * 20 * 60_000) for o in range(5)]
    land(s3, bucket, records, **{"format.class": fmt, "flush.size": "100", "partitioner.class": partitioner,
                                 "timestamp.extractor": "Record", "timezone": "UTC", "locale": "en", **extra})
    got = landed(s3, bucket)
    assert sorted({k.rsplit("/", 1)[0] for k in got}) == sorted({f"topics/orders/{f}" for f in folders})
    assert sorted(r["id"] for v in got.values() for r in v) == list(range(5))


V1 = SchemaBuilder.struct().name("E").version(1).field("id", Schema.INT64_SCHEMA).build()
V2 = (SchemaBuilder.struct().name("E").version(2).field("id", Schema.INT64_SCHEMA)
      .field("note", SchemaBuilder.string().optional().default_value("none").build()).build())


def v(i: int, schema: Schema) -> Struct:
    s = Struct(schema).put("id", i)
    return s.put("note", f"n{i}") if schema is V2 else s


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(("mode", "files"), [
    ("NONE", [[{"id": 0}], [{"id": 1, "note": "n1"}], [{"id": 2}]]),
    ("BACKWARD", [[{"id": 0}], [{"id": 1, "note": "n1"}, {"id": 2, "note": "none"}]]),
    ("FULL", [[{"id": 0}], [{"id": 1, "note": "n1"}, {"id": 2, "note": "none"}]]),
    ("FORWARD", [[{"id": 0}, {"id": 1}, {"id": 2}]]),
])
def test_schema_change_under_each_compatibility(s3: MotoServer, bucket: str, fmt: str, mode: str,
                                                files: list[list[dict[str, Any]]]) -> None:
    records = [record(0, v(0, V1), V1), record(1, v(1, V2), V2), record(2, v(2, V1), V1)]
    land(s3, bucket, records, **{"format.class": fmt, "flush.size": "100", "schema.compatibility": mode})
    got = landed(s3, bucket)
    assert [got[k] for k in sorted(got)] == files  # keys sort by start offset


ADDRESS = SchemaBuilder.struct().name("Address").field("city", Schema.STRING_SCHEMA) \
    .field("zip", Schema.OPTIONAL_STRING_SCHEMA).build()
RICH = (SchemaBuilder.struct().name("Rich").version(1)
        .field("price", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
        .field("day", Date.builder().build()).field("at", Timestamp.builder().build())
        .field("clock", Time.builder().optional().build()).field("blob", Schema.OPTIONAL_BYTES_SCHEMA)
        .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).optional().build())
        .field("codes", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).optional().build())
        .field("ship_to", ADDRESS).build())
AT = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=datetime.UTC)


def rich() -> Struct:
    return (Struct(RICH).put("price", decimal.Decimal("-12.50")).put("day", datetime.date(2024, 2, 29))
            .put("at", AT).put("clock", datetime.time(1, 2, 3, 4000)).put("blob", b"\x00\xff")
            .put("tags", ["a", "b"]).put("attrs", {"n": 1}).put("codes", {7: "seven"})
            .put("ship_to", Struct(ADDRESS).put("city", "Oslo")))


def test_every_connect_type_in_each_format(s3: MotoServer, bucket: str) -> None:
    for fmt, prefix in (("parquet", "p"), ("avro", "a"), ("json", "j")):
        land(s3, bucket, [record(0, rich(), RICH)], **{"format.class": fmt, "flush.size": "1", "topics.dir": prefix,
                                                       "logs.dir": prefix + "-logs"})
    (parquet,), (avro,), (js,) = ([r for v in landed(s3, bucket, p + "/").values() for r in v] for p in "paj")
    assert parquet == {"price": decimal.Decimal("-12.50"), "day": datetime.date(2024, 2, 29), "at": AT,
                       "clock": 3_723_004, "blob": b"\x00\xff", "tags": ["a", "b"], "attrs": [("n", 1)],
                       "codes": [(7, "seven")], "ship_to": {"city": "Oslo", "zip": None}}
    assert avro == {**parquet, "clock": datetime.time(1, 2, 3, 4000), "attrs": {"n": 1},  # time-millis
                    "codes": [{"key": 7, "value": "seven"}]}
    unscaled = base64.b64encode((-1250).to_bytes(2, "big", signed=True)).decode()
    assert js == {"price": unscaled, "day": 19782, "at": int(AT.timestamp() * 1000), "clock": 3_723_004,
                  "blob": base64.b64encode(b"\x00\xff").decode(), "tags": ["a", "b"], "attrs": {"n": 1},
                  "codes": [[7, "seven"]], "ship_to": {"city": "Oslo", "zip": None}}


def test_schemaless_and_primitive_values(s3: MotoServer, bucket: str) -> None:
    values = [{"b": [1, True], "a": "x"}, "plain", None]
    land(s3, bucket, [record(o, val, None) for o, val in enumerate(values[:2])],
         **{"format.class": "json", "flush.size": "10", "s3.compression.type": "gzip"})
    (key,) = keys(s3.client(), bucket, "topics/")
    assert key.endswith(".json.gz") and rows(s3, bucket, key) == values[:2]
    land(s3, bucket, [record(o, f"s{o}", Schema.STRING_SCHEMA, topic="strs") for o in range(3)],
         **{"format.class": "avro", "flush.size": "10", "avro.codec": "deflate"})
    (akey,) = keys(s3.client(), bucket, "topics/strs/")
    reader = fastavro.reader(io.BytesIO(read(s3.client(), bucket, akey)))
    assert reader.writer_schema == "string" and list(reader) == ["s0", "s1", "s2"]
    assert reader.metadata["avro.codec"] == "deflate"


def test_null_values_fail_by_default_or_are_ignored(s3: MotoServer, bucket: str) -> None:
    task = S3SinkTask()
    task.parse_config(s3.props(bucket, **{"format.class": "json", "flush.size": "5"}))
    batch = [record(0, event(0)), record(1, None, None)]
    with pytest.raises(DataError, match=r"orders-0@1 \(behavior.on.null.values=fail"):
        task.filter_records(batch)
    task.parse_config(s3.props(bucket, **{"format.class": "json", "flush.size": "5",
                                          "behavior.on.null.values": "ignore"}))
    assert [r.kafka_offset for r in task.filter_records(batch)] == [0]


def test_replay_overwrites_the_same_keys(s3: MotoServer, bucket: str) -> None:
    records = [record(o, event(o)) for o in range(9)]
    props = {"format.class": "parquet", "flush.size": "3"}
    land(s3, bucket, records, **props)
    first = landed(s3, bucket)
    s3.client().delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in
                                                                    keys(s3.client(), bucket, "logs/")]})
    for k in keys(s3.client(), bucket, "topics/"):  # as if written by another tool: no offsets in metadata
        s3.client().copy_object(Bucket=bucket, Key=k, CopySource={"Bucket": bucket, "Key": k},
                                MetadataDirective="REPLACE", Metadata={})
    land(s3, bucket, records, **props)  # no log, no hint: replays from 0 and overwrites
    assert landed(s3, bucket) == first


def test_a_file_over_the_part_size_goes_up_in_parts(s3: MotoServer, bucket: str) -> None:
    notes = (SchemaBuilder.struct().name("N").field("id", Schema.INT64_SCHEMA)
             .field("note", Schema.STRING_SCHEMA).build())
    records = [record(o, Struct(notes).put("id", o).put("note", f"{o:08d}" * 12), notes) for o in range(60_000)]
    land(s3, bucket, records, **{"format.class": "json", "flush.size": "60000", "s3.part.size": str(5 * 1024 * 1024)})
    (key,) = keys(s3.client(), bucket, "topics/")
    head = s3.client().head_object(Bucket=bucket, Key=key)
    assert head["ContentLength"] > 5 * 1024 * 1024 and head["ETag"].strip('"').endswith("-2")  # two parts
    assert [r["id"] for r in rows(s3, bucket, key)] == list(range(60_000))


def test_an_uncommitted_single_object_set_is_overwritten_by_a_replay_cut_differently(s3: MotoServer,
                                                                                      bucket: str) -> None:
    """No pending record for a one-object set: the replay's first object takes the crashed one's key."""
    records = [record(o, event(o)) for o in range(6)]
    config = land(s3, bucket, records[:3], **{"format.class": "json", "flush.size": "3"})  # 0..2 committed
    writer = S3Writer(S3Store(s3.client(), config), config)
    buffer = PartitionBuffer(TopicPartition("orders", 0), config, S3SinkTask().make_partitioner(config), 3)
    (crashed,) = buffer.add(records[3:], 0)  # 3..5: uploaded, then the worker died before the commit record
    (part,) = crashed.by_folder()
    upload = writer.store.upload(writer.key(crashed, part))
    write_file(config, part.table, crashed.schema, cast(BinaryIO, upload))  # as S3Writer passes it
    upload.commit()
    assert not [k for k in keys(s3.client(), bucket, "logs/") if "pending" in k]
    land(s3, bucket, records, **{"format.class": "json", "flush.size": "2"})  # recovers at 3, cuts 3..4, 5
    got = landed(s3, bucket)
    assert [r["id"] for k in sorted(got) for r in got[k]] == list(range(6))  # no duplicates, no gaps
    assert sorted(k.rsplit("+", 1)[1] for k in got) == ["0000000000.json", "0000000003.json", "0000000005.json"]
