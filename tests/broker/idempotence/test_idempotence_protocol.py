"""Idempotent produce at the wire: InitProducerId, sequence and epoch errors, duplicates, restarts.

Batches are built with ``seaway.protocol.records.build_batch`` and sent as ProduceRequest v9
over a plain socket, so every header field is under the test's control.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from seaway.protocol.messages.init_producer_id_request import InitProducerIdRequest
from seaway.protocol.messages.init_producer_id_response import InitProducerIdResponse
from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.messages.produce_response import PartitionProduceResponse, ProduceResponse
from seaway.protocol.records import Record, build_batch

from tests.broker.admin.rawclient import call
from tests.broker.clients.test_confluent_clients import create_topic
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)

OUT_OF_ORDER_SEQUENCE_NUMBER = 45
INVALID_PRODUCER_EPOCH = 47
INVALID_REQUEST = 42
INVALID_RECORD = 87


def init_producer_id(bootstrap: str, transactional_id: str | None = None, version: int = 4) -> Any:
    request = InitProducerIdRequest(transactional_id=transactional_id, transaction_timeout_ms=60000)
    return call(bootstrap, request, InitProducerIdResponse, version)


def batch(pid: int, epoch: int, seq: int, n: int = 3, key: bytes | None = b"k") -> bytes:
    now = int(time.time() * 1000)
    records = [Record(i, now, key, f"v{seq + i}".encode()) for i in range(n)]
    return build_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def produce(bootstrap: str, topic: str, records: bytes) -> PartitionProduceResponse:
    request = ProduceRequest(
        acks=-1,
        timeout_ms=5000,
        topic_data=[TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=0, records=records)])],
    )
    response: ProduceResponse = call(bootstrap, request, ProduceResponse, 9)
    part: PartitionProduceResponse = response.responses[0].partition_responses[0]
    return part


def test_init_producer_id_allocates_fresh_ids_never_reused_after_restart(broker: BrokerProcess) -> None:
    first = init_producer_id(broker.bootstrap)
    second = init_producer_id(broker.bootstrap, version=0)
    assert (first.error_code, first.producer_epoch, second.error_code) == (0, 0, 0)
    assert second.producer_id > first.producer_id >= 0
    broker.kill()  # no clean shutdown: the persisted block still rules
    broker.start()
    third = init_producer_id(broker.bootstrap)
    assert third.error_code == 0 and third.producer_id > second.producer_id
    deadline = time.monotonic() + 20  # the transaction coordinator's answer, once it has loaded
    while (tx := init_producer_id(broker.bootstrap, "my-transactional-id")).error_code in (14, 15):
        assert time.monotonic() < deadline, "the transaction coordinator did not load"
        time.sleep(0.05)
    assert (tx.error_code, tx.producer_epoch) == (0, 0) and tx.producer_id > third.producer_id
    assert init_producer_id(broker.bootstrap, "").error_code == INVALID_REQUEST


def test_sequence_epoch_and_duplicate_rules(shared_broker: BrokerProcess, topic_name: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic_name)
    pid = init_producer_id(bootstrap).producer_id

    first = batch(pid, 0, 0)
    assert (produce(bootstrap, topic_name, first).error_code, produce(bootstrap, topic_name, first).base_offset) == (
        0, 0), "a retried batch is acknowledged with its original offset"
    assert produce(bootstrap, topic_name, batch(pid, 0, 3)).base_offset == 3

    gap = produce(bootstrap, topic_name, batch(pid, 0, 9))
    assert gap.error_code == OUT_OF_ORDER_SEQUENCE_NUMBER and gap.base_offset == -1
    assert produce(bootstrap, topic_name, batch(pid, 0, 5)).error_code == OUT_OF_ORDER_SEQUENCE_NUMBER

    assert produce(bootstrap, topic_name, batch(pid, 1, 7)).error_code == OUT_OF_ORDER_SEQUENCE_NUMBER, (
        "a new epoch starts at sequence 0")
    assert produce(bootstrap, topic_name, batch(pid, 1, 0)).base_offset == 6
    stale = produce(bootstrap, topic_name, batch(pid, 0, 6))
    assert stale.error_code == INVALID_PRODUCER_EPOCH
    assert produce(bootstrap, topic_name, batch(pid, 0, 0)).error_code == INVALID_PRODUCER_EPOCH, (
        "a batch of an older epoch is not a duplicate")

    # A producer the partition has never seen may start anywhere (KIP-360).
    other = init_producer_id(bootstrap).producer_id
    assert produce(bootstrap, topic_name, batch(other, 0, 42)).base_offset == 9
    # Only the last five batches of a producer are remembered, as in Kafka.
    for i in range(6):
        assert produce(bootstrap, topic_name, batch(other, 0, 45 + 3 * i)).error_code == 0
    assert produce(bootstrap, topic_name, batch(other, 0, 42)).error_code == OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(bootstrap, topic_name, batch(other, 0, 45 + 3 * 5)).base_offset == 27
    assert produce(bootstrap, topic_name, batch(-1, -1, -1)).base_offset == 30, "non-idempotent batches pass"


@pytest.mark.parametrize("how", ["clean", "kill"])
def test_duplicates_are_caught_after_a_restart(broker: BrokerProcess, topic_name: str, how: str) -> None:
    create_topic(broker.bootstrap, topic_name)
    pid = init_producer_id(broker.bootstrap).producer_id
    sent = [batch(pid, 0, 3 * i) for i in range(8)]
    offsets = [produce(broker.bootstrap, topic_name, b).base_offset for b in sent]
    assert offsets == [3 * i for i in range(8)]
    if how == "clean":
        broker.restart()  # writes a producer snapshot at shutdown
        snapshots = list(broker.data_dir.glob(f"{topic_name}-0/*.snapshot"))
        assert [p.name for p in snapshots] == [f"{24:020d}.snapshot"]
    else:
        broker.kill()  # no snapshot: state is rebuilt from the batch headers
        broker.start()
    for i in range(3, 8):
        again = produce(broker.bootstrap, topic_name, sent[i])
        assert (again.error_code, again.base_offset) == (0, 3 * i)
    assert produce(broker.bootstrap, topic_name, batch(pid, 0, 27)).error_code == OUT_OF_ORDER_SEQUENCE_NUMBER
    assert produce(broker.bootstrap, topic_name, batch(pid, 0, 24)).base_offset == 24


def test_keyless_records_on_a_compacted_topic_get_record_errors(shared_broker: BrokerProcess, topic_name: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, config={"cleanup.policy": "compact,delete"})
    now = int(time.time() * 1000)
    records = [Record(0, now, b"a", b"1"), Record(1, now, None, b"2"), Record(2, now, b"c", None)]
    refused = produce(shared_broker.bootstrap, topic_name, build_batch(records))
    assert refused.error_code == INVALID_RECORD
    assert [e.batch_index for e in refused.record_errors] == [1]
    assert "without key" in (refused.error_message or "")
    keyed = [Record(0, now, b"a", b"1"), Record(1, now, b"c", None)]
    accepted = produce(shared_broker.bootstrap, topic_name, build_batch(keyed))
    assert (accepted.error_code, accepted.base_offset) == (0, 0)
