"""Fetch: serve segment file ranges, long-polling until min_bytes or max_wait_ms.

Records are never read into Python on the fast path: the log hands back file regions
that the connection writes with sendfile. Size limits follow KIP-74: partitions are
filled in request order within ``max_bytes``, each within ``partition_max_bytes``, and
the first partition that has data returns at least one whole batch even if it is larger
than both limits, so a consumer can never get stuck behind a big batch.

Fetch sessions (KIP-227) are declined by answering session id 0, which every client
treats as "keep sending full fetch requests".
"""

from __future__ import annotations

import asyncio

from seaway.broker.context import BrokerContext, RequestContext
from seaway.broker.handlers.registry import handles
from seaway.protocol.errors import KafkaProtocolError, UnknownTopicOrPartitionError
from seaway.protocol.messages.fetch_request import FetchRequest
from seaway.protocol.messages.fetch_response import FetchableTopicResponse, FetchResponse, PartitionData

__all__ = ["handle_fetch"]


def _read_all(broker: BrokerContext, request: FetchRequest) -> tuple[list[FetchableTopicResponse], int, bool]:
    """One pass over the requested partitions: (responses, bytes found, any error)."""
    budget = request.max_bytes if request.max_bytes > 0 else 0x7FFFFFFF
    total = 0
    errors = False
    first_data = True
    logs = broker.logs
    out: list[FetchableTopicResponse] = []
    for topic in request.topics:
        parts: list[PartitionData] = []
        for p in topic.partitions:
            plog = logs.get_log(topic.topic, p.partition)
            if plog is None:
                errors = True
                parts.append(PartitionData(partition_index=p.partition,
                                           error_code=UnknownTopicOrPartitionError.code,
                                           high_watermark=-1, last_stable_offset=-1, log_start_offset=-1,
                                           records=b""))
                continue
            hw = plog.log_end_offset
            region = None
            error_code = 0
            limit = min(p.partition_max_bytes, budget)
            if p.fetch_offset != hw and (limit > 0 or first_data):
                try:
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
                    last_stable_offset=hw,
                    log_start_offset=plog.log_start_offset,
                    aborted_transactions=None,
                    records=region if size else b"",
                )
            )
        out.append(FetchableTopicResponse(topic=topic.topic, partitions=parts))
    return out, total, errors


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


@handles(FetchRequest, FetchResponse)
async def handle_fetch(ctx: RequestContext, request: FetchRequest) -> FetchResponse:
    broker = ctx.broker
    responses, total, errors = _read_all(broker, request)
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
            responses, total, errors = _read_all(broker, request)
            if total >= request.min_bytes or errors:
                break
    return FetchResponse(throttle_time_ms=0, error_code=0, session_id=0, responses=responses)
