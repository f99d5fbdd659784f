"""DistributedHerder: a worker in a Connect cluster (Kafka's ``DistributedHerder``).

State lives in the three compacted topics, so every worker can answer reads; the group
leader is the only writer of connector configs, task configs, restart requests, offsets
changes and the session key. A write reaching a follower raises
:class:`~seaway.connect.runtime.herder.NotLeaderError` with the leader's URL and the REST
layer forwards it (at most two hops; no known leader is a 409). Restarting a connector or
task must happen on the worker that runs it: a follower forwards to the leader, which knows
every owner and forwards once more. Pause and resume may be written by any worker.

Work follows the group assignment (see ``membership.py``/``assignor.py``): revoked items are
stopped first (then the worker rejoins, so the second round can hand them out), new ones
started. The worker running a Connector generates its task configs; the leader writes them,
a follower POSTs them to the leader's internal endpoint, signed with the session key.

Every state change runs under one asyncio lock ("the tick"), with blocking worker calls in
threads, so the event loop and the REST API stay responsive. Graceful shutdown stops every
task (committing offsets) within ``task.shutdown.graceful.timeout.ms``, then leaves the group.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import quote

import httpx
from seaway.connect.api import ConnectError
from seaway.connect.runtime.backing_stores import SessionKey
from seaway.connect.runtime.connector_config import ConnectorConfig
from seaway.connect.runtime.distributed.config import DistributedConfig
from seaway.connect.runtime.distributed.connect_protocol import ExtendedAssignment
from seaway.connect.runtime.distributed.herder_base import DistributedHerderBase
from seaway.connect.runtime.distributed.kafka_log import InternalTopicError, ensure_topic
from seaway.connect.runtime.distributed.kafka_stores import RestartRequest, dumps
from seaway.connect.runtime.distributed.signing import generate_key, signature_headers, verify
from seaway.connect.runtime.exactly_once_commits import ExactlyOnceSetup
from seaway.connect.runtime.herder import (
    BadRequestError,
    ConnectorStateInfo,
    ConnectorTaskId,
    ConnectorType,
    HerderError,
    NotFoundError,
    NotLeaderError,
    State,
    TargetState,
)
from seaway.connect.runtime.plugins import Plugins

__all__ = ["DistributedHerder"]

log = logging.getLogger(__name__)

FENCING_RETRY_S = 60.0
"""How long a follower keeps asking the leader to fence (through rebalances) before its task fails."""
DEFAULT_FORWARD_TIMEOUT_S = 90.0
"""Kafka's REST request timeout, for the ``/fence`` call to the leader."""


