"""StandaloneHerder: one worker, configs and statuses in memory, offsets in a local file.

Kafka's ``StandaloneHerder``. Every operation is serialised by one asyncio lock and runs the
blocking worker calls (plugin code, thread joins) in threads, so the event loop (and the REST
API on it) stays responsive. Target states: STARTED, PAUSED (connector instance stopped,
tasks paused) and STOPPED (connector stopped, zero tasks, KIP-875); statuses follow as the
worker reports them. Offsets can be read, altered and reset only while STOPPED.

The REST operations' checks and answers are :class:`AbstractHerder`'s, shared with the
distributed herder; this class supplies the standalone steps: a config write stops, stores
and restarts the connector in place, under the herder's lock (:meth:`_exclusive`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from seaway.connect.runtime.abstract_herder import AbstractHerder
from seaway.connect.runtime.backing_stores import ClusterConfigState, OffsetBackingStore
from seaway.connect.runtime.config import StandaloneConfig
from seaway.connect.runtime.config_providers import REDACTOR
from seaway.connect.runtime.connector_config import ConnectorConfig
from seaway.connect.runtime.herder import (
    ConnectorInfo,
    ConnectorStateInfo,
    ConnectorTaskId,
    HerderError,
    NotFoundError,
    State,
    TargetState,
)
from seaway.connect.runtime.offsets import FileOffsetBackingStore
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
        store = offset_store or FileOffsetBackingStore(config.standalone.offset_storage_file_filename)
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

    async def stop(self) -> None:
        self._ready = False
        for task in list(self._background):
            task.cancel()
        async with self._lock:
            for name in self.config_store.snapshot().connectors():
                await asyncio.to_thread(self._stop_all, name)
            await asyncio.to_thread(self.worker.stop)
        log.info("Herder stopped")

    # -- helpers (worker threads) ---------------------------------------------------------------
    def _stop_all(self, name: str) -> None:
        self.worker.stop_and_await_tasks(self.worker.task_ids(name))
        self.worker.stop_and_await_connector(name)

    def _start_connector(self, name: str, raw: dict[str, str]) -> None:
        """Start the connector instance in its target state, then its tasks (one parse of ``raw`` for all)."""
        target = self.config_store.snapshot().target_state(name)
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
        target = self.config_store.snapshot().target_state(name)
        if self.worker.connector_running(name):
            try:
                configs = self.worker.connector_task_configs(name)
            except Exception as e:
                log.error("Failed to generate task configs for %s", name, exc_info=e)
                self.on_connector_failure(name, e)
                return
            if configs != self.config_store.snapshot().task_configs(name):
                self.worker.stop_and_await_tasks(self.worker.task_ids(name))
                self.config_store.put_task_configs(name, configs)
                self.status_store.remove_tasks(name, keep=len(configs))
        running = set(self.worker.task_ids(name))
        to_start = [(ConnectorTaskId(name, index), task_config)
                    for index, task_config in enumerate(self.config_store.snapshot().task_configs(name))
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
    def _exclusive(self) -> asyncio.Lock:
        return self._lock

    async def _write_connector_config(self, name: str, config: dict[str, str], initial_state: TargetState | None,
                                      before: ClusterConfigState) -> ConnectorInfo:
        """Under the herder's lock: stop the old instance and tasks, store ``config``, start them again."""
        if before.contains(name):
            await asyncio.to_thread(self._stop_all, name)
        self.config_store.put_connector_config(name, config, initial_state)
        await asyncio.to_thread(self._start_connector, name, config)
        return await self.connector_info(name)

    async def _remove_connector(self, name: str) -> None:
        await asyncio.to_thread(self._stop_all, name)
        self.config_store.remove_connector_config(name)
        self.status_store.remove(name)
        log.info("Deleted connector %s", name)

    # -- target states ----------------------------------------------------------------------------
    async def _set_target(self, name: str, target: TargetState) -> None:
        async with self._lock:
            if not self.config_store.contains(name):
                raise NotFoundError(f"Unknown connector {name}")
            previous = self.config_store.snapshot().target_state(name)
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

    async def _restart_connector_instance(self, name: str) -> None:
        async with self._lock:
            await asyncio.to_thread(self._restart_connector_now, name)

    async def _restart_planned(self, name: str, include_tasks: bool, only_failed: bool) -> ConnectorStateInfo:
        """Mark what restarts RESTARTING, answer with those states, and restart in the background."""
        restart_connector, tasks = self.restart_plan(await self.connector_status(name), include_tasks, only_failed)
        if restart_connector:
            self._put(name, State.RESTARTING)
        for t in tasks:
            self._put_task(ConnectorTaskId(name, t.id), State.RESTARTING)
        planned = await self.connector_status(name)
        self._spawn(self._do_restart(name, restart_connector, [t.id for t in tasks]))
        return planned

    def _restart_connector_now(self, name: str) -> None:
        self.worker.stop_and_await_connector(name)
        self._start_connector_instance(name, self._raw(name), self.config_store.snapshot().target_state(name))

    async def _do_restart(self, name: str, connector: bool, tasks: list[int]) -> None:
        async with self._lock:
            if not self.config_store.contains(name):
                return
            ids = [ConnectorTaskId(name, t) for t in tasks]
            await asyncio.to_thread(self.worker.stop_and_await_tasks, ids)
            if connector:
                await asyncio.to_thread(self._restart_connector_now, name)
            await asyncio.to_thread(self._update_tasks, name)

    async def _restart_task_instance(self, task_id: ConnectorTaskId) -> None:
        async with self._lock:
            snapshot = self.config_store.snapshot()
            raw = snapshot.connector_config(task_id.connector)
            task_config = snapshot.task_config(task_id)
            if raw is None or task_config is None or task_id not in snapshot.task_ids(task_id.connector):
                raise NotFoundError(f"Unknown task: {task_id}")
            target = snapshot.target_state(task_id.connector)
            await asyncio.to_thread(self.worker.stop_and_await_tasks, [task_id])
            if not await asyncio.to_thread(self._start_task, task_id, raw, task_config, target):
                raise HerderError(f"Failed to start task: {task_id}", status=500)
