"""Fetch: serve segment file ranges, long-polling until min_bytes or max_wait_ms.

Records are never read into Python on the fast path: the log hands back file regions
that the connection writes with sendfile. Size limits follow KIP-74: partitions are
filled in request order within ``max_bytes``, each within ``partition_max_bytes``, and
the first partition that has data returns at least one whole batch even if it is larger
than both limits, so a consumer can never get stuck behind a big batch.

Fetch sessions (KIP-227) are declined by answering session id 0, which every client
treats as "keep sending full fetch requests".

Topics the caller may not READ are answered TOPIC_AUTHORIZATION_FAILED (checked once per
request, not on every pass of a long poll) and the fetch returns at once, as with any error.

``isolation_level=1`` (read_committed, librdkafka's default) reads only below each
partition's last stable offset and lists the aborted transactions overlapping what it
returns (:meth:`PartitionLog.read_committed`, from the ``.txnindex`` files), so the
consumer drops their records. With no transaction open the LSO is the high watermark and
the read costs what a read_uncommitted one does. Right after a start, until the
transaction coordinator knows every partition's LSO, a read_committed fetch waits for it
(within ``max_wait_ms``; then it answers without records).
"""

from __future__ import annotations

import asyncio

from seaway.broker.context import BrokerContext, Operation, RequestContext, ResourceType
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError, TopicAuthorizationFailedError, UnknownTopicOrPartitionError
from seaway.protocol.messages.fetch_request import FetchRequest
from seaway.protocol.messages.fetch_response import (
    AbortedTransaction,
    FetchableTopicResponse,
    FetchResponse,
    PartitionData,
)

READ_COMMITTED = 1

__all__ = ["handle_fetch"]


def _read_all(broker: BrokerContext, request: FetchRequest, denied: frozenset[str] = frozenset()) -> (
    tuple[list[FetchableTopicResponse], int, bool]
):
    """One pass over the requested partitions: (responses, bytes found, any error).

    ``denied``: topics the caller may not read (TOPIC_AUTHORIZATION_FAILED)."""
    budget = request.max_bytes if request.max_bytes > 0 else 0x7FFFFFFF
    total = 0
    errors = False
    first_data = True
    logs = broker.logs
    committed = request.isolation_level == READ_COMMITTED
    out: list[FetchableTopicResponse] = []
    for topic in request.topics:
        parts: list[PartitionData] = []
        for p in topic.partitions:
            plog = logs.get_log(topic.topic, p.partition) if topic.topic not in denied else None
            if plog is None:
                errors = True
                parts.append(PartitionData(partition_index=p.partition,
                                           error_code=TopicAuthorizationFailedError.code if topic.topic in denied
                                           else UnknownTopicOrPartitionError.code,
                                           high_watermark=-1, last_stable_offset=-1, log_start_offset=-1,
                                           records=b""))
                continue
            hw = plog.log_end_offset
            region = None
            error_code = 0
            limit = min(p.partition_max_bytes, budget)
            aborted: list[tuple[int, int]] | None = [] if committed else None
            lso = -1
            if p.fetch_offset != hw and (limit > 0 or first_data):
                try:
                    if committed:
                        region, lso, aborted = plog.read_committed(p.fetch_offset, max(limit, 0),
                                                                   min_one_batch=first_data)
                    else:
                        region = plog.read(p.fetch_offset, max(limit, 0), min_one_batch=first_data)
                except KafkaProtocolError as exc:
                    errors = True
                    error_code = exc.code
            size = len(region) if region is not None else 0
            if size:
                first_data = False
                total += size
                budget -= size
            parts.append(
                PartitionData(
                    partition_index=p.partition,
                    error_code=error_code,
                    high_watermark=hw,
                    last_stable_offset=lso if lso >= 0 else plog.last_stable_offset,
                    log_start_offset=plog.log_start_offset,
                    aborted_transactions=None if aborted is None else [
                        AbortedTransaction(pid, first) for pid, first in aborted],
                    records=region if size else b"",
                )
            )
        out.append(FetchableTopicResponse(topic=topic.topic, partitions=parts))
    return out, total, errors


def _not_yet(broker: BrokerContext, request: FetchRequest) -> FetchResponse:
    """No records for anyone: the last stable offsets are not known yet after a start (each
    partition's LSO is given as its fetch offset: nothing more is known to be stable)."""
    parts: list[FetchableTopicResponse] = []
    for t in request.topics:
        answers = []
        for p in t.partitions:
            plog = broker.logs.get_log(t.topic, p.partition)
            hw = plog.log_end_offset if plog is not None else -1
            answers.append(PartitionData(
                partition_index=p.partition, error_code=0, high_watermark=hw,
                last_stable_offset=min(p.fetch_offset, hw), log_start_offset=plog.log_start_offset if plog else -1,
                aborted_transactions=[], records=b""))
        parts.append(FetchableTopicResponse(topic=t.topic, partitions=answers))
    return FetchResponse(throttle_time_ms=0, error_code=0, session_id=0, responses=parts)


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


@handles(FetchRequest, FetchResponse)
async def handle_fetch(ctx: RequestContext, request: FetchRequest) -> FetchResponse:
    broker = ctx.broker
    denied = frozenset() if broker.authorizer is None else frozenset(
        t.topic for t in request.topics if not ctx.allowed(Operation.READ, ResourceType.TOPIC, t.topic))
    if request.isolation_level == READ_COMMITTED:
        txn = broker.components.txn_coordinator
        if txn is not None and not txn.recovered and not await txn.wait_recovered(request.max_wait_ms / 1000.0):
            return _not_yet(broker, request)
    responses, total, errors = _read_all(broker, request, denied)
    wait_s = request.max_wait_ms / 1000.0
    if total < max(request.min_bytes, 1) and not errors and wait_s > 0:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        keys = [(t.topic, p.partition) for t in request.topics for p in t.partitions]
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            # One future, resolved by whichever comes first: an append to one of the
            # partitions (PartitionWaiters.notify) or the deadline. Awaiting it directly
            # (not through asyncio.wait_for, which adds a callback hop and a TimeoutError)
            # resumes this fetch in the loop iteration right after the append, ahead of
            # the producer's acknowledgement, which is queued behind it.
            fut: asyncio.Future[None] = loop.create_future()
            broker.waiters.register(keys, fut)
            timer = loop.call_later(remaining, _wake, fut)
            try:
                await fut
            finally:
                timer.cancel()
                broker.waiters.unregister(keys, fut)
            responses, total, errors = _read_all(broker, request, denied)
            if total >= request.min_bytes or errors:
                break
    if broker.metrics is not None:
        broker.metrics.fetched(responses)
    return FetchResponse(throttle_time_ms=0, error_code=0, session_id=0, responses=responses)
