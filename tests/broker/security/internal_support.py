"""Crafted requests against a broker's internal topics, over Seaway's own protocol client.

confluent-kafka cannot produce a transactional batch into a partition it did not add through
AddPartitionsToTxn, nor pick its client id per request, nor ask for a partition of a topic it
has no metadata for: these helpers send exactly the request a hostile client would, and
return the broker's answer (error code and message) instead of raising. They work against
any Kafka broker (the peer tests send the same requests to Apache Kafka's).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from seaway.protocol.client import KafkaConnection
from seaway.protocol.messages.add_offsets_to_txn_request import AddOffsetsToTxnRequest
from seaway.protocol.messages.add_offsets_to_txn_response import AddOffsetsToTxnResponse
from seaway.protocol.messages.add_partitions_to_txn_request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from seaway.protocol.messages.add_partitions_to_txn_response import AddPartitionsToTxnResponse
from seaway.protocol.messages.delete_records_request import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from seaway.protocol.messages.delete_records_response import DeleteRecordsResponse
from seaway.protocol.messages.end_txn_request import EndTxnRequest
from seaway.protocol.messages.end_txn_response import EndTxnResponse
from seaway.protocol.messages.init_producer_id_request import InitProducerIdRequest
from seaway.protocol.messages.init_producer_id_response import InitProducerIdResponse
from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.messages.produce_response import ProduceResponse
from seaway.protocol.records import Record, build_batch

__all__ = ["Answer", "TxnProducer", "add_offsets", "add_partitions_as_broker", "delete_records", "end_txn",
           "init_txn_producer", "produce", "record_batch"]

ADMIN_CLIENT_ID = "__admin_client"
"""Kafka's ``AdminUtils.ADMIN_CLIENT_ID``."""


@dataclass(frozen=True)
class Answer:
    """One partition's answer: its error code and message (None when the broker sends none)."""

    code: int
    message: str | None = None


@dataclass(frozen=True)
class TxnProducer:
    transactional_id: str
    producer_id: int
    producer_epoch: int


def record_batch(key: bytes | None = b"forged-key", value: bytes | None = b"forged-value", *,
                 producer: TxnProducer | None = None, idempotent: tuple[int, int] | None = None,
                 count: int = 1) -> bytes:
    """A valid v2 batch of ``count`` records: plain, idempotent (producer id, epoch) or transactional."""
    now = int(time.time() * 1000)
    records = [Record(i, now, key, value) for i in range(count)]
    if producer is not None:
        return build_batch(records, producer_id=producer.producer_id, producer_epoch=producer.producer_epoch,
                           base_sequence=0, is_transactional=True)
    if idempotent is not None:
        return build_batch(records, producer_id=idempotent[0], producer_epoch=idempotent[1], base_sequence=0)
    return build_batch(records)


async def _connect(bootstrap: str, client_id: str) -> KafkaConnection:
    return await KafkaConnection.open_any(bootstrap, client_id)


async def produce(bootstrap: str, topic: str, partition: int, batch: bytes, *, client_id: str = "hostile-client",
                  transactional_id: str | None = None, cap: int | None = None) -> Answer:
    """Produce ``batch`` with acks=-1; the partition's answer."""
    conn = await _connect(bootstrap, client_id)
    try:
        request = ProduceRequest(transactional_id=transactional_id, acks=-1, timeout_ms=10_000, topic_data=[
            TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=partition,
                                                                              records=bytearray(batch))])])
        response, _ = await conn.call(request, ProduceResponse, cap=cap)
    finally:
        await conn.close()
    answer = response.responses[0].partition_responses[0]
    return Answer(answer.error_code, answer.error_message)


async def delete_records(bootstrap: str, topic: str, partition: int, offset: int = -1) -> Answer:
    conn = await _connect(bootstrap, "hostile-client")
    try:
        request = DeleteRecordsRequest(topics=[DeleteRecordsTopic(name=topic, partitions=[
            DeleteRecordsPartition(partition_index=partition, offset=offset)])], timeout_ms=10_000)
        response, _ = await conn.call(request, DeleteRecordsResponse)
    finally:
        await conn.close()
    return Answer(response.topics[0].partitions[0].error_code)


async def init_txn_producer(bootstrap: str, transactional_id: str, timeout_ms: int = 60_000) -> TxnProducer:
    conn = await _connect(bootstrap, "hostile-client")
    try:
        for _ in range(100):  # the coordinator may still be loading right after a start
            response, _ = await conn.call(InitProducerIdRequest(transactional_id=transactional_id,
                                                                transaction_timeout_ms=timeout_ms),
                                          InitProducerIdResponse)
            if response.error_code == 0:
                return TxnProducer(transactional_id, response.producer_id, response.producer_epoch)
            await asyncio.sleep(0.1)
    finally:
        await conn.close()
    raise AssertionError(f"InitProducerId kept failing with error {response.error_code}")


async def add_offsets(bootstrap: str, producer: TxnProducer, group_id: str) -> int:
    """AddOffsetsToTxn: puts the group's ``__consumer_offsets`` partition into the transaction."""
    conn = await _connect(bootstrap, "hostile-client")
    try:
        response, _ = await conn.call(AddOffsetsToTxnRequest(
            transactional_id=producer.transactional_id, producer_id=producer.producer_id,
            producer_epoch=producer.producer_epoch, group_id=group_id), AddOffsetsToTxnResponse)
    finally:
        await conn.close()
    return int(response.error_code)


async def add_partitions_as_broker(bootstrap: str, producer: TxnProducer, topic: str, partition: int) -> int:
    """AddPartitionsToTxn v4+ (Kafka's broker-to-broker form, CLUSTER_ACTION): the partition's code.

    The client form (v0-v3) refuses internal topics; this one does not look at the topic.
    """
    conn = await _connect(bootstrap, "hostile-client")
    try:
        response, _ = await conn.call(AddPartitionsToTxnRequest(transactions=[AddPartitionsToTxnTransaction(
            transactional_id=producer.transactional_id, producer_id=producer.producer_id,
            producer_epoch=producer.producer_epoch, verify_only=False,
            topics=[AddPartitionsToTxnTopic(name=topic, partitions=[partition])])]), AddPartitionsToTxnResponse)
    finally:
        await conn.close()
    if response.error_code:
        return int(response.error_code)
    return int(response.results_by_transaction[0].topic_results[0].results_by_partition[0].partition_error_code)


async def end_txn(bootstrap: str, producer: TxnProducer, commit: bool) -> int:
    conn = await _connect(bootstrap, "hostile-client")
    try:
        response, _ = await conn.call(EndTxnRequest(
            transactional_id=producer.transactional_id, producer_id=producer.producer_id,
            producer_epoch=producer.producer_epoch, committed=commit), EndTxnResponse, cap=4)
    finally:
        await conn.close()
    return int(response.error_code)
