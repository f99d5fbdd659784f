"""A plugin as a third party writes it: only ``seaway.connect.api`` is imported.

``CounterSource`` emits ``count`` records ("value 0", "value 1", ...) to ``topic`` and
remembers how far it got in its source offset; ``Shout`` upper-cases string values.
"""

from __future__ import annotations

import threading
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

__all__ = ["CounterSourceConnector", "CounterSourceTask", "Shout"]

VERSION = "1.2.3"
PARTITION = {"counter": "main"}
CONFIG = (ConfigDef()
          .define("topic", ConfigType.STRING, NO_DEFAULT, None, Importance.HIGH, "Topic to write to.")
          .define("count", ConfigType.INT, 10, Range.at_least(0), Importance.MEDIUM, "How many records."))


class CounterSourceTask(SourceTask):
    def __init__(self) -> None:
        self._stopped = threading.Event()

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        parsed = CONFIG.parse(props)
        self.topic, self.count = parsed["topic"], parsed["count"]
        stored = self.context.offset_storage_reader().offset(PARTITION)
        self.next = int(stored["next"]) if stored else 0

    def poll(self) -> list[SourceRecord] | None:
        if self.next >= self.count:
            self._stopped.wait(0.2)
            return None
        records = [SourceRecord(PARTITION, {"next": n + 1}, self.topic, value_schema=Schema.STRING_SCHEMA,
                                value=f"value {n}") for n in range(self.next, self.count)]
        self.next = self.count
        return records

    def stop(self) -> None:
        self._stopped.set()


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
    def configure(self, configs: Mapping[str, Any]) -> None:
        pass

    def apply(self, record: Any) -> Any:
        if isinstance(record.value, str):
            return record.new_record(value=record.value.upper())
        return record

    def config(self) -> ConfigDef:
        return ConfigDef()
