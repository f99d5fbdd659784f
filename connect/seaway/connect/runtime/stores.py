"""Config and status backing stores (Kafka's ``ConfigBackingStore`` / ``StatusBackingStore``).

Standalone mode keeps both in memory (:class:`MemoryConfigBackingStore`,
:class:`MemoryStatusBackingStore`), as Kafka does; distributed mode will back the same
interfaces with compacted topics. Both are thread-safe: task threads report their statuses
while the herder reads them on the event loop.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from seaway.connect.runtime.herder import ConnectorState, ConnectorTaskId, State, TargetState, TaskState

__all__ = ["MemoryConfigBackingStore", "MemoryStatusBackingStore", "TopicStatus"]


class MemoryConfigBackingStore:
    """Connector configs (as submitted, placeholders unresolved), task configs and target states."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._configs: dict[str, dict[str, str]] = {}
        self._tasks: dict[str, list[dict[str, str]]] = {}
        self._targets: dict[str, TargetState] = {}

    def contains(self, connector: str) -> bool:
        with self._lock:
            return connector in self._configs

    def connectors(self) -> list[str]:
        with self._lock:
            return sorted(self._configs)

    def put_connector_config(self, connector: str, config: dict[str, str], target: TargetState | None) -> None:
        with self._lock:
            self._configs[connector] = dict(config)
            if target is not None:
                self._targets[connector] = target
            else:
                self._targets.setdefault(connector, TargetState.STARTED)

    def connector_config(self, connector: str) -> dict[str, str] | None:
        with self._lock:
            config = self._configs.get(connector)
            return dict(config) if config is not None else None

    def remove_connector_config(self, connector: str) -> None:
        with self._lock:
            self._configs.pop(connector, None)
            self._tasks.pop(connector, None)
            self._targets.pop(connector, None)

    def put_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None:
        with self._lock:
            self._tasks[connector] = [dict(c) for c in configs]

    def task_configs(self, connector: str) -> list[dict[str, str]]:
        with self._lock:
            return [dict(c) for c in self._tasks.get(connector, [])]

    def task_ids(self, connector: str) -> list[ConnectorTaskId]:
        with self._lock:
            return [ConnectorTaskId(connector, i) for i in range(len(self._tasks.get(connector, [])))]

    def put_target_state(self, connector: str, state: TargetState) -> None:
        with self._lock:
            self._targets[connector] = state

    def target_state(self, connector: str) -> TargetState | None:
        with self._lock:
            return self._targets.get(connector)


@dataclass(frozen=True, slots=True)
class TopicStatus:
    """A topic a connector's task used (KIP-558 topic tracking)."""

    topic: str
    connector: str
    task: int
    discover_timestamp: int


class MemoryStatusBackingStore:
    """Connector and task states plus active topics, keyed by connector."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, ConnectorState] = {}
        self._tasks: dict[ConnectorTaskId, TaskState] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}

    def put(self, connector: str, status: ConnectorState) -> None:
        with self._lock:
            if status.state is State.DESTROYED:
                self._connectors.pop(connector, None)
            else:
                self._connectors[connector] = status

    def put_task(self, task_id: ConnectorTaskId, status: TaskState) -> None:
        with self._lock:
            if status.state is State.DESTROYED:
                self._tasks.pop(task_id, None)
            else:
                self._tasks[task_id] = status

    def get(self, connector: str) -> ConnectorState | None:
        with self._lock:
            return self._connectors.get(connector)

    def get_task(self, task_id: ConnectorTaskId) -> TaskState | None:
        with self._lock:
            return self._tasks.get(task_id)

    def get_all(self, connector: str) -> list[TaskState]:
        with self._lock:
            return sorted((s for t, s in self._tasks.items() if t.connector == connector), key=lambda s: s.id)

    def remove_tasks(self, connector: str, keep: int = 0) -> None:
        """Forget task statuses of ``connector`` with id >= ``keep``."""
        with self._lock:
            for task_id in [t for t in self._tasks if t.connector == connector and t.task >= keep]:
                del self._tasks[task_id]

    def remove(self, connector: str) -> None:
        with self._lock:
            self._connectors.pop(connector, None)
            for task_id in [t for t in self._tasks if t.connector == connector]:
                del self._tasks[task_id]

    # -- topic tracking -------------------------------------------------------------------------
    def put_topic(self, connector: str, task: int, topic: str) -> None:
        with self._lock:
            topics = self._topics.setdefault(connector, {})
            if topic not in topics:
                topics[topic] = TopicStatus(topic, connector, task, int(time.time() * 1000))

    def topics(self, connector: str) -> list[str]:
        with self._lock:
            return sorted(self._topics.get(connector, {}))

    def reset_topics(self, connector: str) -> None:
        with self._lock:
            self._topics.pop(connector, None)
