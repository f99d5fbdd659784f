"""The REST-facing half of the distributed herder: reads from the stores, writes by the rules.

Reads (connectors, configs, statuses, offsets) are answered from this worker's copy of the
internal topics. Writes check who may do them: :meth:`DistributedHerderBase.require_leader`
(connector configs, stop, restarts with tasks, offsets) or
:meth:`~DistributedHerderBase.require_owner` (plain connector and task restarts), both of
which raise :class:`NotLeaderError` with the URL the REST layer forwards to. Pause and resume
are written by whichever worker receives them. The cluster mechanics (assignment, events)
live in ``herder.py``.
"""

from __future__ import annotations

import abc
import asyncio
import json
import ssl
from typing import Any

from seaway.connect.runtime.abstract_herder import AbstractHerder, invalid_config_message
from seaway.connect.runtime.distributed.config import DistributedConfig
from seaway.connect.runtime.distributed.connect_protocol import ExtendedAssignment
from seaway.connect.runtime.distributed.fencing import ZombieFencing
from seaway.connect.runtime.distributed.kafka_log import ensure_topic
from seaway.connect.runtime.distributed.kafka_stores import (
    KafkaConfigBackingStore,
    KafkaOffsetBackingStore,
    KafkaStatusBackingStore,
    RestartRequest,
    SessionKey,
)
from seaway.connect.runtime.distributed.membership import WorkerMembership
from seaway.connect.runtime.herder import (
    AlreadyExistsError,
    BadRequestError,
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorStateInfo,
    ConnectorTaskId,
    ConnectorType,
    Created,
    NotFoundError,
    TargetState,
    TaskInfo,
    check_new_connector_name,
)
from seaway.connect.runtime.offsets_admin import OffsetsAdmin
from seaway.connect.runtime.plugins import Plugins
from seaway.connect.runtime.worker import Worker

__all__ = ["DistributedHerderBase"]


