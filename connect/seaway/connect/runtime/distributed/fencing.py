"""Zombie fencing for exactly-once source connectors (KIP-618; Kafka's ``DistributedHerder.ZombieFencing``).

A task of an older generation may still run somewhere (a worker cut off from the group, a
slow shutdown): a *zombie*. Before any task of a new generation of an exactly-once source
connector starts, the producers of every task of the previous generation are fenced, so a
zombie's next commit is refused by the broker and its records never become visible.

The config topic records what has been fenced: ``tasks-fencing-<connector>`` ->
``{"task-count": N}`` says the N producers ``<group.id>-<connector>-0 .. N-1`` must be fenced
before the next generation starts. A connector is *pending* when task configs were
committed after its latest such record. Fencing a pending connector (the leader only):

* no record yet (the connector's first exactly-once generation), or one task before and one
  task now: nothing to fence (the new task's own ``init_transactions`` fences its
  predecessor, which has the same transactional id); write a record of the new task count;
* otherwise fence the N producers of the record, check that no newer task configs arrived
  meanwhile (else 409), and write a record of the new task count.

Fencing a producer is what Kafka's ``Admin.fenceProducers`` does: an ``InitProducerId`` for
its transactional id, which bumps the epoch and aborts its open transaction. librdkafka has
no such admin call, so :func:`fence_producers` runs a producer per id that calls
``init_transactions`` (concurrently, bounded by a thread pool) and is then closed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from confluent_kafka import KafkaException, Producer
from seaway.connect.runtime.backing_stores import ClusterConfigState
from seaway.connect.runtime.distributed.kafka_stores import KafkaConfigBackingStore
from seaway.connect.runtime.herder import HerderError
from seaway.kafka_clients import close_producer

__all__ = ["ZombieFencing", "fence_producers"]

log = logging.getLogger(__name__)

MAX_PARALLEL_FENCES = 8
"""Producers initialised at once: each is a librdkafka instance with its threads."""


def fence_producers(producer_config: dict[str, Any], transactional_ids: list[str], timeout: float = 60.0) -> None:
    """Fence every producer using one of ``transactional_ids`` (their open transactions are aborted).

    Raises :class:`HerderError` naming the first id that could not be fenced.
    """
    def fence(transactional_id: str) -> None:
        config = {**producer_config, "transactional.id": transactional_id, "enable.idempotence": True}
        config.pop("message.timeout.ms", None)
        producer = Producer(config)
        try:
            producer.init_transactions(timeout)
        except KafkaException as e:
            raise HerderError(f"Failed to fence out the producer with transactional id {transactional_id}: {e}") from e
        finally:
            close_producer(producer)

    if not transactional_ids:
        return
    with ThreadPoolExecutor(min(MAX_PARALLEL_FENCES, len(transactional_ids)), thread_name_prefix="fencing") as pool:
        for future in [pool.submit(fence, t) for t in transactional_ids]:
            future.result()


class ZombieFencing:
    """The leader's fencing rounds, one at a time per connector (callers of a running round share it).

    ``producer_config(name)`` gives the client settings that reach the connector's cluster
    (its producer overrides applied) and ``transactional_id(name, task)`` the ids of its tasks.
    """

    def __init__(self, config_store: KafkaConfigBackingStore, sync_timeout_s: float,
                 producer_config: Callable[[str], dict[str, Any]],
                 transactional_id: Callable[[str, int], str]) -> None:
        self.config_store = config_store
        self.sync_timeout_s = sync_timeout_s
        self.producer_config = producer_config
        self.transactional_id = transactional_id
        self._active: dict[str, asyncio.Future[None]] = {}

    async def fence(self, name: str) -> None:
        """Make ``name``'s latest task configs safe to start (see the module docstring). Leader only."""
        running = self._active.get(name)
        if running is not None:
            await asyncio.shield(running)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._active[name] = future
        try:
            await self._round(name)
            future.set_result(None)
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # retrieved: no "never retrieved" warning when nobody else waits
            raise
        finally:
            del self._active[name]

    async def _round(self, name: str) -> None:
        await asyncio.to_thread(self.config_store.read_to_end, self.sync_timeout_s)
        snapshot = self.config_store.snapshot()
        if not snapshot.needs_fencing(name):
            log.debug("Skipping zombie fencing for %s: every older task generation is fenced already", name)
            return
        count = snapshot.task_count(name)
        record = snapshot.task_count_record(name)
        if record is not None and (record != 1 or count != 1):
            generation = snapshot.task_config_generation(name)
            ids = [self.transactional_id(name, task) for task in range(record)]
            log.info("Fencing out %d task producers of source connector %s", len(ids), name)
            # the connector's config is resolved (config providers may block): in the thread too
            await asyncio.to_thread(lambda: fence_producers(self.producer_config(name), ids))
            await asyncio.to_thread(self.config_store.read_to_end, self.sync_timeout_s)
            if _newer_generation(self.config_store.snapshot(), name, generation):
                raise HerderError("Fencing failed because new task configurations were generated for the connector",
                                  status=409)
        else:
            log.debug("Writing a task count record for %s without fencing (first exactly-once generation, or one "
                      "task replacing one task)", name)
        await asyncio.to_thread(self.config_store.put_task_count_record, name, count)


def _newer_generation(snapshot: ClusterConfigState, name: str, generation: int | None) -> bool:
    current = snapshot.task_config_generation(name)
    return current is not None and (generation is None or current > generation)
