"""Connector/Task base classes: inherited defaults, with contexts as the runtime would supply them."""

from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from seaway.connect.api import (
    NO_DEFAULT,
    ConfigDef,
    ConfigType,
    ConnectorContext,
    IllegalWorkerStateError,
    Importance,
    OffsetAndMetadata,
    OffsetStorageReader,
    SinkRecord,
    SinkTask,
    SinkTaskContext,
    SourceConnector,
    SourceConnectorContext,
    SourceRecord,
    SourceTask,
    Task,
    TopicPartition,
    group_partitions,
)


class _Reader(OffsetStorageReader):
    def __init__(self, stored: dict[str, dict[str, Any]]) -> None:
        self.stored = stored

    def offsets(self, partitions: Iterable[Mapping[str, Any]]
                ) -> list[tuple[Mapping[str, Any], dict[str, Any] | None]]:
        return [(p, self.stored.get(p["file"])) for p in partitions]


class _Context(SourceConnectorContext):
    def __init__(self) -> None:
        self.reconfigurations = 0

    def request_task_reconfiguration(self) -> None:
        self.reconfigurations += 1

    def raise_error(self, error: BaseException) -> None:
        raise error

    def offset_storage_reader(self) -> OffsetStorageReader:
        return _Reader({})


class _Task(SourceTask):
    def version(self) -> str:
        return "1"

    def start(self, props: Mapping[str, str]) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:
        pass


class _Connector(SourceConnector):
    CONFIG = ConfigDef().define("files", ConfigType.LIST, NO_DEFAULT, None, Importance.HIGH, "Files.")

    def __init__(self) -> None:
        self.events: list[str] = []
        self.files: list[str] = []

    def version(self) -> str:
        return "1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self.events.append("start")
        self.files = self.CONFIG.parse(props)["files"]

    def task_class(self) -> type[Task]:
        return _Task

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"files": ",".join(g)} for g in group_partitions(self.files, min(max_tasks, len(self.files)))]

    def stop(self) -> None:
        self.events.append("stop")

    def config(self) -> ConfigDef:
        return self.CONFIG


def test_connector_lifecycle_defaults() -> None:
    connector = _Connector()
    with pytest.raises(IllegalWorkerStateError):
        _ = connector.context
    context = _Context()
    connector.initialize(context)
    assert connector.context is context
    connector.start({"files": "a,b,c"})
    assert connector.task_configs(2) == [{"files": "a,b"}, {"files": "c"}]
    connector.reconfigure({"files": "x"})
    assert connector.events == ["start", "stop", "start"]
    connector.context.request_task_reconfiguration()
    assert context.reconfigurations == 1
    assert connector.exactly_once_support({}) is None
    assert connector.alter_offsets({}, [({"file": "a"}, None)]) is False


def test_default_validate_uses_config() -> None:
    result = _Connector().validate({})
    assert result.error_count == 1 and result.config_values[0].name == "files"
    assert _Connector().validate({"files": "a"}).error_count == 0


def test_offset_storage_reader_offset_uses_offsets() -> None:
    reader = _Reader({"a": {"pos": 3}})
    assert reader.offset({"file": "a"}) == {"pos": 3} and reader.offset({"file": "b"}) is None


def test_group_partitions_is_contiguous_and_balanced() -> None:
    assert group_partitions(list(range(7)), 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert group_partitions([1], 3) == [[1], [], []]
    with pytest.raises(ValueError):
        group_partitions([1], 0)


class _SinkContext(SinkTaskContext):
    def __init__(self) -> None:
        self.resets: dict[TopicPartition, int] = {}

    def configs(self) -> dict[str, str]:
        return {}

    def reset_offsets(self, offsets: Mapping[TopicPartition, int]) -> None:
        self.resets.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        pass

    def assignment(self) -> set[TopicPartition]:
        return set()

    def pause(self, *partitions: TopicPartition) -> None:
        pass

    def resume(self, *partitions: TopicPartition) -> None:
        pass

    def request_commit(self) -> None:
        pass


class _Sink(SinkTask):
    def __init__(self) -> None:
        self.flushed: list[Mapping[TopicPartition, OffsetAndMetadata]] = []

    def version(self) -> str:
        return "1"

    def start(self, props: Mapping[str, str]) -> None:
        pass

    def put(self, records: list[SinkRecord]) -> None:  # type: ignore[override]
        pass

    def flush(self, current_offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        self.flushed.append(current_offsets)

    def stop(self) -> None:
        pass


def test_sink_task_defaults_and_context_offset_overloads() -> None:
    task, context = _Sink(), _SinkContext()
    task.initialize(context)
    offsets = {TopicPartition("t", 0): OffsetAndMetadata(10)}
    assert task.pre_commit(offsets) == offsets and task.flushed == [offsets]
    task.context.offset(TopicPartition("t", 0), 5)
    task.context.offset({TopicPartition("t", 1): 7})
    assert context.resets == {TopicPartition("t", 0): 5, TopicPartition("t", 1): 7}
    assert task.context.errant_record_reporter() is None


def test_abstract_classes_cannot_be_instantiated() -> None:
    for cls in (SourceTask, SinkTask, SourceConnector, ConnectorContext):
        with pytest.raises(TypeError):
            cls()  # type: ignore[abstract]
