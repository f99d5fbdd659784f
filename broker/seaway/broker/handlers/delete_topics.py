"""DeleteTopics: by name (v1-v5) or by name or topic id (v6), as Kafka answers.

An unknown name is UNKNOWN_TOPIC_OR_PARTITION, an unknown id UNKNOWN_TOPIC_ID; a
request naming the same topic twice gets INVALID_REQUEST for it, as does an entry with
both or neither of name and id. Long-polling fetches on the deleted partitions are
woken so they answer (with UNKNOWN_TOPIC_OR_PARTITION) instead of waiting out max_wait_ms.
The internal topics (``__consumer_offsets``, ``__transaction_state``) are refused with
INVALID_TOPIC_EXCEPTION once the caller may delete them: a deviation, Kafka deletes them
(:mod:`.internal_topics` says why).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from uuid import UUID

from seaway.broker.context import BrokerContext, Operation, RequestContext, ResourceType
from seaway.broker.handlers.configs_common import error_of
from seaway.broker.handlers.internal_topics import delete_topic_refusal
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import (
    InvalidRequestError,
    KafkaProtocolError,
    KafkaStorageError,
    TopicAuthorizationFailedError,
    TopicDeletionDisabledError,
    UnknownTopicIdError,
    UnknownTopicOrPartitionError,
)
from seaway.protocol.messages.delete_topics_request import DeleteTopicsRequest
from seaway.protocol.messages.delete_topics_response import DeletableTopicResult, DeleteTopicsResponse
from seaway.protocol.primitives import ZERO_UUID

__all__ = ["handle_delete_topics"]

def _resolve(broker: BrokerContext, name: str | None, topic_id: UUID) -> tuple[str, UUID]:
    """The (name, id) of the topic an entry refers to, or the Kafka error for it."""
    topics = broker.logs.topics()
    if name is not None and topic_id != ZERO_UUID:
        raise InvalidRequestError("You may not specify both a topic name and a topic id.")
    if name is None:
        if topic_id == ZERO_UUID:
            raise InvalidRequestError("Neither a topic name nor a topic id was specified.")
        for meta in topics.values():
            if meta.topic_id == topic_id:
                return meta.name, meta.topic_id
        raise UnknownTopicIdError(f"This server does not host topic id {topic_id}.")
    named = topics.get(name)
    if named is None:
        raise UnknownTopicOrPartitionError(f"Topic '{name}' does not exist.")
    return name, named.topic_id


def _delete(broker: BrokerContext, name: str) -> int:
    """Delete ``name``; returns how many partitions it had."""
    partitions = broker.logs.topics()[name].num_partitions
    try:
        broker.logs.delete_topic(name)
    except OSError as exc:
        raise KafkaStorageError(f"Deleting topic '{name}' failed: {exc}") from exc
    return partitions


@handles(DeleteTopicsRequest, DeleteTopicsResponse)
async def handle_delete_topics(ctx: RequestContext, request: DeleteTopicsRequest) -> DeleteTopicsResponse:
    if ctx.api_version >= 6:
        wanted = [(t.name, t.topic_id) for t in request.topics]
    else:
        wanted = [(n, ZERO_UUID) for n in request.topic_names]
    # Deletion renames and removes directories and fsyncs metadata: off the event loop.
    def may_delete(name: str) -> bool:  # ACLs: DELETE on the topic, checked before its existence
        return ctx.allowed(Operation.DELETE, ResourceType.TOPIC, name)

    response, deleted = await asyncio.to_thread(_delete_all, ctx.broker, wanted, may_delete)
    for name, partitions in deleted:
        for p in range(partitions):
            ctx.broker.waiters.notify(name, p)
    return response


def _delete_all(broker: BrokerContext, wanted: list[tuple[str | None, UUID]],
                may_delete: Callable[[str], bool] = lambda name: True) -> (
    tuple[DeleteTopicsResponse, list[tuple[str, int]]]
):
    counts = Counter(wanted)
    enabled = broker.config.delete_topic_enable
    results: list[DeletableTopicResult] = []
    deleted: list[tuple[str, int]] = []
    seen: set[tuple[str | None, UUID]] = set()
    for name, topic_id in wanted:
        if (name, topic_id) in seen:
            continue
        seen.add((name, topic_id))
        try:
            if counts[(name, topic_id)] > 1:
                raise InvalidRequestError(
                    "Duplicate topic name." if name is not None else "Duplicate topic id."
                )
            if name is not None and topic_id == ZERO_UUID and not may_delete(name):
                raise TopicAuthorizationFailedError("Authorization failed.")
            resolved, resolved_id = _resolve(broker, name, topic_id)
            if not may_delete(resolved):
                raise TopicAuthorizationFailedError("Authorization failed.")
            if not enabled:
                raise TopicDeletionDisabledError("Topic deletion is disabled (delete.topic.enable=false).")
            internal = delete_topic_refusal(resolved)
            if internal is not None:
                raise internal
            deleted.append((resolved, _delete(broker, resolved)))
            results.append(DeletableTopicResult(name=resolved, topic_id=resolved_id, error_code=0))
        except KafkaProtocolError as exc:
            code, message = error_of(exc)
            results.append(DeletableTopicResult(name=name, topic_id=topic_id, error_code=code,
                                                error_message=message))
    return DeleteTopicsResponse(responses=results), deleted