class DistributedHerder(DistributedHerderBase):
    """The herder of ``seaway connect distributed``."""

    def __init__(self, config: DistributedConfig, *, plugins: Plugins | None = None) -> None:
        super().__init__(config, plugins=plugins)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = asyncio.Lock()
        self._background: set[asyncio.Task[Any]] = set()
        self._known: set[str] = set()
        self._running_connectors: set[str] = set()
        self._running_tasks: set[ConnectorTaskId] = set()
        # what each running task was started with: (connector config, task config, task generation)
        self._started_with: dict[ConnectorTaskId, tuple[dict[str, str], dict[str, str], int | None]] = {}
        # the config topic offset each running connector was started from (its config included)
        self._connector_started_at: dict[str, int] = {}
        self._stopping = False
        self._key_timer: asyncio.TimerHandle | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        await asyncio.to_thread(self._create_topics)
        await asyncio.to_thread(self.config_store.start)
        await asyncio.to_thread(self.status_store.start)
        await asyncio.to_thread(self.worker.start)  # starts the offset store
        self._known = set(self.config_store.snapshot().connectors())
        self._cluster_id = await asyncio.to_thread(self._lookup_cluster_id)
        self.membership.start()
        self._ready = True
        log.info("Distributed herder started (worker %s, group %s)", self.worker_id, self.worker_config.group_id)

    def _create_topics(self) -> None:
        topics = self.worker_config.topics
        admin = self.admin_config()
        ensure_topic(admin, topics.config.name, topics.config.partitions, topics.config.replication_factor,
                     single_partition=True)
        for topic in (topics.offset, topics.status):
            ensure_topic(admin, topic.name, topic.partitions, topic.replication_factor)

    async def stop(self) -> None:
        """Stop tasks (they commit offsets) and connectors, then leave the group and close the stores."""
        self._ready = False
        self._stopping = True
        if self._key_timer is not None:
            self._key_timer.cancel()
        for task in list(self._background):
            task.cancel()
        async with self._lock:
            await asyncio.to_thread(self.worker.stop)
            self._running_connectors.clear()
            self._running_tasks.clear()
            self._started_with.clear()
            self._connector_started_at.clear()
        await self.membership.stop()
        await asyncio.to_thread(self.status_store.stop)
        await asyncio.to_thread(self.config_store.stop)
        log.info("Distributed herder stopped")

    # -- background work --------------------------------------------------------------------------
    def _spawn(self, factory: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``factory()`` as a task on our loop (callable from any thread)."""
        loop = self._loop
        if loop is None or loop.is_closed() or self._stopping:
            return

        def create() -> None:
            task = loop.create_task(self._guarded(factory))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

        try:
            if asyncio.get_running_loop() is loop:
                create()
                return
        except RuntimeError:
            pass
        loop.call_soon_threadsafe(create)

    async def _guarded(self, factory: Callable[[], Coroutine[Any, Any, None]]) -> None:
        try:
            await factory()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("Herder background operation failed")

    # -- AssignmentListener (membership task) -----------------------------------------------------
    def on_assignment(self, assignment: ExtendedAssignment, generation: int) -> None:
        self._spawn(lambda: self._apply_assignment(assignment, generation))

    def on_revoke_all(self, reason: str) -> None:
        log.info("Revoking all work (%s)", reason)
        self._spawn(self._revoke_all)

    async def _revoke_all(self) -> None:
        async with self._lock:
            await self._stop_work(set(self._running_connectors), set(self._running_tasks))

    async def _stop_work(self, connectors: set[str], tasks: set[ConnectorTaskId]) -> None:
        tasks &= self._running_tasks
        connectors &= self._running_connectors
        if tasks:
            await asyncio.to_thread(self.worker.stop_and_await_tasks, sorted(tasks))
            self._running_tasks -= tasks
            for task_id in tasks:
                self._started_with.pop(task_id, None)
        for name in sorted(connectors):
            await asyncio.to_thread(self.worker.stop_and_await_connector, name)
            self._running_connectors.discard(name)
            self._connector_started_at.pop(name, None)

    async def _apply_assignment(self, a: ExtendedAssignment, generation: int) -> None:
        async with self._lock:
            self.status_store.generation = generation
            if a.failed:
                log.info("Assignment failed (leader behind the config topic); reading it and rejoining")
                await asyncio.to_thread(self.config_store.read_to_end)
                self.membership.request_rejoin("config mismatch")
                return
            if self.config_store.offset < a.config_offset:
                try:
                    await asyncio.to_thread(self.config_store.read_to_end,
                                            self.worker_config.group.worker_sync_timeout_s)
                except InternalTopicError as e:
                    log.warning("Could not catch up on the config topic (%s); rejoining", e)
                    self.membership.request_rejoin("config topic not read")
                    return
            if self.membership.is_leader:  # before any task of ours asks the leader (us) to fence and write
                await asyncio.to_thread(self.config_store.claim_write_privileges)
            revoked = bool(a.revoked_connectors or a.revoked_tasks)
            await self._stop_work(set(a.revoked_connectors), set(a.revoked_tasks))
            if revoked:
                self.membership.request_rejoin("revoked work")
            snapshot = self.config_store.snapshot()
            for name in a.connectors:
                if name not in self._running_connectors and snapshot.contains(name):
                    await self._start_connector(name)
            for task_id in sorted(self.membership.tasks - self._running_tasks):
                await self._start_task(task_id)
            for name in sorted(self.membership.connectors - self._running_connectors):
                if snapshot.contains(name):
                    await self._start_connector(name)
            for name in sorted(self._running_connectors):  # owners retry publications that did not land
                never_published = name not in snapshot.task_counts or name in snapshot.inconsistent
                if never_published and snapshot.target_state(name) is TargetState.STARTED:
                    await self._reconfigure(name)
            if self.membership.is_leader:
                await self._leader_duties()
            else:
                self.config_store.relinquish_write_privileges()
            self.membership.rebalance.succeeded()  # work started: Kafka's rebalanceSucceeded

    async def _leader_duties(self) -> None:
        # KIP-618's transactional leader: fence any earlier leader before writing (no-op without it)
        await asyncio.to_thread(self.config_store.claim_write_privileges)
        snapshot = self.config_store.snapshot()
        if self.membership.sessioned:
            key = snapshot.session_key
            inter_worker = self.worker_config.group.inter_worker
            ttl = inter_worker.key_ttl_ms
            algorithm = inter_worker.key_generation_algorithm
            if key is None or key.algorithm != algorithm or key.creation_timestamp + ttl <= time.time() * 1000:
                size = inter_worker.key_size
                key = generate_key(algorithm, size)
                await asyncio.to_thread(self.config_store.put_session_key, key)
            self._schedule_key_rotation((key.creation_timestamp + ttl) / 1000 - time.time())
        for name in self.status_store.connectors():
            if not snapshot.contains(name):
                self.status_store.remove(name)
            elif name not in snapshot.inconsistent:
                self.status_store.remove_tasks(name, keep=len(snapshot.task_ids(name)))

    def _schedule_key_rotation(self, seconds: float) -> None:
        """The leader rotates the session key when it expires, not only at the next rebalance."""
        if self._key_timer is not None:
            self._key_timer.cancel()
        loop = asyncio.get_running_loop()
        self._key_timer = loop.call_later(max(seconds, 1.0), self._spawn, self._rotate_key)

    async def _rotate_key(self) -> None:
        async with self._lock:
            if self.membership.is_leader and not self._stopping:
                await self._leader_duties()

    async def _start_connector(self, name: str) -> None:
        snapshot = self.config_store.snapshot()
        raw = snapshot.connector_config(name)
        if raw is None or name in self._running_connectors:
            return
        target = snapshot.target_state(name)
        self._running_connectors.add(name)
        self._connector_started_at[name] = snapshot.offset
        await asyncio.to_thread(self._start_connector_instance, name, raw, target)
        if target is TargetState.STARTED:
            await self._reconfigure(name)

    def _start_connector_instance(self, name: str, raw: dict[str, str], target: TargetState) -> None:
        """Parse the stored config once and start the connector with it (worker thread)."""
        config = self.parsed(name, raw, lambda e: self.worker.connector_start_failed(name, e))
        if config is not None:
            self.worker.start_connector(config, target)

    async def _start_task(self, task_id: ConnectorTaskId) -> None:
        snapshot = self.config_store.snapshot()
        raw, task_config = snapshot.connector_config(task_id.connector), snapshot.task_config(task_id)
        if raw is None or task_config is None or task_id in self._running_tasks:
            return
        self._running_tasks.add(task_id)
        generation = snapshot.task_config_generation(task_id.connector)
        self._started_with[task_id] = (raw, task_config, generation)
        await asyncio.to_thread(self._start_task_instance, task_id, raw, task_config,
                                snapshot.target_state(task_id.connector), generation)

    def _start_task_instance(self, task_id: ConnectorTaskId, raw: dict[str, str], task_config: dict[str, str],
                             target: TargetState, generation: int | None = None) -> None:
        """Parse the stored connector config once and start the task with it (worker thread)."""
        config = self.parsed(task_id.connector, raw, lambda e: self.worker.task_start_failed(task_id, e))
        if config is not None:
            self.worker.start_task(task_id, config, task_config, target,
                                   self._exactly_once_setup(task_id, config, generation))

    # -- exactly-once source tasks (KIP-618) --------------------------------------------------------
    def _exactly_once_setup(self, task_id: ConnectorTaskId, config: ConnectorConfig, generation: int | None
                            ) -> ExactlyOnceSetup | None:
        """What an exactly-once source task needs from the herder; None for sinks or without exactly-once."""
        if config.is_sink or not self.worker_config.exactly_once_source_enabled:
            return None
        return ExactlyOnceSetup(
            transactional_id=self.worker_config.task_transactional_id(task_id.connector, task_id.task),
            offsets_topic=self.worker.offsets_topic_of(config) or "",
            preflight=lambda: self._from_task_thread(self._preflight_fencing(task_id.connector),
                                                     f"zombie fencing before starting {task_id}"),
            verify=lambda: self._from_task_thread(self._verify_task(task_id, generation),
                                                  f"the preflight check of {task_id}"))

    def _from_task_thread(self, coro: Coroutine[Any, Any, None], what: str) -> None:
        """Run ``coro`` on the herder's loop and wait (a task thread's blocking call); fail if the worker stops."""
        loop = self._loop
        if loop is None or self._stopping:
            coro.close()
            raise ConnectError(f"The worker is stopping; cannot perform {what}")
        future = asyncio.run_coroutine_threadsafe(coro, loop)
        while True:
            try:
                future.result(0.5)
                return
            except concurrent.futures.TimeoutError:
                if self._stopping:
                    future.cancel()
                    raise ConnectError(f"The worker is stopping; gave up {what}") from None
            except HerderError as e:
                raise ConnectError(f"Failed to perform {what}: {e}") from e

    async def _preflight_fencing(self, name: str) -> None:
        """Fence older generations of ``name``'s tasks: here if leader, else through the leader's ``/fence``."""
        deadline = time.monotonic() + FENCING_RETRY_S
        while True:
            if self.membership.is_leader:
                await self.fencing.fence(name)
                return
            leader = self.membership.leader_url
            reason = "no leader is known (a rebalance is under way)"
            if leader is not None:
                url = f"{leader.rstrip('/')}/connectors/{quote(name, safe='')}/fence?forward=false"
                headers: dict[str, str] = {}
                key = self.config_store.snapshot().session_key
                if self.membership.sessioned and key is not None:
                    headers.update(signature_headers(
                        key, self.worker_config.group.inter_worker.signature_algorithm, b""))
                try:
                    verify = self.rest_verify(url)
                    async with httpx.AsyncClient(timeout=DEFAULT_FORWARD_TIMEOUT_S, verify=verify) as client:
                        reply = await client.put(url, content=b"", headers=headers)
                except httpx.HTTPError as e:
                    reply, reason = None, f"the leader at {leader} could not be reached: {e}"
                if reply is not None:
                    if reply.status_code < 300:
                        return
                    reason = f"the leader at {leader} answered {reply.status_code} {reply.text}"
                    if reply.status_code not in (409, 503) and reply.status_code < 500:
                        raise HerderError(reason, status=reply.status_code)
            if time.monotonic() >= deadline or self._stopping:
                raise HerderError(f"Zombie fencing of {name} failed: {reason}")
            log.info("Zombie fencing of %s not done yet (%s); retrying", name, reason)
            await asyncio.sleep(1.0)

    async def _verify_task(self, task_id: ConnectorTaskId, generation: int | None) -> None:
        """After ``init_transactions``: the task's configs and assignment must still be current (Kafka's
        ``verifyTaskGenerationAndOwnership``), else this instance could fence the newer one."""
        await asyncio.to_thread(self.config_store.read_to_end, max(self.worker_config.group.worker_sync_timeout_s,
                                                                   30.0))
        if self.config_store.snapshot().task_config_generation(task_id.connector) != generation:
            raise HerderError(f"Cannot start source task {task_id} with exactly-once support as the connector has "
                              "already generated a new set of task configs")
        if task_id not in self.membership.tasks:
            raise HerderError(f"Cannot start source task {task_id} as it has already been revoked from this worker")

    async def fence_zombies(self, name: str, body: bytes, signature: str | None, algorithm: str | None) -> None:
        """``PUT /connectors/{c}/fence`` (internal): the leader fences ``name``'s older task generations."""
        if self.membership.sessioned:
            verify(self.config_store.snapshot().session_key,
                   list(self.worker_config.group.inter_worker.verification_algorithms),
                   body, signature, algorithm)
        if not self.membership.is_leader:
            raise NotLeaderError("Only the leader may perform zombie fencing.", self.membership.leader_url)
        raw = self.config_store.snapshot().connector_config(name)
        if raw is None:
            raise NotFoundError(f"Connector {name} not found")
        if self.connector_type(raw) is not ConnectorType.SOURCE:
            raise BadRequestError(f"Connector {name} is not a source connector")
        await self.fencing.fence(name)

    def _spawn_reconfigure(self, name: str) -> None:
        self._spawn(lambda: self._locked_reconfigure(name))

    async def _locked_reconfigure(self, name: str) -> None:
        async with self._lock:
            await self._reconfigure(name)

    async def _reconfigure(self, name: str) -> None:
        """Connector owner: regenerate task configs (from the config the connector runs with) and publish them
        if they changed."""
        snapshot = self.config_store.snapshot()
        if not (snapshot.contains(name) and name in self._running_connectors and self.worker.connector_running(name)):
            return
        try:
            configs = await asyncio.to_thread(self.worker.connector_task_configs, name)
        except Exception as e:
            log.error("Failed to generate task configs for %s", name, exc_info=e)
            self.on_connector_failure(name, e)
            return
        if (configs == snapshot.task_configs(name) and name not in snapshot.inconsistent
                and snapshot.applied_connector_config(name) == snapshot.connector_config(name)):
            return
        if configs == snapshot.task_configs(name) and name not in snapshot.inconsistent:
            log.info("Forcing a task restart of %s: its connector config changed", name)
        await self._publish_task_configs(name, configs)

    async def _publish_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        if self.membership.is_leader:
            await self.write_generated_task_configs(name, configs)
            return
        leader = self.membership.leader_url
        if leader is None:
            log.info("No leader known to publish task configs of %s to; retrying after the next rebalance", name)
            return
        body = dumps(configs)
        headers = {"Content-Type": "application/json"}
        key = self.config_store.snapshot().session_key
        if self.membership.sessioned and key is not None:
            headers.update(signature_headers(key, self.worker_config.group.inter_worker.signature_algorithm,
                                             body))
        url = f"{leader.rstrip('/')}/connectors/{name}/tasks?forward=true"
        try:
            async with httpx.AsyncClient(timeout=30, verify=self.rest_verify(url)) as client:
                reply = await client.post(url, content=body, headers=headers)
            if reply.status_code < 400:
                return
            log.warning("Leader refused task configs of %s: %s %s", name, reply.status_code, reply.text)
        except httpx.HTTPError as e:
            log.warning("Could not publish task configs of %s to the leader at %s: %s", name, leader, e)
        asyncio.get_running_loop().call_later(1.0, self._spawn_reconfigure, name)  # retry, as Kafka does

    # -- internal endpoint ------------------------------------------------------------------------
    async def put_task_configs(self, name: str, body: bytes, configs: list[dict[str, str]],
                               signature: str | None, algorithm: str | None) -> None:
        """``POST /connectors/{c}/tasks`` (internal): the leader writes task configs a follower generated."""
        if self.membership.sessioned:
            verify(self.config_store.snapshot().session_key,
                   list(self.worker_config.group.inter_worker.verification_algorithms),
                   body, signature, algorithm)
        if not self.membership.is_leader:
            raise HerderError("Cannot complete request because of a conflicting operation (e.g. worker rebalance)",
                              status=409)
        if not self.config_store.snapshot().contains(name):
            raise NotFoundError(f"Connector {name} not found")
        await self.write_generated_task_configs(name, configs)

    # -- ConfigUpdateListener (log thread) --------------------------------------------------------
    def on_connector_config_update(self, connector: str, removed: bool) -> None:
        read_up_to = self.config_store.offset  # the record is before this offset (we are on the log's thread)
        self._spawn(lambda: self._connector_changed(connector, removed, read_up_to))

    def on_task_config_update(self, connector: str) -> None:
        self._spawn(lambda: self._tasks_changed(connector))

    def on_target_state_change(self, connector: str) -> None:
        self._spawn(lambda: self._target_changed(connector))

    def on_restart_request(self, request: RestartRequest) -> None:
        self._spawn(lambda: self._restart(request))

    def on_session_key_update(self, key: SessionKey) -> None:
        log.info("Session key updated (%s, created %d)", key.algorithm, key.creation_timestamp)

    async def _connector_changed(self, name: str, removed: bool, read_up_to: int) -> None:
        """A connector config record was read (the config topic was at ``read_up_to`` just after).

        The connector restarts with it, unless it started from a snapshot that already held it:
        a worker assigned a new connector often starts it before this notice of its first
        config comes through, and a second start was counted as a second startup attempt (in
        CI, a failing connector failed twice). Kafka's herder handles both in one thread, in
        order. A PUT of an unchanged config still restarts the connector, as in Kafka.
        """
        async with self._lock:
            new = name not in self._known
            if removed:
                self._known.discard(name)
                await self._stop_work({name}, {t for t in self._running_tasks if t.connector == name})
            else:
                self._known.add(name)
                if name in self._running_connectors and self._connector_started_at.get(name, -1) < read_up_to:
                    await self._stop_work({name}, set())
                    await self._start_connector(name)
            if (removed or new) and self.membership.is_leader:
                self.membership.request_rejoin(f"connector {name} {'removed' if removed else 'added'}")

    def _runs_current_config(self, task_id: ConnectorTaskId) -> bool:
        """True if ``task_id`` runs with the connector config, task config and generation stored now.

        A task started from an assignment has often already read the task configs whose
        update notice arrives just after; restarting it then would only cost its consumer a
        rejoin (or its transactional producer a fencing) for nothing.
        """
        snapshot = self.config_store.snapshot()
        if task_id not in snapshot.task_ids(task_id.connector):
            return False
        current = (snapshot.connector_config(task_id.connector), snapshot.task_config(task_id),
                   snapshot.task_config_generation(task_id.connector))
        return self._started_with.get(task_id) == current

    async def _tasks_changed(self, name: str) -> None:
        async with self._lock:
            mine = {t for t in self._running_tasks if t.connector == name and not self._runs_current_config(t)}
            if mine:
                await self._stop_work(set(), mine)
                for task_id in sorted(mine & self.membership.tasks):
                    if task_id in self.config_store.snapshot().task_ids(name):
                        await self._start_task(task_id)
            if self.membership.is_leader:
                self.membership.request_rejoin(f"task configs of {name} changed")

    async def _target_changed(self, name: str) -> None:
        async with self._lock:
            snapshot = self.config_store.snapshot()
            if not snapshot.contains(name):
                return
            target = snapshot.target_state(name)
            mine = {t for t in self._running_tasks if t.connector == name}
            if target is TargetState.STOPPED and mine:
                await self._stop_work(set(), mine)
            if name in self._running_connectors or mine:
                await asyncio.to_thread(self.worker.set_target_state, name, target)
            if target is TargetState.STARTED and name in self._running_connectors:
                await self._reconfigure(name)

    async def _restart(self, request: RestartRequest) -> None:
        async with self._lock:
            name = request.connector
            if not self.config_store.snapshot().contains(name):
                return
            status = self.status_store.get(name)
            restart_connector = name in self._running_connectors and (
                not request.only_failed or (status is not None and status.state is State.FAILED))
            tasks = {t for t in self._running_tasks if t.connector == name and request.include_tasks}
            if request.only_failed:
                tasks = {t for t in tasks if (s := self.status_store.get_task(t)) is not None
                         and s.state is State.FAILED}
            if restart_connector:
                self._put(name, State.RESTARTING)
            for t in tasks:
                self._put_task(t, State.RESTARTING)
            await self._stop_work({name} if restart_connector else set(), tasks)
            for t in sorted(tasks):
                await self._start_task(t)
            if restart_connector:
                await self._start_connector(name)

    # -- status listener: deleted connectors and tasks leave no status behind ----------------------
    def on_connector_shutdown(self, connector: str) -> None:
        if self.config_store.snapshot().contains(connector):
            super().on_connector_shutdown(connector)
        else:
            self._put(connector, State.DESTROYED)

    def on_task_shutdown(self, task_id: ConnectorTaskId) -> None:
        if task_id in self.config_store.snapshot().task_ids(task_id.connector):
            super().on_task_shutdown(task_id)
        else:
            self._put_task(task_id, State.DESTROYED)

    # -- leader and owner checks used by the REST operations -------------------------------------
    def require_leader(self) -> None:
        if not self.membership.is_leader:
            raise NotLeaderError("This worker is not able to communicate with the leader of the cluster, "
                                 "which is required for dynamically-reconfiguring connectors.",
                                 self.membership.leader_url)

    def require_owner(self, item: str | ConnectorTaskId) -> bool:
        """True if ``item`` is assigned to this worker; else forward to the leader, or (leader) to
        the owner. The assignment decides, as in Kafka's DistributedHerder, not whether the item
        is running this instant: a config change stops and restarts it under the herder's lock,
        and a restart request arriving in between must not be forwarded away (to end in a 409)."""
        if item in self.membership.connectors or item in self.membership.tasks:
            return True
        if not self.membership.is_leader:
            raise NotLeaderError("Cannot restart a connector or task that is not running on this worker",
                                 self.membership.leader_url)
        owner = self.membership.owner_url(item)
        if owner is None:
            raise HerderError(f"Cannot complete request because {item} is not assigned to any worker yet "
                              "(likely because a rebalance is underway)", status=409)
        raise NotLeaderError(f"{item} is not assigned to this worker", owner)

    async def restart_connector_instance(self, name: str) -> None:
        async with self._lock:
            self.require_owner(name)  # again: a rebalance may have revoked it while the lock was held
            await self._stop_work({name}, set())
            await self._start_connector(name)

    async def restart_task_instance(self, task_id: ConnectorTaskId) -> None:
        async with self._lock:
            if task_id not in self.config_store.snapshot().task_ids(task_id.connector):
                raise NotFoundError(f"Unknown task: {task_id}")
            self.require_owner(task_id)
            await self._stop_work(set(), {task_id})
            await self._start_task(task_id)

    async def _restart_planned(self, name: str, include_tasks: bool, only_failed: bool) -> ConnectorStateInfo:
        """The leader's answer to a restart with tasks: the states it plans to restart, marked RESTARTING
        (the request goes through the config topic to the workers that run them)."""
        info = await self.connector_status(name)
        restart_connector, tasks = self.restart_plan(info, include_tasks, only_failed)
        connector = info.connector
        if restart_connector:
            connector = dataclasses.replace(connector, state=State.RESTARTING, trace=None)
        restarting = {t.id for t in tasks}
        states = [dataclasses.replace(t, state=State.RESTARTING, trace=None) if t.id in restarting else t
                  for t in info.tasks]
        await asyncio.to_thread(self.config_store.put_restart_request,
                                RestartRequest(name, include_tasks, only_failed))
        return ConnectorStateInfo(name, connector, states, info.type)
