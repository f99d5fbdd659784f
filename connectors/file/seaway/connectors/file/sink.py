"""FileStreamSink: appends each record's value as a line to a file or stdout (Kafka's ``FileStreamSinkConnector``).

Kafka's task writes ``String.valueOf(record.value())``, and so does this one
(:func:`seaway.connect.api.java_string`): ``null``, ``true``, ``{a=1, b=[1, 2]}`` for a map (in
the order of the ``HashMap`` Kafka's converters build), ``Struct{a=1,b=x}``, ``1.0E10``, never a
Python repr such as ``{'a': 1}``. One deviation: a value that is bytes (ByteArrayConverter) is
decoded as UTF-8, where Java prints the array's identity (``[B@6d06d69c``), which carries none of
the data. The file is opened for append and created if missing; ``flush`` (before each offset
commit) flushes it, so committed offsets never run ahead of what is in the file.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from seaway.connect.api import (
    ConfigDef,
    ConfigType,
    ConnectError,
    Importance,
    OffsetAndMetadata,
    Schema,
    SinkConnector,
    SinkRecord,
    SinkRecordBatch,
    SinkTask,
    Task,
    TopicPartition,
    java_string,
)
from seaway.connectors.file._version import VERSION

__all__ = ["CONFIG_DEF", "FileStreamSinkConnector", "FileStreamSinkTask"]

FILE_CONFIG = "file"

CONFIG_DEF = ConfigDef().define(FILE_CONFIG, ConfigType.STRING, None, None, Importance.HIGH,
                                "Destination filename. If not specified, the standard output will be used")


class FileStreamSinkConnector(SinkConnector):
    """Hands the same config to ``tasks.max`` tasks (all appending to the same file)."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        CONFIG_DEF.parse(props)
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to release."""

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def alter_offsets(self, connector_config: Mapping[str, str],
                      offsets: Mapping[TopicPartition, int | None]) -> bool:
        """The file does not track offsets: the consumer group's are the only ones, so any change is fine."""
        return True


def _as_text(value: Any, schema: Schema | None) -> str:
    """``String.valueOf(value)``, but bytes as their UTF-8 text (see the module's docstring)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "replace")
    return java_string(value, schema)


class FileStreamSinkTask(SinkTask):
    """Every call comes from the task's own thread, so no locking is needed."""

    def __init__(self) -> None:
        self._filename: str | None = None
        self._out: TextIO | None = None

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        self._filename = CONFIG_DEF.parse(props)[FILE_CONFIG] or None
        if self._filename is None:
            self._out = sys.stdout
            return
        try:
            self._out = open(self._filename, "a", encoding="utf-8", newline="")  # noqa: SIM115
        except OSError as exc:
            raise ConnectError(f"Couldn't find or create file '{self._filename}' for FileStreamSinkTask") from exc

    def put(self, records: Sequence[SinkRecord]) -> None:
        if records and self._out is not None:
            # a SinkRecordBatch gives its value column without building SinkRecord objects
            values = records.record_values() if type(records) is SinkRecordBatch else [r.value for r in records]
            try:
                text = "\n".join(values)  # all str: the common case, no per-value Python
            except TypeError:  # the schemas tell Java's types (FLOAT32 prints as a Float...)
                text = "\n".join([v if type(v) is str else _as_text(v, r.value_schema)
                                  for v, r in zip(values, records, strict=True)])
            self._out.write(text + "\n")

    def flush(self, current_offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        if self._out is not None:
            self._out.flush()

    def stop(self) -> None:
        if self._out is not None and self._out is not sys.stdout:
            self._out.close()
        self._out = None
