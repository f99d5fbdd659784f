"""The Herder: Connect's control plane, as the REST API and the CLI see it.

Kafka Connect splits a worker into the *Herder* (which connectors exist, their configs,
target states, task assignments, statuses) and the *Worker* (the data plane that runs
connector and task instances). Standalone and distributed mode differ only in how the
Herder coordinates: one process with a local offsets file, or a group of workers that
share state through compacted topics. Everything here is the contract both implement,
and the only thing ``seaway.connect.rest`` depends on.

All methods are coroutines running on the worker's event loop; blocking plugin code runs
in task threads, never here. Errors are raised as the exceptions below, which the REST
layer maps to Kafka Connect's status codes and ``{"error_code", "message"}`` bodies.
"""

from __future__ import annotations

import abc
import enum
from dataclasses import dataclass, field
from typing import Any

from seaway.connect.api.errors import AlreadyExistsError, ConnectError, NotFoundError

__all__ = [
    "ALGORITHM_HEADER",
    "DEFAULT_REST_REQUEST_MAX_BYTES",
    "SIGNATURE_HEADER",
    "AlreadyExistsError",
    "BadRequestError",
    "ConfigInfos",
    "ConnectorInfo",
    "ConnectorOffsets",
    "ConnectorState",
    "ConnectorStateInfo",
    "ConnectorTaskId",
    "ConnectorType",
    "Created",
    "Herder",
    "HerderError",
    "NotFoundError",
    "NotLeaderError",
    "PluginDesc",
    "RebalanceNeededError",
    "State",
    "TargetState",
    "TaskInfo",
    "TaskState",
    "check_new_connector_name",
]

DEFAULT_REST_REQUEST_MAX_BYTES = 1 << 20
"""``rest.request.max.bytes``'s default, 1 MiB: a connector config is a few KB, and a config or
task-config record larger than about 1 MB would not fit Kafka's default ``message.max.bytes`` in
the config topic anyway."""

STANDALONE_NO_EXACTLY_ONCE = "Kafka Connect in standalone mode does not support exactly-once source connectors."

SIGNATURE_HEADER = "X-Connect-Authorization"
ALGORITHM_HEADER = "X-Connect-Request-Signature-Algorithm"
"""The headers of a signed worker-to-worker request (KIP-507): the REST layer hands their values to
the herder (:meth:`Herder.fence_zombies`), the distributed runtime signs and verifies them. They
live here, beside the interface both sides use, so the REST layer never imports the distributed
runtime."""

MAX_CONNECTOR_NAME_LENGTH = 249
"""As Kafka's topic names: a connector name ends up in consumer group ids, client ids and URLs."""


class HerderError(ConnectError):
    """A request the herder refuses; ``status`` is the HTTP status the REST layer sends."""

    status: int = 500

    def __init__(self, message: str, *, status: int | None = None, error_code: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status
        self.error_code = error_code if error_code is not None else self.status


class BadRequestError(HerderError):
    """Invalid input (a bad config, a state precondition): 400."""

    status = 400


def check_new_connector_name(name: str) -> None:
    """:class:`BadRequestError` for a name a new connector may not have.

    A ``/`` cannot be addressed in a ``/connectors/{name}`` path, and ``.`` / ``..`` are
    rewritten away by URL normalisation in clients and proxies: such a connector could be
    created but never read, changed or deleted again (Kafka refused ``/`` the same way,
    KAFKA-4372). Empty names and control characters are refused too, as Kafka's
    ``NonEmptyStringWithoutControlChars`` does, and names longer than Kafka's topic names.
    Only creation is checked, so a connector stored under such a name can still be deleted.
    """
    if not name:
        raise BadRequestError("Connector name must not be empty")
    if "/" in name:
        raise BadRequestError(f"Connector name {name!r} is invalid: connector name should not contain '/'")
    if name in (".", ".."):
        raise BadRequestError(f"Connector name {name!r} is invalid: '.' and '..' are not allowed")
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in name):
        raise BadRequestError(f"Connector name {name!r} is invalid: it contains ISO control characters")
    if len(name) > MAX_CONNECTOR_NAME_LENGTH:
        raise BadRequestError(f"Connector name of {len(name)} characters is invalid: the limit is "
                              f"{MAX_CONNECTOR_NAME_LENGTH}")


class RebalanceNeededError(HerderError):
    """Stale configuration during a concurrent change or rebalance: 409."""

    status = 409


class NotLeaderError(HerderError):
    """This worker cannot serve the request; ``target_url`` can (leader or owner).

    The REST layer forwards the request there (distributed mode); ``target_url`` is None
    when no leader is known, which becomes a 409.
    """

    status = 409

    def __init__(self, message: str, target_url: str | None) -> None:
        super().__init__(message)
        self.target_url = target_url


