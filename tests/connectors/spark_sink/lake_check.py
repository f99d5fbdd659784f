"""Helpers for the end-to-end tests: produce a keyed JSON topic, read it back, compare it with the lake."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from tests.support.optional import present

SCHEMA = {"type": "struct", "name": "Event", "version": 1, "optional": False, "fields": [
    {"field": "id", "type": "int64", "optional": False},
    {"field": "kind", "type": "string", "optional": False},
    {"field": "amount", "type": "double", "optional": False},
    {"field": "ok", "type": "boolean", "optional": False},
    {"field": "note", "type": "string", "optional": True}]}
VALUE_FIELDS = ("id", "kind", "amount", "ok", "note")


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def event(i: int) -> dict[str, Any]:
    return {"id": i, "kind": ("a", "b", "c")[i % 3], "amount": i * 0.5, "ok": i % 2 == 0,
            "note": None if i % 5 == 0 else f"{i:08d}" + "n" * 92}


def produce_json(bootstrap: str, topic: str, start: int, count: int, partitions: int) -> None:
    """JSON with schemas (JsonConverter's envelope); record i goes to partition i % partitions."""
    produce_bodies(bootstrap, topic, partitions, start, count,
                   lambda i: json.dumps({"schema": SCHEMA, "payload": event(i)}).encode())


def produce_bodies(bootstrap: str, topic: str, partitions: int, start: int, count: int,
                   body: Callable[[int], bytes]) -> None:
    """Record i (key ``str(i)``, value ``body(i)``) to partition i % partitions, waiting when the queue is full."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "enable.idempotence": False})
    for i in range(start, start + count):
        value = body(i)
        while True:
            try:
                producer.produce(topic, value=value, key=str(i).encode(), partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.1)
    if producer.flush(60):
        raise TimeoutError("produce did not finish")


def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"probe-{uuid.uuid4().hex}"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
    finally:
        consumer.close()


def topic_records(bootstrap: str, topic: str, partitions: int) -> dict[tuple[int, int], dict[str, Any]]:
    """Every record of the topic by (partition, offset), value decoded from the JSON envelope."""
    ends = end_offsets(bootstrap, topic, partitions)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: dict[tuple[int, int], dict[str, Any]] = {}
    deadline = time.monotonic() + 60
    try:
        while len(out) < sum(ends.values()) and time.monotonic() < deadline:
            for msg in consumer.consume(10000, 0.5):
                if msg.error() is None:
                    at = (present(msg.partition()), present(msg.offset()))
                    out[at] = json.loads(present(msg.value()))["payload"]
    finally:
        consumer.close()
    return out


def _newest_commit(names: list[str]) -> int:
    return max((int(n[len("commit-"):-len(".json")]) for n in names
                if n.startswith("commit-") and n.endswith(".json")), default=0)


def committed_offsets(lake: Path, topic: str, partitions: int) -> dict[int, int]:
    """The lake's commit log per partition (reading file names only)."""
    return {p: _newest_commit([n.name for n in (lake / "_commits" / topic / str(p)).glob("commit-*.json")])
            for p in range(partitions)}


def wait_landed(lake: Path, topic: str, ends: dict[int, int], timeout: float,
                offsets: Callable[[], dict[int, int]] | None = None) -> None:
    """Until the commit log covers ``ends``; ``offsets`` reads it elsewhere (``hdfs://``, ``s3a://`` lakes)."""
    deadline = time.monotonic() + timeout
    got: dict[int, int] = {}
    read = offsets or (lambda: committed_offsets(lake, topic, len(ends)))
    while time.monotonic() < deadline:
        got = read()
        if got == ends:
            return
        time.sleep(0.1 if offsets is None else 1.0)  # a local listing is cheap; bench figures need fine polling
    raise TimeoutError(f"lake has {got}, topic ends at {ends}")


def committed_offsets_at(spark: Any, lake_uri: str, topic: str, partitions: int) -> dict[int, int]:
    """:func:`committed_offsets` of a lake on any Hadoop file system, through ``spark``'s JVM."""
    from seaway.connectors.spark_sink import LakeFileSystem

    fs = LakeFileSystem(spark, lake_uri)
    return {p: _newest_commit(fs.list_names(f"_commits/{topic}/{p}")) for p in range(partitions)}


def wait_landed_at(spark: Any, lake_uri: str, topic: str, ends: dict[int, int], timeout: float) -> None:
    """:func:`wait_landed` for a lake on any Hadoop file system."""
    wait_landed(Path(), topic, ends, timeout, lambda: committed_offsets_at(spark, lake_uri, topic, len(ends)))


def topic_keys(bootstrap: str, topic: str, partitions: int) -> dict[tuple[int, int], int]:
    """Every record's key (``str(i)`` as produced here) by (partition, offset): cheap, no value decoding."""
    ends = end_offsets(bootstrap, topic, partitions)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"keys-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: dict[tuple[int, int], int] = {}
    deadline = time.monotonic() + 120
    try:
        while len(out) < sum(ends.values()) and time.monotonic() < deadline:
            for msg in consumer.consume(10000, 0.5):
                if msg.error() is None:
                    out[(present(msg.partition()), present(msg.offset()))] = int(present(msg.key()))
    finally:
        consumer.close()
    return out


def assert_table_equals_topic(spark: Any, table_uri: str, bootstrap: str, topic: str, partitions: int) -> int:
    """``spark.read.parquet(table_uri)`` == the topic by (partition, offset): no duplicate, no gap, equal values.

    Read as Arrow (``DataFrame.toArrow``) and checked against the keys of the topic, whose values
    are :func:`event` of the key: fast enough for hundreds of thousands of rows.
    """
    expected = topic_keys(bootstrap, topic, partitions)
    table = spark.read.parquet(table_uri).select("kafka_partition", "kafka_offset", "partition",
                                                  *VALUE_FIELDS).toArrow()
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    at = list(zip(columns["kafka_partition"], columns["kafka_offset"], strict=True))
    assert len(at) == len(set(at)), f"{len(at) - len(set(at))} duplicate rows in the lake"
    assert set(at) == set(expected), (f"missing {len(set(expected) - set(at))}, unexpected "
                                      f"{len(set(at) - set(expected))}")
    assert columns["partition"] == columns["kafka_partition"], "folder partition column and metadata disagree"
    for row, key in enumerate(at):
        values = {f: columns[f][row] for f in VALUE_FIELDS}
        assert values == event(expected[key]), f"{key}: lake {values} != topic {event(expected[key])}"
    return len(at)


def lake_records(spark: Any, lake: Path, topic: str) -> list[tuple[tuple[int, int], dict[str, Any]]]:
    """Rows of the topic in the lake as ((partition, offset), values) -- a list, so duplicates show."""
    df = spark.read.parquet(str(lake / topic))  # each topic is a table of its own
    folder = ["partition"] if "partition" in df.columns else []
    rows = df.select("kafka_partition", "kafka_offset", *folder, *VALUE_FIELDS).collect()
    out = []
    for r in rows:
        assert not folder or r["partition"] == r["kafka_partition"], "folder partition column and metadata disagree"
        out.append(((r["kafka_partition"], r["kafka_offset"]), {f: r[f] for f in VALUE_FIELDS}))
    return out


def assert_lake_equals_topic(spark: Any, lake: Path, bootstrap: str, topic: str, partitions: int) -> int:
    expected = topic_records(bootstrap, topic, partitions)
    landed = lake_records(spark, lake, topic)
    keys = [k for k, _ in landed]
    assert len(keys) == len(set(keys)), f"{len(keys) - len(set(keys))} duplicate rows in the lake"
    assert set(keys) == set(expected), (f"missing {len(set(expected) - set(keys))}, "
                                        f"unexpected {len(set(keys) - set(expected))}")
    for key, values in landed:
        assert values == expected[key], f"{key}: lake {values} != topic {expected[key]}"
    return len(keys)
