"""AbstractHerder: what standalone and distributed herders share (Kafka's ``AbstractHerder``).

* The status listener: the worker's connector/task transitions become statuses in the
  status store with this worker's id; failure traces are scrubbed of resolved secrets.
* Config validation (``validate_connector_config``): placeholders resolved, the framework
  definition enriched with the transforms/predicates (the definition
  :class:`~seaway.connect.runtime.connector_config.ConnectorConfig` later parses against),
  sink/source cross-checks (KIP-618's ``exactly.once.support=required`` and
  ``transaction.boundary=connector`` asked of the connector), the
  connector's own ``validate``, converter configs and the client override policy, merged into
  Kafka's ConfigInfos shape. Values are reported from the *unresolved* config, and PASSWORD
  values as ``[hidden]``, so validation never echoes a secret.
* Plugin listings and the plugin config description.
* :meth:`AbstractHerder.parsed`: a stored config parsed once, at the start of a connector or
  task, with a failure reported as that connector's or task's failure.
* The operations both herders answer the same way: reads from the config store's snapshot
  and the status store; config writes (validation, the create/replace checks, KIP-477's
  PATCH merge), restarts, and offsets changes (KIP-875's STOPPED precondition), each with
  the herder-specific step as a hook (standalone writes and restarts in place; a cluster
  checks leadership and goes through the config topic).
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka.admin import AdminClient
from seaway.connect.api import (
    ConfigDef,
    ConfigError,
    ConfigType,
    ConfigValue,
    Connector,
    Password,
    SinkConnector,
    SourceConnector,
)
from seaway.connect.api.config import convert_to_string
from seaway.connect.runtime.backing_stores import ClusterConfigState, ConfigBackingStore, StatusBackingStore
from seaway.connect.runtime.config import (
    WorkerConfig,
    connector_config_def,
    sink_config_def,
    source_config_def,
    validate_sink_topics,
)
from seaway.connect.runtime.config_providers import REDACTOR, scrub
from seaway.connect.runtime.connector_config import ConnectorConfig, connector_definition
from seaway.connect.runtime.exactly_once_validation import validate_exactly_once
from seaway.connect.runtime.herder import (
    AlreadyExistsError,
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
    NotFoundError,
    PluginDesc,
    State,
    TargetState,
    TaskInfo,
    TaskState,
    check_new_connector_name,
)
from seaway.connect.runtime.offsets_admin import OffsetsAdmin
from seaway.connect.runtime.plugins import PluginKind, Plugins
from seaway.connect.runtime.worker import Worker
from seaway.connect.runtime.worker_task import format_trace

__all__ = ["AbstractHerder", "invalid_config_message", "loggable_config"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)

_PLUGIN_ORDER = {"sink": 0, "source": 1, "transformation": 2, "predicate": 3, "converter": 4,
                 "header_converter": 5}


def invalid_config_message(infos: ConfigInfos) -> str:
    errors = infos.error_messages()
    return (f"Connector configuration is invalid and contains the following {len(errors)} error(s):\n"
            + "\n".join(errors)
            + "\nYou can also find the above list of errors at the endpoint "
              "`/connector-plugins/{connectorType}/config/validate`")


def loggable_config(config: Mapping[str, str], definition: ConfigDef | None,
                    plugins: Plugins | None = None) -> dict[str, str]:
    """``config`` with PASSWORD-typed values as ``[hidden]`` (what may go to a log line).

    With ``plugins``, the connector's own PASSWORD keys (``connection.password``) are hidden too.
    """
    keys = dict(definition.config_keys()) if definition is not None else {}
    if plugins is not None:
        try:
            own = plugins.new_instance(PluginKind.CONNECTOR, config.get("connector.class", "")).config()
            keys.update({k: v for k, v in own.config_keys().items() if k not in keys})
        except Exception:  # an unknown or broken connector: only the framework's keys are known
            pass
    return {k: (Password.HIDDEN if k in keys and keys[k].type is ConfigType.PASSWORD else v)
            for k, v in config.items()}


class AbstractHerder(Herder):
    """Status listener, validation, plugin descriptions and the REST operations over a :class:`Worker`.

    Where the two herders differ is a small hook each implements: who may write
    (:meth:`_require_writer`), what a write holds (:meth:`_exclusive`), how a config write takes
    effect (:meth:`_write_connector_config`), and how restarts and offsets changes are carried
    out. The checks and Kafka's REST answers around them are written once, here.
    """

    worker: Worker
    config_store: ConfigBackingStore
    status_store: StatusBackingStore
    worker_config: WorkerConfig
    plugins_registry: Plugins
    offsets_admin: OffsetsAdmin
    _cluster_id: str
    _ready: bool

    @property
    def worker_id(self) -> str:
        return self.worker.worker_id

    @property
    def kafka_cluster_id(self) -> str:
        return self._cluster_id

    def is_ready(self) -> bool:
        return self._ready

    # -- what each herder does its own way -------------------------------------------------------
    def _require_writer(self) -> None:
        """Raise unless this worker may write connector configs, offsets and restart plans.

        A standalone herder always may; in a cluster only the leader, and a follower raises
        :class:`~seaway.connect.runtime.herder.NotLeaderError`, which the REST layer forwards.
        """

    @abc.abstractmethod
    def _exclusive(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """What a config or offsets write holds from its checks to its end (standalone: the herder's lock)."""

    @abc.abstractmethod
    async def _write_connector_config(self, name: str, config: dict[str, str], initial_state: TargetState | None,
                                      before: ClusterConfigState) -> ConnectorInfo:
        """Store a validated ``config`` (``before``: the configs it was checked against) and answer
        with the connector's info; standalone restarts the connector here, a cluster writes the
        config topic and each worker acts on the record."""

    @abc.abstractmethod
    async def _remove_connector(self, name: str) -> None:
        """Delete existing connector ``name`` (standalone: stop and forget it; a cluster: a config-topic tombstone)."""

    @abc.abstractmethod
    async def _set_target(self, name: str, target: TargetState) -> None: ...

    @abc.abstractmethod
    async def _restart_connector_instance(self, name: str) -> None:
        """Restart the connector instance alone (on the worker that runs it)."""

    @abc.abstractmethod
    async def _restart_task_instance(self, task_id: ConnectorTaskId) -> None:
        """Restart one task (on the worker that runs it)."""

    @abc.abstractmethod
    async def _restart_planned(self, name: str, include_tasks: bool, only_failed: bool) -> ConnectorStateInfo:
        """Carry out a restart with tasks or of failed instances; the states planned (Kafka's 202 body)."""

    async def _before_offsets_change(self, name: str, raw: dict[str, str]) -> None:
        """What must happen before the offsets of stopped connector ``name`` change (nothing, in standalone)."""

    # -- reads, from the config store's snapshot -------------------------------------------------
    def _raw(self, name: str) -> dict[str, str]:
        """The stored config of ``name`` (placeholders unresolved); :class:`NotFoundError` if unknown."""
        config = self.config_store.snapshot().connector_config(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return config

    async def connectors(self) -> list[str]:
        return self.config_store.snapshot().connectors()

    async def connector_config(self, name: str) -> dict[str, str]:
        return self._raw(name)

    async def connector_info(self, name: str) -> ConnectorInfo:
        snapshot = self.config_store.snapshot()
        raw = snapshot.connector_config(name)
        if raw is None:
            raise NotFoundError(f"Connector {name} not found")
        return ConnectorInfo(name, raw, snapshot.task_ids(name), self.connector_type(raw))

    async def task_configs(self, name: str) -> list[TaskInfo]:
        snapshot = self.config_store.snapshot()
        if not snapshot.contains(name):
            raise NotFoundError(f"Connector {name} not found")
        return [TaskInfo(t, snapshot.task_config(t) or {}) for t in snapshot.task_ids(name)]

    async def connector_status(self, name: str) -> ConnectorStateInfo:
        status = self.status_store.get(name)
        raw = self.config_store.snapshot().connector_config(name)
        if status is None or raw is None:
            raise NotFoundError(f"No status found for connector {name}")
        return ConnectorStateInfo(name, status, self.status_store.get_all(name), self.connector_type(raw))

    async def validate_connector_config(self, config: dict[str, str]) -> ConfigInfos:
        return await asyncio.to_thread(self.validate_sync, config)

    async def task_status(self, name: str, task: int) -> TaskState:
        status = self.status_store.get_task(ConnectorTaskId(name, task))
        if status is None:
            raise NotFoundError(f"No status found for task {name}-{task}")
        return status

    async def connector_offsets(self, name: str) -> ConnectorOffsets:
        raw = self._raw(name)
        return await asyncio.to_thread(self.offsets_admin.read, name, raw)

    # -- writes: the checks and answers of both herders --------------------------------------------
    async def put_connector_config(self, name: str, config: dict[str, str], *, allow_replace: bool,
                                   initial_state: TargetState | None = None) -> Created:
        self._require_writer()
        config = {**config, "name": config.get("name", name)}
        infos = await self.validate_connector_config(config)
        if infos.error_count:
            raise BadRequestError(invalid_config_message(infos))
        async with self._exclusive():
            self._require_writer()  # again: leadership may have moved while the plugin validated
            before = self.config_store.snapshot()
            exists = before.contains(name)
            if exists and not allow_replace:
                raise AlreadyExistsError(f"Connector {name} already exists")
            if not exists:
                check_new_connector_name(name)
            log.info("%s connector %s with config %s", "Updating" if exists else "Creating", name,
                     loggable_config(config, connector_config_def(self.plugins_registry), self.plugins_registry))
            info = await self._write_connector_config(name, config, None if exists else initial_state, before)
            return Created(not exists, info)

    async def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        """KIP-477: the stored config with ``patch`` applied (a null value removes the key), then a PUT."""
        self._require_writer()
        merged = self._raw(name)
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return (await self.put_connector_config(name, merged, allow_replace=True)).info

    async def delete_connector(self, name: str) -> None:
        self._require_writer()
        async with self._exclusive():
            self._raw(name)
            await self._remove_connector(name)

    async def pause_connector(self, name: str) -> None:
        await self._set_target(name, TargetState.PAUSED)

    async def resume_connector(self, name: str) -> None:
        await self._set_target(name, TargetState.STARTED)

    async def restart_connector(self, name: str, *, include_tasks: bool = False, only_failed: bool = False
                                ) -> ConnectorStateInfo | None:
        if not self.config_store.contains(name):
            raise NotFoundError(f"Unknown connector: {name}")
        if not include_tasks and not only_failed:
            await self._restart_connector_instance(name)
            return None
        self._require_writer()
        if self.status_store.get(name) is None:
            raise NotFoundError(f"Status for connector {name} not found")
        return await self._restart_planned(name, include_tasks, only_failed)

    @staticmethod
    def restart_plan(info: ConnectorStateInfo, include_tasks: bool, only_failed: bool
                     ) -> tuple[bool, list[TaskState]]:
        """Kafka's ``RestartPlan``: whether the connector restarts, and which of its tasks."""
        connector = not only_failed or info.connector.state is State.FAILED
        tasks = [t for t in info.tasks if include_tasks and (not only_failed or t.state is State.FAILED)]
        return connector, tasks

    async def restart_task(self, name: str, task: int) -> None:
        task_id = ConnectorTaskId(name, task)
        if task_id not in self.config_store.snapshot().task_ids(name):
            raise NotFoundError(f"Unknown task: {task_id}")
        await self._restart_task_instance(task_id)

    def _check_stopped(self, name: str) -> dict[str, str]:
        """KIP-875: offsets change only while the connector is STOPPED (and so has no tasks); its config."""
        snapshot = self.config_store.snapshot()
        raw = snapshot.connector_config(name)
        if raw is None:
            raise NotFoundError(f"Connector {name} not found")
        if snapshot.target_state(name) is not TargetState.STOPPED or snapshot.task_ids(name):
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. This can be done "
                f"for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint")
        return raw

    async def alter_connector_offsets(self, name: str, offsets: ConnectorOffsets) -> str:
        return await self._change_offsets(name, offsets.offsets, reset=False)

    async def reset_connector_offsets(self, name: str) -> str:
        return await self._change_offsets(name, None, reset=True)

    async def _change_offsets(self, name: str, offsets: list[tuple[dict[str, Any], dict[str, Any] | None]] | None,
                              *, reset: bool) -> str:
        self._require_writer()
        async with self._exclusive():
            raw = self._check_stopped(name)
            if not reset and not offsets:
                raise BadRequestError("Partitions / offsets need to be provided for an alter offsets request")
            await self._before_offsets_change(name, raw)
            return await asyncio.to_thread(self.offsets_admin.alter, name, raw, offsets, reset=reset)

    # -- topic tracking ---------------------------------------------------------------------------
    def _check_tracking(self, reset: bool = False) -> None:
        if not self.worker_config.common.topic_tracking_enable:
            raise HerderError("Topic tracking is disabled.", status=403)
        if reset and not self.worker_config.common.topic_tracking_allow_reset:
            raise HerderError("Topic tracking reset is disabled.", status=403)

    async def connector_active_topics(self, name: str) -> list[str]:
        self._check_tracking()
        return self.status_store.topics(name)

    async def reset_connector_active_topics(self, name: str) -> None:
        self._check_tracking(reset=True)
        self.status_store.reset_topics(name)

    def admin_config(self) -> dict[str, Any]:
        """Settings of this worker's own admin client."""
        return self.worker_config.admin_client_config()

    def _lookup_cluster_id(self) -> str:
        """The Kafka cluster's id (blocking), which the REST root reports."""
        admin = AdminClient(self.admin_config())
        return str(admin.list_topics(timeout=30).cluster_id or "")

    def rest_request_max_bytes(self) -> int:
        return self.worker_config.rest.request_max_bytes

    # -- status listener (called from worker and task threads) -----------------------------------
    def _trace(self, connector: str, error: BaseException) -> str:
        return scrub(format_trace(error), self.worker.secrets(connector))

    def _put(self, connector: str, state: State, trace: str | None = None) -> None:
        version = self.worker.connector_version(connector)  # Kafka 4.1+: statuses carry the plugin version
        self.status_store.put(connector, ConnectorState(state, self.worker_id, trace, version))

    def _put_task(self, task_id: ConnectorTaskId, state: State, trace: str | None = None) -> None:
        version = self.worker.task_version(task_id)
        self.status_store.put_task(task_id, TaskState(task_id.task, state, self.worker_id, trace, version))

    def on_connector_startup(self, connector: str) -> None:
        self._put(connector, State.RUNNING)

    def on_connector_pause(self, connector: str) -> None:
        self._put(connector, State.PAUSED)

    def on_connector_stop(self, connector: str) -> None:
        self._put(connector, State.STOPPED)

    def on_connector_failure(self, connector: str, error: BaseException) -> None:
        self._put(connector, State.FAILED, self._trace(connector, error))

    def on_connector_shutdown(self, connector: str) -> None:
        self._put(connector, State.UNASSIGNED)

    def on_task_startup(self, task_id: ConnectorTaskId) -> None:
        self._put_task(task_id, State.RUNNING)

    def on_task_pause(self, task_id: ConnectorTaskId) -> None:
        self._put_task(task_id, State.PAUSED)

    def on_task_resume(self, task_id: ConnectorTaskId) -> None:
        self._put_task(task_id, State.RUNNING)

    def on_task_failure(self, task_id: ConnectorTaskId, error: BaseException) -> None:
        self._put_task(task_id, State.FAILED, self._trace(task_id.connector, error))

    def on_task_shutdown(self, task_id: ConnectorTaskId) -> None:
        self._put_task(task_id, State.UNASSIGNED)

    def on_topic(self, task_id: ConnectorTaskId, topic: str) -> None:
        self.status_store.put_topic(task_id.connector, task_id.task, topic)

    # -- parsing a stored config (worker threads) ----------------------------------------------
    def parsed(self, name: str, raw: Mapping[str, str], failed: Callable[[BaseException], None]
               ) -> ConnectorConfig | None:
        """``raw`` resolved and parsed (:meth:`Worker.connector_config`), or None after ``failed(error)``.

        ``failed`` is the status of whatever was about to start: the connector
        (``on_connector_failure``) or its tasks (``on_task_failure``), which then show FAILED
        with the reason, as when the worker itself cannot start them.
        """
        try:
            return self.worker.connector_config(name, raw)
        except Exception as e:
            log.error("Failed to parse the config of connector %s", name, exc_info=e)
            failed(e)
            return None

    # -- types and plugins ----------------------------------------------------------------------
    def connector_type(self, config: Mapping[str, str]) -> ConnectorType:
        try:
            cls = self.plugins_registry.find(PluginKind.CONNECTOR, config.get("connector.class", ""))
        except ConfigError:
            return ConnectorType.UNKNOWN
        if issubclass(cls, SinkConnector):
            return ConnectorType.SINK
        return ConnectorType.SOURCE if issubclass(cls, SourceConnector) else ConnectorType.UNKNOWN

    def plugins(self, *, connectors_only: bool = True) -> list[PluginDesc]:
        kinds = [PluginKind.CONNECTOR] if connectors_only else [
            PluginKind.CONNECTOR, PluginKind.TRANSFORMATION, PluginKind.PREDICATE, PluginKind.CONVERTER,
            PluginKind.HEADER_CONVERTER]
        # broken plugins too, with their error (docs/connect.md): a failed install must be visible
        out = [d for kind in kinds for d in self.plugins_registry.descriptors(kind)]
        return sorted(out, key=lambda d: (_PLUGIN_ORDER.get(d.type, 9), d.class_name))

    def broken_plugins(self) -> list[PluginDesc]:
        """Plugins whose entry point failed to load, with ``load_error``."""
        return [d for d in self.plugins_registry.descriptors() if d.load_error is not None]

    def connector_plugin_config(self, plugin: str) -> list[dict[str, Any]]:
        for kind in (PluginKind.CONNECTOR, PluginKind.CONVERTER, PluginKind.HEADER_CONVERTER,
                     PluginKind.TRANSFORMATION, PluginKind.PREDICATE):
            try:
                cls = self.plugins_registry.find(kind, plugin)
            except ConfigError:
                continue
            instance = cls()
            own = instance.config()
            infos = [k.to_dict() for k in own.config_key_infos()]
            if kind is PluginKind.CONNECTOR:
                framework = (sink_config_def if issubclass(cls, SinkConnector)
                             else source_config_def)(self.plugins_registry)
                infos += [k.to_dict() for k in framework.config_key_infos() if k.name not in own]
            return infos
        raise NotFoundError(f"Unknown plugin {plugin}.")

    # -- validation -----------------------------------------------------------------------------
    def exactly_once_source_enabled(self) -> bool:
        """Whether this worker runs source tasks exactly-once (distributed, ``exactly.once.source.support=enabled``)."""
        return False

    def validate_sync(self, config: Mapping[str, str]) -> ConfigInfos:
        """Kafka's ``validateConnectorConfig`` (blocking: plugin code runs)."""
        class_name = config.get("connector.class")
        if not class_name:
            raise BadRequestError(f"Connector config {dict(config)} contains no connector type")
        try:
            cls = self.plugins_registry.find(PluginKind.CONNECTOR, class_name)
        except ConfigError as e:
            raise BadRequestError(str(e)) from None
        resolved = self.worker.transformer.transform(config).data
        sink = issubclass(cls, SinkConnector)
        framework = connector_definition(self.plugins_registry, cls, resolved)
        values = {v.name: v for v in framework.validate(resolved)}
        connector: Connector = cls()
        if sink:
            validate_sink_topics(resolved, values)
        else:
            assert isinstance(connector, SourceConnector)
            validate_exactly_once(connector, resolved, values, self.exactly_once_source_enabled())
        own = connector.config()
        if own is None:
            raise BadRequestError(f"{class_name}.config() must return a ConfigDef that is not null.")
        result = connector.validate(resolved)
        if result is None:
            raise BadRequestError(f"{class_name}.validate() must return a Config that is not null.")
        own_values = {v.name: v for v in result.config_values}
        self._validate_converters(resolved, values)
        self._validate_overrides(resolved, values)
        configs: list[dict[str, Any]] = []
        keys = framework.config_keys()
        for name, key in keys.items():
            if key.internal:
                continue
            value = own_values.pop(name, None) if name in own and name not in values else values.pop(name, None)
            configs.append(self._entry(key.info().to_dict(), value, config, key.type))
        own_keys = own.config_keys()
        for name, key in own_keys.items():
            if name in keys or key.internal:
                continue
            configs.append(self._entry(key.info().to_dict(), own_values.pop(name, None), config, key.type))
        configs.extend(self._entry(None, value, config, None) for value in {**values, **own_values}.values())
        groups = list(dict.fromkeys([*framework.groups(), *own.groups()]))
        error_count = sum(len((c["value"] or {}).get("errors", [])) for c in configs)
        return ConfigInfos(class_name, error_count, groups, configs)

    @staticmethod
    def _entry(definition: dict[str, Any] | None, value: ConfigValue | None, raw: Mapping[str, str],
               config_type: ConfigType | None) -> dict[str, Any]:
        if value is None:
            return {"definition": definition, "value": None}
        if config_type is ConfigType.PASSWORD and value.value is not None:
            shown: str | None = Password.HIDDEN
        elif value.name in raw:
            shown = raw[value.name]
        else:
            shown = convert_to_string(value.value, config_type) if value.value is not None else None
        return {"definition": definition,
                "value": {"name": value.name, "value": shown,
                          "recommended_values": [convert_to_string(v) for v in value.recommended_values],
                          "errors": list(value.errors), "visible": value.visible}}

    def _validate_converters(self, props: Mapping[str, str], values: dict[str, ConfigValue]) -> None:
        for key in ("key.converter", "value.converter", "header.converter"):
            name = props.get(key)
            if not name or (key in values and values[key].errors):
                continue
            kind = PluginKind.HEADER_CONVERTER if key == "header.converter" else PluginKind.CONVERTER
            try:
                definition = self.plugins_registry.new_instance(kind, name).config()
            except Exception:
                continue
            prefix = key + "."
            sub = {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}
            sub.setdefault("converter.type", key.split(".")[0])
            for v in definition.validate(sub):
                if v.errors:
                    target = values.setdefault(prefix + v.name, ConfigValue(prefix + v.name, v.value))
                    for err in v.errors:
                        target.add_error_message(err)

    def _validate_overrides(self, props: Mapping[str, str], values: dict[str, ConfigValue]) -> None:
        policy = self.worker_config.common.connector_client_config_override_policy
        if policy == "All":
            return
        allowed = {"sasl.jaas.config", "sasl.mechanism", "security.protocol"} if policy == "Principal" else set()
        for key, value in props.items():
            for prefix in ("producer.override.", "consumer.override.", "admin.override."):
                if key.startswith(prefix) and key[len(prefix):] not in allowed:
                    values.setdefault(key, ConfigValue(key, value)).add_error_message(
                        f"The '{policy}' policy does not allow '{key[len(prefix):]}' to be overridden in the "
                        "connector configuration.")
