"""State the handlers share: the broker's identity, its logs and its waiters.

A :class:`BrokerContext` lives as long as the server; a :class:`RequestContext` is made
per request and tells a handler which version it must answer in and who asked.

Authorization goes through one place: a handler asks ``ctx.allowed(op, resource_type,
name)`` (or ``ctx.require(...)``, which raises Kafka's TOPIC_/GROUP_/CLUSTER_/
TRANSACTIONAL_ID_AUTHORIZATION_FAILED), and ``ctx.authorized_operations(...)`` for the
bit fields Metadata, DescribeCluster and DescribeGroups report. Without an authorizer
(``authorizer.class.name`` unset) everything is allowed and every supported operation is
reported, as Kafka does; the check is then one attribute test.

The layers above the log (group and transaction coordinators, producer state, cleaner)
are reached through :class:`Components`, typed fields that :mod:`seaway.broker.components`
fills at start. This module names their types for the type checker only, so the
context stays the bottom layer that everything imports and that imports none of them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from seaway.broker.security.acl import SUPPORTED_OPERATIONS, Operation, ResourceType, operations_bitfield
from seaway.broker.security.principal import ANONYMOUS, KafkaPrincipal, SslPrincipalMapper
from seaway.protocol.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    KafkaProtocolError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
)

if TYPE_CHECKING:
    from seaway.broker.config import BrokerConfig
    from seaway.broker.coordinator.coordinator import GroupCoordinator
    from seaway.broker.coordinator.txn.coordinator import TransactionCoordinator
    from seaway.broker.decompression import DecompressionQuota, ValidationPool
    from seaway.broker.log.cleaner import LogCleaner
    from seaway.broker.log.log_manager import LogManager
    from seaway.broker.metrics import BrokerMetrics
    from seaway.broker.producer.fault import ProduceFault
    from seaway.broker.producer.ids import ProducerIdAllocator
    from seaway.broker.producer.manager import ProducerStateManager
    from seaway.broker.security.authorizer import StandardAuthorizer
    from seaway.broker.security.sasl import SaslSession
    from seaway.broker.security.store import SecurityStore

__all__ = [
    "BrokerContext",
    "Closeable",
    "Components",
    "Endpoint",
    "Operation",
    "PartitionWaiters",
    "RequestContext",
    "ResourceType",
    "now_ms",
]

log = logging.getLogger("seaway.broker")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class Endpoint:
    """An advertised listener: what clients are told to connect to."""

    name: str
    host: str
    port: int


class PartitionWaiters:
    """Wakes long-polling fetches when data is appended, without any polling.

    A fetch registers one future on every partition it reads; an append resolves the
    futures registered on that partition. Everything runs on the event loop thread.
    """

    def __init__(self) -> None:
        self._waiters: dict[tuple[str, int], set[asyncio.Future[None]]] = defaultdict(set)

    @property
    def pending(self) -> dict[tuple[str, int], set[asyncio.Future[None]]]:
        """The registered waiters by partition; read-only. Empty when no fetch is waiting,
        which lets the produce path skip :meth:`notify` with one truth test."""
        return self._waiters

    def register(self, keys: list[tuple[str, int]], fut: asyncio.Future[None]) -> None:
        for key in keys:
            self._waiters[key].add(fut)

    def unregister(self, keys: list[tuple[str, int]], fut: asyncio.Future[None]) -> None:
        for key in keys:
            waiters = self._waiters.get(key)
            if waiters is not None:
                waiters.discard(fut)
                if not waiters:
                    del self._waiters[key]

    def notify(self, topic: str, partition: int) -> None:
        waiters = self._waiters.pop((topic, partition), None)
        if waiters:
            for fut in waiters:
                if not fut.done():
                    fut.set_result(None)


class Closeable(Protocol):
    """A component with background work the server stops on shutdown."""

    async def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Components:
    """The optional layers installed on a broker, one typed field each (None: not installed).

    :func:`seaway.broker.components.install` fills them at start, each layer's
    ``install`` replacing the value with its field set (``dataclasses.replace``), so the
    set is written once, before the listeners open, and never changed under a handler.
    A context built without them (unit tests) has every field None, and handlers answer
    as Kafka does without the component (COORDINATOR_NOT_AVAILABLE, or the plain log append).
    """

    group_coordinator: GroupCoordinator | None = None
    """Consumer groups and committed offsets (:mod:`seaway.broker.coordinator`)."""
    producer_ids: ProducerIdAllocator | None = None
    """InitProducerId without a transactional id (:mod:`seaway.broker.producer`)."""
    producer_state: ProducerStateManager | None = None
    """Idempotent and transactional produce checks; the produce path appends through it."""
    produce_fault: ProduceFault | None = None
    """Test-only: drops every Nth produce response after the append."""
    log_cleaner: LogCleaner | None = None
    """Compaction of ``cleanup.policy=compact`` logs (:mod:`seaway.broker.log.cleaner`)."""
    txn_coordinator: TransactionCoordinator | None = None
    """Transactions (:mod:`seaway.broker.coordinator.txn`)."""

    def closeables(self) -> list[Closeable]:
        """The installed components the server closes on shutdown, in install order."""
        ordered: tuple[Closeable | None, ...] = (
            self.group_coordinator, self.producer_state, self.log_cleaner, self.txn_coordinator,
        )
        return [component for component in ordered if component is not None]


@dataclass
class BrokerContext:
    """Everything a handler may touch. Handlers never reach the server or sockets."""

    config: BrokerConfig
    logs: LogManager
    node_id: int
    cluster_id: str
    endpoints: list[Endpoint] = field(default_factory=list)
    waiters: PartitionWaiters = field(default_factory=PartitionWaiters)
    components: Components = field(default_factory=Components)
    """The layers above the log; replaced (never mutated) by their installs at start."""
    authorizer: StandardAuthorizer | None = None
    security_store: SecurityStore | None = None
    principal_mapper: SslPrincipalMapper = field(default_factory=SslPrincipalMapper)
    metrics: BrokerMetrics | None = None
    """The hot paths' counters (:mod:`seaway.broker.metrics`); None when ``metrics.listener`` is off."""
    validation_pool: ValidationPool | None = None
    """The threads that check compressed produce batches (:mod:`seaway.broker.decompression`);
    None in a bare context (unit tests): they are checked on the calling thread."""

    def endpoint_for(self, listener_name: str | None) -> Endpoint:
        for ep in self.endpoints:
            if listener_name is None or ep.name == listener_name:
                return ep
        return self.endpoints[0]


