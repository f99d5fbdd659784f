"""WorkerSinkTask with JsonConverter and no SMTs: polls reach put as SinkRecordBatches of value columns."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from seaway.connect.api import Schema, SchemaBuilder, SinkRecordBatch, Struct, TimestampType
from seaway.connect.converters import JsonConverter
from seaway.connect.testing import EmbeddedConnect

from tests.connect.runtime.rt_support import MODULE, CollectingSinkTask, connect, rt_broker

__all__ = ["connect", "rt_broker"]

SINK = f"{MODULE}:CollectingSinkConnector"
EVENT = (SchemaBuilder.struct().name("Event").field("id", Schema.INT64_SCHEMA)
         .field("note", SchemaBuilder.string().optional().default_value("none").build()).build())
JSON = {"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true"}


async def _wait(predicate: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise TimeoutError("condition not met")


def envelope(payload: Any, schema: Schema = EVENT) -> bytes:
    c = JsonConverter()
    c.configure({"converter.type": "value"})
    return json.dumps({"schema": c.as_json_schema(schema), "payload": payload}).encode()


@pytest.mark.timeout(60)
async def test_json_values_reach_put_as_columns_and_as_the_same_records(
        connect: EmbeddedConnect, topic_name: str) -> None:
    connect.produce(topic_name, [envelope({"id": n, "note": None if n % 2 else f"n{n}"}) for n in range(6)],
                    key="k")
    await connect.create_connector("cols", {"connector.class": SINK, "topics": topic_name, **JSON})
    await _wait(lambda: len(CollectingSinkTask.records) == 6)
    batches = [b for b in CollectingSinkTask.batches if isinstance(b, SinkRecordBatch)]
    assert batches and sum(len(b) for b in batches) == 6
    columns = [b.record_value_columns() for b in batches]
    assert all(c is not None and c[0] == EVENT for c in columns)
    assert [v for c in columns if c is not None for v in c[1][0]] == list(range(6))
    assert [v for c in columns if c is not None for v in c[1][1]] == ["n0", "none", "n2", "none", "n4", "none"]
    positions = [b.record_positions() for b in batches]
    assert [o for _, _, offsets in positions for o in offsets] == list(range(6))
    assert {(t, p) for topics, partitions, _ in positions for t, p in zip(topics, partitions, strict=True)} == {
        (topic_name, 0)}
    # the records built from the columns are what the record path builds
    records = CollectingSinkTask.records
    assert [(r.topic, r.kafka_partition, r.kafka_offset, r.key, r.key_schema, r.value_schema) for r in records] == [
        (topic_name, 0, n, "k", Schema.OPTIONAL_STRING_SCHEMA, EVENT) for n in range(6)]
    assert [r.value for r in records] == [Struct(EVENT).put("id", n).put("note", "none" if n % 2 else f"n{n}")
                                          for n in range(6)]  # replace.null.with.default
    assert all(r.timestamp is not None and r.timestamp_type is TimestampType.CREATE_TIME and not r.headers
               for r in records)
    assert [r.value for b in batches for r in b] == [v for b in batches for v in b.record_values()]


@pytest.mark.timeout(60)
async def test_a_poll_the_columns_cannot_take_comes_as_records(connect: EmbeddedConnect, topic_name: str) -> None:
    """A null value, another schema or headers: the poll takes the record path (same records as ever)."""
    other = SchemaBuilder.struct().name("Other").field("x", Schema.STRING_SCHEMA).build()
    await connect.create_connector("cols", {"connector.class": SINK, "topics": topic_name, **JSON})
    await connect.wait_for_running("cols")
    connect.produce(topic_name, [envelope({"id": 1, "note": "a"}), None, envelope({"x": "b"}, other)])
    await _wait(lambda: len(CollectingSinkTask.records) == 3)
    assert not any(isinstance(b, SinkRecordBatch) and b.record_value_columns() is not None
                   for b in CollectingSinkTask.batches)
    assert [(r.kafka_offset, r.value_schema, r.value) for r in CollectingSinkTask.records] == [
        (0, EVENT, Struct(EVENT).put("id", 1).put("note", "a")), (1, None, None),
        (2, other, Struct(other).put("x", "b"))]
    connect.produce(topic_name, [envelope({"id": 2, "note": "c"})], headers=[("h", b"1")])
    await _wait(lambda: len(CollectingSinkTask.records) == 4)
    assert type(CollectingSinkTask.batches[-1]) is list
    connect.produce(topic_name, [envelope({"id": 3, "note": "d"})])
    await _wait(lambda: len(CollectingSinkTask.records) == 5)
    last = CollectingSinkTask.batches[-1]
    assert isinstance(last, SinkRecordBatch) and last.record_value_columns() == (EVENT, [[3], ["d"]])
