"""The FileStream connectors inside a real worker and broker, through ``seaway.connect.testing``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.connect.runtime.herder import State
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

from tests.support.optional import present

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker(tmp_path_factory.mktemp("file-broker")) as b:
        yield b


def end_offset(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
    try:
        return int(consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1])
    finally:
        consumer.close()


def create_topic(bootstrap: str, topic: str) -> None:
    """Create ``topic`` up front: a sink subscribed to a topic that does not exist yet currently
    fails its task (the runtime treats librdkafka's UNKNOWN_TOPIC_OR_PART event as fatal)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)


async def wait_for_file(path: Path, expected: bytes, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes() == expected:
            return
        await asyncio.sleep(0.1)
    got = path.read_bytes() if path.exists() else b""
    raise AssertionError(f"{path}: {len(got)} bytes, expected {len(expected)}; tail {got[-80:]!r}")


async def test_file_copied_through_a_topic_identically(broker: EmbeddedBroker, tmp_path: Path) -> None:
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    lines = [f"line {i} {'é' * (i % 7)} {'x' * (i % 150)}" for i in range(20_000)]
    source.write_bytes(("\n".join(lines[:10]) + "\r\n" + "\n".join(lines[10:]) + "\n").encode())
    create_topic(broker.bootstrap, "copy-lines")
    async with EmbeddedConnect(broker.bootstrap, tmp_path) as connect:
        await connect.create_connector("copy-in", {"connector.class": "FileStreamSource", "file": str(source),
                                                   "topic": "copy-lines"})
        await connect.create_connector("copy-out", {"connector.class": "FileStreamSink", "file": str(sink),
                                                    "topics": "copy-lines"})
        await connect.wait_for_running("copy-in")
        await wait_for_file(sink, ("\n".join(lines) + "\n").encode())
        expected = [({"filename": str(source)}, {"position": source.stat().st_size})]
        deadline = time.monotonic() + 60  # offsets are flushed every offset.flush.interval.ms (1 s)
        while (await connect.herder.connector_offsets("copy-in")).offsets != expected:
            assert time.monotonic() < deadline, await connect.herder.connector_offsets("copy-in")
            await asyncio.sleep(0.1)


async def test_restart_resumes_from_stored_offsets(broker: EmbeddedBroker, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("".join(f"first {i}\n" for i in range(500)))
    config = {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": str(source),
              "topic": "resume-lines", "batch.size": "100"}
    async with EmbeddedConnect(broker.bootstrap, tmp_path) as connect:
        await connect.create_connector("resume", config)
        await connect.wait_for_running("resume")
        assert [m.value() for m in connect.consume("resume-lines", 500)][-1] == b"first 499"
    # the worker is gone; the offsets file remembers the position after "first 499"
    with source.open("a") as f:
        f.write("".join(f"second {i}\n" for i in range(300)))
        f.write("partial")  # no terminator yet: not emitted
    async with EmbeddedConnect(broker.bootstrap, tmp_path) as connect:
        await connect.create_connector("resume", config)
        await connect.wait_for_running("resume")
        values = [present(m.value()).decode() for m in connect.consume("resume-lines", 800)]
        await asyncio.sleep(1.5)  # give a duplicate or the partial line time to show up
        assert end_offset(broker.bootstrap, "resume-lines") == 800
        status = await connect.herder.connector_status("resume")
        assert status.connector.state is State.RUNNING
    assert values == [f"first {i}" for i in range(500)] + [f"second {i}" for i in range(300)]
