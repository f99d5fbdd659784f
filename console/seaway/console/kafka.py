"""The Kafka cluster as the console sees it: confluent-kafka's AdminClient and Producer, asynchronously.

Everything goes through the Kafka protocol, so the console works against Seaway's broker and
Apache Kafka alike. One AdminClient and one Producer serve every request (both are
thread-safe); their futures are awaited with :func:`asyncio.wrap_future` and a deadline, and
the blocking metadata call runs in a worker thread, so a slow cluster never blocks the event
loop. Cluster metadata (topics and partitions) is shared by the pages (:mod:`seaway.console.cache`): fresh
for :data:`METADATA_TTL_S`, then served while fetched again in the background, so a page of
1,000 topics never waits for a Metadata request it does not need; every write invalidates it.

A failure becomes a :class:`~seaway.console.errors.BackendError` with Kafka's error name and
message (``TOPIC_ALREADY_EXISTS: Topic 'x' already exists.``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from confluent_kafka import (
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
    OffsetSpec,
    ResourceType,
)
from seaway.cli.groups import kafka_state
from seaway.console.cache import Refreshing
from seaway.console.errors import BackendError

__all__ = ["METADATA_TTL_S", "GroupListing", "KafkaGateway", "PartitionInfo", "TopicConfig", "TopicInfo",
           "kafka_error_text"]

METADATA_TTL_S = 2.0
"""How long a Metadata answer serves the pages as it is (writes through the console invalidate it)."""
METADATA_STALE_S = 30.0
"""How long an older one is still served while it is fetched again (:mod:`seaway.console.cache`)."""

_TIMEOUT_S = 15.0
_INTERNAL = ("__consumer_offsets", "__transaction_state")


def kafka_error_text(exc: BaseException) -> str:
    """``NAME: message`` for a KafkaException, else the exception's text."""
    err = exc.args[0] if isinstance(exc, KafkaException) and exc.args else None
    if isinstance(err, KafkaError):
        return f"{err.name()}: {err.str()}"
    return str(exc) or type(exc).__name__


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    id: int
    leader: int
    replicas: tuple[int, ...]
    isrs: tuple[int, ...]
    error: str | None = None


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    partitions: tuple[PartitionInfo, ...]
    error: str | None = None

    @property
    def internal(self) -> bool:
        return self.name.startswith("__") or self.name in _INTERNAL

    @property
    def replication_factor(self) -> int:
        return max((len(p.replicas) for p in self.partitions), default=0)


@dataclass(frozen=True, slots=True)
class TopicConfig:
    name: str
    value: str | None
    source: str
    is_default: bool
    read_only: bool
    sensitive: bool


@dataclass(frozen=True, slots=True)
class GroupListing:
    group_id: str
    state: str
    simple: bool
    type: str


@dataclass(frozen=True, slots=True)
class _Metadata:
    cluster_id: str | None
    controller: int
    brokers: tuple[tuple[int, str, int], ...]
    topics: dict[str, TopicInfo]


def _silent_logger(name: str) -> logging.Logger:
    logger = logging.Logger(name, logging.CRITICAL)
    logger.addHandler(logging.NullHandler())
    return logger


async def _await(future: concurrent.futures.Future[Any], what: str, timeout: float = _TIMEOUT_S) -> Any:
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
    except KafkaException as exc:
        raise BackendError("kafka", f"{what}: {kafka_error_text(exc)}", 400 if _is_request_error(exc) else 502,
                           code=_code(exc)) from None
    except TimeoutError:
        raise BackendError("kafka", f"{what}: no answer from the cluster within {timeout:g} s", 504) from None


def _code(exc: KafkaException) -> int | None:
    err = exc.args[0] if exc.args else None
    return err.code() if isinstance(err, KafkaError) else None


def _is_request_error(exc: KafkaException) -> bool:
    """Whether Kafka refused what was asked (a 400 for the page), not failed to answer (502)."""
    code = _code(exc)
    return code is not None and code > 0 and code not in (KafkaError.REQUEST_TIMED_OUT, KafkaError.NOT_CONTROLLER,
                                                          KafkaError.COORDINATOR_NOT_AVAILABLE)


def _state_name(state: Any) -> str:
    return kafka_state(state)


