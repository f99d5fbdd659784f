"""CreateTopics: new topics with Kafka's checks, in Kafka's order, with its error codes.

Per topic, as Kafka's controller does: the name (INVALID_TOPIC_EXCEPTION), existence
(TOPIC_ALREADY_EXISTS) and '.'/'_' collisions, the partition count (INVALID_PARTITIONS),
the replication factor or manual assignment (this is one node, so only a factor of 1
and only this node as replica), then the configs (INVALID_CONFIG naming the key).
``validate_only`` runs every check and answers as if the topic were created, creating
nothing. From v5 the answer also carries the partition count, the replication factor
and every config of the topic, so a client need not DescribeConfigs afterwards.

Two limits keep one client from exhausting the broker's file descriptors, each answered
with POLICY_VIOLATION as Kafka's controller answers its partition cap: a request asking for
more than 10,000 partitions in total fails as a whole (Kafka 4's "Excessively large number
of partitions per request."), and a topic whose partitions' files would eat into the fds
kept for connections and segment rolls is refused (:mod:`seaway.broker.log.fds`).

ACLs, as Kafka: CREATE on the cluster allows every topic, else CREATE on each topic is needed
(TOPIC_AUTHORIZATION_FAILED); the v5+ configs of a created topic are left out, with
TOPIC_AUTHORIZATION_FAILED as the topic's config error, unless the caller may DESCRIBE_CONFIGS
it. ``__cluster_metadata`` cannot be created (INVALID_REQUEST, Kafka's message).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from uuid import UUID

from seaway.broker.context import BrokerContext, Operation, RequestContext, ResourceType
from seaway.broker.handlers.configs_common import error_of, topic_config_entries, validate_topic_overrides
from seaway.broker.handlers.registry import handles
from seaway.broker.log.fds import FdBudget
from seaway.broker.log.log_manager import validate_topic_name
from seaway.broker.security.acl import CLUSTER_NAME
from seaway.broker.security.store import METADATA_TOPIC
from seaway.protocol.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidRequestError,
    InvalidTopicException,
    KafkaProtocolError,
    KafkaStorageError,
    PolicyViolationError,
    TopicAlreadyExistsError,
    TopicAuthorizationFailedError,
)
from seaway.protocol.messages.create_topics_request import CreatableTopic, CreateTopicsRequest
from seaway.protocol.messages.create_topics_response import (
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsResponse,
)
from seaway.protocol.primitives import ZERO_UUID

__all__ = ["MAX_PARTITIONS_PER_REQUEST", "check_replica_lists", "handle_create_topics"]

MAX_PARTITIONS_PER_REQUEST = 10_000
"""Kafka's controller refuses larger batches; it also keeps one request from exhausting the disk."""

def check_replica_lists(broker: BrokerContext, replica_lists: list[list[int]]) -> int:
    """Validate manual replica assignments against this single node; returns the factor."""
    factor = -1
    for replicas in replica_lists:
        if not replicas:
            raise InvalidReplicaAssignmentError(
                "The manual partition assignment includes an empty replica list."
            )
        for node in replicas:
            if node != broker.node_id:
                raise InvalidReplicaAssignmentError(
                    f"The manual partition assignment includes broker {node}, but no such broker is "
                    f"registered (this single-node cluster has only broker {broker.node_id})."
                )
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(
                f"The manual partition assignment includes the broker {replicas[0]} more than once."
            )
        if factor not in (-1, len(replicas)):
            raise InvalidReplicaAssignmentError("All partitions should have the same number of replicas.")
        factor = len(replicas)
    return factor


def _layout(broker: BrokerContext, topic: CreatableTopic) -> tuple[int, int]:
    """(partitions, replication factor) the topic asks for, defaults resolved."""
    if topic.assignments:
        if topic.num_partitions != -1:
            raise InvalidRequestError(
                "A manual partition assignment was specified, but numPartitions was not set to -1."
            )
        if topic.replication_factor != -1:
            raise InvalidRequestError(
                "A manual partition assignment was specified, but replicationFactor was not set to -1."
            )
        indexes = sorted(a.partition_index for a in topic.assignments)
        if indexes != list(range(len(indexes))):
            raise InvalidReplicaAssignmentError(
                "Partitions should be a consecutive 0-based integer sequence, but got "
                f"{', '.join(map(str, indexes))}."
            )
        factor = check_replica_lists(broker, [list(a.broker_ids) for a in topic.assignments])
        return len(indexes), factor
    partitions = topic.num_partitions
    if partitions == -1:
        partitions = broker.config.num_partitions
    if partitions <= 0:
        raise InvalidPartitionsError("Number of partitions was set to an invalid non-positive value.")
    factor = topic.replication_factor
    if factor == -1:
        factor = broker.config.default_replication_factor
    if factor <= 0:
        raise InvalidReplicationFactorError(
            "Replication factor must be larger than 0, or -1 to use the default value."
        )
    if factor != 1:
        raise InvalidReplicationFactorError(
            f"Unable to replicate the partition {factor} time(s): The target replication factor of "
            f"{factor} cannot be reached because only 1 broker(s) are registered "
            "(this is a single-node broker: use replication factor 1 or -1)."
        )
    return partitions, factor


