"""Connect reads committed data only: sink tasks and the worker's own offsets reader.

* A FileStreamSink over a topic holding committed, aborted and still-open transactions
  writes the committed lines only, in order (sink consumers use ``isolation.level=read_committed``
  unless configured otherwise; librdkafka's default is read_committed too, Kafka's Java
  consumer's is read_uncommitted).
* An aborted transaction in the offsets topic (an exactly-once task killed mid-transaction)
  is never applied: ``GET /connectors/{c}/offsets`` shows the last committed offset, and an
  open transaction there does not hold the worker's reads up, even when the worker's
  ``consumer.*`` settings ask for read_uncommitted (the internal consumers ignore that).
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer
from seaway.connect.runtime.murmur2 import partition_for

from tests.connect.distributed.dist_support import WorkerProcess, dump_logs, wait_for, wait_settled
from tests.connect.exactly_once.eos_support import (
    Broker,
    create_internal_topics,
    create_topic,
    eos_worker_props,
)


def _transactional(bootstrap: str) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"rc-{uuid.uuid4().hex[:8]}"})
    producer.init_transactions(30)
    return producer


def _write(producer: Producer, topic: str, values: list[tuple[bytes | None, bytes]], *, commit: bool | None,
           partition: int = 0) -> None:
    """One transaction of ``values``: committed, aborted (after they reached the log) or left open (None)."""
    producer.begin_transaction()
    for key, value in values:
        producer.produce(topic, value, key, partition=partition)
    assert producer.flush(30) == 0
    if commit is True:
        producer.commit_transaction(30)
    elif commit is False:
        producer.abort_transaction(30)


def _worker(bootstrap: str, broker_kind: str, directory: Path, **extra: str) -> WorkerProcess:
    props = eos_worker_props(bootstrap, f"rc-{uuid.uuid4().hex[:8]}", **extra)
    if broker_kind == "kafka":
        create_internal_topics(bootstrap, props)
    worker = WorkerProcess(directory, props).start()
    wait_settled([worker])
    return worker


@pytest.mark.timeout(180)
def test_a_sink_writes_committed_records_only(eos_broker: Broker, broker_kind: str, tmp_path: Path) -> None:
    bootstrap = eos_broker.bootstrap
    topic = f"rc-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    writer = _transactional(bootstrap)
    _write(writer, topic, [(None, b"committed-1")], commit=True)
    _write(writer, topic, [(None, b"aborted-1"), (None, b"aborted-2")], commit=False)
    _write(writer, topic, [(None, b"committed-2")], commit=True)
    worker = _worker(bootstrap, broker_kind, tmp_path / "worker")
    try:
        sink_file = tmp_path / "sink.txt"
        reply = worker.request("PUT", "/connectors/sink/config", json={
            "connector.class": "FileStreamSink", "file": str(sink_file), "topics": topic})
        assert reply.status_code == 201, reply.text
        wait_for(lambda: sink_file.exists() and sink_file.read_text().count("\n") >= 2, 60, what="the sink to write")
        _write(writer, topic, [(None, b"open-1")], commit=None)
        time.sleep(2)
        assert sink_file.read_text() == "committed-1\ncommitted-2\n"
        writer.commit_transaction(30)
        wait_for(lambda: sink_file.read_text().count("\n") >= 3, 60, what="the committed open transaction")
        assert sink_file.read_text() == "committed-1\ncommitted-2\nopen-1\n"
    except BaseException:
        dump_logs([worker], 60)
        raise
    finally:
        worker.stop()


@pytest.mark.timeout(180)
def test_the_offsets_reader_ignores_aborted_and_open_transactions(eos_broker: Broker, broker_kind: str,
                                                                  tmp_path: Path) -> None:
    """Even with ``consumer.isolation.level=read_uncommitted`` on the worker (meant for its sink tasks)."""
    bootstrap = eos_broker.bootstrap
    topic = f"rc-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic)
    writer = _transactional(bootstrap)
    worker = _worker(bootstrap, broker_kind, tmp_path / "worker", **{"consumer.isolation.level": "read_uncommitted"})
    try:
        offsets_topic = worker.props["offset.storage.topic"]
        source = tmp_path / "in.txt"
        source.write_text("a\nb\nc\n")
        key = json.dumps(["src", {"filename": str(source)}], sort_keys=True, separators=(",", ":")).encode()
        partition = partition_for(key, int(worker.props["offset.storage.partitions"]))
        _write(writer, offsets_topic, [(key, b'{"position":2}')], commit=True, partition=partition)
        _write(writer, offsets_topic, [(key, b'{"position":999}')], commit=False, partition=partition)
        reply = worker.request("POST", "/connectors", json={"name": "src", "initial_state": "STOPPED", "config": {
            "connector.class": "FileStreamSource", "file": str(source), "topic": topic}})
        assert reply.status_code == 201, reply.text
        offsets = worker.get("/connectors/src/offsets")
        assert offsets.status_code == 200, offsets.text
        assert offsets.json()["offsets"] == [{"partition": {"filename": str(source)}, "offset": {"position": 2}}]

        _write(writer, offsets_topic, [(key, b'{"position":3}')], commit=None, partition=partition)
        assert worker.get("/connectors/src/offsets").json()["offsets"][0]["offset"] == {"position": 2}
        writer.commit_transaction(30)
        assert worker.get("/connectors/src/offsets").json()["offsets"][0]["offset"] == {"position": 3}
    except BaseException:
        dump_logs([worker], 60)
        raise
    finally:
        worker.stop()
