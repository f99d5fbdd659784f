"""Topics with known contents for the seaway data source's tests, and ways to check what Spark read.

Record ``i`` of a numbered topic goes to partition ``i % partitions``, so partition ``p`` offset
``o`` holds record ``o * partitions + p`` (one producer, in order): key ``k<i>``, value
``v<i, 9 digits>|`` + a filler, timestamp ``base + i`` ms. A read can then be checked against
the topic inside Spark, row by row, without collecting a million rows into Python.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__

from tests.support.optional import present

__all__ = ["FILLER", "create_topic", "end_offsets", "numbered_check", "numbered_expected", "produce",
           "produce_numbered", "read_topic", "seaway_read", "unique_topic", "wait_for"]

FILLER = "x" * 40


def unique_topic(prefix: str = "ss") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def create_topic(bootstrap: str, topic: str, partitions: int, config: dict[str, str] | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, partitions, 1, config=config or {})]).values():
        future.result(30)
    deadline = time.monotonic() + 30
    while True:  # metadata visible to the next client
        meta = admin.list_topics(topic, timeout=10).topics.get(topic)
        if meta is not None and meta.error is None and len(meta.partitions) == partitions:
            return
        assert time.monotonic() < deadline, f"topic {topic} not visible"
        time.sleep(0.05)


def produce(bootstrap: str, records: Iterable[dict[str, Any]], conf: dict[str, Any] | None = None) -> int:
    """Send ``records`` (produce() keyword arguments, ``topic`` included); flushed and closed; how many."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1 << 20,
                         "queue.buffering.max.messages": 500_000, **(conf or {})})
    sent = 0
    try:
        for record in records:
            while True:
                try:
                    producer.produce(**record)
                    break
                except BufferError:
                    producer.poll(0.05)
            sent += 1
            if sent % 50_000 == 0:
                producer.poll(0)
        assert producer.flush(120) == 0, "produce did not finish"
    finally:
        producer.close()
    return sent


def numbered(i: int, topic: str, partitions: int, base: int) -> dict[str, Any]:
    return {"topic": topic, "key": b"k%d" % i, "value": b"v%09d|%s" % (i, FILLER.encode()),
            "partition": i % partitions, "timestamp": base + i}


def produce_numbered(bootstrap: str, topic: str, partitions: int, count: int, base: int) -> int:
    return produce(bootstrap, (numbered(i, topic, partitions, base) for i in range(count)))


def numbered_check(df: Any, topic: str, partitions: int, base: int) -> dict[int, tuple[int, int, int, int, int]]:
    """Per partition of a read of a numbered topic: (rows, distinct offsets, min offset, max offset, rows
    differing from the topic), computed by Spark in one job (one read of the topic)."""
    from pyspark.sql import functions as F

    i = F.col("offset") * partitions + F.col("partition")
    expected_value = F.concat(F.lit("v"), F.lpad(i.cast("string"), 9, "0"), F.lit("|" + FILLER))
    wrong = ((F.col("key").cast("string") != F.concat(F.lit("k"), i.cast("string")))
             | (F.col("value").cast("string") != expected_value)
             | (F.col("topic") != topic)
             | (F.col("timestamp") != F.timestamp_millis(F.lit(base) + i))
             | (F.col("timestampType") != 0))
    rows = df.groupBy("partition").agg(F.count(F.lit(1)).alias("rows"), F.count_distinct("offset").alias("distinct"),
                                       F.min("offset").alias("first"), F.max("offset").alias("last"),
                                       F.sum(F.when(wrong, 1).otherwise(0)).alias("wrong")).collect()
    return {r["partition"]: (r["rows"], r["distinct"], r["first"], r["last"], r["wrong"]) for r in rows}


def numbered_expected(count: int, partitions: int) -> dict[int, tuple[int, int, int, int, int]]:
    """What :func:`numbered_check` gives for the whole of a numbered topic of ``count`` records."""
    out = {}
    for p in range(min(partitions, count)):
        n = (count - p + partitions - 1) // partitions
        out[p] = (n, n, 0, n - 1, 0)
    return out


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"ends-{uuid.uuid4().hex}"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(partitions)}
    finally:
        consumer.close()


def read_topic(bootstrap: str, topic: str, partitions: int, *, isolation: str = "read_committed",
               timeout: float = 60) -> list[tuple[int, int, bytes | None, bytes | None, Any]]:
    """Every record of ``topic`` as (partition, offset, key, value, headers), read with a plain consumer."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "isolation.level": isolation})
    out = []
    try:
        for p in range(partitions):
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)
            if high <= low:
                continue
            consumer.assign([TopicPartition(topic, p, low)])
            deadline = time.monotonic() + timeout
            while True:
                position = consumer.position([TopicPartition(topic, p)])[0].offset
                if position >= high:
                    break
                assert time.monotonic() < deadline, f"{topic}-{p}: stuck at {position} of {high}"
                for msg in consumer.consume(1000, 0.2):
                    assert msg.error() is None, msg.error()
                    out.append((p, present(msg.offset()), msg.key(), msg.value(), msg.headers()))
    finally:
        consumer.close()
    return out


def seaway_read(spark: Any, bootstrap: str, **options: str) -> Any:
    """``spark.read.format("seaway")`` with the broker and ``options``."""
    reader = spark.read.format("seaway").option("kafka.bootstrap.servers", bootstrap)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def wait_for(check: Callable[[], bool], timeout: float, what: str, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(interval)
