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
import contextlib
import logging
import ssl
from typing import Any

from seaway.connect.runtime.abstract_herder import AbstractHerder
from seaway.connect.runtime.backing_stores import ClusterConfigState, SessionKey
from seaway.connect.runtime.distributed.config import DistributedConfig
from seaway.connect.runtime.distributed.connect_protocol import ExtendedAssignment
from seaway.connect.runtime.distributed.fencing import ZombieFencing
from seaway.connect.runtime.distributed.kafka_log import ensure_topic
from seaway.connect.runtime.distributed.kafka_stores import (
    KafkaConfigBackingStore,
    KafkaOffsetBackingStore,
    KafkaStatusBackingStore,
    RestartRequest,
)
from seaway.connect.runtime.distributed.membership import WorkerMembership
from seaway.connect.runtime.herder import (
    ConnectorInfo,
    ConnectorTaskId,
    ConnectorType,
    NotFoundError,
    TargetState,
)
from seaway.connect.runtime.offsets_admin import OffsetsAdmin
from seaway.connect.runtime.plugins import Plugins
from seaway.connect.runtime.worker import Worker

log = logging.getLogger(__name__)

__all__ = ["DistributedHerderBase"]


class DistributedHerderBase(AbstractHerder):
    """Stores, worker and membership of one distributed worker, and the distributed steps
    (leader checks, config-topic writes, owner forwarding, fencing) of :class:`AbstractHerder`'s operations."""

    config_store: KafkaConfigBackingStore
    status_store: KafkaStatusBackingStore

    def __init__(self, config: DistributedConfig, *, plugins: Plugins | None = None) -> None:
        self.worker_config: DistributedConfig = config
        self.plugins_registry = plugins or config.plugins
        # the leader's writes of a connector's task configs: a stop (empty configs, then STOPPED) and the
        # configs a running connector generated, one at a time (see write_generated_task_configs)
        self._task_configs_writes = asyncio.Lock()
        self.url = config.advertised_url()
        # the worker's own clients: top-level security settings (Kafka's rule), then producer./consumer.
        base: dict[str, Any] = {"bootstrap.servers": config.bootstrap_servers, **config.security_client_config()}
        producer = {**base, **config.client_props("producer.", security=False)}
        consumer = {**base, **config.client_props("consumer.", security=False)}
        self.config_store = KafkaConfigBackingStore(
            config.topics.config.name, {**producer, "client.id": config.client_id("configs")},
            {**consumer, "client.id": config.client_id("configs")}, listener=self,
            transactional_id=config.transactional_producer_id if config.transactional_leader_enabled else None)
        self.status_store = KafkaStatusBackingStore(
            config.topics.status.name, {**producer, "client.id": config.client_id("statuses")},
            {**consumer, "client.id": config.client_id("statuses")})
        offset_store = KafkaOffsetBackingStore(
            config.topics.offset.name, {**producer, "client.id": config.client_id("offsets")},
            {**consumer, "client.id": config.client_id("offsets")})
        self.worker = Worker(config.worker_id(), config, offset_store, self, plugins=self.plugins_registry)
        self.worker.on_reconfigure = self._request_reconfiguration
        self.worker.offsets_topic = config.topics.offset.name
        self.worker.connector_offsets_factory = self._connector_offset_store
        self.fencing = ZombieFencing(self.config_store, max(config.group.worker_sync_timeout_s, 30.0),
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
        ensure_topic(self.admin_config(), topic, c.topics.offset.partitions, c.topics.offset.replication_factor)
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

    # -- the distributed steps of AbstractHerder's operations -------------------------------------
    def _require_writer(self) -> None:
        self.require_leader()

    def _exclusive(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Nothing: the leader's config-topic write orders writes, and each worker acts on the
        record under its own lock (holding that lock here would wait out a rebalance)."""
        return contextlib.nullcontext()

    async def _write_connector_config(self, name: str, config: dict[str, str], initial_state: TargetState | None,
                                      before: ClusterConfigState) -> ConnectorInfo:
        await asyncio.to_thread(self.config_store.put_connector_config, name, config, initial_state)
        # as Kafka: the tasks known when the write was made (none for a new connector)
        return ConnectorInfo(name, config, before.task_ids(name), self.connector_type(config))

    async def _restart_connector_instance(self, name: str) -> None:
        self.require_owner(name)
        await self.restart_connector_instance(name)

    async def _restart_task_instance(self, task_id: ConnectorTaskId) -> None:
        self.require_owner(task_id)
        await self.restart_task_instance(task_id)

    async def _before_offsets_change(self, name: str, raw: dict[str, str]) -> None:
        """As Kafka: with exactly-once, a zombie task of the stopped connector must not write offsets after ours."""
        if self.exactly_once_source_enabled() and self.connector_type(raw) is ConnectorType.SOURCE:
            await self.fencing.fence(name)

    # -- leader writes ----------------------------------------------------------------------------
    async def _remove_connector(self, name: str) -> None:
        await asyncio.to_thread(self.config_store.remove_connector_config, name)

    async def stop_connector(self, name: str) -> None:
        """KIP-875: target state STOPPED and zero task configs, both written by the leader."""
        self.require_leader()
        if not self.config_store.snapshot().contains(name):
            raise NotFoundError(f"Unknown connector {name}")
        async with self._task_configs_writes:
            await asyncio.to_thread(self.config_store.put_task_configs, name, [])
            await asyncio.to_thread(self.config_store.put_target_state, name, TargetState.STOPPED)

    async def write_generated_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        """Leader: write the task configs a running connector generated, unless it was stopped meanwhile.

        A stop writes empty task configs, then the target state STOPPED. The connector, still running
        between the two, sees its tasks gone and generates them again; written after the stop, they
        would leave a STOPPED connector with tasks (CI saw one never reach "stopped, no tasks"). The
        stop's writes and these are serialized, and the store reads its own writes back, so a
        connector stopped before this write is seen here.

        The leader reads the config topic to its end first: a target state any worker wrote before
        the owner generated these configs is in the log, though maybe not yet in the leader's
        snapshot. A resume the owner has read (and reconfigured for) while the leader still saw
        STOPPED would otherwise drop the new generation, and nothing would publish it again (CI saw
        a resumed connector left with no tasks).
        """
        async with self._task_configs_writes:
            await asyncio.to_thread(self.config_store.read_to_end)
            snapshot = self.config_store.snapshot()
            if snapshot.contains(name) and snapshot.target_state(name) is TargetState.STOPPED:
                log.info("Not writing task configs of %s: it was stopped", name)
                return
            await asyncio.to_thread(self.config_store.put_task_configs, name, configs)

    # -- any worker -------------------------------------------------------------------------------
    async def _set_target(self, name: str, target: TargetState) -> None:
        if not self.config_store.snapshot().contains(name):
            raise NotFoundError(f"Unknown connector {name}")
        await asyncio.to_thread(self.config_store.put_target_state, name, target)
