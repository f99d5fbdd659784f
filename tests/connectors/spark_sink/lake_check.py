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


def committed_offsets(lake: Path, topic: str, partitions: int) -> dict[int, int]:
    """The lake's commit log per partition (reading file names only)."""
    out = {}
    for p in range(partitions):
        names = [n.name for n in (lake / "_commits" / topic / str(p)).glob("commit-*.json")]
        out[p] = max((int(n[len("commit-"):-len(".json")]) for n in names), default=0)
    return out


def wait_landed(lake: Path, topic: str, ends: dict[int, int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    got: dict[int, int] = {}
    while time.monotonic() < deadline:
        got = committed_offsets(lake, topic, len(ends))
        if got == ends:
            return
        time.sleep(0.1)  # lists file names only; coarser polling would add its period to bench figures
    raise TimeoutError(f"lake has {got}, topic ends at {ends}")


def lake_records(spark: Any, lake: Path, topic: str) -> list[tuple[tuple[int, int], dict[str, Any]]]:
    """Rows of the topic in the lake as ((partition, offset), values) -- a list, so duplicates show."""
    df = spark.read.parquet(str(lake)).where(f"topic = '{topic}'")
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
