"""Issue 6: error tolerance and the dead letter queue end to end, through a worker's REST API.

Records produced with confluent-kafka, some of them valid JsonConverter envelopes and some
not; a FileStreamSink with ``value.converter.schemas.enable=true`` reads them. With
``errors.tolerance=all`` the good ones reach the file and the bad ones the DLQ topic, raw,
with the ``__connect.errors.*`` headers; with ``none`` the task fails and GET status shows a
trace naming the converter's error.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Producer

from tests.connect.acceptance.acceptance_support import (
    StandaloneWorker,
    create_topic,
    eventually,
    high_watermark,
    read_topic,
)
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)

JSON = "org.apache.kafka.connect.json.JsonConverter"


def envelope(payload: str) -> bytes:
    return json.dumps({"schema": {"type": "string", "optional": False}, "payload": payload}).encode()


# (value, is it good for JsonConverter with schemas.enable=true?)
RECORDS = [
    (envelope("good 0"), True),
    (b"plain text line, not JSON", False),
    (envelope("good 1"), True),
    (b'{"payload": "no schema field"}', False),
    (envelope("good 2"), True),
    (b'{"schema": {"type": "int32", "optional": false}, "payload": "not an int"}', False),
    (envelope("good 3"), True),
]
GOOD = [json.loads(v)["payload"] for v, ok in RECORDS if ok]
BAD = [(offset, v) for offset, (v, ok) in enumerate(RECORDS) if not ok]


def produce(bootstrap: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for value, _ in RECORDS:
        producer.produce(topic, value, headers=[("origin", b"acceptance")])
    assert producer.flush(10) == 0


def task_states(worker: StandaloneWorker, name: str) -> list[str]:
    return [t["state"] for t in worker.get(f"/connectors/{name}/status").json()["tasks"]]


def test_tolerance_all_sends_bad_records_to_the_dlq_with_context_headers(
        worker: StandaloneWorker, acceptance_broker: BrokerProcess, tmp_path: Path, topic_name: str) -> None:
    bootstrap, dlq, out = acceptance_broker.bootstrap, f"{topic_name}-dlq", tmp_path / "good.txt"
    create_topic(bootstrap, topic_name)
    produce(bootstrap, topic_name)
    created = httpx.post(worker.url + "/connectors", timeout=30, json={"name": "dlq-sink", "config": {
        "connector.class": "FileStreamSink", "topics": topic_name, "file": str(out),
        "value.converter": JSON, "value.converter.schemas.enable": "true",
        "errors.tolerance": "all", "errors.log.enable": "true", "errors.log.include.messages": "true",
        "errors.deadletterqueue.topic.name": dlq, "errors.deadletterqueue.topic.replication.factor": "1",
        "errors.deadletterqueue.context.headers.enable": "true"}})
    assert created.status_code == 201, created.text
    try:
        eventually(lambda: out.exists() and out.read_text().splitlines() == GOOD, "the good records in the file")
        dead = read_topic(bootstrap, dlq, len(BAD))
        assert task_states(worker, "dlq-sink") == ["RUNNING"]
    finally:
        httpx.delete(worker.url + "/connectors/dlq-sink", timeout=30)
    assert high_watermark(bootstrap, dlq) == len(BAD)  # the good ones never went there

    for (offset, original), (value, headers) in zip(BAD, dead, strict=True):
        assert value == original  # the raw consumed bytes, not a re-serialisation
        context = {k: v.decode() for k, v in headers if k.startswith("__connect.errors.")}
        assert ("origin", b"acceptance") in headers  # the original headers are kept
        where = f"DLQ record of offset {offset}: {context}"
        assert context["__connect.errors.topic"] == topic_name, where
        assert context["__connect.errors.partition"] == "0", where
        assert context["__connect.errors.offset"] == str(offset), where
        assert context["__connect.errors.connector.name"] == "dlq-sink", where
        assert context["__connect.errors.task.id"] == "0", where
        assert context["__connect.errors.stage"] == "VALUE_CONVERTER", where
        assert context["__connect.errors.class.name"].endswith("JsonConverter"), where
        assert "DataError" in context["__connect.errors.exception.class.name"], where
        assert context["__connect.errors.exception.message"], where
        assert "Traceback" in context["__connect.errors.exception.stacktrace"], where
    log = worker.log()
    assert "Error encountered in task dlq-sink-0. Executing stage 'VALUE_CONVERTER'" in log, log[-3000:]


def test_tolerance_none_fails_the_task_with_the_converter_error_in_its_trace(
        worker: StandaloneWorker, acceptance_broker: BrokerProcess, tmp_path: Path, topic_name: str) -> None:
    bootstrap, out = acceptance_broker.bootstrap, tmp_path / "strict.txt"
    create_topic(bootstrap, topic_name)
    produce(bootstrap, topic_name)
    created = httpx.post(worker.url + "/connectors", timeout=30, json={"name": "strict-sink", "config": {
        "connector.class": "FileStreamSink", "topics": topic_name, "file": str(out),
        "value.converter": JSON, "value.converter.schemas.enable": "true", "errors.tolerance": "none"}})
    assert created.status_code == 201, created.text
    try:
        eventually(lambda: task_states(worker, "strict-sink") == ["FAILED"], "the strict sink's task to fail")
        status = worker.get("/connectors/strict-sink/status").json()
        task = worker.get("/connectors/strict-sink/tasks/0/status").json()
    finally:
        httpx.delete(worker.url + "/connectors/strict-sink", timeout=30)
    assert status["connector"]["state"] == "RUNNING", status  # only the task fails, as in Kafka
    trace = status["tasks"][0]["trace"]
    assert task["trace"] == trace and task["worker_id"] == status["tasks"][0]["worker_id"]
    assert "Tolerance exceeded in error handler" in trace, trace
    assert "DataError: Converting byte[] to Kafka Connect data failed" in trace, trace
    assert "json_converter.py" in trace, trace
    # the first bad record (offset 1) stops the task: nothing after it was written
    assert (out.read_text().splitlines() if out.exists() else []) in ([], GOOD[:1])