_DENIED: dict[ResourceType, type[KafkaProtocolError]] = {
    ResourceType.TOPIC: TopicAuthorizationFailedError,
    ResourceType.GROUP: GroupAuthorizationFailedError,
    ResourceType.CLUSTER: ClusterAuthorizationFailedError,
    ResourceType.TRANSACTIONAL_ID: TransactionalIdAuthorizationFailedError,
}


@dataclass(slots=True)
class RequestContext:
    """One request's envelope: version to answer in, client identity, listener."""

    broker: BrokerContext
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    listener: str
    client_host: str
    principal: KafkaPrincipal = ANONYMOUS
    client_ip: str = "?"
    sasl: SaslSession | None = None
    """The connection's SASL state while it authenticates (SASL listeners), else None."""
    decompression: DecompressionQuota | None = None
    """The connection's ``connections.max.decompressed.bytes.per.second`` quota (None: no limit)."""

    def allowed(self, operation: Operation, resource_type: ResourceType, name: str) -> bool:
        """May this request's principal do ``operation`` on the resource (Kafka's ACL rules)?"""
        authorizer = self.broker.authorizer
        return authorizer is None or authorizer.authorize(self.principal, self.client_ip, operation,
                                                          resource_type, name)

    def require(self, operation: Operation, resource_type: ResourceType, name: str) -> None:
        """Raise the resource type's *_AUTHORIZATION_FAILED error unless :meth:`allowed`."""
        if not self.allowed(operation, resource_type, name):
            error = _DENIED.get(resource_type, ClusterAuthorizationFailedError)
            raise error(f"Not authorized to {operation.name} {resource_type.name.lower()} {name!r} as "
                        f"{self.principal}")

    def allowed_for_type(self, operation: Operation, resource_type: ResourceType) -> bool:
        """Kafka's ``authorizeByResourceType``: ``operation`` on at least one resource of the type."""
        authorizer = self.broker.authorizer
        return authorizer is None or authorizer.authorize_by_resource_type(self.principal, self.client_ip,
                                                                           operation, resource_type)

    def authorized_operations(self, resource_type: ResourceType, name: str) -> int:
        """The bit field of operations allowed on the resource (all supported ones without ACLs)."""
        authorizer = self.broker.authorizer
        if authorizer is None:
            return operations_bitfield(SUPPORTED_OPERATIONS[resource_type])
        return authorizer.authorized_operations(self.principal, self.client_ip, resource_type, name)
