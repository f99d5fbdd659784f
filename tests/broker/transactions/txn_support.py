"""Helpers shared by the transaction tests: read a topic as a consumer would, at either
isolation level, and ask the broker about transactions over the wire."""

from __future__ import annotations

import time
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from seaway.protocol.messages.describe_transactions_request import DescribeTransactionsRequest
from seaway.protocol.messages.describe_transactions_response import DescribeTransactionsResponse
from seaway.protocol.messages.list_offsets_request import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from seaway.protocol.messages.list_offsets_response import ListOffsetsResponse

from tests.broker.admin.rawclient import call
from tests.support.optional import present

READ_COMMITTED = "read_committed"
READ_UNCOMMITTED = "read_uncommitted"


def read_values(bootstrap: str, topic: str, partitions: int, isolation: str, timeout: float = 20.0
                ) -> list[tuple[int, int, str]]:
    """Every record a consumer at ``isolation`` can read now: (partition, offset, value), by
    partition and offset. Reads until each partition reports its end (the LSO for
    read_committed, the high watermark otherwise)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{time.monotonic_ns()}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "isolation.level": isolation, "fetch.wait.max.ms": 50})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: list[tuple[int, int, str]] = []
    ended: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        while len(ended) < partitions:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: only partitions {sorted(ended)} reached their end")
            for msg in consumer.consume(500, timeout=0.2):
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        ended.add(present(msg.partition()))
                        continue
                    raise KafkaException(err)
                partition = present(msg.partition())
                ended.discard(partition)
                out.append((partition, present(msg.offset()), present(msg.value()).decode()))
    finally:
        consumer.close()
    return sorted(out)


def list_offset(bootstrap: str, topic: str, partition: int, *, committed: bool, timestamp: int = -1) -> Any:
    """ListOffsets v7 for one partition at an isolation level: the partition response."""
    request = ListOffsetsRequest(replica_id=-1, isolation_level=1 if committed else 0, topics=[
        ListOffsetsTopic(name=topic, partitions=[ListOffsetsPartition(partition_index=partition,
                                                                      timestamp=timestamp)])])
    response: ListOffsetsResponse = call(bootstrap, request, ListOffsetsResponse, 7)
    return response.topics[0].partitions[0]


def describe_transaction(bootstrap: str, transactional_id: str) -> Any:
    request = DescribeTransactionsRequest(transactional_ids=[transactional_id])
    response: DescribeTransactionsResponse = call(bootstrap, request, DescribeTransactionsResponse, 0)
    return response.transaction_states[0]


def wait_until(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)
