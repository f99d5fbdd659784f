"""What the exactly-once source tests share: a broker of either kind, EOS workers, topic readers.

Workers are real ``seaway connect distributed`` processes (``dist_support.WorkerProcess``)
with ``exactly.once.source.support=enabled``. The broker is Seaway's (the CI proof) or Apache
Kafka 4.x (``tests/peer``'s KRaft broker, marked ``peer``), so the same checks show the
worker's behaviour does not depend on our own broker's reading of the protocol.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import httpx
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__

from tests.connect.distributed.dist_support import BROKER_OVERRIDES, WorkerProcess, free_port, worker_properties

__all__ = [
    "ROOT",
    "Broker",
    "StableEnd",
    "config_records",
    "create_topic",
    "eos_worker_props",
    "lines",
    "read_values",
    "session_key",
    "signed",
    "source_offsets",
    "stable_end",
    "start_broker",
    "write_lines",
]

ROOT = Path(__file__).resolve().parents[3]
EOS_CONNECTORS = "tests.connect.exactly_once.eos_connectors"


class Broker(Protocol):
    bootstrap: str

    def stop(self, timeout: float = ...) -> None: ...


def start_broker(kind: str, directory: Path) -> Iterator[Broker]:
    """A broker of ``kind`` ("seaway" or "kafka") for one test module, stopped afterwards."""
    if kind == "seaway":
        from tests.support.broker import BrokerProcess

        with BrokerProcess(directory, BROKER_OVERRIDES) as seaway:
            yield seaway
        return
    from tests.peer.apache_kafka import KafkaBroker
    from tests.peer.jars import ensure_jars, missing_tools

    missing = missing_tools()
    if missing:
        import pytest

        message = f"the Apache Kafka variant needs {', '.join(missing)}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    ensure_jars()
    with KafkaBroker(directory, BROKER_OVERRIDES) as kafka:
        yield kafka


def eos_worker_props(bootstrap: str, group: str, **extra: str) -> dict[str, str]:
    """An exactly-once worker: lost work moves at once (no scheduled delay), test connectors importable."""
    props = worker_properties(bootstrap, free_port(), group, delay_ms=0, extra={
        "exactly.once.source.support": "enabled", "plugin.allowlist": f"{EOS_CONNECTORS}.*"})
    props.update(extra)
    return props


def create_internal_topics(bootstrap: str, props: dict[str, str]) -> None:
    """The worker's topics created and visible first (Apache Kafka may not serve fresh metadata at once)."""
    from tests.peer.apache_kafka import create_internal_topics as create

    create(bootstrap, props)


def start_worker(directory: Path, props: dict[str, str], bootstrap_kind: str) -> WorkerProcess:
    if bootstrap_kind == "kafka" and not (directory / "worker.properties").exists():
        create_internal_topics(props["bootstrap.servers"], props)
    return WorkerProcess(directory, props).start()


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = admin.list_topics(topic, timeout=10).topics.get(topic)
        if found is not None and found.error is None and len(found.partitions) == partitions:
            return
        time.sleep(0.1)
    raise AssertionError(f"topic {topic} not visible")


def lines(n: int, start: int = 0) -> list[bytes]:
    return [f"line-{i:07d}".encode() for i in range(start, start + n)]


def write_lines(path: Path, n: int) -> None:
    with path.open("wb") as f:
        f.write(b"".join(line + b"\n" for line in lines(n)))


def _consumer(bootstrap: str, isolation: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": f"eos-check-{time.monotonic_ns()}",
                     "isolation.level": isolation, "enable.auto.commit": False, "fetch.wait.max.ms": 50,
                     "enable.partition.eof": True})


class StableEnd:
    """Polls one partition's last stable offset with a single long-lived consumer (cheap to call often)."""

    def __init__(self, bootstrap: str, topic: str, partition: int = 0, isolation: str = "read_committed") -> None:
        # read_committed: the last stable offset; read_uncommitted: the high watermark
        self._consumer = _consumer(bootstrap, isolation)
        self._tp = TopicPartition(topic, partition)

    def __call__(self) -> int:
        return int(self._consumer.get_watermark_offsets(self._tp, timeout=10, cached=False)[1])

    def close(self) -> None:
        self._consumer.close()


def freeze_inside_a_transaction(worker: WorkerProcess, lso: StableEnd, high: StableEnd, within: float) -> bool:
    """SIGSTOP ``worker`` while its open transaction holds records in the log; False (and the
    worker running) if that was not seen within ``within`` seconds.

    A transaction may be open for a millisecond or two, shorter than a watermark query on a
    loaded machine, so an action timed on an observation alone can land after every commit (CI
    saw 10 kills of 10 do so). So the worker is frozen when the log holds uncommitted records
    (high watermark above the last stable offset), and kept frozen only if it still does once
    anything in flight (an EndTxn sent just before the freeze) has landed; otherwise it is
    thawed and watched again."""
    assert worker.proc is not None
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if high() > lso():
            worker.proc.send_signal(signal.SIGSTOP)
            time.sleep(0.3)
            if high() > lso():
                return True
            worker.proc.send_signal(signal.SIGCONT)
        time.sleep(0.002)
    return False


