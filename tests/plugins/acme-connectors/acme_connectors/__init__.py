"""An example Seaway plugin: a source that counts, and an SMT that shouts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seaway.connect.api import (
    NO_DEFAULT,
    ConfigDef,
    ConfigType,
    Importance,
    Range,
    Schema,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
    Transformation,
)

VERSION = "1.0.0"
PARTITION = {"counter": "main"}
CONFIG = (ConfigDef()
          .define("topic", ConfigType.STRING, NO_DEFAULT, None, Importance.HIGH, "Topic to write to.")
          .define("count", ConfigType.INT, 3, Range.at_least(1), Importance.LOW, "Records to emit."))


class CounterSourceTask(SourceTask):
    """Emits "value 0" .. "value <count-1>", remembering in its offset how far it got."""

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        parsed = CONFIG.parse(props)
        self.topic, self.count = parsed["topic"], parsed["count"]
        stored = self.context.offset_storage_reader().offset(PARTITION)
        self.next = stored["next"] if stored else 0

    def poll(self) -> list[SourceRecord] | None:
        if self.next >= self.count:
            return None  # nothing to do: the worker waits a little before it polls again
        n, self.next = self.next, self.next + 1
        return [SourceRecord(PARTITION, {"next": n + 1}, self.topic,
                             value_schema=Schema.STRING_SCHEMA, value=f"value {n}")]

    def stop(self) -> None:
        self.count = 0  # poll() returns None from now on


class CounterSourceConnector(SourceConnector):
    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return CounterSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [self.props]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return CONFIG


class Shout(Transformation[Any]):
    """Upper-cases string values."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        pass

    def apply(self, record: Any) -> Any:
        if isinstance(record.value, str):
            return record.new_record(value=record.value.upper())
        return record

    def config(self) -> ConfigDef:
        return ConfigDef()
