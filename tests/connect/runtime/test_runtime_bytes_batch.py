"""WorkerSourceTask and ``BytesRecordBatch``: produced from its columns, acknowledged per batch.

A task returning ``BytesRecordBatch`` (the mirror connector does) with ByteArrayConverter for
keys, values and headers and no SMT gets its bytes written unchanged (key, value, headers,
timestamp, partition) and one ``commit_records(batch, offsets)`` per batch with the offset each
record got, never ``commit_record`` per record. With an SMT the batch is iterated as records:
``commit_record`` per record, the SMT applied.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.connect.api import (
    NO_DEFAULT,
    BytesRecordBatch,
    ConfigDef,
    ConfigType,
    Importance,
    RecordMetadata,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
)
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

from tests.connect.runtime.rt_support import rt_broker

__all__ = ["rt_broker"]

CONFIG = ConfigDef().define("topic", ConfigType.STRING, NO_DEFAULT, None, Importance.HIGH, "Topic.")
BYTE_ARRAY = "org.apache.kafka.connect.converters.ByteArrayConverter"
PER_BATCH = 50
BATCHES = 4


def _batch(topic: str, first: int) -> BytesRecordBatch:
    n = range(first, first + PER_BATCH)
    return BytesRecordBatch(
        topic, 1, [None if i % 5 == 0 else f"k{i}".encode() for i in n], [f"v{i}".encode() for i in n],
        [[("h", f"{i}".encode()), ("drop", b"x")] if i % 2 else None for i in n],
        [1_600_000_000_000 + i for i in n], {"bytes": topic}, [{"next": i + 1} for i in n])


class BytesTask(SourceTask):
    """Returns BATCHES batches of PER_BATCH records; records what the runtime reports back."""

    per_batch: ClassVar[list[list[int]]] = []
    per_record: ClassVar[list[int]] = []

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.topic = CONFIG.parse(props)["topic"]
        self.sent = 0
        self._stop = threading.Event()

    def poll(self) -> BytesRecordBatch | None:
        if self.sent >= BATCHES * PER_BATCH:
            self._stop.wait(0.05)
            return None
        batch = _batch(self.topic, self.sent)
        self.sent += PER_BATCH
        return batch

    def commit_records(self, records: Sequence[SourceRecord], offsets: Sequence[int]) -> None:
        assert type(records) is BytesRecordBatch and len(offsets) == len(records)
        type(self).per_batch.append(list(offsets))

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        assert metadata is not None
        type(self).per_record.append(metadata.offset)

    def stop(self) -> None:
        self._stop.set()


class BytesConnector(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return BytesTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return CONFIG


def _read(bootstrap: str, topic: str, count: int) -> list[Any]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}"})
    consumer.assign([TopicPartition(topic, 1, 0)])
    out: list[Any] = []
    try:
        while len(out) < count:
            for m in consumer.consume(count, 5):
                assert m.error() is None
                out.append((m.key(), m.value(), m.headers(), m.timestamp()[1]))
    finally:
        consumer.close()
    return out


async def _run(broker: EmbeddedBroker, tmp_path: Path, topic: str, extra: dict[str, str]) -> list[Any]:
    BytesTask.per_batch, BytesTask.per_record = [], []
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(15)
    worker = {"key.converter": BYTE_ARRAY, "value.converter": BYTE_ARRAY, "header.converter": BYTE_ARRAY,
              "offset.flush.interval.ms": "200"}
    async with EmbeddedConnect(broker.bootstrap, tmp_path, plugins=[BytesConnector], worker_props=worker) as connect:
        await connect.create_connector("bytes", {"connector.class": f"{__name__}:BytesConnector", "topic": topic,
                                                 **extra})
        records = _read(broker.bootstrap, topic, BATCHES * PER_BATCH)
        for _ in range(100):
            if (await connect.herder.connector_offsets("bytes")).offsets == [
                    ({"bytes": topic}, {"next": BATCHES * PER_BATCH})]:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the last source offset was not committed")
    return records


@pytest.mark.timeout(60)
async def test_columns_are_produced_unchanged_and_acknowledged_per_batch(rt_broker: EmbeddedBroker, tmp_path: Path,
                                                                         topic_name: str) -> None:
    records = await _run(rt_broker, tmp_path, topic_name, {})
    expected = [(key, value, headers, ts) for batch in (_batch(topic_name, b * PER_BATCH) for b in range(BATCHES))
                for key, value, headers, ts in zip(batch.keys, batch.values, batch.headers, batch.timestamps,
                                                   strict=True)]
    assert records == expected
    assert BytesTask.per_batch == [list(range(b * PER_BATCH, (b + 1) * PER_BATCH)) for b in range(BATCHES)]
    assert BytesTask.per_record == []


@pytest.mark.timeout(60)
async def test_with_an_smt_the_batch_is_iterated_as_records(rt_broker: EmbeddedBroker, tmp_path: Path,
                                                             topic_name: str) -> None:
    records = await _run(rt_broker, tmp_path, topic_name, {
        "transforms": "drop", "transforms.drop.type": "org.apache.kafka.connect.transforms.DropHeaders",
        "transforms.drop.headers": "drop"})
    assert [h for _, _, h, _ in records][:2] == [None, [("h", b"1")]]
    assert BytesTask.per_record == list(range(BATCHES * PER_BATCH)) and BytesTask.per_batch == []
