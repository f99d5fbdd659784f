"""Source connectors for the exactly-once tests (imported by worker processes through ``plugin.allowlist``).

* :class:`CounterSource`: each task counts ``0, 1, 2, ...`` into ``<topic>`` (partition = task
  id), ``batch`` records per poll, ``interval.ms`` between polls, resuming from its stored
  offset. Declares exactly-once support.
* :class:`BoundarySource`: the same counting, with connector-defined transaction boundaries:
  every ``commit.every`` records it commits after that record, and every transaction whose
  last number ends in 9 (``abort.every``-th) is aborted instead.
* :class:`UndeclaredSource`: a source that does not say whether it can be exactly-once (the
  API default, ``None``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from seaway.connect.api import (
    ConfigDef,
    ConfigType,
    ConnectorTransactionBoundaries,
    ExactlyOnceSupport,
    Importance,
    Schema,
    SourceConnector,
    SourceRecord,
    SourceTask,
    Task,
)

CONFIG = (ConfigDef()
          .define("topic", ConfigType.STRING, "counts", None, Importance.HIGH, "Topic to write to.")
          .define("batch", ConfigType.INT, 50, None, Importance.LOW, "Records per poll.")
          .define("interval.ms", ConfigType.INT, 20, None, Importance.LOW, "Pause between polls.")
          .define("limit", ConfigType.INT, -1, None, Importance.LOW, "Stop counting here (-1: never).")
          .define("commit.every", ConfigType.INT, 30, None, Importance.LOW, "BoundarySource: records per txn.")
          .define("abort.every", ConfigType.INT, 4, None, Importance.LOW, "BoundarySource: abort every n-th txn."))


class CounterTask(SourceTask):
    def version(self) -> str:
        return "1"

    def start(self, props: Mapping[str, str]) -> None:
        parsed = CONFIG.parse(props)
        self.topic, self.batch = parsed["topic"], parsed["batch"]
        self.interval, self.limit = parsed["interval.ms"] / 1000, parsed["limit"]
        self.task_id = int(props.get("task.id", "0"))
        self.partition = {"task": self.task_id}
        stored = self.context.offset_storage_reader().offset(self.partition)
        self.next = int(stored["next"]) if stored else 0
        self.stopping = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if self.stopping.wait(self.interval) or (0 <= self.limit <= self.next):
            return None
        end = self.next + self.batch if self.limit < 0 else min(self.next + self.batch, self.limit)
        records = [SourceRecord(self.partition, {"next": n + 1}, self.topic, self.task_id,
                                value_schema=Schema.STRING_SCHEMA, value=str(n)) for n in range(self.next, end)]
        self.next = end
        return records

    def stop(self) -> None:
        self.stopping.set()


class CounterSource(SourceConnector):
    def version(self) -> str:
        return "1"

    def start(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return CounterTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{**self.props, "task.id": str(i)} for i in range(max_tasks)]

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return CONFIG

    def exactly_once_support(self, connector_config: Mapping[str, str]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED


class BoundaryTask(CounterTask):
    """Asks for a commit after every ``commit.every``-th record; every ``abort.every``-th transaction aborts."""

    def start(self, props: Mapping[str, str]) -> None:
        super().start(props)
        parsed = CONFIG.parse(props)
        self.every, self.abort_every = parsed["commit.every"], parsed["abort.every"]

    def poll(self) -> list[SourceRecord] | None:
        records = super().poll()
        transactions = self.context.transaction_context()
        assert transactions is not None, "transaction.boundary=connector gives the task a transaction context"
        for record in records or []:
            n = int(record.value)
            if (n + 1) % self.every == 0:
                if ((n + 1) // self.every) % self.abort_every == 0:
                    transactions.abort_transaction(record)
                else:
                    transactions.commit_transaction(record)
        return records


class BoundarySource(CounterSource):
    def task_class(self) -> type[Task]:
        return BoundaryTask

    def can_define_transaction_boundaries(self, connector_config: Mapping[str, str]) -> ConnectorTransactionBoundaries:
        return ConnectorTransactionBoundaries.SUPPORTED


class UndeclaredSource(CounterSource):
    def exactly_once_support(self, connector_config: Mapping[str, str]) -> Any:
        return None