def _requested_partitions(broker: BrokerContext, topics: list[CreatableTopic]) -> int:
    """Kafka's ``validateTotalNumberOfPartitions``: an upper bound of what the request creates."""
    total = 0
    for topic in topics:
        if topic.assignments:
            total += len(topic.assignments)
        elif topic.num_partitions == -1:
            total += broker.config.num_partitions
        elif topic.num_partitions > 0:
            total += topic.num_partitions
    return total


def _create(
    broker: BrokerContext, topic: CreatableTopic, validate_only: bool, fds: FdBudget, acl: _Acl
) -> CreatableTopicResult:
    name = topic.name
    if name == METADATA_TOPIC:
        raise InvalidRequestError(f"Creation of internal topic {METADATA_TOPIC} is prohibited.")
    if name in acl.no_create:
        raise TopicAuthorizationFailedError("Authorization failed.")
    validate_topic_name(name)
    existing = broker.logs.topics()
    if name in existing:
        raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
    folded = name.replace(".", "_")
    for other in existing:
        if other.replace(".", "_") == folded:
            raise InvalidTopicException(f"Topic '{name}' collides with existing topic: {other}")
    partitions, factor = _layout(broker, topic)
    names = [c.name for c in topic.configs]
    dupes = sorted(k for k, n in Counter(names).items() if n > 1)
    if dupes:
        raise InvalidRequestError(f"Duplicate configuration keys: {', '.join(dupes)}")
    requested = {c.name: c.value for c in topic.configs}
    validate_topic_overrides(broker, requested)
    overrides = {k: v for k, v in requested.items() if v is not None}
    fds.take_partitions(partitions, f"Topic '{name}'")
    topic_id: UUID = ZERO_UUID
    if not validate_only:
        try:
            broker.logs.create_topic(name, partitions, overrides)
        except OSError as exc:
            raise KafkaStorageError(f"Creating topic '{name}' failed: {exc}") from exc
        topic_id = broker.logs.topics()[name].topic_id
    if name in acl.no_describe_configs:
        return CreatableTopicResult(name=name, topic_id=topic_id, error_code=0, error_message=None,
                                    num_partitions=partitions, replication_factor=factor, configs=[],
                                    topic_config_error_code=TopicAuthorizationFailedError.code)
    configs = [
        CreatableTopicConfigs(name=e.name, value=None if e.is_sensitive else e.value, read_only=e.read_only,
                              config_source=int(e.source), is_sensitive=e.is_sensitive)
        for e in topic_config_entries(broker, overrides)
    ]
    return CreatableTopicResult(name=name, topic_id=topic_id, error_code=0, error_message=None,
                                num_partitions=partitions, replication_factor=factor, configs=configs)


class _Acl:
    """The request's ACL answers, worked out on the event loop before the creation thread."""

    def __init__(self, ctx: RequestContext, names: list[str]) -> None:
        self.no_create: set[str] = set()
        self.no_describe_configs: set[str] = set()
        if ctx.broker.authorizer is None:
            return
        if not ctx.allowed(Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME):
            self.no_create = {n for n in names if not ctx.allowed(Operation.CREATE, ResourceType.TOPIC, n)}
        self.no_describe_configs = {
            n for n in names if not ctx.allowed(Operation.DESCRIBE_CONFIGS, ResourceType.TOPIC, n)}


@handles(CreateTopicsRequest, CreateTopicsResponse)
async def handle_create_topics(ctx: RequestContext, request: CreateTopicsRequest) -> CreateTopicsResponse:
    # Topic creation fsyncs the metadata file and creates directories: off the event loop.
    acl = _Acl(ctx, [t.name for t in request.topics])
    return await asyncio.to_thread(_create_all, ctx.broker, request, acl)


def _create_all(broker: BrokerContext, request: CreateTopicsRequest, acl: _Acl) -> CreateTopicsResponse:
    counts = Counter(t.name for t in request.topics)
    results: list[CreatableTopicResult] = []
    reported: set[str] = set()
    if _requested_partitions(broker, request.topics) > MAX_PARTITIONS_PER_REQUEST:
        too_many = PolicyViolationError("Excessively large number of partitions per request.")
        results.extend(_failed(name, too_many) for name in counts)
        return CreateTopicsResponse(topics=results)
    fds = FdBudget()
    for topic in request.topics:
        if counts[topic.name] > 1:
            if topic.name not in reported:
                reported.add(topic.name)
                results.append(_failed(topic.name, InvalidRequestError("Duplicate topic name.")))
            continue
        try:
            results.append(_create(broker, topic, request.validate_only, fds, acl))
        except KafkaProtocolError as exc:
            results.append(_failed(topic.name, exc))
    return CreateTopicsResponse(topics=results)


def _failed(name: str, exc: KafkaProtocolError) -> CreatableTopicResult:
    code, message = error_of(exc)
    return CreatableTopicResult(name=name, error_code=code, error_message=message, num_partitions=-1,
                                replication_factor=-1, configs=[])
