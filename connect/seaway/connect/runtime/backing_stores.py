"""The three backing-store interfaces of a Connect worker (Kafka's ``ConfigBackingStore``,
``StatusBackingStore`` and ``OffsetBackingStore``) and the values they hand out.

They are :class:`typing.Protocol`\\ s, as Kafka's are interfaces: standalone mode implements
them in memory (:mod:`seaway.connect.runtime.stores`) and a file
(:class:`~seaway.connect.runtime.offsets.FileOffsetBackingStore`), distributed mode on
compacted topics (:mod:`seaway.connect.runtime.distributed.kafka_stores`), each
implementation on its own. The herders and the worker type against these Protocols, and
``tests/connect/distributed/test_backing_store_protocols.py`` checks that each implementation satisfies
its Protocol (mypy, through typed assignments; and at run time, member by member), so an
operation missing from one mode is an error, not a surprise in production.

Each Protocol lists what the herders and the worker call, no more: operations only the
distributed herder needs (restart requests, session keys, KIP-618 task count records, the
leader's write privileges) stay on :class:`KafkaConfigBackingStore`, which the distributed
herder types against.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from seaway.connect.runtime.herder import ConnectorState, ConnectorTaskId, TargetState, TaskState

__all__ = [
    "ClusterConfigState",
    "ConfigBackingStore",
    "OffsetBackingStore",
    "SessionKey",
    "StatusBackingStore",
    "TopicStatus",
]


@dataclass(frozen=True, slots=True)
class SessionKey:
    """KIP-507's key for signing internal requests, distributed through the config topic."""

    key: bytes
    algorithm: str
    creation_timestamp: int

    def to_json(self) -> dict[str, Any]:
        return {"key": base64.b64encode(self.key).decode("ascii"), "algorithm": self.algorithm,
                "creation-timestamp": self.creation_timestamp}


@dataclass(slots=True)
class ClusterConfigState:
    """A consistent copy of the connector configs, task configs and target states at ``offset``
    (Kafka's ``ClusterConfigState``, what :meth:`ConfigBackingStore.snapshot` returns)."""

    offset: int = -1
    connector_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    task_counts: dict[str, int] = field(default_factory=dict)
    task_config_map: dict[ConnectorTaskId, dict[str, str]] = field(default_factory=dict)
    target_states: dict[str, TargetState] = field(default_factory=dict)
    inconsistent: set[str] = field(default_factory=set)
    session_key: SessionKey | None = None
    task_count_records: dict[str, int] = field(default_factory=dict)
    """The latest ``tasks-fencing-<name>`` of each connector: how many task producers to fence."""
    task_config_generations: dict[str, int] = field(default_factory=dict)
    """Bumped each time a complete set of task configs is committed (0 for the first)."""
    pending_fencing: set[str] = field(default_factory=set)
    """Connectors whose latest task configs came after their latest task count record."""
    applied_connector_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    """The connector config each connector's latest task configs were committed under (Kafka's
    ``appliedConnectorConfig``, KAFKA-9228): tasks run with the connector config too (converters,
    transforms, error handling), so a new one restarts them even if the task configs are equal."""

    def copy(self) -> ClusterConfigState:
        return ClusterConfigState(self.offset, {k: dict(v) for k, v in self.connector_configs.items()},
                                  dict(self.task_counts), {k: dict(v) for k, v in self.task_config_map.items()},
                                  dict(self.target_states), set(self.inconsistent), self.session_key,
                                  dict(self.task_count_records), dict(self.task_config_generations),
                                  set(self.pending_fencing),
                                  {k: dict(v) for k, v in self.applied_connector_configs.items()})

    def connectors(self) -> list[str]:
        return sorted(self.connector_configs)

    def contains(self, name: str) -> bool:
        return name in self.connector_configs

    def connector_config(self, name: str) -> dict[str, str] | None:
        config = self.connector_configs.get(name)
        return dict(config) if config is not None else None

    def target_state(self, name: str) -> TargetState:
        return self.target_states.get(name, TargetState.STARTED)

    def applied_connector_config(self, name: str) -> dict[str, str] | None:
        config = self.applied_connector_configs.get(name)
        return dict(config) if config is not None else None

    def task_ids(self, name: str) -> list[ConnectorTaskId]:
        if name in self.inconsistent:
            return []
        return [ConnectorTaskId(name, i) for i in range(self.task_counts.get(name, 0))]

    def all_task_ids(self) -> list[ConnectorTaskId]:
        return [t for name in self.connectors() for t in self.task_ids(name)]

    def task_config(self, task_id: ConnectorTaskId) -> dict[str, str] | None:
        config = self.task_config_map.get(task_id)
        return dict(config) if config is not None else None

    def task_configs(self, name: str) -> list[dict[str, str]]:
        return [dict(self.task_config_map.get(t, {})) for t in self.task_ids(name)]

    def task_count(self, name: str) -> int:
        return self.task_counts.get(name, 0)

    def task_count_record(self, name: str) -> int | None:
        return self.task_count_records.get(name)

    def task_config_generation(self, name: str) -> int | None:
        return self.task_config_generations.get(name)

    def needs_fencing(self, name: str) -> bool:
        """KIP-618: task configs newer than the last task count record; fence before starting tasks."""
        return name in self.pending_fencing

    def commit_task_configs(self, name: str, configs: Mapping[int, dict[str, str]], count: int) -> bool:
        """Apply a complete set of ``count`` task configs (a ``commit-<name>`` record, or a
        standalone write); False, and ``name`` marked inconsistent, if some of them are missing."""
        if any(i not in configs for i in range(count)):
            self.inconsistent.add(name)
            return False
        self.inconsistent.discard(name)
        for task_id in [t for t in self.task_config_map if t.connector == name]:
            del self.task_config_map[task_id]
        for i in range(count):
            self.task_config_map[ConnectorTaskId(name, i)] = dict(configs[i])
        self.task_counts[name] = count
        if name in self.connector_configs:
            self.applied_connector_configs[name] = dict(self.connector_configs[name])
        if configs:
            self.task_config_generations[name] = self.task_config_generations.get(name, -1) + 1
        return True

    def remove_connector(self, name: str) -> None:
        """Forget ``name``'s connector config and task configs (its target state is a record of its own)."""
        self.connector_configs.pop(name, None)
        self.applied_connector_configs.pop(name, None)
        self.task_counts.pop(name, None)
        self.inconsistent.discard(name)
        for task_id in [t for t in self.task_config_map if t.connector == name]:
            del self.task_config_map[task_id]