def stable_end(bootstrap: str, topic: str, partition: int = 0) -> int:
    """The partition's last stable offset (what read_committed readers may read up to)."""
    consumer = _consumer(bootstrap, "read_committed")
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10, cached=False)[1])
    finally:
        consumer.close()


def read_values(bootstrap: str, topic: str, *, isolation: str = "read_committed", partition: int = 0,
                timeout: float = 60.0) -> list[bytes]:
    """Every value of one partition up to its end (the LSO for read_committed), in offset order."""
    consumer = _consumer(bootstrap, isolation)
    try:
        tp = TopicPartition(topic, partition)
        end = int(consumer.get_watermark_offsets(tp, timeout=10, cached=False)[1])
        consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        out: list[bytes] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            position = consumer.position([tp])[0].offset
            if end == 0 or position >= end:
                return out
            for message in consumer.consume(10000, 0.2):
                value = message.value()
                if message.error() is None and value is not None:
                    out.append(value)
        raise AssertionError(f"could not read {topic} to its end {end} within {timeout}s ({len(out)} read)")
    finally:
        consumer.close()


def source_offsets(bootstrap: str, offsets_topic: str, connector: str) -> list[dict[str, Any]]:
    """The source offsets ``connector`` committed (read_committed) to a worker's offsets topic, oldest first.

    Read from the topic itself, with no worker running, so nothing moves while it is read: what a
    killed worker's successor will resume from."""
    consumer = _consumer(bootstrap, "read_committed")
    try:
        meta = consumer.list_topics(offsets_topic, timeout=10).topics[offsets_topic]
        parts = sorted(meta.partitions)
        ends = {p: int(consumer.get_watermark_offsets(TopicPartition(offsets_topic, p), timeout=10, cached=False)[1])
                for p in parts}
        consumer.assign([TopicPartition(offsets_topic, p, OFFSET_BEGINNING) for p in parts if ends[p]])
        found: list[tuple[int, dict[str, Any]]] = []  # one key, so one partition: offset order is commit order
        deadline = time.monotonic() + 30

        def done() -> bool:
            return all(consumer.position([TopicPartition(offsets_topic, p)])[0].offset >= ends[p]
                       for p in parts if ends[p])
        while not done():
            assert time.monotonic() < deadline, f"could not read {offsets_topic} to its end within 30 s"
            for m in consumer.consume(1000, 0.2):
                key, value = m.key(), m.value()
                if m.error() is None and key is not None and value is not None and json.loads(key)[0] == connector:
                    found.append((m.offset() or 0, json.loads(value)))
        return [value for _, value in sorted(found, key=lambda f: f[0])]
    finally:
        consumer.close()


def config_records(bootstrap: str, topic: str) -> list[tuple[str, Any]]:
    """The config topic's (key, JSON value) records, committed ones only."""
    consumer = _consumer(bootstrap, "read_committed")
    try:
        tp = TopicPartition(topic, 0)
        end = int(consumer.get_watermark_offsets(tp, timeout=10, cached=False)[1])
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        out: list[tuple[str, Any]] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (end and consumer.position([tp])[0].offset < end):
            for m in consumer.consume(1000, 0.2):
                key, value = m.key(), m.value()
                if m.error() is None and key is not None:
                    out.append((key.decode(), None if value is None else json.loads(value)))
        return out
    finally:
        consumer.close()


def session_key(bootstrap: str, topic: str) -> bytes:
    """The cluster's current KIP-507 session key, as a worker reads it from the config topic."""
    keys = [v for k, v in config_records(bootstrap, topic) if k == "session-key" and v]
    assert keys, "no session key in the config topic"
    return base64.b64decode(keys[-1]["key"])


def signed(key: bytes, body: bytes = b"") -> dict[str, str]:
    """KIP-507 headers for an internal request: ``body`` signed with ``key`` (HmacSHA256), computed here,
    not by the worker's own signing code."""
    return {"X-Connect-Authorization": base64.b64encode(hmac.new(key, body, hashlib.sha256).digest()).decode(),
            "X-Connect-Request-Signature-Algorithm": "HmacSHA256"}


def http(method: str, url: str, **kw: Any) -> httpx.Response:
    return httpx.request(method, url, timeout=60, **kw)
