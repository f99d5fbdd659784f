"""The FileStream connectors' own logic, called directly: line splitting, positions, configs, offsets hooks.

The tasks get a small in-test OffsetStorageReader/SourceTaskContext (the runtime's side of the
plugin API); the connectors running inside a real worker are tested in test_file_connectors_harness.py.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from seaway.connect.api import (
    ConfigError,
    ConnectError,
    ExactlyOnceSupport,
    OffsetStorageReader,
    Schema,
    SinkRecord,
    SinkRecordBatch,
    SourceRecordBatch,
    SourceTaskContext,
)
from seaway.connectors.file import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
)


class StoredOffsets(OffsetStorageReader):
    def __init__(self, stored: dict[str, dict[str, Any]]) -> None:
        self.stored = stored

    def offsets(self, partitions: Iterable[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], dict[str, Any] | None]]:
        return [(p, self.stored.get(p["filename"])) for p in partitions]


class Context(SourceTaskContext):
    def __init__(self, props: dict[str, str], stored: dict[str, dict[str, Any]]) -> None:
        self.props, self.reader = props, StoredOffsets(stored)

    def configs(self) -> dict[str, str]:
        return self.props

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self.reader


def source_task(path: Path, stored: dict[str, dict[str, Any]] | None = None, /, **extra: str) -> FileStreamSourceTask:
    props = {"file": str(path), "topic": "lines", **extra}
    task = FileStreamSourceTask()
    task.initialize(Context(props, stored or {}))
    task.start(props)
    return task


def test_lines_positions_and_terminators(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes("one\ntwo\r\nthree\rfour é\nfive".encode())
    task = source_task(path)
    records = task.poll()
    assert records is not None
    assert [r.value for r in records] == ["one", "two", "three", "four é"]
    assert [r.source_offset for r in records] == [{"position": 4}, {"position": 9}, {"position": 15},
                                                  {"position": 23}]  # é is two bytes
    assert all(r.source_partition == {"filename": str(path)} and r.topic == "lines" and r.key is None
               for r in records)
    assert records[0].value_schema is not None and records[0].value_schema.type.name == "STRING"
    with path.open("ab") as f:
        f.write(b"\n")  # "five" is complete only now
    more = task.poll()
    assert more is not None and [(r.value, r.source_offset) for r in more] == [("five", {"position": 28})]
    task.stop()


def test_poll_returns_a_batch_whose_offsets_are_computed_from_the_lines(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    lines = [f"line {i} " + "x" * i for i in range(50)]
    path.write_text("".join(line + "\n" for line in lines))
    task = source_task(path, **{"batch.size": "30"})
    batch = task.poll()
    assert isinstance(batch, SourceRecordBatch)
    assert batch.values == lines[:30] and batch.topic == "lines" and batch.value_schema == Schema.STRING_SCHEMA
    ends = [sum(len(line) + 1 for line in lines[:n + 1]) for n in range(50)]
    assert batch.source_offsets is not None
    assert [batch.source_offsets[n] for n in range(30)] == [{"position": e} for e in ends[:30]]
    assert batch.last_source_offset == batch.source_offsets[-1] == {"position": ends[29]}
    with pytest.raises(IndexError):
        batch.source_offsets[30]
    rest = task.poll()
    assert rest is not None and [r.source_offset for r in rest] == [{"position": e} for e in ends[30:]]
    task.stop()


def test_trailing_cr_waits_for_the_next_byte(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\r")
    task = source_task(path)
    task.stop()  # stop first, so the idle wait returns at once
    assert task.poll() is None
    task = source_task(path)
    with path.open("ab") as f:
        f.write(b"\nb\n")
    records = task.poll()
    assert records is not None and [(r.value, r.source_offset) for r in records] == [
        ("a", {"position": 3}), ("b", {"position": 5})]
    task.stop()


def test_batch_size_and_resume_from_stored_position(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("".join(f"line {i}\n" for i in range(10)))
    task = source_task(path, **{"batch.size": "4"})
    first = task.poll()
    assert first is not None and [r.value for r in first] == [f"line {i}" for i in range(4)]
    assert first[-1].source_offset is not None
    stored_at = first[-1].source_offset["position"]
    task.stop()
    resumed = source_task(path, {str(path): {"position": stored_at}}, **{"batch.size": "100"})
    rest = resumed.poll()
    assert rest is not None and [r.value for r in rest] == [f"line {i}" for i in range(4, 10)]
    resumed.stop()
    bad = source_task(path, {str(path): {"position": "7"}})
    with pytest.raises(ConnectError, match="Offset position is the incorrect type"):
        bad.poll()


@pytest.mark.timeout(10)
def test_missing_file_is_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "later.txt"
    task = source_task(path)
    task.stop()
    assert task.poll() is None  # logged and waited (cut short by stop), not failed
    path.write_text("x\n")
    task = source_task(path)
    records = task.poll()
    assert records is not None and [r.value for r in records] == ["x"]
    task.stop()


def test_source_connector_config_and_tasks() -> None:
    connector = FileStreamSourceConnector()
    values = {v.name: v for v in connector.validate({"topic": ""}).config_values}
    assert values["topic"].errors and not values["file"].errors and values["batch.size"].value == 2000
    with pytest.raises(ConfigError):
        connector.start({"file": "x"})
    connector.start({"file": "x", "topic": "t", "tasks.max": "5"})
    assert connector.task_configs(5) == [{"file": "x", "topic": "t", "tasks.max": "5"}]
    assert connector.task_class() is FileStreamSourceTask
    assert connector.exactly_once_support({"file": "x", "topic": "t"}) is ExactlyOnceSupport.SUPPORTED
    assert connector.exactly_once_support({"topic": "t"}) is ExactlyOnceSupport.UNSUPPORTED
    assert [k.name for k in connector.config().config_key_infos()] == ["file", "topic", "batch.size"]


def test_source_alter_offsets_rules() -> None:
    connector = FileStreamSourceConnector()
    config = {"file": "a.txt", "topic": "t"}
    assert connector.alter_offsets(config, [({"filename": "a.txt"}, {"position": 10}), ({"x": 1}, None)])
    cases: list[tuple[list[tuple[dict[str, Any], dict[str, Any] | None]], str]] = [
        ([({"filename": "a"}, {"pos": 1})], "should either be null or contain the key 'position'"),
        ([({"filename": "a"}, {"position": "1"})], "expected to be a Long value"),
        ([({"filename": "a"}, {"position": -1})], "should be a non-negative value"),
        ([({"name": "a"}, {"position": 1})], "should contain the key 'filename'"),
    ]
    for offsets, message in cases:
        with pytest.raises(ConnectError, match=message):
            connector.alter_offsets(config, offsets)
    with pytest.raises(ConnectError, match="stdin is used for input"):
        connector.alter_offsets({"topic": "t"}, [({"filename": "a"}, None)])


def test_sink_connector_and_task(tmp_path: Path) -> None:
    connector = FileStreamSinkConnector()
    out = tmp_path / "out.txt"
    connector.start({"file": str(out), "topics": "t"})
    assert connector.task_configs(3) == [{"file": str(out), "topics": "t"}] * 3
    assert connector.alter_offsets({}, {}) is True
    out.write_text("existing\n")
    task = FileStreamSinkTask()
    task.start({"file": str(out)})
    values: list[Any] = ["a", None, True, 7, b"bytes"]
    task.put([SinkRecord("t", 0, None, None, None, v, i) for i, v in enumerate(values)])
    task.put([])
    task.put(SinkRecordBatch.of([SinkRecord("t", 0, None, None, None, v, 10 + i) for i, v in enumerate(["b", 8])]))
    task.flush({})
    assert out.read_text() == "existing\na\nnull\ntrue\n7\nbytes\nb\n8\n"
    task.stop()


def test_stdin_is_read_without_offsets(monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        task = FileStreamSourceTask()
        task.initialize(Context({}, {}))
        task.start({"topic": "lines"})
        os.write(write_end, b"from\r\nstdin\npart")
        records = task.poll()
        assert records is not None
        assert [(r.value, r.source_partition, r.source_offset) for r in records] == [
            ("from", None, None), ("stdin", None, None)]
        os.close(write_end)
        task.stop()
