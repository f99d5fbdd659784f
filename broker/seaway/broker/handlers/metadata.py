"""Metadata: brokers (just us), topics and partitions, with auto-creation as Kafka does it.

This node leads every partition at leader epoch 0 and is the only replica and ISR member.
Topics a client asks for that do not exist are created when both the broker
(``auto.create.topics.enable``) and the request (``allow_auto_topic_creation``, v4+)
allow it.

ACLs, as Kafka's ``handleTopicMetadataRequest``: asking for all topics lists only those the
caller may DESCRIBE; a named topic it may not describe is TOPIC_AUTHORIZATION_FAILED without
saying whether it exists; auto-creation needs CREATE on the cluster or on the topic
(TOPIC_AUTHORIZATION_FAILED otherwise). Authorized operations (v8+) are reported when asked
for. ``__cluster_metadata`` is never auto-created (the security store's log has that name).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import uuid

from seaway.broker.context import BrokerContext, Operation, RequestContext, ResourceType
from seaway.broker.handlers.registry import handles
from seaway.broker.log.fds import FdBudget
from seaway.broker.security.acl import CLUSTER_NAME
from seaway.broker.security.store import METADATA_TOPIC
from seaway.protocol.errors import (
    InvalidTopicException,
    KafkaProtocolError,
    TopicAlreadyExistsError,
    TopicAuthorizationFailedError,
    UnknownTopicIdError,
    UnknownTopicOrPartitionError,
)
from seaway.protocol.messages.metadata_request import MetadataRequest
from seaway.protocol.messages.metadata_response import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)

__all__ = ["describe_topic", "handle_metadata"]

log = logging.getLogger("seaway.broker.metadata")

OPERATIONS_OMITTED = -(2**31)


def describe_topic(broker: BrokerContext, name: str) -> MetadataResponseTopic | None:
    meta = broker.logs.topics().get(name)
    if meta is None:
        return None
    node = broker.node_id
    partitions = [
        MetadataResponsePartition(
            error_code=0,
            partition_index=p,
            leader_id=node,
            leader_epoch=0,
            replica_nodes=[node],
            isr_nodes=[node],
            offline_replicas=[],
        )
        for p in range(meta.num_partitions)
    ]
    return MetadataResponseTopic(
        error_code=0,
        name=name,
        topic_id=meta.topic_id,
        is_internal=meta.is_internal,
        partitions=partitions,
    )


def _create_if_room(broker: BrokerContext, name: str) -> None:
    """Create ``name`` with ``num.partitions`` unless its files would eat into the fd reserve."""
    FdBudget().take_partitions(broker.config.num_partitions, f"Auto-creating topic '{name}'")
    broker.logs.create_topic(name, broker.config.num_partitions)


async def _auto_create(broker: BrokerContext, name: str) -> int:
    """Create ``name`` with the broker defaults; returns an error code (0 on success).

    Creation fsyncs topic metadata, so it runs on a worker thread. Past the broker's file
    descriptor budget the topic is answered with POLICY_VIOLATION, as Kafka answers a
    creation its policy refuses.
    """
    try:
        await asyncio.to_thread(_create_if_room, broker, name)
        log.info("auto-created topic %s with %d partitions", name, broker.config.num_partitions)
    except TopicAlreadyExistsError:
        pass
    except KafkaProtocolError as exc:
        return exc.code
    return 0


@handles(MetadataRequest, MetadataResponse)
async def handle_metadata(ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
    broker = ctx.broker
    ep = broker.endpoint_for(ctx.listener)
    topics: list[MetadataResponseTopic] = []
    describe, topic_ = Operation.DESCRIBE, ResourceType.TOPIC
    if request.topics is None or (ctx.api_version == 0 and not request.topics):
        names = [n for n in sorted(broker.logs.topics()) if ctx.allowed(describe, topic_, n)]
    else:
        names = [t.name for t in request.topics if t.name is not None]
        if ctx.api_version >= 12:  # topics asked for by id (KIP-516), as KIP-848 consumers do
            topics += _by_topic_id(ctx, [t.topic_id for t in request.topics if t.name is None])
    allow_create = broker.config.auto_create_topics_enable and (
        ctx.api_version < 4 or request.allow_auto_topic_creation
    )
    may_create_any = allow_create and ctx.allowed(Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME)
    for name in names:
        if not ctx.allowed(describe, topic_, name):
            topics.append(MetadataResponseTopic(error_code=TopicAuthorizationFailedError.code, name=name))
            continue
        described = describe_topic(broker, name)
        if described is None and allow_create and name != METADATA_TOPIC:
            if not (may_create_any or ctx.allowed(Operation.CREATE, topic_, name)):
                topics.append(MetadataResponseTopic(error_code=TopicAuthorizationFailedError.code, name=name))
                continue
            code = await _auto_create(broker, name)
            if code:
                topics.append(MetadataResponseTopic(error_code=code, name=name))
                continue
            described = describe_topic(broker, name)
        if described is None:
            code = UnknownTopicOrPartitionError.code
            if not _legal_name(name):
                code = InvalidTopicException.code
            topics.append(MetadataResponseTopic(error_code=code, name=name))
        else:
            if ctx.api_version >= 8 and request.include_topic_authorized_operations:
                described = dataclasses.replace(
                    described, topic_authorized_operations=ctx.authorized_operations(topic_, name))
            topics.append(described)
    cluster_operations = OPERATIONS_OMITTED
    if 8 <= ctx.api_version <= 10 and request.include_cluster_authorized_operations:
        cluster_operations = ctx.authorized_operations(ResourceType.CLUSTER, CLUSTER_NAME)
    return MetadataResponse(
        brokers=[MetadataResponseBroker(node_id=broker.node_id, host=ep.host, port=ep.port, rack=None)],
        cluster_id=broker.cluster_id,
        controller_id=broker.node_id,
        topics=topics,
        cluster_authorized_operations=cluster_operations,
    )


def _by_topic_id(ctx: RequestContext, ids: list[uuid.UUID]) -> list[MetadataResponseTopic]:
    """Topics named by id: UNKNOWN_TOPIC_ID, or TOPIC_AUTHORIZATION_FAILED (ids are not secret), as Kafka."""
    if not ids:
        return []
    names = {meta.topic_id: name for name, meta in ctx.broker.logs.topics().items()}
    out = []
    for topic_id in dict.fromkeys(ids):
        name = names.get(topic_id)
        described = describe_topic(ctx.broker, name) if name is not None else None
        if described is None:
            out.append(MetadataResponseTopic(error_code=UnknownTopicIdError.code, name=None, topic_id=topic_id))
        elif not ctx.allowed(Operation.DESCRIBE, ResourceType.TOPIC, described.name or ""):
            out.append(MetadataResponseTopic(error_code=TopicAuthorizationFailedError.code, name=None,
                                             topic_id=topic_id))
        else:
            out.append(described)
    return out


def _legal_name(name: str) -> bool:
    return (
        0 < len(name) <= 249
        and name not in (".", "..")
        and all(c.isascii() and (c.isalnum() or c in "._-") for c in name)
    )
