"""An in-memory Herder for the REST unit tests: a test double of the control-plane interface.

It keeps configs, target states and offsets in dicts and follows Kafka Connect's rules and
messages closely enough to drive every REST route; the real herders are exercised by the
end-to-end tests.
"""

from __future__ import annotations

import asyncio
from typing import Any

from seaway.connect.api.errors import AlreadyExistsError, NotFoundError
from seaway.connect.runtime.herder import (
    BadRequestError,
    ConfigInfos,
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorState,
    ConnectorStateInfo,
    ConnectorTaskId,
    ConnectorType,
    Created,
    Herder,
    HerderError,
    NotLeaderError,
    PluginDesc,
    State,
    TargetState,
    TaskInfo,
    TaskState,
)

SOURCE = "org.example.FakeSourceConnector"
PLUGIN_VERSION = "2.1"
"""What statuses carry as the running plugin's version (Kafka 4.1+)."""
SINK = "org.example.FakeSinkConnector"
PLUGINS = [
    PluginDesc("org.example.transforms.Mask", "transformation", "1.0"),
    PluginDesc(SOURCE, "source", "2.1", ("FakeSource",)),
    PluginDesc("org.example.HeaderConv", "header_converter", "1.0"),
    PluginDesc("org.example.Conv", "converter", "undefined"),
    PluginDesc(SINK, "sink", "2.1", ("FakeSink",)),
    PluginDesc("org.example.Pred", "predicate", "1.0"),
    PluginDesc("org.example.BrokenConnector", "source", None, load_error="ImportError: no module named nope"),
]
CONFIG_KEYS = [{"name": "topic", "type": "STRING", "required": True, "default_value": None,
                "importance": "HIGH", "documentation": "Topic", "group": None, "order": -1, "width": "NONE",
                "display_name": "topic", "dependents": []}]
WORKER = "127.0.0.1:8083"


