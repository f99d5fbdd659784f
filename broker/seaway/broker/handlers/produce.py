"""Produce: append record batches verbatim, answer with the assigned base offsets.

The batch bytes are validated (header, CRC) and stamped with offsets by the log; records
are never decoded here. acks=0 gets no response; acks=1 and acks=-1 are answered once the
write is in the OS page cache (a single node is the whole ISR), and fsync follows the
flush policy, as Kafka does.

With the producer layer installed, appends go through its ``appender`` component, which
checks idempotent batches (a duplicate comes back with its original offsets) and refuses
keyless records on compacted topics (INVALID_RECORD with ``record_errors``). A request with
a transactional id goes through the transaction coordinator's ``txn_appender`` instead
(KIP-890's check of a transaction's first batch per partition); the ordinary path does
not change.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from seaway.broker.context import Operation, RequestContext, ResourceType, now_ms
from seaway.broker.coordinator.txn import TXN_APPENDER_COMPONENT
from seaway.broker.handlers.registry import handles
from seaway.broker.log.partition_log import AppendResult
from seaway.broker.producer.fault import ProduceResponseDropped
from seaway.protocol.errors import (
    InvalidRequiredAcksError,
    KafkaProtocolError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
)
from seaway.protocol.messages.produce_request import ProduceRequest
from seaway.protocol.messages.produce_response import (
    BatchIndexAndErrorMessage,
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)

__all__ = ["handle_produce"]


def _error(index: int, exc: type[KafkaProtocolError] | KafkaProtocolError, message: str | None = None) -> (
    PartitionProduceResponse
):
    # Per-record errors (e.g. keyless records on a compacted topic) ride on the exception.
    record_errors: list[tuple[int, str]] = getattr(exc, "record_errors", None) or []
    return PartitionProduceResponse(
        index=index,
        error_code=exc.code,
        base_offset=-1,
        log_append_time_ms=-1,
        log_start_offset=-1,
        record_errors=[
            BatchIndexAndErrorMessage(batch_index=i, batch_index_error_message=text) for i, text in record_errors
        ],
        error_message=message if message is not None else (str(exc) or None),
    )


def _transactional_appender(ctx: RequestContext, transactional_id: str) -> (
    tuple[Callable[..., AppendResult] | None, tuple[type[KafkaProtocolError], str] | None]
):
    """(appender, refusal) of a request that carries a transactional id: WRITE on the id is
    required (Kafka's rule), then batches go through the transaction-aware appender."""
    if not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
        return None, (TransactionalIdAuthorizationFailedError,
                      f"Not authorized to use transactional id {transactional_id!r}")
    append = ctx.broker.components.get(TXN_APPENDER_COMPONENT)
    if append is None:
        return None, (TransactionalIdAuthorizationFailedError, "this broker runs without a transaction coordinator")
    return functools.partial(append, transactional_id=transactional_id, version=ctx.api_version), None


@handles(ProduceRequest, ProduceResponse)
async def handle_produce(ctx: RequestContext, request: ProduceRequest) -> ProduceResponse | None:
    broker = ctx.broker
    get_log = broker.logs.get_log
    waiting = broker.waiters.pending  # a dict, empty unless a fetch long-polls
    notify = broker.waiters.notify
    acks = request.acks
    now = now_ms()
    appender = broker.components.get("appender")
    # A reason to refuse every partition of the request, checked once.
    refusal: tuple[type[KafkaProtocolError], str] | None = None
    if acks not in (0, 1, -1):
        refusal = (InvalidRequiredAcksError, f"acks={acks} is not 0, 1 or -1")
    elif request.transactional_id is not None:
        appender, refusal = _transactional_appender(ctx, request.transactional_id)
    appended = False
    responses: list[TopicProduceResponse] = []
    for topic in request.topic_data:
        name = topic.name
        parts: list[PartitionProduceResponse] = []
        denied = not ctx.allowed(Operation.WRITE, ResourceType.TOPIC, name)  # ACLs: WRITE on the topic
        for pdata in topic.partition_data:
            index = pdata.index
            if refusal is not None:
                parts.append(_error(index, *refusal))
                continue
            if denied:
                parts.append(_error(index, TopicAuthorizationFailedError, f"Not authorized to write to {name}"))
                continue
            plog = get_log(name, index)
            if plog is None:
                parts.append(_error(index, UnknownTopicOrPartitionError, f"{name}-{index} does not exist"))
                continue
            records = pdata.records
            if records is None or len(records) == 0:
                parts.append(PartitionProduceResponse(index, 0, plog.log_end_offset, -1, plog.log_start_offset))
                continue
            try:
                result = (
                    appender(plog, records, now)
                    if appender is not None
                    else plog.append(records, now_ms=now)  # type: ignore[arg-type]
                )
            except KafkaProtocolError as exc:
                parts.append(_error(index, exc))
                continue
            except OSError as exc:
                parts.append(_error(index, UnknownServerError, f"storage error: {exc}"))
                continue
            if waiting:
                notify(name, index)
            appended = True
            # Positional: (index, error_code, base_offset, log_append_time_ms, log_start_offset).
            parts.append(PartitionProduceResponse(
                index, 0, result.base_offset, result.log_append_time_ms, result.log_start_offset
            ))
        responses.append(TopicProduceResponse(name=name, partition_responses=parts))
    if acks == 0:
        return None
    fault = broker.components.get("produce_fault")
    if fault is not None and appended and fault.should_drop():
        # Test-only (seaway.test.fault.drop.produce.response.after.append): raising out of
        # the handler makes the connection close without answering, after the append.
        raise ProduceResponseDropped("test fault: produce response dropped after the append")
    return ProduceResponse(responses=responses)