@dataclass(frozen=True, slots=True)
class TopicStatus:
    """A topic a connector's task used (KIP-558 topic tracking)."""

    topic: str
    connector: str
    task: int
    discover_timestamp: int


@runtime_checkable
class ConfigBackingStore(Protocol):
    """Connector configs (as submitted, placeholders unresolved), task configs and target states.

    Reads go through :meth:`snapshot`, one consistent copy, as in Kafka: a herder decides on
    one state rather than on several reads that a concurrent write could interleave.
    """

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def snapshot(self) -> ClusterConfigState: ...

    def contains(self, name: str) -> bool: ...

    def put_connector_config(self, name: str, config: Mapping[str, str],
                             target: TargetState | None = None) -> None:
        """Store ``config``; ``target`` is the initial target state of a new connector (None: keep, or STARTED)."""

    def remove_connector_config(self, name: str) -> None: ...

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        """Replace all of ``name``'s task configs at once (an empty list: no tasks)."""

    def put_target_state(self, name: str, state: TargetState) -> None: ...


@runtime_checkable
class StatusBackingStore(Protocol):
    """Connector and task states, and the topics each connector used (KIP-558).

    Thread-safe: task threads report their states while the herder reads them on the event loop.
    A DESTROYED state removes the entry.
    """

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def put(self, connector: str, status: ConnectorState) -> None: ...

    def put_task(self, task_id: ConnectorTaskId, status: TaskState) -> None: ...

    def get(self, connector: str) -> ConnectorState | None: ...

    def get_task(self, task_id: ConnectorTaskId) -> TaskState | None: ...

    def get_all(self, connector: str) -> list[TaskState]:
        """``connector``'s task states, by task id."""

    def connectors(self) -> list[str]:
        """Connectors that have a status."""

    def remove_tasks(self, connector: str, keep: int = 0) -> None:
        """Forget the task states of ``connector`` with id >= ``keep``."""

    def remove(self, connector: str) -> None:
        """Forget ``connector``'s state and its tasks' states."""

    def put_topic(self, connector: str, task: int, topic: str) -> None:
        """``connector``'s task ``task`` used ``topic`` (recorded once, with the time it was first seen)."""

    def topics(self, connector: str) -> list[str]: ...

    def reset_topics(self, connector: str) -> None: ...


@runtime_checkable
class OffsetBackingStore(Protocol):
    """Source offsets as bytes, exactly as Kafka's offsets topic holds them.

    Keys and values are described in :mod:`~seaway.connect.runtime.offsets`. Thread-safe;
    :meth:`set` is durable when it returns (``None`` values delete).
    """

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def get(self, keys: Iterable[bytes]) -> dict[bytes, bytes | None]: ...

    def set(self, values: Mapping[bytes, bytes | None]) -> None: ...

    def connector_partitions(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """Every ``(partition, offset)`` stored for ``connector``."""
