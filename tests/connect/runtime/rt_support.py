"""Small connectors and fixtures shared by the runtime tests (registered through module:Class)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from seaway.connect.api import (
    NO_DEFAULT,
    ConfigDef,
    ConfigType,
    Importance,
    OffsetAndMetadata,
    RecordMetadata,
    RetriableError,
    Schema,
    SinkConnector,
    SinkRecord,
    SinkTask,
    SourceConnector,
    SourceRecord,
    SourceRecordBatch,
    SourceTask,
    Task,
    TopicPartition,
)
from seaway.connect.testing import EmbeddedBroker, EmbeddedConnect

MODULE = __name__

COUNTER_CONFIG = (ConfigDef()
                  .define("topic", ConfigType.STRING, NO_DEFAULT, None, Importance.HIGH, "Topic.")
                  .define("count", ConfigType.INT, 10, None, Importance.LOW, "Records to emit.")
                  .define("batch", ConfigType.INT, 5, None, Importance.LOW, "Records per poll.")
                  .define("secret", ConfigType.PASSWORD, None, None, Importance.LOW, "A secret."))


class CounterTask(SourceTask):
    """Emits count records n=0..count-1 with offsets {"n": n+1}; resumes from the stored offset."""

    started: ClassVar[list[dict[str, str]]] = []
    committed: ClassVar[list[tuple[Any, RecordMetadata | None]]] = []

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        parsed = COUNTER_CONFIG.parse(props)
        self.topic, self.count, self.batch = parsed["topic"], parsed["count"], parsed["batch"]
        type(self).started.append(dict(props))
        stored = self.context.offset_storage_reader().offset({"counter": self.topic})
        self.next = stored["n"] if stored else 0
        self._stop = threading.Event()

    limit: ClassVar[int | None] = None

    def poll(self) -> list[SourceRecord] | None:
        count = self.count if type(self).limit is None else min(self.count, type(self).limit or 0)
        if self.next >= count:
            self._stop.wait(0.05)
            return None
        out = []
        for _ in range(min(self.batch, count - self.next)):
            n = self.next
            record = SourceRecord({"counter": self.topic}, {"n": n + 1}, self.topic,
                                  value_schema=Schema.STRING_SCHEMA, value=f"v{n}")
            record.headers.add_int32("n", n)
            if n % 3 == 0:
                record.headers.add_string("mod3", "yes")
            out.append(record)
            self.next += 1
        return out

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        type(self).committed.append((record.value, metadata))

    def stop(self) -> None:
        self._stop.set()


class CounterConnector(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return CounterTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return COUNTER_CONFIG


class BatchCounterTask(SourceTask):
    """Emits count values v0..v{count-1} as SourceRecordBatches of ``batch``, offsets {"n": n+1}."""

    emitted: ClassVar[list[SourceRecordBatch]] = []

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        parsed = COUNTER_CONFIG.parse(props)
        self.topic, self.count, self.batch = parsed["topic"], parsed["count"], parsed["batch"]
        stored = self.context.offset_storage_reader().offset({"counter": self.topic})
        self.next = stored["n"] if stored else 0
        self._stop = threading.Event()

    def poll(self) -> SourceRecordBatch | None:
        if self.next >= self.count:
            self._stop.wait(0.05)
            return None
        numbers = range(self.next, min(self.next + self.batch, self.count))
        self.next = numbers[-1] + 1
        batch = SourceRecordBatch(self.topic, [f"v{n}" for n in numbers], value_schema=Schema.STRING_SCHEMA,
                                  source_partition={"counter": self.topic},
                                  source_offsets=[{"n": n + 1} for n in numbers], timestamp=1_700_000_000_000)
        type(self).emitted.append(batch)
        return batch

    def stop(self) -> None:
        self._stop.set()


class BatchCounterConnector(CounterConnector):
    def task_class(self) -> type[Task]:
        return BatchCounterTask


class TickerTask(SourceTask):
    """Emits ``tick-<n>`` every 20 ms to the topic its task config names, until stopped."""

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.topic = props["topic"]
        self.n = 0
        self._stop = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if self._stop.wait(0.02):
            return None
        self.n += 1
        return [SourceRecord({"ticker": self.topic}, {"n": self.n}, self.topic,
                             value_schema=Schema.STRING_SCHEMA, value=f"tick-{self.n}")]

    def stop(self) -> None:
        self._stop.set()


class TickerConnector(SourceConnector):
    """Hands its task only the topic (as connectors that split work often do): a change to the
    rest of its config (converters, transforms) leaves the task configs equal."""

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.topic = props["topic"]

    def task_class(self) -> type[Task]:
        return TickerTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"topic": self.topic}]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef().define("topic", ConfigType.STRING, NO_DEFAULT, None, Importance.HIGH, "Topic.")


class FailingStartConnector(CounterConnector):
    def start(self, props: Mapping[str, str]) -> None:
        raise RuntimeError("cannot start with secret " + props.get("secret", ""))


class CollectingSinkTask(SinkTask):
    """Collects put() records in a class-level list; can fail with RetriableError a set number of times."""

    records: ClassVar[list[SinkRecord]] = []
    retriable_failures: ClassVar[int] = 0
    flushed: ClassVar[list[dict[TopicPartition, OffsetAndMetadata]]] = []
    opened: ClassVar[list[TopicPartition]] = []
    puts: ClassVar[int] = 0
    batches: ClassVar[list[Sequence[SinkRecord]]] = []  # every non-empty put's argument

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    def open(self, partitions: Any) -> None:
        type(self).opened.extend(partitions)

    def put(self, records: Sequence[SinkRecord]) -> None:
        cls = type(self)
        if records:
            cls.batches.append(records)
        if records and cls.retriable_failures > 0:
            cls.retriable_failures -= 1
            cls.puts += 1
            self.context.timeout(100)
            raise RetriableError("destination busy")
        for record in records:
            if record.value == "poison" and (reporter := self.context.errant_record_reporter()) is not None:
                reporter.report(record, ValueError("poison record")).result(10)
                continue
            cls.records.append(record)

    def flush(self, current_offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        type(self).flushed.append(dict(current_offsets))

    def stop(self) -> None:
        pass


class CollectingSinkConnector(SinkConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return CollectingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef()


PLUGINS = (CounterConnector, BatchCounterConnector, FailingStartConnector, CollectingSinkConnector, TickerConnector)
"""Registered with each test worker: not installed plugins, so ``{MODULE}:Class`` finds them only so."""


def reset_collectors() -> None:
    CounterTask.started.clear()
    CounterTask.committed.clear()
    CounterTask.limit = None
    BatchCounterTask.emitted.clear()
    CollectingSinkTask.records.clear()
    CollectingSinkTask.flushed.clear()
    CollectingSinkTask.opened.clear()
    CollectingSinkTask.retriable_failures = 0
    CollectingSinkTask.puts = 0
    CollectingSinkTask.batches.clear()


@pytest.fixture(scope="module")
def rt_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    """One broker per test module, with no initial rebalance delay (sink tasks join groups fast)."""
    with EmbeddedBroker(tmp_path_factory.mktemp("rt-broker")) as broker:
        yield broker


@pytest.fixture
async def connect(rt_broker: EmbeddedBroker, tmp_path: Path) -> AsyncIterator[EmbeddedConnect]:
    reset_collectors()
    async with EmbeddedConnect(rt_broker.bootstrap, tmp_path, plugins=PLUGINS) as harness:
        yield harness
