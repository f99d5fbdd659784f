"""Standalone mode's config and status stores, in memory (Kafka's ``MemoryConfigBackingStore`` and
``MemoryStatusBackingStore``), and :class:`StatusTable`, the status bookkeeping every status store keeps.

They implement :class:`~seaway.connect.runtime.backing_stores.ConfigBackingStore` and
:class:`~seaway.connect.runtime.backing_stores.StatusBackingStore`; distributed mode's Kafka
stores implement the same Protocols on their own (the Kafka status store holds a
:class:`StatusTable` as its read cache, it does not extend the memory store). Both are
thread-safe: task threads report their statuses while the herder reads them on the event loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from seaway.connect.runtime.backing_stores import ClusterConfigState, TopicStatus
from seaway.connect.runtime.herder import ConnectorState, ConnectorTaskId, State, TargetState, TaskState

__all__ = ["MemoryConfigBackingStore", "MemoryStatusBackingStore", "StatusTable"]


class MemoryConfigBackingStore:
    """Connector configs, task configs and target states of one standalone worker."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = ClusterConfigState()

    def start(self) -> None:
        return None

    def stop(self) -> None:
        return None

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            return self._state.copy()

    def contains(self, name: str) -> bool:
        with self._lock:
            return self._state.contains(name)

    def put_connector_config(self, name: str, config: Mapping[str, str], target: TargetState | None = None) -> None:
        with self._lock:
            self._state.connector_configs[name] = dict(config)
            if target is not None:
                self._state.target_states[name] = target
            else:
                self._state.target_states.setdefault(name, TargetState.STARTED)

    def remove_connector_config(self, name: str) -> None:
        with self._lock:
            self._state.remove_connector(name)
            self._state.target_states.pop(name, None)

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        with self._lock:
            self._state.commit_task_configs(name, dict(enumerate(configs)), len(configs))

    def put_target_state(self, name: str, state: TargetState) -> None:
        with self._lock:
            self._state.target_states[name] = state


class StatusTable:
    """Connector and task states plus active topics, keyed by connector: the in-memory part of a
    status store (the whole of :class:`MemoryStatusBackingStore`; the Kafka store's read cache)."""

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

    def connectors(self) -> list[str]:
        with self._lock:
            return sorted(self._connectors)

    def remove_tasks(self, connector: str, keep: int = 0) -> list[ConnectorTaskId]:
        """Forget task states of ``connector`` with id >= ``keep``; the ids forgotten."""
        with self._lock:
            removed = [t for t in self._tasks if t.connector == connector and t.task >= keep]
            for task_id in removed:
                del self._tasks[task_id]
            return removed

    def remove(self, connector: str) -> None:
        with self._lock:
            self._connectors.pop(connector, None)
            for task_id in [t for t in self._tasks if t.connector == connector]:
                del self._tasks[task_id]

    def put_topic(self, connector: str, task: int, topic: str, discover_timestamp: int | None = None
                  ) -> TopicStatus | None:
        """Record ``topic`` unless known: the new :class:`TopicStatus` (timestamped now unless given), else None."""
        with self._lock:
            topics = self._topics.setdefault(connector, {})
            if topic in topics:
                return None
            status = TopicStatus(topic, connector, task,
                                 int(time.time() * 1000) if discover_timestamp is None else discover_timestamp)
            topics[topic] = status
            return status

    def remove_topic(self, connector: str, topic: str) -> None:
        with self._lock:
            self._topics.get(connector, {}).pop(topic, None)

    def topics(self, connector: str) -> list[str]:
        with self._lock:
            return sorted(self._topics.get(connector, {}))

    def reset_topics(self, connector: str) -> list[str]:
        """Forget ``connector``'s topics; the topics forgotten."""
        with self._lock:
            return sorted(self._topics.pop(connector, {}))


class MemoryStatusBackingStore:
    """Statuses of one standalone worker: a :class:`StatusTable` and nothing else."""

    def __init__(self) -> None:
        self._table = StatusTable()

    def start(self) -> None:
        return None

    def stop(self) -> None:
        return None

    def put(self, connector: str, status: ConnectorState) -> None:
        self._table.put(connector, status)

    def put_task(self, task_id: ConnectorTaskId, status: TaskState) -> None:
        self._table.put_task(task_id, status)

    def get(self, connector: str) -> ConnectorState | None:
        return self._table.get(connector)

    def get_task(self, task_id: ConnectorTaskId) -> TaskState | None:
        return self._table.get_task(task_id)

    def get_all(self, connector: str) -> list[TaskState]:
        return self._table.get_all(connector)

    def connectors(self) -> list[str]:
        return self._table.connectors()

    def remove_tasks(self, connector: str, keep: int = 0) -> None:
        self._table.remove_tasks(connector, keep)

    def remove(self, connector: str) -> None:
        self._table.remove(connector)

    def put_topic(self, connector: str, task: int, topic: str) -> None:
        self._table.put_topic(connector, task, topic)

    def topics(self, connector: str) -> list[str]:
        return self._table.topics(connector)

    def reset_topics(self, connector: str) -> None:
        self._table.reset_topics(connector)
