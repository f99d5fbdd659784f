"""Produce: append record batches verbatim, answer with the assigned base offsets.

The batch bytes are validated (header, CRC) and stamped with offsets by the log; records
are never decoded here. acks=0 gets no response; acks=1 and acks=-1 are answered once the
write is in the OS page cache (a single node is the whole ISR), and fsync follows the
flush policy, as Kafka does.

Every partition's records go through the log's one door, ``PartitionLog.append``, which
refuses keyless records on compacted topics (INVALID_RECORD with ``record_errors``). With
the producer layer installed (``components.producer_state``) its guard checks idempotent
batches there (a duplicate comes back with its original offsets); a request with a
transactional id gets the transaction coordinator's guard instead (KIP-890's check of a
transaction's first batch per partition). Batches of ordinary producers never reach a guard.

Internal topics (``__consumer_offsets``, ``__transaction_state``) are refused with
INVALID_TOPIC_EXCEPTION, whatever the client id (Kafka lets ``__admin_client`` through; see
:mod:`.internal_topics`), after the ACL and existence checks and KIP-890's verification, as
Kafka's ``ReplicaManager`` does.
"""

from __future__ import annotations

from seaway.broker.context import Operation, RequestContext, ResourceType, now_ms
from seaway.broker.coordinator.txn import transactional_guard, transactional_verification
from seaway.broker.decompression import append_produced, throttle_time_ms
from seaway.broker.handlers.internal_topics import INTERNAL_TOPICS, TxnVerification, produce_refusal
from seaway.broker.handlers.registry import handles
from seaway.broker.log.partition_log import AppendGuard
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


def _transactional_guard(ctx: RequestContext, transactional_id: str) -> (
    tuple[AppendGuard | None, TxnVerification | None, tuple[type[KafkaProtocolError], str] | None]
):
    """(guard, verification, refusal) of a request that carries a transactional id: WRITE on
    the id is required (Kafka's rule), then batches go through the transaction-aware guard
    (the verification alone serves batches refused afterwards, to internal topics)."""
    if not ctx.allowed(Operation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
        return None, None, (TransactionalIdAuthorizationFailedError,
                            f"Not authorized to use transactional id {transactional_id!r}")
    components = ctx.broker.components
    producers = components.producer_state
    if components.txn_coordinator is None or producers is None:
        return None, None, (TransactionalIdAuthorizationFailedError,
                            "this broker runs without a transaction coordinator")
    return (transactional_guard(producers, transactional_id, ctx.api_version),
            transactional_verification(producers, transactional_id, ctx.api_version), None)


@handles(ProduceRequest, ProduceResponse)
async def handle_produce(ctx: RequestContext, request: ProduceRequest) -> ProduceResponse | None:
    broker = ctx.broker
    get_log = broker.logs.get_log
    waiting = broker.waiters.pending  # a dict, empty unless a fetch long-polls
    notify = broker.waiters.notify
    acks = request.acks
    now = now_ms()
    producers = broker.components.producer_state
    guard: AppendGuard | None = None if producers is None else producers.guard
    verify: TxnVerification | None = None
    # A reason to refuse every partition of the request, checked once.
    refusal: tuple[type[KafkaProtocolError], str] | None = None
    if acks not in (0, 1, -1):
        refusal = (InvalidRequiredAcksError, f"acks={acks} is not 0, 1 or -1")
    elif request.transactional_id is not None:
        guard, verify, refusal = _transactional_guard(ctx, request.transactional_id)
    appended = False
    responses: list[TopicProduceResponse] = []
    for topic in request.topic_data:
        name = topic.name
        parts: list[PartitionProduceResponse] = []
        messages = nbytes = 0  # for seaway.broker.metrics: counted per topic, never per record
        denied = not ctx.allowed(Operation.WRITE, ResourceType.TOPIC, name)  # ACLs: WRITE on the topic
        internal = name in INTERNAL_TOPICS
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
            if internal:  # __consumer_offsets, __transaction_state: the broker's own state
                refused = produce_refusal(name, plog, records, verify)
                if refused is not None:
                    parts.append(_error(index, refused))
                    continue
            if records is None or len(records) == 0:
                parts.append(PartitionProduceResponse(index, 0, plog.log_end_offset, -1, plog.log_start_offset))
                continue
            try:
                # A decoded request holds a view of its buffer (RecordsChunk is the fetch side's).
                header = plog.check_single(records, now)  # type: ignore[arg-type]
                if header is not None:  # the common case, checked in one call: append it here
                    result = plog.append(records, now_ms=now, guard=guard, validated=[header])  # type: ignore[arg-type]
                else:  # anything else, compressed batches on the validation threads
                    result = await append_produced(ctx, plog, records, now, guard)  # type: ignore[arg-type]
            except KafkaProtocolError as exc:
                parts.append(_error(index, exc))
                continue
            except OSError as exc:
                parts.append(_error(index, UnknownServerError, f"storage error: {exc}"))
                continue
            if waiting:
                notify(name, index)
            appended = True
            messages += result.last_offset - result.base_offset + 1
            nbytes += len(records)
            # Positional: (index, error_code, base_offset, log_append_time_ms, log_start_offset).
            parts.append(PartitionProduceResponse(
                index, 0, result.base_offset, result.log_append_time_ms, result.log_start_offset
            ))
        responses.append(TopicProduceResponse(name=name, partition_responses=parts))
        if broker.metrics is not None:
            broker.metrics.produced(name, messages, nbytes, sum(1 for p in parts if p.error_code))
    if acks == 0:
        return None
    fault = broker.components.produce_fault
    if fault is not None and appended and fault.should_drop():
        # Test-only (seaway.test.fault.drop.produce.response.after.append): raising out of
        # the handler makes the connection close without answering, after the append.
        raise ProduceResponseDropped("test fault: produce response dropped after the append")
    return ProduceResponse(responses=responses, throttle_time_ms=throttle_time_ms(ctx))