class MemoryHerder(Herder):
    """Everything in dicts; ``leader_url``/``not_leader`` simulate a follower in distributed mode."""

    def __init__(self) -> None:
        self.configs: dict[str, dict[str, str]] = {}
        self.targets: dict[str, TargetState] = {}
        self.failed: set[str] = set()
        self.offsets: dict[str, list[tuple[dict[str, Any], dict[str, Any] | None]]] = {}
        self.topics: dict[str, list[str]] = {}
        self.ready = True
        self.topic_tracking = True
        self.not_leader = False
        self.leader_url: str | None = None
        self.delay = 0.0
        self.calls: list[tuple[str, Any]] = []

    # -- identity -----------------------------------------------------------------------
    @property
    def worker_id(self) -> str:
        return WORKER

    @property
    def kafka_cluster_id(self) -> str:
        return "cluster-1"

    async def start(self) -> None:
        self.ready = True

    async def stop(self) -> None:
        self.ready = False

    def is_ready(self) -> bool:
        return self.ready

    # -- helpers ------------------------------------------------------------------------
    def _require(self, name: str) -> dict[str, str]:
        if name not in self.configs:
            raise NotFoundError(f"Connector {name} not found")
        return self.configs[name]

    def _leader_only(self) -> None:
        if self.not_leader:
            raise NotLeaderError("not the leader", self.leader_url)

    def _type(self, config: dict[str, str]) -> ConnectorType:
        cls = config.get("connector.class", "")
        if "Source" in cls:
            return ConnectorType.SOURCE
        return ConnectorType.SINK if "Sink" in cls else ConnectorType.UNKNOWN

    def _tasks(self, name: str) -> list[ConnectorTaskId]:
        if self.targets[name] is TargetState.STOPPED:
            return []
        return [ConnectorTaskId(name, i) for i in range(int(self.configs[name].get("tasks.max", "1")))]

    def _state(self, name: str) -> State:
        if name in self.failed:
            return State.FAILED
        return {TargetState.STARTED: State.RUNNING, TargetState.PAUSED: State.PAUSED,
                TargetState.STOPPED: State.STOPPED}[self.targets[name]]

    # -- connectors ---------------------------------------------------------------------
    async def connectors(self) -> list[str]:
        return sorted(self.configs)

    async def connector_info(self, name: str) -> ConnectorInfo:
        config = self._require(name)
        return ConnectorInfo(name, dict(config), self._tasks(name), self._type(config))

    async def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._require(name))

    async def validate_connector_config(self, config: dict[str, str]) -> ConfigInfos:
        if "connector.class" not in config:
            raise BadRequestError(f"Connector config {config} contains no connector type")
        cls = config["connector.class"]
        entries: list[dict[str, Any]] = []
        errors = 0
        for key in ("topic", "tasks.max"):
            value = config.get(key)
            errs = []
            if key == "topic" and cls == SOURCE and not value:
                errs.append('Missing required configuration "topic" which has no default value.')
            if key == "tasks.max" and value is not None and not value.isdigit():
                errs.append(f"Invalid value {value} for configuration tasks.max: Not a number of type INT")
            errors += len(errs)
            entries.append({"definition": None, "value": {"name": key, "value": value, "recommended_values": [],
                                                          "errors": errs, "visible": True}})
        return ConfigInfos(cls, errors, ["Common"], entries)

    async def _checked(self, config: dict[str, str]) -> None:
        infos = await self.validate_connector_config(config)
        if infos.error_count:
            lines = "".join(f"\n{m}" for m in infos.error_messages())
            raise BadRequestError(
                f"Connector configuration is invalid and contains the following {infos.error_count} error(s):"
                f"{lines}\nYou can also find the above list of errors at the endpoint "
                "`/connector-plugins/{connectorType}/config/validate`")

    async def put_connector_config(self, name: str, config: dict[str, str], *, allow_replace: bool,
                                   initial_state: TargetState | None = None) -> Created:
        self._leader_only()
        self.calls.append(("put", (name, allow_replace, initial_state)))
        await asyncio.sleep(self.delay)
        exists = name in self.configs
        if exists and not allow_replace:
            raise AlreadyExistsError(f"Connector {name} already exists")
        await self._checked(config)
        self.configs[name] = dict(config)
        if not exists:
            self.targets[name] = initial_state or TargetState.STARTED
        return Created(not exists, await self.connector_info(name))

    async def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        merged = dict(self._require(name))
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        await self._checked(merged)
        self.configs[name] = merged
        return await self.connector_info(name)

    async def delete_connector(self, name: str) -> None:
        self._require(name)
        del self.configs[name], self.targets[name]

    async def task_configs(self, name: str) -> list[TaskInfo]:
        config = self._require(name)
        return [TaskInfo(t, {**config, "task.id": str(t.task)}) for t in self._tasks(name)]

    async def connector_status(self, name: str) -> ConnectorStateInfo:
        if name not in self.configs:
            raise NotFoundError(f"No status found for connector {name}")
        state = self._state(name)
        trace = "Traceback: boom" if state is State.FAILED else None
        tasks = [TaskState(t.task, state, WORKER, trace, PLUGIN_VERSION) for t in reversed(self._tasks(name))]
        return ConnectorStateInfo(name, ConnectorState(state, WORKER, trace, PLUGIN_VERSION), tasks,
                                  self._type(self.configs[name]))

    async def task_status(self, name: str, task: int) -> TaskState:
        status = await self.connector_status(name) if name in self.configs else None
        for t in status.tasks if status else []:
            if t.id == task:
                return t
        raise NotFoundError(f"No status found for task {name}-{task}")

    async def pause_connector(self, name: str) -> None:
        self._require(name)
        self.targets[name] = TargetState.PAUSED

    async def resume_connector(self, name: str) -> None:
        self._require(name)
        self.targets[name] = TargetState.STARTED

    async def stop_connector(self, name: str) -> None:
        self._require(name)
        self.targets[name] = TargetState.STOPPED

    async def restart_connector(self, name: str, *, include_tasks: bool = False,
                                only_failed: bool = False) -> ConnectorStateInfo | None:
        self._leader_only()
        if name not in self.configs:
            raise NotFoundError(f"Unknown connector: {name}")
        self.calls.append(("restart", (name, include_tasks, only_failed)))
        if not include_tasks and not only_failed:
            return None
        status = await self.connector_status(name)
        failed = status.connector.state is State.FAILED

        def planned(state: State) -> State:
            return State.RESTARTING if not only_failed or state is State.FAILED else state

        tasks = [TaskState(t.id, planned(t.state) if include_tasks else t.state, t.worker_id, t.trace, t.version)
                 for t in status.tasks]
        connector = ConnectorState(State.RESTARTING if not only_failed or failed else status.connector.state,
                                   WORKER, None, PLUGIN_VERSION)
        return ConnectorStateInfo(name, connector, tasks, status.type)

    async def restart_task(self, name: str, task: int) -> None:
        if name not in self.configs or task >= len(self._tasks(name)):
            raise NotFoundError(f"Unknown task: {name}-{task}")

    # -- topics and offsets ---------------------------------------------------------------
    def _tracking(self) -> None:
        if not self.topic_tracking:
            raise HerderError("Topic tracking is disabled.", status=403)

    async def connector_active_topics(self, name: str) -> list[str]:
        self._tracking()
        return self.topics.get(name, [])

    async def reset_connector_active_topics(self, name: str) -> None:
        self._tracking()
        self.topics.pop(name, None)

    async def connector_offsets(self, name: str) -> ConnectorOffsets:
        self._require(name)
        return ConnectorOffsets(self.offsets.get(name, []))

    def _stopped(self, name: str) -> None:
        self._require(name)
        if self.targets[name] is not TargetState.STOPPED:
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. This can be done "
                f"for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint")

    async def alter_connector_offsets(self, name: str, offsets: ConnectorOffsets) -> str:
        self._stopped(name)
        self.offsets[name] = list(offsets.offsets)
        return "The offsets for this connector have been altered successfully"

    async def reset_connector_offsets(self, name: str) -> str:
        self._stopped(name)
        self.offsets.pop(name, None)
        return "The offsets for this connector have been reset successfully"

    # -- plugins ------------------------------------------------------------------------
    def plugins(self, *, connectors_only: bool = True) -> list[PluginDesc]:
        return [p for p in PLUGINS if not connectors_only or p.type in ("source", "sink")]

    def connector_plugin_config(self, plugin: str) -> list[dict[str, Any]]:
        for p in PLUGINS:
            if plugin == p.class_name or plugin in p.aliases:
                return list(CONFIG_KEYS)
        raise NotFoundError(f"Unknown plugin {plugin}.")