class DistributedHerderBase(AbstractHerder):
    """Stores, worker and membership of one distributed worker, and the Herder operations."""

    status_store: KafkaStatusBackingStore

    def __init__(self, config: DistributedConfig, *, plugins: Plugins | None = None) -> None:
        self.worker_config: DistributedConfig = config
        self.plugins_registry = plugins or config.plugins
        self.url = config.advertised_url()
        # the worker's own clients: top-level security settings (Kafka's rule), then producer./consumer.
        base: dict[str, Any] = {"bootstrap.servers": config.bootstrap_servers, **config.security_client_config()}
        producer = {**base, **config.client_props("producer.", security=False)}
        consumer = {**base, **config.client_props("consumer.", security=False)}
        self.config_store = KafkaConfigBackingStore(
            str(config.get("config.storage.topic")), {**producer, "client.id": config.client_id("configs")},
            {**consumer, "client.id": config.client_id("configs")}, listener=self,
            transactional_id=config.transactional_producer_id if config.transactional_leader_enabled else None)
        self.status_store = KafkaStatusBackingStore(
            str(config.get("status.storage.topic")), {**producer, "client.id": config.client_id("statuses")},
            {**consumer, "client.id": config.client_id("statuses")})
        offset_store = KafkaOffsetBackingStore(
            str(config.get("offset.storage.topic")), {**producer, "client.id": config.client_id("offsets")},
            {**consumer, "client.id": config.client_id("offsets")})
        self.worker = Worker(config.worker_id(), config, offset_store, self, plugins=self.plugins_registry)
        self.worker.on_reconfigure = self._request_reconfiguration
        self.worker.offsets_topic = str(config.get("offset.storage.topic"))
        self.worker.connector_offsets_factory = self._connector_offset_store
        self.fencing = ZombieFencing(self.config_store, max(config.seconds("worker.sync.timeout.ms"), 30.0),
                                     self._fencing_producer_config, config.task_transactional_id)
        self.offsets_admin = OffsetsAdmin(self)
        self.membership = WorkerMembership(config, self.url, self.config_store, self)
        self._cluster_id = ""
        self._ready = False

    def exactly_once_source_enabled(self) -> bool:
        return self.worker_config.exactly_once_source_enabled

    def _connector_offset_store(self, topic: str) -> KafkaOffsetBackingStore:
        """A connector's own ``offsets.storage.topic``: created (compacted, like the worker's) if missing, then read."""
        c = self.worker_config
        ensure_topic(self.admin_config(), topic, int(c.get("offset.storage.partitions")),
                     int(c.get("offset.storage.replication.factor")))
        base: dict[str, Any] = {"bootstrap.servers": c.bootstrap_servers, **c.security_client_config()}
        client_id = c.client_id(f"offsets-{topic}")
        store = KafkaOffsetBackingStore(
            topic, {**base, **c.client_props("producer.", security=False), "client.id": client_id},
            {**base, **c.client_props("consumer.", security=False), "client.id": client_id})
        store.start()
        return store

    def _fencing_producer_config(self, name: str) -> dict[str, Any]:
        """The client settings of ``name``'s task producers (its overrides applied), to fence them with."""
        config = self.worker.connector_config(name, self._raw(name))
        return self.worker.producer_config(config, f"connector-fencing-{name}")

    def rest_verify(self, url: str) -> ssl.SSLContext | bool:
        """How a request to another worker verifies TLS: the REST TLS settings for an https URL."""
        return self.worker_config.client_security.rest_client_context() if url.startswith("https:") else True

    def admin_config(self) -> dict[str, Any]:
        return {**self.worker_config.admin_client_config(), "client.id": self.worker_config.client_id("shared-admin")}

    @staticmethod
    def dumps(value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode("utf-8")

    # -- hooks implemented by the cluster half ----------------------------------------------------
    @abc.abstractmethod
    def require_leader(self) -> None: ...

    @abc.abstractmethod
    def require_owner(self, item: str | ConnectorTaskId) -> bool: ...

    @abc.abstractmethod
    async def restart_connector_instance(self, name: str) -> None: ...

    @abc.abstractmethod
    async def restart_task_instance(self, task_id: ConnectorTaskId) -> None: ...

    @abc.abstractmethod
    async def planned_restart(self, name: str, include_tasks: bool, only_failed: bool) -> ConnectorStateInfo: ...

    @abc.abstractmethod
    def check_stopped(self, name: str) -> dict[str, str]: ...

    @abc.abstractmethod
    def _spawn_reconfigure(self, name: str) -> None: ...

    def _request_reconfiguration(self, name: str) -> None:
        """``ConnectorContext.request_task_reconfiguration`` (any thread)."""
        self._spawn_reconfigure(name)

    # the membership and config-store listeners (implemented in herder.py)
    @abc.abstractmethod
    def on_assignment(self, assignment: ExtendedAssignment, generation: int) -> None: ...

    @abc.abstractmethod
    def on_revoke_all(self, reason: str) -> None: ...

    @abc.abstractmethod
    def on_connector_config_update(self, connector: str, removed: bool) -> None: ...

    @abc.abstractmethod
    def on_task_config_update(self, connector: str) -> None: ...

    @abc.abstractmethod
    def on_target_state_change(self, connector: str) -> None: ...

    @abc.abstractmethod
    def on_restart_request(self, request: RestartRequest) -> None: ...

    @abc.abstractmethod
    def on_session_key_update(self, key: SessionKey) -> None: ...

    # -- reads ------------------------------------------------------------------------------------
    def _raw(self, name: str) -> dict[str, str]:
        config = self.config_store.snapshot().connector_config(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return config

    async def connectors(self) -> list[str]:
        return self.config_store.snapshot().connectors()

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

    # -- leader writes ----------------------------------------------------------------------------
    async def put_connector_config(self, name: str, config: dict[str, str], *, allow_replace: bool,
                                   initial_state: TargetState | None = None) -> Created:
        self.require_leader()
        config = {**config, "name": config.get("name", name)}
        infos = await self.validate_connector_config(config)
        if infos.error_count:
            raise BadRequestError(invalid_config_message(infos))
        self.require_leader()
        before = self.config_store.snapshot()
        exists = before.contains(name)
        if exists and not allow_replace:
            raise AlreadyExistsError(f"Connector {name} already exists")
        if not exists:
            check_new_connector_name(name)
        await asyncio.to_thread(self.config_store.put_connector_config, name, config,
                                None if exists else initial_state)
        # as Kafka: the tasks known when the write was made (none for a new connector)
        return Created(not exists, ConnectorInfo(name, config, before.task_ids(name), self.connector_type(config)))

    async def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        self.require_leader()
        merged = self._raw(name)
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return (await self.put_connector_config(name, merged, allow_replace=True)).info

    async def delete_connector(self, name: str) -> None:
        self.require_leader()
        self._raw(name)
        await asyncio.to_thread(self.config_store.remove_connector_config, name)

    async def stop_connector(self, name: str) -> None:
        """KIP-875: target state STOPPED and zero task configs, both written by the leader."""
        self.require_leader()
        if not self.config_store.snapshot().contains(name):
            raise NotFoundError(f"Unknown connector {name}")
        await asyncio.to_thread(self.config_store.put_task_configs, name, [])
        await asyncio.to_thread(self.config_store.put_target_state, name, TargetState.STOPPED)

    async def restart_connector(self, name: str, *, include_tasks: bool = False, only_failed: bool = False
                                ) -> ConnectorStateInfo | None:
        if not self.config_store.snapshot().contains(name):
            raise NotFoundError(f"Unknown connector: {name}")
        if not include_tasks and not only_failed:
            self.require_owner(name)
            await self.restart_connector_instance(name)
            return None
        self.require_leader()
        if self.status_store.get(name) is None:
            raise NotFoundError(f"Status for connector {name} not found")
        return await self.planned_restart(name, include_tasks, only_failed)

    async def restart_task(self, name: str, task: int) -> None:
        task_id = ConnectorTaskId(name, task)
        if task_id not in self.config_store.snapshot().task_ids(name):
            raise NotFoundError(f"Unknown task: {task_id}")
        self.require_owner(task_id)
        await self.restart_task_instance(task_id)

    async def alter_connector_offsets(self, name: str, offsets: ConnectorOffsets) -> str:
        self.require_leader()
        raw = self.check_stopped(name)
        if not offsets.offsets:
            raise BadRequestError("Partitions / offsets need to be provided for an alter offsets request")
        await self._fence_before_offsets_change(name, raw)
        return await asyncio.to_thread(self.offsets_admin.alter, name, raw, offsets.offsets, reset=False)

    async def reset_connector_offsets(self, name: str) -> str:
        self.require_leader()
        raw = self.check_stopped(name)
        await self._fence_before_offsets_change(name, raw)
        return await asyncio.to_thread(self.offsets_admin.alter, name, raw, None, reset=True)

    async def _fence_before_offsets_change(self, name: str, raw: dict[str, str]) -> None:
        """As Kafka: with exactly-once, a zombie task of the stopped connector must not write offsets after ours."""
        if self.exactly_once_source_enabled() and self.connector_type(raw) is ConnectorType.SOURCE:
            await self.fencing.fence(name)

    # -- any worker -------------------------------------------------------------------------------
    async def _set_target(self, name: str, target: TargetState) -> None:
        if not self.config_store.snapshot().contains(name):
            raise NotFoundError(f"Unknown connector {name}")
        await asyncio.to_thread(self.config_store.put_target_state, name, target)