class TargetState(enum.StrEnum):
    """What the user asked a connector to be (stored in the config store)."""

    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


class State(enum.StrEnum):
    """Observed state of a connector or task (stored in the status store)."""

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"
    DESTROYED = "DESTROYED"


class ConnectorType(enum.StrEnum):
    SOURCE = "source"
    SINK = "sink"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True, order=True)
class ConnectorTaskId:
    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"

    def to_json(self) -> dict[str, Any]:
        return {"connector": self.connector, "task": self.task}


@dataclass(frozen=True, slots=True)
class ConnectorInfo:
    """``{"name", "config", "tasks": [{"connector", "task"}], "type"}``."""

    name: str
    config: dict[str, str]
    tasks: list[ConnectorTaskId]
    type: ConnectorType

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "config": dict(self.config),
                "tasks": [t.to_json() for t in self.tasks], "type": self.type.value}


UNDEFINED_VERSION = "undefined"
"""Kafka's ``PluginDesc.UNDEFINED_VERSION``: a version with this value is left out of JSON bodies."""


def _state_json(out: dict[str, Any], state: State, worker_id: str, trace: str | None,
                version: str | None) -> dict[str, Any]:
    out["state"] = state.value
    out["worker_id"] = worker_id
    if trace:
        out["trace"] = trace
    if version != UNDEFINED_VERSION:
        out["version"] = version
    return out


@dataclass(frozen=True, slots=True)
class TaskState:
    """One instance's state: ``{"id"?, "state", "worker_id", "trace"?, "version"}``.

    ``trace`` is omitted when empty. ``version`` (Kafka 4.1+, KIP-891) is the plugin version of
    the running task, recorded with the status by the worker that runs it; null when that
    worker did not know it (the task failed to instantiate, or an older worker wrote the
    status), as Kafka shows it.
    """

    id: int
    state: State
    worker_id: str
    trace: str | None = None
    version: str | None = None

    def to_json(self, *, with_id: bool = True) -> dict[str, Any]:
        return _state_json({"id": self.id} if with_id else {}, self.state, self.worker_id, self.trace, self.version)


@dataclass(frozen=True, slots=True)
class ConnectorState:
    """The connector instance's state; ``version`` as :class:`TaskState`'s, the connector's own."""

    state: State
    worker_id: str
    trace: str | None = None
    version: str | None = None

    def to_json(self) -> dict[str, Any]:
        return _state_json({}, self.state, self.worker_id, self.trace, self.version)


@dataclass(frozen=True, slots=True)
class ConnectorStateInfo:
    """``GET /connectors/{c}/status``: connector state plus tasks sorted by id."""

    name: str
    connector: ConnectorState
    tasks: list[TaskState]
    type: ConnectorType

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "connector": self.connector.to_json(),
                "tasks": [t.to_json() for t in sorted(self.tasks, key=lambda t: t.id)],
                "type": self.type.value}


@dataclass(frozen=True, slots=True)
class TaskInfo:
    """``{"id": {"connector", "task"}, "config": {...}}``."""

    id: ConnectorTaskId
    config: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id.to_json(), "config": dict(self.config)}


@dataclass(frozen=True, slots=True)
class Created:
    """Result of a config PUT/POST: whether it created the connector (201) or updated it (200)."""

    created: bool
    info: ConnectorInfo


@dataclass(frozen=True, slots=True)
class ConnectorOffsets:
    """``{"offsets": [{"partition": {...}, "offset": {...} | null}]}`` (KIP-875)."""

    offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]

    def to_json(self) -> dict[str, Any]:
        return {"offsets": [{"partition": p, "offset": o} for p, o in self.offsets]}


@dataclass(frozen=True, slots=True)
class ConfigInfos:
    """The validate response: ``{"name", "error_count", "groups", "configs": [...]}``.

    ``configs`` holds ``{"definition": ConfigKeyInfo-json | None, "value": ConfigValueInfo-json | None}``.
    """

    name: str
    error_count: int
    groups: list[str]
    configs: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "error_count": self.error_count, "groups": list(self.groups),
                "configs": list(self.configs)}

    def error_messages(self) -> list[str]:
        """``"<key>: <error>"`` lines, as Kafka lists them in a 400 for an invalid config."""
        out: list[str] = []
        for entry in self.configs:
            value = entry.get("value") or {}
            out.extend(f"{value.get('name')}: {err}" if value.get("name") else str(err)
                       for err in value.get("errors", []))
        return out


@dataclass(frozen=True, slots=True)
class PluginDesc:
    """A discovered plugin, as ``GET /connector-plugins`` lists it."""

    class_name: str
    type: str  # source | sink | converter | header_converter | transformation | predicate
    version: str | None
    aliases: tuple[str, ...] = field(default=())
    load_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"class": self.class_name, "type": self.type}
        if self.version and self.version != "undefined":
            out["version"] = self.version
        return out


