"""CreatePartitions: grow a topic's partition count (never shrink it), as Kafka does.

A count that is not an increase is INVALID_PARTITIONS; manual assignments must name one
list per new partition, each holding only this node. ``validate_only`` checks and
changes nothing. New partitions start empty at offset 0. Partitions whose files would eat
into the file descriptors kept for connections and segment rolls are refused with
POLICY_VIOLATION (:mod:`seaway.broker.log.fds`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable

from seaway.broker.context import BrokerContext, Operation, RequestContext, ResourceType
from seaway.broker.handlers.configs_common import error_of
from seaway.broker.handlers.create_topics import MAX_PARTITIONS_PER_REQUEST, check_replica_lists
from seaway.broker.handlers.registry import handles
from seaway.broker.log.fds import FdBudget
from seaway.protocol.errors import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidRequestError,
    KafkaProtocolError,
    KafkaStorageError,
    UnknownTopicOrPartitionError,
)
from seaway.protocol.messages.create_partitions_request import CreatePartitionsRequest, CreatePartitionsTopic
from seaway.protocol.messages.create_partitions_response import (
    CreatePartitionsResponse,
    CreatePartitionsTopicResult,
)

__all__ = ["handle_create_partitions"]

log = logging.getLogger("seaway.broker.admin")


def _grow(broker: BrokerContext, topic: CreatePartitionsTopic, validate_only: bool, fds: FdBudget) -> None:
    meta = broker.logs.topics().get(topic.name)
    if meta is None:
        raise UnknownTopicOrPartitionError(f"Topic '{topic.name}' does not exist.")
    current = meta.num_partitions
    if topic.count < current:
        raise InvalidPartitionsError(
            f"The topic {topic.name} currently has {current} partition(s); "
            f"{topic.count} would not be an increase."
        )
    if topic.count == current:
        raise InvalidPartitionsError(f"Topic already has {current} partition(s).")
    added = topic.count - current
    if added > MAX_PARTITIONS_PER_REQUEST:
        raise InvalidPartitionsError(
            f"Unable to add {added} partitions: at most {MAX_PARTITIONS_PER_REQUEST} partitions may be "
            "created in one request."
        )
    if topic.assignments:
        if len(topic.assignments) != added:
            raise InvalidReplicaAssignmentError(
                f"Attempted to add {added} additional partition(s), but only {len(topic.assignments)} "
                "assignment(s) were specified."
            )
        check_replica_lists(broker, [list(a.broker_ids) for a in topic.assignments])
    fds.take_partitions(added, f"Topic '{topic.name}'")
    if validate_only:
        return
    try:
        broker.logs.add_partitions(topic.name, topic.count)
    except OSError as exc:
        raise KafkaStorageError(f"Adding partitions to '{topic.name}' failed: {exc}") from exc
    log.info("topic %s grown from %d to %d partition(s)", topic.name, current, topic.count)


@handles(CreatePartitionsRequest, CreatePartitionsResponse)
async def handle_create_partitions(ctx: RequestContext, request: CreatePartitionsRequest) -> (
    CreatePartitionsResponse
):
    # New partition directories and the metadata fsync: off the event loop.
    def may_alter(name: str) -> None:  # ACLs: ALTER on the topic
        ctx.require(Operation.ALTER, ResourceType.TOPIC, name)

    return await asyncio.to_thread(_grow_all, ctx.broker, request, may_alter)


def _grow_all(broker: BrokerContext, request: CreatePartitionsRequest,
              may_alter: Callable[[str], None] = lambda name: None) -> CreatePartitionsResponse:
    counts = Counter(t.name for t in request.topics)
    results: list[CreatePartitionsTopicResult] = []
    reported: set[str] = set()
    fds = FdBudget()
    for topic in request.topics:
        if topic.name in reported:
            continue
        try:
            if counts[topic.name] > 1:
                reported.add(topic.name)
                raise InvalidRequestError("Duplicate topic name.")
            may_alter(topic.name)
            _grow(broker, topic, request.validate_only, fds)
            results.append(CreatePartitionsTopicResult(name=topic.name, error_code=0, error_message=None))
        except KafkaProtocolError as exc:
            code, message = error_of(exc)
            results.append(CreatePartitionsTopicResult(name=topic.name, error_code=code,
                                                       error_message=message))
    return CreatePartitionsResponse(results=results)