class KafkaGateway:
    """The console's clients of one Kafka cluster; :meth:`close` when the app stops."""

    def __init__(self, bootstrap: str, client_config: Mapping[str, Any]) -> None:
        self.bootstrap = bootstrap
        self.config: dict[str, Any] = {**client_config, "bootstrap.servers": bootstrap}
        self._admin: AdminClient | None = None
        self._producer: Producer | None = None
        self._lock = threading.Lock()
        self._metadata = Refreshing(self._load_metadata, METADATA_TTL_S, METADATA_STALE_S)

    # -- clients ---------------------------------------------------------------------------------

    def client_config(self, **extra: Any) -> dict[str, Any]:
        """The cluster's librdkafka settings plus ``extra`` (consumers of the message browser)."""
        return {**self.config, "logger": _silent_logger("seaway.console.librdkafka"), **extra}

    @property
    def admin(self) -> AdminClient:
        with self._lock:
            if self._admin is None:
                self._admin = AdminClient(self.client_config())
            return self._admin

    @property
    def producer(self) -> Producer:
        with self._lock:
            if self._producer is None:
                self._producer = Producer(self.client_config(**{"linger.ms": 0, "message.timeout.ms": 15000}))
            return self._producer

    def close(self) -> None:
        with self._lock:
            if self._producer is not None:
                self._producer.flush(5)
                self._producer = None
            self._admin = None  # AdminClient has no close(); dropping the last reference destroys it

    def invalidate(self) -> None:
        self._metadata.invalidate()

    # -- metadata --------------------------------------------------------------------------------

    async def _load_metadata(self) -> _Metadata:
        try:
            raw = await asyncio.to_thread(self.admin.list_topics, timeout=_TIMEOUT_S)
        except KafkaException as exc:
            raise BackendError("kafka", f"metadata from {self.bootstrap}: {kafka_error_text(exc)}") from None
        topics: dict[str, TopicInfo] = {}
        for name, t in raw.topics.items():
            parts = tuple(sorted((PartitionInfo(p.id, p.leader, tuple(p.replicas), tuple(p.isrs),
                                                p.error.str() if p.error else None)
                                  for p in t.partitions.values()), key=lambda p: p.id))
            topics[name] = TopicInfo(name, parts, t.error.str() if t.error else None)
        brokers = tuple(sorted((b.id, b.host or "", b.port) for b in raw.brokers.values()))
        return _Metadata(raw.cluster_id, raw.controller_id, brokers, topics)

    async def _fresh_metadata(self) -> _Metadata:
        return await self._metadata.get()

    async def topics(self) -> dict[str, TopicInfo]:
        """Every topic by name (cached for :data:`METADATA_TTL_S`)."""
        return (await self._fresh_metadata()).topics

    async def topic(self, name: str) -> TopicInfo | None:
        return (await self._fresh_metadata()).topics.get(name)

    async def brokers(self) -> tuple[str | None, int, tuple[tuple[int, str, int], ...]]:
        """(cluster id, controller id, (id, host, port) per broker)."""
        meta = await self._fresh_metadata()
        return meta.cluster_id, meta.controller, meta.brokers

    # -- offsets ---------------------------------------------------------------------------------

    async def offsets(self, partitions: Iterable[tuple[str, int]], spec: str = "latest",
                      timestamp_ms: int | None = None) -> dict[tuple[str, int], int]:
        """ListOffsets for ``partitions`` (``latest``, ``earliest`` or ``for_timestamp``); failed ones left out."""
        keys = list(dict.fromkeys(partitions))
        if not keys:
            return {}
        offset_spec = (OffsetSpec.for_timestamp(int(timestamp_ms or 0)) if spec == "for_timestamp"
                       else getattr(OffsetSpec, spec)())
        futures = self.admin.list_offsets({TopicPartition(t, p): offset_spec for t, p in keys},
                                          request_timeout=_TIMEOUT_S)
        found: dict[tuple[str, int], int] = {}
        results = await asyncio.gather(*(asyncio.wait_for(asyncio.wrap_future(f), _TIMEOUT_S)
                                         for f in futures.values()), return_exceptions=True)
        for tp, result in zip(futures, results, strict=True):
            if not isinstance(result, BaseException):
                found[(tp.topic, tp.partition)] = result.offset
        return found

    async def watermarks(self, partitions: Sequence[tuple[str, int]]) -> dict[tuple[str, int], tuple[int, int]]:
        """(earliest, latest) per partition; partitions that did not answer are left out."""
        low, high = await asyncio.gather(self.offsets(partitions, "earliest"), self.offsets(partitions, "latest"))
        return {k: (low[k], high[k]) for k in partitions if k in low and k in high}

    # -- topics ----------------------------------------------------------------------------------

    async def create_topic(self, name: str, partitions: int, replication: int, configs: Mapping[str, str]) -> None:
        future = self.admin.create_topics([NewTopic(name, partitions, replication, config=dict(configs))],
                                          request_timeout=_TIMEOUT_S)[name]
        try:
            await _await(future, f"creating topic {name}")
        finally:
            self.invalidate()

    async def delete_topic(self, name: str) -> None:
        future = self.admin.delete_topics([name], request_timeout=_TIMEOUT_S)[name]
        try:
            await _await(future, f"deleting topic {name}")
        finally:
            self.invalidate()

    async def topic_configs(self, name: str) -> list[TopicConfig]:
        resource = ConfigResource(ResourceType.TOPIC, name)
        future = self.admin.describe_configs([resource], request_timeout=_TIMEOUT_S)[resource]
        entries: dict[str, Any] = await _await(future, f"describing the configs of topic {name}")
        return sorted((TopicConfig(e.name, e.value, str(getattr(e.source, "name", e.source)), bool(e.is_default),
                                   bool(e.is_read_only), bool(e.is_sensitive))
                       for e in entries.values()), key=lambda c: c.name)

    async def alter_topic_configs(self, name: str, changes: Mapping[str, str | None]) -> None:
        """Incremental: a value sets the key, None deletes it (back to the broker's default)."""
        entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) if v is not None
                   else ConfigEntry(k, None, incremental_operation=AlterConfigOpType.DELETE)
                   for k, v in changes.items()]
        resource = ConfigResource(ResourceType.TOPIC, name, incremental_configs=entries)
        future = self.admin.incremental_alter_configs([resource], request_timeout=_TIMEOUT_S)[resource]
        await _await(future, f"altering the configs of topic {name}")

    async def produce(self, topic: str, partition: int | None, key: bytes | None, value: bytes | None,
                      headers: Sequence[tuple[str, bytes]]) -> tuple[int, int]:
        """Produce one record and wait for its acknowledgement: (partition, offset)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[tuple[int, int]] = loop.create_future()

        def delivered(err: KafkaError | None, msg: Any) -> None:
            def settle() -> None:
                if done.done():
                    return
                if err is not None:
                    done.set_exception(BackendError("kafka", f"producing to {topic}: {err.name()}: {err.str()}", 400))
                else:
                    done.set_result((msg.partition(), msg.offset()))
            loop.call_soon_threadsafe(settle)

        kwargs: dict[str, Any] = {"key": key, "value": value, "headers": list(headers), "on_delivery": delivered}
        if partition is not None:
            kwargs["partition"] = partition
        try:
            self.producer.produce(topic, **kwargs)
        except (KafkaException, BufferError) as exc:
            raise BackendError("kafka", f"producing to {topic}: {kafka_error_text(exc)}", 400) from None
        except TypeError as exc:
            raise BackendError("kafka", f"producing to {topic}: {exc}", 400) from None
        deadline = time.monotonic() + 20.0
        while not done.done() and time.monotonic() < deadline:
            await asyncio.to_thread(self.producer.poll, 0.1)
        if not done.done():
            raise BackendError("kafka", f"producing to {topic}: not acknowledged within 20 s", 504)
        return await done

    # -- groups ----------------------------------------------------------------------------------

    async def groups(self) -> list[GroupListing]:
        result = await _await(self.admin.list_consumer_groups(request_timeout=_TIMEOUT_S), "listing groups")
        if result.errors:
            error = result.errors[0]
            raise BackendError("kafka", f"listing groups: {kafka_error_text(error)}")
        return sorted((GroupListing(g.group_id, _state_name(g.state), bool(g.is_simple_consumer_group),
                                    str(getattr(getattr(g, "type", None), "name", "CLASSIC") or "CLASSIC").title())
                       for g in result.valid), key=lambda g: g.group_id)

    async def describe_groups(self, group_ids: Sequence[str]) -> dict[str, Any]:
        """Descriptions by group id (a group that failed is left out)."""
        if not group_ids:
            return {}
        futures = self.admin.describe_consumer_groups(list(group_ids), request_timeout=_TIMEOUT_S)
        results = await asyncio.gather(*(asyncio.wait_for(asyncio.wrap_future(f), _TIMEOUT_S)
                                         for f in futures.values()), return_exceptions=True)
        return {g: r for g, r in zip(futures, results, strict=True) if not isinstance(r, BaseException)}

    async def describe_group(self, group_id: str) -> Any:
        future = self.admin.describe_consumer_groups([group_id], request_timeout=_TIMEOUT_S)[group_id]
        return await _await(future, f"describing group {group_id}")

    async def committed(self, group_id: str) -> dict[tuple[str, int], int]:
        """The group's committed offsets (partitions without one left out)."""
        future = self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group_id)],
                                                        request_timeout=_TIMEOUT_S)[group_id]
        result = await _await(future, f"listing the offsets of group {group_id}")
        return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions or [] if tp.offset >= 0}

    async def alter_group_offsets(self, group_id: str, plan: Mapping[tuple[str, int], int]) -> None:
        request = [ConsumerGroupTopicPartitions(group_id, [TopicPartition(t, p, o) for (t, p), o in plan.items()])]
        future = self.admin.alter_consumer_group_offsets(request, request_timeout=_TIMEOUT_S)[group_id]
        result = await _await(future, f"resetting the offsets of group {group_id}")
        errors = [f"{tp.topic}-{tp.partition}: {tp.error}" for tp in result.topic_partitions or [] if tp.error]
        if errors:
            raise BackendError("kafka", f"resetting the offsets of group {group_id}: {'; '.join(errors)}", 400)

    async def delete_group(self, group_id: str) -> None:
        future = self.admin.delete_consumer_groups([group_id], request_timeout=_TIMEOUT_S)[group_id]
        await _await(future, f"deleting group {group_id}")