class Herder(abc.ABC):
    """The control-plane contract shared by the standalone and distributed herders.

    Raise :class:`NotFoundError` (404), :class:`AlreadyExistsError` (409),
    :class:`BadRequestError` (400), :class:`RebalanceNeededError` (409) or
    :class:`NotLeaderError` (forward) with Kafka Connect's messages.
    """

    # -- identity and lifecycle -------------------------------------------------------
    @property
    @abc.abstractmethod
    def worker_id(self) -> str:
        """``<advertised host>:<advertised port>``, as statuses report it."""

    @property
    @abc.abstractmethod
    def kafka_cluster_id(self) -> str: ...

    @abc.abstractmethod
    async def start(self) -> None: ...

    @abc.abstractmethod
    async def stop(self) -> None:
        """Stop every connector and task (committing offsets) and release resources."""

    @abc.abstractmethod
    def is_ready(self) -> bool:
        """True once startup finished (``GET /health`` answers 200 only then)."""

    def rest_request_max_bytes(self) -> int:
        """The largest REST request body this worker accepts (``rest.request.max.bytes``)."""
        return DEFAULT_REST_REQUEST_MAX_BYTES

    # -- connectors -------------------------------------------------------------------
    @abc.abstractmethod
    async def connectors(self) -> list[str]: ...

    @abc.abstractmethod
    async def connector_info(self, name: str) -> ConnectorInfo: ...

    @abc.abstractmethod
    async def connector_config(self, name: str) -> dict[str, str]:
        """The config as submitted: config-provider placeholders are NOT resolved."""

    @abc.abstractmethod
    async def put_connector_config(
        self,
        name: str,
        config: dict[str, str],
        *,
        allow_replace: bool,
        initial_state: TargetState | None = None,
    ) -> Created:
        """Validate, then create or (when ``allow_replace``) update; raises on invalid config."""

    @abc.abstractmethod
    async def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        """Merge ``patch`` into the existing config (None deletes a key), validate, store."""

    @abc.abstractmethod
    async def delete_connector(self, name: str) -> None: ...

    @abc.abstractmethod
    async def task_configs(self, name: str) -> list[TaskInfo]: ...

    @abc.abstractmethod
    async def connector_status(self, name: str) -> ConnectorStateInfo: ...

    @abc.abstractmethod
    async def task_status(self, name: str, task: int) -> TaskState: ...

    @abc.abstractmethod
    async def pause_connector(self, name: str) -> None: ...

    @abc.abstractmethod
    async def resume_connector(self, name: str) -> None: ...

    @abc.abstractmethod
    async def stop_connector(self, name: str) -> None:
        """Target state STOPPED with zero task configs (KIP-875)."""

    @abc.abstractmethod
    async def restart_connector(
        self, name: str, *, include_tasks: bool = False, only_failed: bool = False
    ) -> ConnectorStateInfo | None:
        """Restart; returns None for the plain (connector-only) restart, else the planned states."""

    @abc.abstractmethod
    async def restart_task(self, name: str, task: int) -> None: ...

    @abc.abstractmethod
    async def validate_connector_config(self, config: dict[str, str]) -> ConfigInfos: ...

    async def fence_zombies(self, name: str, body: bytes, signature: str | None, algorithm: str | None) -> None:
        """``PUT /connectors/{c}/fence`` (internal, KIP-618): fence the producers of every older generation of an
        exactly-once source connector's tasks, then record it. Distributed mode only (Kafka's standalone
        herder refuses it with this message, as a 500)."""
        raise HerderError(STANDALONE_NO_EXACTLY_ONCE, status=500)

    # -- topics tracking and offsets (KIP-558, KIP-875) ----------------------------------
    @abc.abstractmethod
    async def connector_active_topics(self, name: str) -> list[str]: ...

    @abc.abstractmethod
    async def reset_connector_active_topics(self, name: str) -> None: ...

    @abc.abstractmethod
    async def connector_offsets(self, name: str) -> ConnectorOffsets: ...

    @abc.abstractmethod
    async def alter_connector_offsets(self, name: str, offsets: ConnectorOffsets) -> str:
        """Returns Kafka's success message; the connector must be STOPPED (else 400)."""

    @abc.abstractmethod
    async def reset_connector_offsets(self, name: str) -> str: ...

    # -- plugins ----------------------------------------------------------------------
    @abc.abstractmethod
    def plugins(self, *, connectors_only: bool = True) -> list[PluginDesc]: ...

    @abc.abstractmethod
    def connector_plugin_config(self, plugin: str) -> list[dict[str, Any]]:
        """ConfigKeyInfo JSON objects: the plugin's keys, then framework keys (404 unknown)."""
