"""WorkerSinkTask end to end: converted records reach put, offsets after flush, redelivery, DLQ, failure."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from confluent_kafka import Consumer, Message
from seaway.connect.api import Schema, SinkRecordBatch, TimestampType
from seaway.connect.runtime.herder import State
from seaway.connect.testing import EmbeddedConnect

from tests.connect.runtime.rt_support import MODULE, CollectingSinkTask, connect, rt_broker
from tests.support.optional import present

__all__ = ["connect", "rt_broker"]

SINK = f"{MODULE}:CollectingSinkConnector"


def _text_headers(message: Message) -> dict[str, str]:
    """A consumed message's headers decoded: librdkafka hands them over as (key, bytes) pairs."""
    headers = message.headers() or []
    assert isinstance(headers, list), headers
    out: dict[str, str] = {}
    for key, value in headers:
        assert isinstance(value, bytes), (key, value)
        out[key] = value.decode()
    return out


async def _wait(predicate: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise TimeoutError("condition not met")


@pytest.mark.timeout(60)
async def test_sink_put_receives_converted_records_and_offsets_commit_after_flush(
        connect: EmbeddedConnect, topic_name: str) -> None:
    connect.produce(topic_name, [f"r{n}" for n in range(5)], key="k", headers=[("h", b"42")])
    await connect.create_connector("sink", {"connector.class": SINK, "topics": topic_name})
    await connect.wait_for_running("sink")
    await _wait(lambda: len(CollectingSinkTask.records) == 5)
    records = CollectingSinkTask.records
    assert [r.value for r in records] == [f"r{n}" for n in range(5)]
    assert [r.kafka_offset for r in records] == list(range(5))
    assert {(r.topic, r.kafka_partition, r.key) for r in records} == {(topic_name, 0, "k")}
    header = records[0].headers.last_with_name("h")
    assert header is not None and header.value == 42  # SimpleHeaderConverter infers the type
    assert records[0].timestamp is not None

    async def committed() -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return (await connect.herder.connector_offsets("sink")).offsets

    deadline = time.monotonic() + 20
    while await committed() != [({"kafka_topic": topic_name, "kafka_partition": 0}, {"kafka_offset": 5})]:
        assert time.monotonic() < deadline, await committed()
        await asyncio.sleep(0.1)
    # the commit came after a flush that covered those offsets
    assert any(present(o.get(next(iter(o)))).offset == 5 for o in CollectingSinkTask.flushed if o)


@pytest.mark.timeout(60)
async def test_retriable_error_from_put_redelivers_the_same_batch(connect: EmbeddedConnect, topic_name: str) -> None:
    CollectingSinkTask.retriable_failures = 2
    connect.produce(topic_name, [f"r{n}" for n in range(4)])
    await connect.create_connector("retry", {"connector.class": SINK, "topics": topic_name})
    await _wait(lambda: len(CollectingSinkTask.records) == 4)
    await asyncio.sleep(0.3)
    assert CollectingSinkTask.puts == 2
    assert [r.value for r in CollectingSinkTask.records] == [f"r{n}" for n in range(4)]  # no loss, no duplicates


@pytest.mark.timeout(60)
async def test_tolerance_all_skips_bad_records_and_writes_them_to_the_dlq(
        connect: EmbeddedConnect, topic_name: str) -> None:
    dlq = topic_name + "-dlq"
    connect.produce(topic_name, [b'"good1"', b"{not json", b'"poison"', b'"good2"'])
    await connect.create_connector("dlq", {
        "connector.class": SINK, "topics": topic_name,
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
        "errors.tolerance": "all", "errors.log.enable": "true", "errors.log.include.messages": "true",
        "errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true"})
    await _wait(lambda: len(CollectingSinkTask.records) == 2)
    assert [r.value for r in CollectingSinkTask.records] == ["good1", "good2"]
    messages = connect.consume(dlq, 2)
    by_value = {m.value(): _text_headers(m) for m in messages}
    converter_failure = by_value[b"{not json"]
    assert converter_failure["__connect.errors.topic"] == topic_name
    assert converter_failure["__connect.errors.partition"] == "0"
    assert converter_failure["__connect.errors.offset"] == "1"
    assert converter_failure["__connect.errors.connector.name"] == "dlq"
    assert converter_failure["__connect.errors.task.id"] == "0"
    assert converter_failure["__connect.errors.stage"] == "VALUE_CONVERTER"
    assert converter_failure["__connect.errors.class.name"].endswith("JsonConverter")
    assert "DataError" in converter_failure["__connect.errors.exception.class.name"]
    assert converter_failure["__connect.errors.exception.message"]
    assert "Traceback" in converter_failure["__connect.errors.exception.stacktrace"]
    reported = by_value[b'"poison"']
    assert reported["__connect.errors.stage"] == "TASK_PUT"
    assert reported["__connect.errors.exception.message"] == "poison record"
    assert reported["__connect.errors.offset"] == "2"
    status = await connect.herder.connector_status("dlq")
    assert [t.state for t in status.tasks] == [State.RUNNING]


@pytest.mark.timeout(60)
async def test_tolerance_none_fails_the_task_with_the_trace(connect: EmbeddedConnect, topic_name: str) -> None:
    connect.produce(topic_name, [b"{not json"])
    await connect.create_connector("strict", {
        "connector.class": SINK, "topics": topic_name,
        "value.converter": "org.apache.kafka.connect.json.JsonConverter"})
    status = await connect.wait_for_status("strict", State.RUNNING, tasks=1, task_state=State.FAILED)
    trace = status.tasks[0].trace or ""
    assert "Tolerance exceeded in error handler" in trace
    assert "DataError" in trace
    assert status.tasks[0].worker_id == connect.herder.worker_id


@pytest.mark.timeout(60)
async def test_sink_offsets_reset_and_alter_when_stopped(connect: EmbeddedConnect, topic_name: str) -> None:
    connect.produce(topic_name, [f"r{n}" for n in range(3)])
    await connect.create_connector("reset", {"connector.class": SINK, "topics": topic_name,
                                             "consumer.override.session.timeout.ms": "6000"})
    await _wait(lambda: len(CollectingSinkTask.records) == 3)
    await connect.herder.stop_connector("reset")
    partition = {"kafka_topic": topic_name, "kafka_partition": 0}
    message = await connect.herder.alter_connector_offsets(
        "reset", type(await connect.herder.connector_offsets("reset"))([(partition, {"kafka_offset": 1})]))
    assert "altered successfully" in message
    assert (await connect.herder.connector_offsets("reset")).offsets == [(partition, {"kafka_offset": 1})]
    CollectingSinkTask.records.clear()
    await connect.herder.resume_connector("reset")
    await _wait(lambda: len(CollectingSinkTask.records) == 2)
    assert [r.value for r in CollectingSinkTask.records] == ["r1", "r2"]
    await connect.herder.stop_connector("reset")
    assert "reset successfully" in await connect.herder.reset_connector_offsets("reset")
    assert (await connect.herder.connector_offsets("reset")).offsets == []
    _ = (json, Consumer)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("strategy", ["range,roundrobin", "cooperative-sticky"])
async def test_sink_task_restarted_while_paused_skips_nothing(
        connect: EmbeddedConnect, topic_name: str, strategy: str) -> None:
    """Partitions assigned to a PAUSED task stay paused, and nothing is skipped on resume.

    librdkafka ignores a pause() made in the assignment callback before the partitions are
    assigned; the task used to fetch while PAUSED and drop what it fetched.
    """
    connect.produce(topic_name, [f"r{n}" for n in range(20)])
    await connect.create_connector("held", {"connector.class": SINK, "topics": topic_name,
                                            "consumer.override.partition.assignment.strategy": strategy})
    await _wait(lambda: len(CollectingSinkTask.records) == 20)
    await connect.herder.pause_connector("held")
    await _wait(lambda: connect.herder.status_store.get_all("held")[0].state is State.PAUSED)
    CollectingSinkTask.opened.clear()
    # a fresh task instance, started PAUSED: its partitions are assigned while it is paused
    await connect.herder.restart_connector("held", include_tasks=True)
    await _wait(lambda: CollectingSinkTask.opened, 30)
    connect.produce(topic_name, [f"r{n}" for n in range(20, 30)])
    await asyncio.sleep(2.0)
    assert len(CollectingSinkTask.records) == 20
    await connect.herder.resume_connector("held")
    await _wait(lambda: len(CollectingSinkTask.records) >= 30)
    await asyncio.sleep(0.3)
    assert [r.value for r in CollectingSinkTask.records] == [f"r{n}" for n in range(30)]


@pytest.mark.timeout(60)
async def test_plain_string_messages_reach_put_as_a_batch_of_columns(
        connect: EmbeddedConnect, topic_name: str) -> None:
    """No SMTs and String values: put gets a SinkRecordBatch; messages with headers come as records."""
    connect.produce(topic_name, [f"k{n}" for n in range(3)], key="key")
    connect.produce(topic_name, ["nokey", None])
    await connect.create_connector("columns", {"connector.class": SINK, "topics": topic_name})
    await _wait(lambda: len(CollectingSinkTask.records) == 5)
    batches = [b for b in CollectingSinkTask.batches if isinstance(b, SinkRecordBatch)]
    assert batches and sum(len(b) for b in batches) == 5
    assert [v for b in batches for v in b.record_values()] == ["k0", "k1", "k2", "nokey", None]
    assert [k for b in batches for k in b.record_keys()] == ["key", "key", "key", None, None]
    records = CollectingSinkTask.records
    assert [(r.topic, r.kafka_partition, r.kafka_offset, r.key, r.value) for r in records] == [
        (topic_name, 0, n, "key" if n < 3 else None, v) for n, v in enumerate(["k0", "k1", "k2", "nokey", None])]
    assert {r.key_schema for r in records} == {Schema.OPTIONAL_STRING_SCHEMA}
    assert {r.value_schema for r in records} == {Schema.OPTIONAL_STRING_SCHEMA}
    assert all(r.timestamp is not None and r.timestamp_type is TimestampType.CREATE_TIME for r in records)
    assert all(not r.headers for r in records)
    connect.produce(topic_name, ["with-header"], headers=[("h", b"1")])
    await _wait(lambda: len(CollectingSinkTask.records) == 6)
    assert type(CollectingSinkTask.batches[-1]) is list
    assert CollectingSinkTask.records[-1].headers.last_with_name("h") is not None
