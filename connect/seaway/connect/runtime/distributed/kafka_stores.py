"""Config, offset and status stores on compacted topics, in Kafka Connect's record formats.

Every worker reads all three topics end to end (:class:`KafkaBasedLog`), so any of them can
answer reads, and Java Kafka Connect workers could read what we write. Values are JSON as
Connect's internal ``JsonConverter`` writes them with ``schemas.enable=false``; a value in the
``{"schema": ..., "payload": ...}`` envelope is read too. Keys and values::

    config topic (1 partition)
        connector-<name>          {"properties": {...}}                  tombstone = deleted
        task-<name>-<n>           {"properties": {...}}                  applied at the commit
        commit-<name>             {"tasks": N}
        target-state-<name>       {"state": "STARTED|PAUSED", "state.v2": "STARTED|PAUSED|STOPPED"}
        restart-connector-<name>  {"include-tasks": bool, "only-failed": bool}
        tasks-fencing-<name>      {"task-count": N}   (KIP-618: producers to fence before the next
                                                        generation of an exactly-once source starts)
        session-key               {"key": base64, "algorithm": "HmacSHA256", "creation-timestamp": ms}
    offsets topic                 key ["<connector>", {partition}]  value {offset} | tombstone
    status topic
        status-connector-<name>   {"state", "trace", "worker_id", "generation"}
        status-task-<name>-<n>    the same; tombstone on delete (DESTROYED)
        status-topic-<topic>:connector-<name>  {"topic": {"name", "connector", "task", "discoverTimestamp"}}
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from confluent_kafka import Message
from seaway.connect.runtime.backing_stores import ClusterConfigState, SessionKey
from seaway.connect.runtime.distributed.kafka_log import InternalTopicError, KafkaBasedLog, TransactionalWriter
from seaway.connect.runtime.herder import ConnectorState, ConnectorTaskId, State, TargetState, TaskState
from seaway.connect.runtime.offsets import OffsetMap
from seaway.connect.runtime.stores import StatusTable

__all__ = [
    "ConfigUpdateListener",
    "KafkaConfigBackingStore",
    "KafkaOffsetBackingStore",
    "KafkaStatusBackingStore",
    "RestartRequest",
    "dumps",
    "loads",
]

log = logging.getLogger(__name__)


def dumps(value: Any) -> bytes:
    """Compact JSON, as Jackson writes it (field order kept)."""
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def loads(raw: bytes | None) -> Any:
    """A record value: None for a tombstone; the payload of a with-schema envelope."""
    if raw is None:
        return None
    value = json.loads(raw)
    if isinstance(value, dict) and set(value) == {"schema", "payload"}:
        return value["payload"]
    return value


@dataclass(frozen=True, slots=True)
class RestartRequest:
    connector: str
    include_tasks: bool
    only_failed: bool


class ConfigUpdateListener(Protocol):
    """What the herder hears from the config topic (called on the log's thread, after start)."""

    def on_connector_config_update(self, connector: str, removed: bool) -> None: ...

    def on_task_config_update(self, connector: str) -> None: ...

    def on_target_state_change(self, connector: str) -> None: ...

    def on_restart_request(self, request: RestartRequest) -> None: ...

    def on_session_key_update(self, key: SessionKey) -> None: ...


class KafkaConfigBackingStore:
    """The config topic: writes wait for their read-back, so the snapshot reflects them on return.

    With ``transactional_id`` (``exactly.once.source.support`` preparing or enabled) the
    leader's writes (connector and task configs, task count records, restart requests, the
    session key) are *privileged*: each is one transaction of a fenceable producer, and
    :meth:`claim_write_privileges` (called on becoming leader) fences any earlier leader, whose
    next write then fails with :class:`~seaway.connect.runtime.distributed.kafka_log.FencedError`.
    Target states are written by any worker and never need privileges, as in Kafka.
    """

    def __init__(self, topic: str, producer_config: dict[str, Any], consumer_config: dict[str, Any],
                 listener: ConfigUpdateListener | None = None, transactional_id: str | None = None) -> None:
        self._lock = threading.Lock()
        self._state = ClusterConfigState()
        self._deferred: dict[str, dict[int, dict[str, str]]] = {}
        self._started = False
        self.listener = listener
        self.log = KafkaBasedLog(topic, producer_config, consumer_config, self._apply, name="configs")
        self.writer = (None if transactional_id is None
                       else TransactionalWriter(topic, producer_config, transactional_id))

    def start(self, timeout: float = 60.0) -> None:
        self.log.start(timeout)
        self._started = True

    def stop(self) -> None:
        if self.writer is not None:
            self.writer.relinquish()
        self.log.stop()

    def read_to_end(self, timeout: float = 30.0) -> int:
        self.log.read_to_end(timeout)
        return self.offset

    def claim_write_privileges(self) -> None:
        """The new leader's first act with a transactional leader: fence earlier leaders (no-op otherwise)."""
        if self.writer is not None:
            self.writer.claim()

    def relinquish_write_privileges(self) -> None:
        if self.writer is not None:
            self.writer.relinquish()

    @property
    def offset(self) -> int:
        with self._lock:
            return self._state.offset

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            return self._state.copy()

    def contains(self, name: str) -> bool:
        with self._lock:
            return self._state.contains(name)

    # -- writes (the leader's, except target states) ---------------------------------------------
    def _write(self, records: list[tuple[str, Any]], timeout: float = 30.0, *, privileged: bool = True) -> None:
        encoded: list[tuple[bytes | None, bytes | None]] = [(k.encode("utf-8"), None if v is None else dumps(v))
                                                            for k, v in records]
        if not privileged or self.writer is None:
            self.log.send_all(encoded, timeout)
            self.log.read_to_end(timeout)
            return
        end = self.writer.send_all(encoded, timeout)
        # the commit markers follow commit_transaction: read until our records are applied
        deadline = time.monotonic() + timeout
        while self.read_to_end(max(0.1, deadline - time.monotonic())) < end:
            if time.monotonic() >= deadline:
                raise InternalTopicError(f"Timed out reading back the write to {self.log.topic}")
            time.sleep(0.01)

    def put_connector_config(self, name: str, config: Mapping[str, str], target: TargetState | None = None) -> None:
        records: list[tuple[str, Any]] = []
        if target is not None:
            records.append(_target_record(name, target))
        records.append((f"connector-{name}", {"properties": dict(config)}))
        self._write(records)

    def remove_connector_config(self, name: str) -> None:
        self._write([(f"connector-{name}", None), (f"target-state-{name}", None)])

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        records: list[tuple[str, Any]] = [(f"task-{name}-{i}", {"properties": dict(c)})
                                          for i, c in enumerate(configs)]
        records.append((f"commit-{name}", {"tasks": len(configs)}))
        self._write(records)

    def put_target_state(self, name: str, state: TargetState) -> None:
        self._write([_target_record(name, state)], privileged=False)

    def put_task_count_record(self, name: str, count: int) -> None:
        """``tasks-fencing-<name>``: the producers of ``count`` tasks must be fenced before the next generation."""
        self._write([(f"tasks-fencing-{name}", {"task-count": count})])

    def put_restart_request(self, request: RestartRequest) -> None:
        self._write([(f"restart-connector-{request.connector}",
                      {"include-tasks": request.include_tasks, "only-failed": request.only_failed})])

    def put_session_key(self, key: SessionKey) -> None:
        self._write([("session-key", key.to_json())])

    # -- reads (the log's thread) ----------------------------------------------------------------
    def _apply(self, message: Message) -> None:
        raw_key = message.key()
        key = raw_key.decode("utf-8") if isinstance(raw_key, bytes) else str(raw_key or "")
        try:
            value = loads(message.value())
        except ValueError:
            log.error("Ignoring config record %s at offset %s: value is not JSON", key, message.offset())
            value = None
            if message.value() is not None:
                return
        notify: Callable[[], None] | None = None
        with self._lock:
            self._state.offset = int(message.offset() or 0) + 1
            notify = self._apply_locked(key, value)
        if notify is not None and self._started and self.listener is not None:
            notify()

    def _apply_locked(self, key: str, value: Any) -> Callable[[], None] | None:
        state, listener = self._state, self.listener
        if key.startswith("connector-"):
            name = key[len("connector-"):]
            if value is None:
                state.remove_connector(name)
                self._deferred.pop(name, None)
                return lambda: listener.on_connector_config_update(name, True) if listener else None
            props = value.get("properties") if isinstance(value, dict) else None
            if not isinstance(props, dict):
                log.error("Ignoring malformed connector config record %s", key)
                return None
            state.connector_configs[name] = {str(k): str(v) for k, v in props.items()}
            state.target_states.setdefault(name, TargetState.STARTED)
            return lambda: listener.on_connector_config_update(name, False) if listener else None
        if key.startswith("task-"):
            parsed = _split_task(key[len("task-"):])
            props = value.get("properties") if isinstance(value, dict) else None
            if parsed is not None and isinstance(props, dict):
                self._deferred.setdefault(parsed.connector, {})[parsed.task] = {str(k): str(v)
                                                                               for k, v in props.items()}
            return None
        if key.startswith("commit-"):
            name = key[len("commit-"):]
            count = value.get("tasks") if isinstance(value, dict) else None
            if not isinstance(count, int):
                return None
            if not state.commit_task_configs(name, self._deferred.pop(name, {}), count):
                log.warning("Task configs of connector %s are incomplete at its commit; marking it inconsistent", name)
            # new task configs after the last task count record: fence before any of them starts
            state.pending_fencing.add(name)
            return lambda: listener.on_task_config_update(name) if listener else None
        if key.startswith("tasks-fencing-"):
            name = key[len("tasks-fencing-"):]
            task_count = value.get("task-count") if isinstance(value, dict) else None
            if not isinstance(task_count, int) or isinstance(task_count, bool) or task_count < 0:
                log.error("Ignoring malformed task count record %s", key)
                return None
            state.task_count_records[name] = task_count
            state.pending_fencing.discard(name)
            return None
        if key.startswith("target-state-"):
            name = key[len("target-state-"):]
            if value is None:
                state.target_states.pop(name, None)
                return None
            raw = value.get("state.v2", value.get("state")) if isinstance(value, dict) else None
            try:
                state.target_states[name] = TargetState(str(raw))
            except ValueError:
                log.error("Ignoring target state %r of connector %s", raw, name)
                return None
            return lambda: listener.on_target_state_change(name) if listener else None
        if key.startswith("restart-connector-") and isinstance(value, dict):
            request = RestartRequest(key[len("restart-connector-"):], bool(value.get("include-tasks")),
                                     bool(value.get("only-failed")))
            return lambda: listener.on_restart_request(request) if listener else None
        if key == "session-key" and isinstance(value, dict):
            try:
                session = SessionKey(base64.b64decode(str(value["key"])), str(value["algorithm"]),
                                     int(value["creation-timestamp"]))
            except (KeyError, ValueError):
                log.error("Ignoring malformed session key record")
                return None
            state.session_key = session
            return lambda: listener.on_session_key_update(session) if listener else None
        return None  # logger-cluster-*: not acted on here


def _target_record(name: str, target: TargetState) -> tuple[str, Any]:
    legacy = TargetState.PAUSED if target is TargetState.STOPPED else target
    return f"target-state-{name}", {"state": legacy.value, "state.v2": target.value}


def _split_task(text: str) -> ConnectorTaskId | None:
    name, _, number = text.rpartition("-")
    return ConnectorTaskId(name, int(number)) if name and number.isdigit() else None


class KafkaOffsetBackingStore:
    """Source offsets in the offsets topic; every worker holds the whole map (an :class:`OffsetMap`)."""

    def __init__(self, topic: str, producer_config: dict[str, Any], consumer_config: dict[str, Any]) -> None:
        self._map = OffsetMap()
        self.log = KafkaBasedLog(topic, producer_config, consumer_config, self._apply, name="offsets")

    def start(self) -> None:
        self.log.start()

    def stop(self) -> None:
        self.log.stop()

    def _apply(self, message: Message) -> None:
        key, value = message.key(), message.value()
        if isinstance(key, bytes):
            self._map.apply({key: None if value is None else bytes(value)})

    def get(self, keys: Iterable[bytes]) -> dict[bytes, bytes | None]:
        self.log.read_to_end()
        return self._map.get(keys)

    def set(self, values: Mapping[bytes, bytes | None]) -> None:
        """Write ``values`` and wait for the acknowledgements (the data is durable on return)."""
        self.log.send_all(list(values.items()))
        self._map.apply(values)

    def connector_partitions(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        self.log.read_to_end()
        return self._map.connector_partitions(connector)


class KafkaStatusBackingStore:
    """Statuses in the status topic, cached for reads in a :class:`StatusTable` that the topic's
    records (ours and every other worker's) fill.

    UNASSIGNED and FAILED are written "safely" (Kafka's ``putSafe``): not over a status that
    another worker wrote in a newer generation, so a slow shutdown on an old owner cannot
    overwrite the new owner's RUNNING.
    """

    SAFE_STATES = (State.UNASSIGNED, State.FAILED)

    def __init__(self, topic: str, producer_config: dict[str, Any], consumer_config: dict[str, Any]) -> None:
        self.generation = -1
        self._table = StatusTable()
        self._lock = threading.Lock()
        self._meta: dict[str, tuple[str, int]] = {}  # key -> (worker_id, generation) of the cached value
        self.log = KafkaBasedLog(topic, producer_config, consumer_config, self._apply, name="statuses")

    def start(self) -> None:
        self.log.start()

    def stop(self) -> None:
        self.log.stop()

    def read_to_end(self, timeout: float = 30.0) -> None:
        self.log.read_to_end(timeout)

    # -- reads (the cache) -----------------------------------------------------------------------
    def get(self, connector: str) -> ConnectorState | None:
        return self._table.get(connector)

    def get_task(self, task_id: ConnectorTaskId) -> TaskState | None:
        return self._table.get_task(task_id)

    def get_all(self, connector: str) -> list[TaskState]:
        return self._table.get_all(connector)

    def connectors(self) -> list[str]:
        """Connectors that have a status (the leader removes those whose config is gone)."""
        return self._table.connectors()

    def topics(self, connector: str) -> list[str]:
        return self._table.topics(connector)

    # -- writes: the topic, then the cache (the read-back of our own record applies it again) ------
    def _send(self, key: str, value: Any) -> None:
        self.log.send(key.encode("utf-8"), None if value is None else dumps(value))

    def _safe(self, key: str, state: State, worker_id: str) -> bool:
        if state not in self.SAFE_STATES:
            return True
        with self._lock:
            previous = self._meta.get(key)
        return previous is None or previous[0] == worker_id or previous[1] <= self.generation

    def _value(self, status: ConnectorState | TaskState) -> dict[str, Any]:
        """Kafka's status record: state, trace, worker_id, generation and (Kafka 4.1+) version."""
        return {"state": status.state.value, "trace": status.trace, "worker_id": status.worker_id,
                "generation": self.generation, "version": status.version}

    def put(self, connector: str, status: ConnectorState) -> None:
        key = f"status-connector-{connector}"
        if not self._safe(key, status.state, status.worker_id):
            return
        destroyed = status.state is State.DESTROYED
        self._send(key, None if destroyed else self._value(status))
        self._remember(key, None if destroyed else (status.worker_id, self.generation))
        self._table.put(connector, status)

    def put_task(self, task_id: ConnectorTaskId, status: TaskState) -> None:
        key = f"status-task-{task_id}"
        if not self._safe(key, status.state, status.worker_id):
            return
        destroyed = status.state is State.DESTROYED
        self._send(key, None if destroyed else self._value(status))
        self._remember(key, None if destroyed else (status.worker_id, self.generation))
        self._table.put_task(task_id, status)

    def _remember(self, key: str, written: tuple[str, int] | None) -> None:
        """``(worker_id, generation)`` of the status now under ``key`` (None: deleted)."""
        with self._lock:
            if written is None:
                self._meta.pop(key, None)
            else:
                self._meta[key] = written

    def remove_tasks(self, connector: str, keep: int = 0) -> None:
        for status in self._table.get_all(connector):
            if status.id >= keep:
                self._send(f"status-task-{connector}-{status.id}", None)
        self._table.remove_tasks(connector, keep)

    def remove(self, connector: str) -> None:
        self._send(f"status-connector-{connector}", None)
        self.remove_tasks(connector)
        self._table.remove(connector)

    def put_topic(self, connector: str, task: int, topic: str) -> None:
        status = self._table.put_topic(connector, task, topic)
        if status is not None:
            self._send(f"status-topic-{topic}:connector-{connector}",
                       {"topic": {"name": topic, "connector": connector, "task": task,
                                  "discoverTimestamp": status.discover_timestamp}})

    def reset_topics(self, connector: str) -> None:
        for topic in self._table.reset_topics(connector):
            self._send(f"status-topic-{topic}:connector-{connector}", None)

    # -- reads (the log's thread) ----------------------------------------------------------------
    def _apply(self, message: Message) -> None:
        raw_key = message.key()
        if not isinstance(raw_key, bytes):
            return
        key = raw_key.decode("utf-8", "replace")
        try:
            value = loads(message.value())
        except ValueError:
            return
        if key.startswith("status-connector-"):
            name = key[len("status-connector-"):]
            status = _status(value)
            self._table.put(name, ConnectorState(State.DESTROYED, "") if status is None
                            else ConnectorState(status[0], status[2], status[1], _version(value)))
            self._remember(key, None if status is None else (status[2], status[3]))
        elif key.startswith("status-task-"):
            task_id = _split_task(key[len("status-task-"):])
            if task_id is None:
                return
            status = _status(value)
            self._table.put_task(task_id, TaskState(task_id.task, State.DESTROYED, "") if status is None
                                 else TaskState(task_id.task, status[0], status[2], status[1], _version(value)))
            self._remember(key, None if status is None else (status[2], status[3]))
        elif key.startswith("status-topic-"):
            topic, sep, connector = key[len("status-topic-"):].rpartition(":connector-")
            if not sep:
                return
            if value is None:
                self._table.remove_topic(connector, topic)
            elif isinstance(value, dict) and isinstance(value.get("topic"), dict):
                info = value["topic"]
                timestamp = info.get("discoverTimestamp")
                self._table.put_topic(connector, int(info.get("task", 0)), topic,
                                      timestamp if isinstance(timestamp, int) else None)


def _version(value: Any) -> str | None:
    """A status value's ``version`` (written by Kafka 4.1+ and Seaway workers); None if absent."""
    version = value.get("version") if isinstance(value, dict) else None
    return version if isinstance(version, str) else None


def _status(value: Any) -> tuple[State, str | None, str, int] | None:
    """``(state, trace, worker_id, generation)`` of a status value; None for a tombstone or garbage."""
    if not isinstance(value, dict):
        return None
    try:
        state = State(str(value.get("state")))
    except ValueError:
        return None
    trace = value.get("trace")
    return state, str(trace) if trace else None, str(value.get("worker_id", "")), int(value.get("generation", -1))
