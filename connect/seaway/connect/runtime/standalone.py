"""StandaloneHerder: one worker, configs and statuses in memory, offsets in a local file.

Kafka's ``StandaloneHerder``. Every operation is serialised by one asyncio lock and runs the
blocking worker calls (plugin code, thread joins) in threads, so the event loop (and the REST
API on it) stays responsive. Target states: STARTED, PAUSED (connector instance stopped,
tasks paused) and STOPPED (connector stopped, zero tasks, KIP-875); statuses follow as the
worker reports them. Offsets can be read, altered and reset only while STOPPED.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from confluent_kafka.admin import AdminClient
from seaway.connect.runtime.abstract_herder import AbstractHerder, invalid_config_message, loggable_config
from seaway.connect.runtime.config import StandaloneConfig, connector_config_def
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.connector_config import ConnectorConfig
from seaway.connect.runtime.herder import (
    AlreadyExistsError,
    BadRequestError,
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorStateInfo,
    ConnectorTaskId,
    Created,
    HerderError,
    NotFoundError,
    State,
    TargetState,
    TaskInfo,
    check_new_connector_name,
)
from seaway.connect.runtime.offsets import FileOffsetBackingStore, OffsetBackingStore
from seaway.connect.runtime.offsets_admin import OffsetsAdmin
from seaway.connect.runtime.plugins import Plugins
from seaway.connect.runtime.stores import MemoryConfigBackingStore, MemoryStatusBackingStore
from seaway.connect.runtime.worker import Worker

__all__ = ["StandaloneHerder"]

log = logging.getLogger(__name__)
log.addFilter(REDACTOR)


class StandaloneHerder(AbstractHerder):
    """The herder of ``seaway connect standalone``."""

    def __init__(self, config: StandaloneConfig, *, plugins: Plugins | None = None,
                 offset_store: OffsetBackingStore | None = None, worker_id: str | None = None) -> None:
        self.worker_config = config
        self.plugins_registry = plugins or config.plugins
        self.config_store = MemoryConfigBackingStore()
        self.status_store = MemoryStatusBackingStore()
        store = offset_store or FileOffsetBackingStore(str(config.get("offset.storage.file.filename")))
        self.worker = Worker(worker_id or config.worker_id(), config, store, self, plugins=self.plugins_registry)
        self.worker.on_reconfigure = self._request_reconfiguration
        self.offsets_admin = OffsetsAdmin(self)
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._cluster_id = ""
        self._ready = False

    # -- lifecycle ------------------------------------------------------------------------------
    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        await asyncio.to_thread(self.worker.start)
        self._cluster_id = await asyncio.to_thread(self._lookup_cluster_id)
        self._ready = True
        log.info("Herder started (worker %s, Kafka cluster %s)", self.worker_id, self._cluster_id)

    def _lookup_cluster_id(self) -> str:
        admin = AdminClient(self.worker_config.admin_client_config())
        return str(admin.list_topics(timeout=30).cluster_id or "")

    async def stop(self) -> None:
        self._ready = False
        for task in list(self._background):
            task.cancel()
        async with self._lock:
            for name in self.config_store.connectors():
                await asyncio.to_thread(self._stop_all, name)
            await asyncio.to_thread(self.worker.stop)
        log.info("Herder stopped")

    # -- helpers (worker threads) ---------------------------------------------------------------
    def _raw(self, name: str) -> dict[str, str]:
        config = self.config_store.connector_config(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return config

    def _stop_all(self, name: str) -> None:
        self.worker.stop_and_await_tasks(self.worker.task_ids(name))
        self.worker.stop_and_await_connector(name)

    def _start_connector(self, name: str, raw: dict[str, str]) -> None:
        """Start the connector instance in its target state, then its tasks (one parse of ``raw`` for all)."""
        target = self.config_store.target_state(name) or TargetState.STARTED
        config = self._start_connector_instance(name, raw, target)
        if target is TargetState.STOPPED:
            self.config_store.put_task_configs(name, [])
            self.status_store.remove_tasks(name)
        self._update_tasks(name, config)

    def _start_connector_instance(self, name: str, raw: dict[str, str], target: TargetState
                                  ) -> ConnectorConfig | None:
        config = self.parsed(name, raw, lambda e: self.worker.connector_start_failed(name, e))
        if config is not None:
            self.worker.start_connector(config, target)
        return config

    def _update_tasks(self, name: str, config: ConnectorConfig | None = None) -> None:
        """Regenerate task configs if the connector runs; restart tasks when they changed.

        ``config`` is the connector's parsed config when the caller has just parsed it; else
        the stored one is parsed, once, if any task is to start.
        """
        target = self.config_store.target_state(name) or TargetState.STARTED
        if self.worker.connector_running(name):
            try:
                configs = self.worker.connector_task_configs(name)
            except Exception as e:
                log.error("Failed to generate task configs for %s", name, exc_info=e)
                self.on_connector_failure(name, e)
                return
            if configs != self.config_store.task_configs(name):
                self.worker.stop_and_await_tasks(self.worker.task_ids(name))
                self.config_store.put_task_configs(name, configs)
                self.status_store.remove_tasks(name, keep=len(configs))
        running = set(self.worker.task_ids(name))
        to_start = [(ConnectorTaskId(name, index), task_config)
                    for index, task_config in enumerate(self.config_store.task_configs(name))
                    if ConnectorTaskId(name, index) not in running]
        if not to_start:
            return
        if config is None:
            config = self.parsed(name, self._raw(name), lambda e: self._tasks_failed([t for t, _ in to_start], e))
            if config is None:
                return
        for task_id, task_config in to_start:
            self.worker.start_task(task_id, config, task_config, target)

    def _start_task(self, task_id: ConnectorTaskId, raw: dict[str, str], task_config: dict[str, str],
                    target: TargetState) -> bool:
        config = self.parsed(task_id.connector, raw, lambda e: self.worker.task_start_failed(task_id, e))
        return config is not None and self.worker.start_task(task_id, config, task_config, target)

    def _tasks_failed(self, task_ids: list[ConnectorTaskId], error: BaseException) -> None:
        for task_id in task_ids:
            self.worker.task_start_failed(task_id, error)  # each a startup attempt and failure, as in Kafka

    def _request_reconfiguration(self, name: str) -> None:
        """``ConnectorContext.request_task_reconfiguration`` from any thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(self._spawn, self._reconfigure(name))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _reconfigure(self, name: str) -> None:
        async with self._lock:
            if self.config_store.contains(name):
                await asyncio.to_thread(self._update_tasks, name)

    # -- connectors -------------------------------------------------------------------------------
    async def connectors(self) -> list[str]:
        return self.config_store.connectors()

    async def connector_info(self, name: str) -> ConnectorInfo:
        raw = self._raw(name)
        return ConnectorInfo(name, raw, self.config_store.task_ids(name), self.connector_type(raw))

    async def put_connector_config(self, name: str, config: dict[str, str], *, allow_replace: bool,
                                   initial_state: TargetState | None = None) -> Created:
        config = {**config, "name": config.get("name", name)}
        infos = await self.validate_connector_config(config)
        if infos.error_count:
            raise BadRequestError(invalid_config_message(infos))
        async with self._lock:
            exists = self.config_store.contains(name)
            if exists and not allow_replace:
                raise AlreadyExistsError(f"Connector {name} already exists")
            if not exists:
                check_new_connector_name(name)
            log.info("%s connector %s with config %s", "Updating" if exists else "Creating", name,
                     loggable_config(config, connector_config_def(self.plugins_registry), self.plugins_registry))
            if exists:
                await asyncio.to_thread(self._stop_all, name)
            self.config_store.put_connector_config(name, config, None if exists else initial_state)
            await asyncio.to_thread(self._start_connector, name, config)
            return Created(not exists, await self.connector_info(name))

    async def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        merged = self._raw(name)
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return (await self.put_connector_config(name, merged, allow_replace=True)).info

    async def delete_connector(self, name: str) -> None:
        async with self._lock:
            self._raw(name)
            await asyncio.to_thread(self._stop_all, name)
            self.config_store.remove_connector_config(name)
            self.status_store.remove(name)
            log.info("Deleted connector %s", name)

    async def task_configs(self, name: str) -> list[TaskInfo]:
        self._raw(name)
        return [TaskInfo(ConnectorTaskId(name, i), c) for i, c in enumerate(self.config_store.task_configs(name))]

    async def connector_status(self, name: str) -> ConnectorStateInfo:
        status = self.status_store.get(name)
        raw = self.config_store.connector_config(name)
        if status is None or raw is None:
            raise NotFoundError(f"No status found for connector {name}")
        return ConnectorStateInfo(name, status, self.status_store.get_all(name), self.connector_type(raw))

    # -- target states ----------------------------------------------------------------------------
    async def _set_target(self, name: str, target: TargetState) -> None:
        async with self._lock:
            if not self.config_store.contains(name):
                raise NotFoundError(f"Unknown connector {name}")
            previous = self.config_store.target_state(name)
            self.config_store.put_target_state(name, target)
            if target is TargetState.STOPPED:
                await asyncio.to_thread(self.worker.stop_and_await_tasks, self.worker.task_ids(name))
                self.config_store.put_task_configs(name, [])
                self.status_store.remove_tasks(name)
            await asyncio.to_thread(self.worker.set_target_state, name, target)
            if target is not TargetState.STOPPED and (previous is TargetState.STOPPED or
                                                      not self.worker.task_ids(name)):
                await asyncio.to_thread(self._update_tasks, name)

    async def stop_connector(self, name: str) -> None:
        await self._set_target(name, TargetState.STOPPED)

    async def restart_connector(self, name: str, *, include_tasks: bool = False, only_failed: bool = False
                                ) -> ConnectorStateInfo | None:
        if not self.config_store.contains(name):
            raise NotFoundError(f"Unknown connector: {name}")
        if not include_tasks and not only_failed:
            async with self._lock:
                await asyncio.to_thread(self._restart_connector_instance, name)
            return None
        current = self.status_store.get(name)
        if current is None:
            raise NotFoundError(f"Status for connector {name} not found")
        restart_connector = not only_failed or current.state is State.FAILED
        tasks = [t for t in self.status_store.get_all(name)
                 if include_tasks and (not only_failed or t.state is State.FAILED)]
        if restart_connector:
            self._put(name, State.RESTARTING)
        for t in tasks:
            self._put_task(ConnectorTaskId(name, t.id), State.RESTARTING)
        planned = await self.connector_status(name)
        self._spawn(self._do_restart(name, restart_connector, [t.id for t in tasks]))
        return planned

    def _restart_connector_instance(self, name: str) -> None:
        self.worker.stop_and_await_connector(name)
        self._start_connector_instance(name, self._raw(name),
                                       self.config_store.target_state(name) or TargetState.STARTED)

    async def _do_restart(self, name: str, connector: bool, tasks: list[int]) -> None:
        async with self._lock:
            if not self.config_store.contains(name):
                return
            ids = [ConnectorTaskId(name, t) for t in tasks]
            await asyncio.to_thread(self.worker.stop_and_await_tasks, ids)
            if connector:
                await asyncio.to_thread(self._restart_connector_instance, name)
            await asyncio.to_thread(self._update_tasks, name)

    async def restart_task(self, name: str, task: int) -> None:
        task_id = ConnectorTaskId(name, task)
        async with self._lock:
            raw = self.config_store.connector_config(name)
            configs = self.config_store.task_configs(name)
            if raw is None or task >= len(configs) or task < 0:
                raise NotFoundError(f"Unknown task: {task_id}")
            target = self.config_store.target_state(name) or TargetState.STARTED
            await asyncio.to_thread(self.worker.stop_and_await_tasks, [task_id])
            if not await asyncio.to_thread(self._start_task, task_id, raw, configs[task], target):
                raise HerderError(f"Failed to start task: {task_id}", status=500)

    # -- topics and offsets -----------------------------------------------------------------------
    def _require_stopped(self, name: str) -> dict[str, str]:
        raw = self._raw(name)
        if self.config_store.target_state(name) is not TargetState.STOPPED or self.config_store.task_configs(name):
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. This can be done "
                f"for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint")
        return raw

    async def alter_connector_offsets(self, name: str, offsets: ConnectorOffsets) -> str:
        async with self._lock:
            raw = self._require_stopped(name)
            if not offsets.offsets:
                raise BadRequestError("Partitions / offsets need to be provided for an alter offsets request")
            return await asyncio.to_thread(self.offsets_admin.alter, name, raw, offsets.offsets, reset=False)

    async def reset_connector_offsets(self, name: str) -> str:
        async with self._lock:
            raw = self._require_stopped(name)
            return await asyncio.to_thread(self.offsets_admin.alter, name, raw, None, reset=True)
