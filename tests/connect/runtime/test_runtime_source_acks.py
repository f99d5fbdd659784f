"""WorkerSourceTask for tasks without ``commit_record``: failure-only delivery reports, offsets after a flush.

Such tasks (FileStreamSource among them) produce without a success callback per record; a
commit waits for what is in flight and commits only if everything was acknowledged. These
tests pin that down: nothing unacknowledged is committed, and a record the broker rejects
fails the task (or, with ``errors.tolerance=all``, is counted as done).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import pytest
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.connect.api import (
    NO_DEFAULT,
    ConfigDef,
    ConfigType,
    Importance,
    Schema,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
)
from seaway.connect.runtime.herder import State
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

from tests.connect.runtime.rt_support import rt_broker

__all__ = ["rt_broker"]

CONFIG = (ConfigDef()
          .define("topic", ConfigType.STRING, NO_DEFAULT, None, Importance.HIGH, "Topic.")
          .define("count", ConfigType.INT, 10, None, Importance.LOW, "Records to emit.")
          .define("size", ConfigType.INT, 10, None, Importance.LOW, "Bytes per value."))


class PlainTask(SourceTask):
    """Emits ``count`` values of ``size`` bytes, offsets {"n": n+1}; no commit_record override."""

    limit: ClassVar[int | None] = None

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        parsed = CONFIG.parse(props)
        self.topic, self.count, self.size = parsed["topic"], parsed["count"], parsed["size"]
        stored = self.context.offset_storage_reader().offset({"plain": self.topic})
        self.next = stored["n"] if stored else 0
        self._stop = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        count = self.count if type(self).limit is None else min(self.count, type(self).limit or 0)
        if self.next >= count:
            self._stop.wait(0.05)
            return None
        n, self.next = self.next, self.next + 1
        value = f"{n:0{self.size}d}"
        return [SourceRecord({"plain": self.topic}, {"n": n + 1}, self.topic, value_schema=Schema.STRING_SCHEMA,
                             value=value)]

    def stop(self) -> None:
        self._stop.set()


class PlainConnector(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return PlainTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return CONFIG


CLASS = f"{__name__}:PlainConnector"


async def _stored(connect: EmbeddedConnect, name: str) -> object:
    return (await connect.herder.connector_offsets(name)).offsets


@pytest.mark.timeout(90)
async def test_offsets_are_committed_only_once_everything_in_flight_is_acknowledged(
        tmp_path: Path, topic_name: str) -> None:
    PlainTask.limit = 5
    try:
        with EmbeddedBroker(tmp_path / "broker") as broker:
            connect = EmbeddedConnect(broker.bootstrap, tmp_path, plugins=[PlainConnector], worker_props={
                "offset.flush.interval.ms": "200", "offset.flush.timeout.ms": "500"})
            async with connect:
                await connect.create_connector("plain", {"connector.class": CLASS, "topic": topic_name,
                                                         "count": "20"})
                assert [m.value() for m in connect.consume(topic_name, 5)] == [f"{n:010d}".encode()
                                                                               for n in range(5)]
                deadline = asyncio.get_running_loop().time() + 20
                while await _stored(connect, "plain") != [({"plain": topic_name}, {"n": 5})]:
                    assert asyncio.get_running_loop().time() < deadline
                    await asyncio.sleep(0.1)
                broker.stop()            # nothing is acknowledged from now on
                PlainTask.limit = 10     # ... while the task keeps producing
                await asyncio.sleep(1.5)  # several flush intervals, each waiting 500 ms in vain
                assert await _stored(connect, "plain") == [({"plain": topic_name}, {"n": 5})]
            stored = json.loads(Path(connect.config.get("offset.storage.file.filename")).read_text())
            assert [json.loads(v) for _, v in stored["offsets"]] == [{"n": 5}]
    finally:
        PlainTask.limit = None


def _small_topic(bootstrap: str, topic: str) -> None:
    """A topic whose batches may not exceed 1000 bytes (the broker rejects larger ones)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(topic, 1, 1, config={"max.message.bytes": "1000"})])
    futures[topic].result(15)


@pytest.mark.timeout(60)
async def test_a_record_the_broker_rejects_fails_the_task(rt_broker: EmbeddedBroker, tmp_path: Path,
                                                            topic_name: str) -> None:
    _small_topic(rt_broker.bootstrap, topic_name)
    async with EmbeddedConnect(rt_broker.bootstrap, tmp_path, plugins=[PlainConnector]) as connect:
        await connect.create_connector("big", {"connector.class": CLASS, "topic": topic_name, "count": "1",
                                               "size": "5000"})
        status = await connect.wait_for_status("big", State.RUNNING, tasks=1, task_state=State.FAILED)
        assert "Unrecoverable exception from producer send callback" in (status.tasks[0].trace or "")
        await connect.herder.stop_connector("big")
        assert await _stored(connect, "big") == []


@pytest.mark.timeout(60)
async def test_with_tolerance_all_a_rejected_record_counts_as_done(rt_broker: EmbeddedBroker, tmp_path: Path,
                                                                   topic_name: str) -> None:
    _small_topic(rt_broker.bootstrap, topic_name)
    async with EmbeddedConnect(rt_broker.bootstrap, tmp_path, plugins=[PlainConnector],
                               worker_props={"offset.flush.interval.ms": "200"}) as connect:
        await connect.create_connector("big", {"connector.class": CLASS, "topic": topic_name, "count": "1",
                                               "size": "5000", "errors.tolerance": "all"})
        deadline = asyncio.get_running_loop().time() + 20
        while await _stored(connect, "big") != [({"plain": topic_name}, {"n": 1})]:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.1)
        status = await connect.herder.connector_status("big")
        assert [t.state for t in status.tasks] == [State.RUNNING]
