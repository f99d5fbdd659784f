"""``df.write.format("seaway")`` and ``df.writeStream.format("seaway")`` into real topics, read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.connectors.spark_source.source_support import create_topic, read_topic, seaway_read, unique_topic
from tests.support.broker import BrokerProcess
from tests.support.optional import present

ROWS = 3000


def rows_df(spark: Any, topic_column: str | None = None, partitions: int = 4) -> Any:
    """Keys and values as strings and as bytes, null keys, headers (some none), an explicit partition."""
    data = []
    for i in range(ROWS):
        headers = None if i % 3 == 0 else [("n", str(i).encode()), ("empty", None)]
        data.append((None if i % 5 == 0 else f"k{i}", f"v{i}".encode(), i % partitions if i % 2 else None, headers,
                     topic_column))
    return spark.createDataFrame(data, "key string, value binary, partition int, "
                                       "headers array<struct<key: string, value: binary>>, topic string")


@pytest.mark.timeout(240)
def test_a_written_dataframe_reads_back_equal_headers_included(spark: Any, shared_broker: BrokerProcess) -> None:
    topic = unique_topic("written")
    create_topic(shared_broker.bootstrap, topic, 4)
    df = rows_df(spark, topic_column=topic)
    df.write.format("seaway").mode("append").option("kafka.bootstrap.servers", shared_broker.bootstrap).save()
    # what Kafka holds, read with a plain consumer: every row once, its partition where asked
    records = read_topic(shared_broker.bootstrap, topic, 4)
    by_value = {value: (partition, key, headers) for partition, _, key, value, headers in records}
    assert len(records) == len(by_value) == ROWS
    for i in range(ROWS):
        partition, key, headers = by_value[f"v{i}".encode()]
        assert key == (None if i % 5 == 0 else f"k{i}".encode())
        assert headers == (None if i % 3 == 0 else [("n", str(i).encode()), ("empty", None)])
        if i % 2:
            assert partition == i % 4
    # and the source reads it back as the DataFrame that was written
    back = seaway_read(spark, shared_broker.bootstrap, subscribe=topic, includeHeaders="true")
    written = df.selectExpr("CAST(key AS BINARY) AS key", "value", "headers")
    read = back.select("key", "value", "headers")
    assert read.count() == ROWS
    assert written.exceptAll(read).count() == 0 and read.exceptAll(written).count() == 0
    # a key without a partition goes where Kafka's Java partitioner (murmur2) puts it
    keyed = [(p, k) for p, _, k, v, _ in records if k is not None and int(present(v)[1:]) % 2 == 0]
    assert keyed and all(p == murmur2_partition(k, 4) for p, k in keyed)


def murmur2_partition(key: bytes, partitions: int) -> int:
    """Kafka's ``Utils.toPositive(Utils.murmur2(key)) % partitions``."""
    seed, m, r = 0x9747B28C, 0x5BD1E995, 24
    length = len(key)
    h = (seed ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = int.from_bytes(key[i:i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    tail = length % 4
    rest = key[length - tail:]
    if tail >= 3:
        h ^= rest[2] << 16
    if tail >= 2:
        h ^= rest[1] << 8
    if tail >= 1:
        h ^= rest[0]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return (h & 0x7FFFFFFF) % partitions


@pytest.mark.timeout(240)
def test_a_stream_copies_a_topic(spark: Any, shared_broker: BrokerProcess, tmp_path: Path) -> None:
    source, target = unique_topic("copy-in"), unique_topic("copy-out")
    create_topic(shared_broker.bootstrap, source, 2)
    create_topic(shared_broker.bootstrap, target, 2)
    rows_df(spark, partitions=2).drop("topic").write.format("seaway").mode("append").option(
        "kafka.bootstrap.servers", shared_broker.bootstrap).option("topic", source).save()
    query = (spark.readStream.format("seaway").option("kafka.bootstrap.servers", shared_broker.bootstrap)
             .option("subscribe", source).option("startingOffsets", "earliest").option("includeHeaders", "true")
             .load().select("key", "value", "headers", "partition")
             .writeStream.format("seaway").option("kafka.bootstrap.servers", shared_broker.bootstrap)
             .option("topic", target).option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(180), "the copy did not finish"
        assert query.exception() is None
    finally:
        query.stop()
    copied = read_topic(shared_broker.bootstrap, target, 2)
    original = read_topic(shared_broker.bootstrap, source, 2)
    assert sorted((p, k or b"", v, h or []) for p, _, k, v, h in copied) == sorted(
        (p, k or b"", v, h or []) for p, _, k, v, h in original)


@pytest.mark.timeout(120)
def test_write_errors_name_the_cause(spark: Any, shared_broker: BrokerProcess) -> None:
    df = spark.createDataFrame([("a",)], "value string")
    writer = df.write.format("seaway").option("kafka.bootstrap.servers", shared_broker.bootstrap)
    with pytest.raises(Exception, match="topic option required when no 'topic' attribute is present"):
        writer.mode("append").save()
    with pytest.raises(Exception, match="Option 'topics' is not supported by the seaway sink"):
        writer.option("topics", "x").mode("append").save()
    with pytest.raises(Exception, match="Save mode Overwrite is not allowed for Kafka topics"):
        df.write.format("seaway").option("kafka.bootstrap.servers", shared_broker.bootstrap).option(
            "topic", "x").mode("overwrite").save()
    ints = spark.createDataFrame([(1,)], "value int")
    with pytest.raises(Exception, match="value attribute type must be a string or binary, got int"):
        ints.write.format("seaway").option("kafka.bootstrap.servers", shared_broker.bootstrap).option(
            "topic", "x").mode("append").save()
    topic = unique_topic("one-partition")
    create_topic(shared_broker.bootstrap, topic, 1)
    wrong_partition = spark.createDataFrame([("a", 3)], "value string, partition int")
    # refused at once by produce(), or in the delivery report when the producer had no metadata yet
    with pytest.raises(Exception, match=f"Writing to Kafka failed: .*to {topic} partition 3.*_UNKNOWN_PARTITION"):
        wrong_partition.write.format("seaway").option("kafka.bootstrap.servers", shared_broker.bootstrap).option(
            "topic", topic).mode("append").save()
