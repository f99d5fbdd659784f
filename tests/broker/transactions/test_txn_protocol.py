"""The transaction APIs at the wire, error code by error code, as Kafka answers them.

Requests are built from the generated messages and sent over a plain socket at chosen
versions, so every field (producer id, epoch, transactional id, version-dependent error
codes) is under the test's control.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient
from seaway.protocol.messages.add_offsets_to_txn_request import AddOffsetsToTxnRequest
from seaway.protocol.messages.add_offsets_to_txn_response import AddOffsetsToTxnResponse
from seaway.protocol.messages.add_partitions_to_txn_request import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from seaway.protocol.messages.add_partitions_to_txn_response import AddPartitionsToTxnResponse
from seaway.protocol.messages.end_txn_request import EndTxnRequest
from seaway.protocol.messages.end_txn_response import EndTxnResponse
from seaway.protocol.messages.find_coordinator_request import FindCoordinatorRequest
from seaway.protocol.messages.find_coordinator_response import FindCoordinatorResponse
from seaway.protocol.messages.init_producer_id_request import InitProducerIdRequest
from seaway.protocol.messages.init_producer_id_response import InitProducerIdResponse
from seaway.protocol.messages.list_transactions_request import ListTransactionsRequest
from seaway.protocol.messages.list_transactions_response import ListTransactionsResponse
from seaway.protocol.messages.offset_fetch_request import OffsetFetchRequest, OffsetFetchRequestTopic
from seaway.protocol.messages.offset_fetch_response import OffsetFetchResponse
from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.messages.produce_response import PartitionProduceResponse, ProduceResponse
from seaway.protocol.messages.txn_offset_commit_request import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from seaway.protocol.messages.txn_offset_commit_response import TxnOffsetCommitResponse
from seaway.protocol.records import Record, build_batch

from tests.broker.admin.rawclient import call
from tests.broker.clients.test_confluent_clients import create_topic
from tests.broker.transactions.txn_support import describe_transaction, list_offset
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(90)

NONE = 0
UNKNOWN_TOPIC_OR_PARTITION = 3
NOT_ENOUGH_REPLICAS = 19
ILLEGAL_GENERATION = 22
UNKNOWN_MEMBER_ID = 25
TOPIC_AUTHORIZATION_FAILED = 29
INVALID_REQUEST = 42
INVALID_PRODUCER_EPOCH = 47
INVALID_TXN_STATE = 48
INVALID_PRODUCER_ID_MAPPING = 49
INVALID_TRANSACTION_TIMEOUT = 50
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
OPERATION_NOT_ATTEMPTED = 55
UNSTABLE_OFFSET_COMMIT = 88
PRODUCER_FENCED = 90
TRANSACTIONAL_ID_NOT_FOUND = 105
TRANSACTION_ABORTABLE = 120


def _init(bootstrap: str, txn_id: str | None, *, version: int = 4, timeout_ms: int = 60000,
          pid: int = -1, epoch: int = -1) -> Any:
    request = InitProducerIdRequest(transactional_id=txn_id, transaction_timeout_ms=timeout_ms, producer_id=pid,
                                    producer_epoch=epoch)
    return call(bootstrap, request, InitProducerIdResponse, version)


def _add(bootstrap: str, txn_id: str, pid: int, epoch: int, partitions: list[tuple[str, int]],
         version: int = 3) -> dict[tuple[str, int], int]:
    topics = [AddPartitionsToTxnTopic(name=t, partitions=[p for tt, p in partitions if tt == t])
              for t in dict.fromkeys(t for t, _ in partitions)]
    request = AddPartitionsToTxnRequest(v3_and_below_transactional_id=txn_id, v3_and_below_producer_id=pid,
                                        v3_and_below_producer_epoch=epoch, v3_and_below_topics=topics)
    response: AddPartitionsToTxnResponse = call(bootstrap, request, AddPartitionsToTxnResponse, version)
    return {(t.name, r.partition_index): r.partition_error_code
            for t in response.results_by_topic_v3_and_below for r in t.results_by_partition}


def _end(bootstrap: str, txn_id: str, pid: int, epoch: int, commit: bool, version: int = 3) -> int:
    request = EndTxnRequest(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, committed=commit)
    response: EndTxnResponse = call(bootstrap, request, EndTxnResponse, version)
    return response.error_code


def _produce(bootstrap: str, topic: str, records: bytes, txn_id: str | None, version: int = 9,
             partition: int = 0) -> PartitionProduceResponse:
    request = ProduceRequest(transactional_id=txn_id, acks=-1, timeout_ms=5000, topic_data=[
        TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=partition, records=records)])])
    response: ProduceResponse = call(bootstrap, request, ProduceResponse, version)
    part: PartitionProduceResponse = response.responses[0].partition_responses[0]
    return part


def _batch(pid: int, epoch: int, seq: int, *, transactional: bool = True, n: int = 2) -> bytes:
    now = int(time.time() * 1000)
    return build_batch([Record(i, now, b"k", f"v{seq + i}".encode()) for i in range(n)], producer_id=pid,
                       producer_epoch=epoch, base_sequence=seq, is_transactional=transactional)


def _txn() -> str:
    return f"wire-{uuid.uuid4().hex[:10]}"


@pytest.fixture(autouse=True)
def _coordinator_ready(shared_broker: BrokerProcess) -> None:
    """A just-started broker answers COORDINATOR_NOT_AVAILABLE until __transaction_state is
    made (clients retry it); these raw requests wait for that first."""
    deadline = time.monotonic() + 20
    while True:
        found: FindCoordinatorResponse = call(shared_broker.bootstrap, FindCoordinatorRequest(key="x", key_type=1),
                                              FindCoordinatorResponse, 3)
        if found.error_code == NONE or time.monotonic() > deadline:
            return
        time.sleep(0.05)


def test_find_coordinator_answers_transactional_ids(shared_broker: BrokerProcess) -> None:
    single: FindCoordinatorResponse = call(shared_broker.bootstrap, FindCoordinatorRequest(key="t1", key_type=1),
                                           FindCoordinatorResponse, 3)
    assert (single.error_code, single.port) == (NONE, shared_broker.port)
    batch: FindCoordinatorResponse = call(
        shared_broker.bootstrap, FindCoordinatorRequest(key_type=1, coordinator_keys=["a", "b"]),
        FindCoordinatorResponse, 4)
    assert [(c.key, c.error_code, c.port) for c in batch.coordinators] == [
        ("a", NONE, shared_broker.port), ("b", NONE, shared_broker.port)]


def test_init_producer_id_epochs_fencing_and_kip_360(shared_broker: BrokerProcess) -> None:
    bootstrap, txn_id = shared_broker.bootstrap, _txn()
    first = _init(bootstrap, txn_id)
    assert (first.error_code, first.producer_epoch) == (NONE, 0)
    second = _init(bootstrap, txn_id)  # a new producer instance: same id, epoch + 1
    assert (second.error_code, second.producer_id, second.producer_epoch) == (NONE, first.producer_id, 1)
    bumped = _init(bootstrap, txn_id, pid=first.producer_id, epoch=1, version=3)  # KIP-360: the same producer
    assert (bumped.error_code, bumped.producer_epoch) == (NONE, 2)
    retried = _init(bootstrap, txn_id, pid=first.producer_id, epoch=1, version=3)  # its answer was lost
    assert (retried.error_code, retried.producer_epoch) == (NONE, 2)
    assert _init(bootstrap, txn_id, pid=first.producer_id, epoch=0).error_code == PRODUCER_FENCED
    assert _init(bootstrap, txn_id, pid=first.producer_id, epoch=0, version=3).error_code == INVALID_PRODUCER_EPOCH
    assert _init(bootstrap, txn_id, pid=first.producer_id + 999, epoch=2).error_code == PRODUCER_FENCED
    assert _init(bootstrap, txn_id, pid=first.producer_id).error_code == INVALID_REQUEST  # epoch missing
    assert _init(bootstrap, txn_id, timeout_ms=900001).error_code == INVALID_TRANSACTION_TIMEOUT
    assert _init(bootstrap, txn_id, timeout_ms=0).error_code == INVALID_TRANSACTION_TIMEOUT
    assert _init(bootstrap, "").error_code == INVALID_REQUEST
    assert describe_transaction(bootstrap, txn_id).producer_epoch == 2


def test_add_partitions_errors(shared_broker: BrokerProcess, topic_name: str) -> None:
    bootstrap, txn_id = shared_broker.bootstrap, _txn()
    create_topic(bootstrap, topic_name, 2)
    init = _init(bootstrap, txn_id)
    pid, epoch = init.producer_id, init.producer_epoch
    assert _add(bootstrap, txn_id, pid, epoch, [(topic_name, 0), ("no-such-topic", 0)]) == {
        (topic_name, 0): OPERATION_NOT_ATTEMPTED, ("no-such-topic", 0): UNKNOWN_TOPIC_OR_PARTITION}
    assert _add(bootstrap, txn_id, pid, epoch, [(topic_name, 0), ("__consumer_offsets", 0)]) == {
        (topic_name, 0): OPERATION_NOT_ATTEMPTED, ("__consumer_offsets", 0): TOPIC_AUTHORIZATION_FAILED}
    assert describe_transaction(bootstrap, txn_id).transaction_state == "Empty", "nothing was added"
    assert _add(bootstrap, txn_id, pid + 1, epoch, [(topic_name, 0)]) == {(topic_name, 0): INVALID_PRODUCER_ID_MAPPING}
    assert _add(bootstrap, txn_id, pid, epoch + 1, [(topic_name, 0)]) == {(topic_name, 0): PRODUCER_FENCED}
    assert _add(bootstrap, txn_id, pid, epoch + 1, [(topic_name, 0)], version=1) == {
        (topic_name, 0): INVALID_PRODUCER_EPOCH}
    assert _add(bootstrap, _txn(), pid, epoch, [(topic_name, 0)]) == {(topic_name, 0): INVALID_PRODUCER_ID_MAPPING}
    assert _add(bootstrap, txn_id, pid, epoch, [(topic_name, 0)]) == {(topic_name, 0): NONE}
    # v4+: the batched, broker-to-broker form; verify_only checks without adding
    request = AddPartitionsToTxnRequest(transactions=[AddPartitionsToTxnTransaction(
        transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, verify_only=True,
        topics=[AddPartitionsToTxnTopic(name=topic_name, partitions=[0, 1])])])
    response: AddPartitionsToTxnResponse = call(bootstrap, request, AddPartitionsToTxnResponse, 5)
    assert response.error_code == NONE
    result = response.results_by_transaction[0]
    assert {r.partition_index: r.partition_error_code for r in result.topic_results[0].results_by_partition} == {
        0: NONE, 1: TRANSACTION_ABORTABLE}
    assert [t.partitions for t in describe_transaction(bootstrap, txn_id).topics] == [[0]]


def test_produce_is_verified_against_the_transaction(shared_broker: BrokerProcess, topic_name: str) -> None:
    """KIP-890: a transaction's first batch on a partition the producer did not add is refused
    (INVALID_TXN_STATE before Produce v11, TRANSACTION_ABORTABLE from it) and nothing is written."""
    bootstrap, txn_id = shared_broker.bootstrap, _txn()
    create_topic(bootstrap, topic_name, 1)
    init = _init(bootstrap, txn_id)
    pid, epoch = init.producer_id, init.producer_epoch
    assert _produce(bootstrap, topic_name, _batch(pid, epoch, 0), txn_id).error_code == INVALID_TXN_STATE
    assert _produce(bootstrap, topic_name, _batch(pid, epoch, 0), txn_id, version=11).error_code == \
        TRANSACTION_ABORTABLE
    assert list_offset(bootstrap, topic_name, 0, committed=False).offset == 0
    assert _produce(bootstrap, topic_name, _batch(pid, epoch, 0), None).error_code == \
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "transactional records need the request's transactional id"
    assert _add(bootstrap, txn_id, pid, epoch, [(topic_name, 0)]) == {(topic_name, 0): NONE}
    assert _produce(bootstrap, topic_name, _batch(pid, epoch, 0), txn_id).error_code == NONE
    assert _produce(bootstrap, topic_name, _batch(pid, epoch, 2), txn_id).error_code == NONE
    assert _produce(bootstrap, topic_name, _batch(pid, epoch - 1, 4), txn_id).error_code == INVALID_PRODUCER_EPOCH
    plain = _produce(bootstrap, topic_name, _batch(pid, epoch, 4, transactional=False), txn_id)
    assert plain.error_code == INVALID_TXN_STATE, "a non-transactional write while its transaction is open"
    assert list_offset(bootstrap, topic_name, 0, committed=True).offset == 0
    assert _end(bootstrap, txn_id, pid, epoch, commit=True) == NONE
    assert list_offset(bootstrap, topic_name, 0, committed=True).offset == 5  # 4 records and the marker
    # Another producer's epoch bump aborts nothing now; the old epoch is fenced everywhere.
    assert _init(bootstrap, txn_id).producer_epoch == epoch + 1
    assert _produce(bootstrap, topic_name, _batch(pid, epoch, 4), txn_id).error_code == INVALID_PRODUCER_EPOCH


def test_end_txn_states(shared_broker: BrokerProcess, topic_name: str) -> None:
    bootstrap, txn_id = shared_broker.bootstrap, _txn()
    create_topic(bootstrap, topic_name, 1)
    init = _init(bootstrap, txn_id)
    pid, epoch = init.producer_id, init.producer_epoch
    assert _end(bootstrap, txn_id, pid, epoch, commit=True) == INVALID_TXN_STATE  # nothing began
    assert _add(bootstrap, txn_id, pid, epoch, [(topic_name, 0)]) == {(topic_name, 0): NONE}
    assert _end(bootstrap, txn_id, pid, epoch + 1, commit=True) == PRODUCER_FENCED
    assert _end(bootstrap, txn_id, pid, epoch + 1, commit=True, version=1) == INVALID_PRODUCER_EPOCH
    assert _end(bootstrap, txn_id, pid + 1, epoch, commit=True) == INVALID_PRODUCER_ID_MAPPING
    assert _end(bootstrap, txn_id, pid, epoch, commit=True) == NONE
    assert _end(bootstrap, txn_id, pid, epoch, commit=True) == NONE, "a retried commit"
    assert _end(bootstrap, txn_id, pid, epoch, commit=False) == INVALID_TXN_STATE
    assert describe_transaction(bootstrap, txn_id).transaction_state == "CompleteCommit"


def test_describe_and_list_transactions(shared_broker: BrokerProcess, topic_name: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic_name, 1)
    open_id, idle_id = _txn(), _txn()
    opened = _init(bootstrap, open_id)
    idle = _init(bootstrap, idle_id)
    assert _add(bootstrap, open_id, opened.producer_id, 0, [(topic_name, 0)]) == {(topic_name, 0): NONE}
    state = describe_transaction(bootstrap, open_id)
    assert (state.error_code, state.transaction_state, state.producer_id, state.transaction_timeout_ms) == (
        NONE, "Ongoing", opened.producer_id, 60000)
    assert state.transaction_start_time_ms > 0
    assert describe_transaction(bootstrap, "never-seen").error_code == TRANSACTIONAL_ID_NOT_FOUND

    def listed(**filters: Any) -> ListTransactionsResponse:
        response = call(bootstrap, ListTransactionsRequest(**filters), ListTransactionsResponse, 1)
        assert isinstance(response, ListTransactionsResponse)
        return response

    everything = {s.transactional_id: s.transaction_state for s in listed().transaction_states}
    assert everything[open_id] == "Ongoing" and everything[idle_id] == "Empty"
    ongoing = listed(state_filters=["Ongoing", "Sleeping"])
    assert ongoing.unknown_state_filters == ["Sleeping"]
    assert open_id in {s.transactional_id for s in ongoing.transaction_states}
    assert idle_id not in {s.transactional_id for s in ongoing.transaction_states}
    by_pid = listed(producer_id_filters=[idle.producer_id])
    assert [(s.transactional_id, s.producer_id) for s in by_pid.transaction_states] == [(idle_id, idle.producer_id)]
    assert open_id not in {s.transactional_id for s in listed(duration_filter=3_600_000).transaction_states}
    time.sleep(0.05)
    assert open_id in {s.transactional_id for s in listed(duration_filter=10).transaction_states}
    assert _end(bootstrap, open_id, opened.producer_id, 0, commit=False) == NONE


def _offset_fetch(bootstrap: str, group: str, topic: str, require_stable: bool) -> tuple[int, int]:
    request = OffsetFetchRequest(group_id=group, require_stable=require_stable,
                                 topics=[OffsetFetchRequestTopic(name=topic, partition_indexes=[0])])
    response: OffsetFetchResponse = call(bootstrap, request, OffsetFetchResponse, 7)
    part = response.topics[0].partitions[0]
    return part.error_code, part.committed_offset


def _txn_commit(bootstrap: str, txn_id: str, group: str, pid: int, epoch: int, topic: str, offset: int,
                version: int = 3, generation: int = -1, member: str = "") -> int:
    request = TxnOffsetCommitRequest(
        transactional_id=txn_id, group_id=group, producer_id=pid, producer_epoch=epoch, generation_id=generation,
        member_id=member, topics=[TxnOffsetCommitRequestTopic(name=topic, partitions=[
            TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=offset)])])
    response: TxnOffsetCommitResponse = call(bootstrap, request, TxnOffsetCommitResponse, version)
    return response.topics[0].partitions[0].error_code


def test_transactional_offsets_visible_only_on_commit(shared_broker: BrokerProcess, topic_name: str) -> None:
    bootstrap, txn_id, group = shared_broker.bootstrap, _txn(), f"g-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic_name, 1)
    init = _init(bootstrap, txn_id)
    pid, epoch = init.producer_id, init.producer_epoch
    assert _txn_commit(bootstrap, txn_id, group, pid, epoch, topic_name, 5) == INVALID_TXN_STATE  # no AddOffsets
    assert _txn_commit(bootstrap, txn_id, group, pid, epoch, topic_name, 5, version=4) == TRANSACTION_ABORTABLE
    add = AddOffsetsToTxnRequest(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, group_id=group)
    assert call(bootstrap, add, AddOffsetsToTxnResponse, 3).error_code == NONE
    assert _txn_commit(bootstrap, txn_id, group, pid, epoch, topic_name, 5) == NONE
    assert _offset_fetch(bootstrap, group, topic_name, require_stable=False) == (NONE, -1)
    assert _offset_fetch(bootstrap, group, topic_name, require_stable=True) == (UNSTABLE_OFFSET_COMMIT, -1)
    assert _end(bootstrap, txn_id, pid, epoch, commit=False) == NONE
    assert _offset_fetch(bootstrap, group, topic_name, require_stable=True) == (NONE, -1), "aborted: never visible"
    assert _add(bootstrap, txn_id, pid, epoch, [(topic_name, 0)]) == {(topic_name, 0): NONE}
    assert call(bootstrap, add, AddOffsetsToTxnResponse, 3).error_code == NONE
    assert _txn_commit(bootstrap, txn_id, group, pid, epoch, topic_name, 9) == NONE
    assert _end(bootstrap, txn_id, pid, epoch, commit=True) == NONE
    assert _offset_fetch(bootstrap, group, topic_name, require_stable=True) == (NONE, 9)


def test_txn_offset_commit_fences_zombie_group_members(shared_broker: BrokerProcess, topic_name: str) -> None:
    """KIP-447: a commit that names a member must come from the group's current generation."""
    bootstrap, txn_id, group = shared_broker.bootstrap, _txn(), f"g-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic_name, 1)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "session.timeout.ms": 6000})
    try:
        consumer.subscribe([topic_name])
        deadline = time.monotonic() + 30
        while not consumer.assignment() and time.monotonic() < deadline:
            consumer.poll(0.2)
        assert consumer.assignment()
        admin = AdminClient({"bootstrap.servers": bootstrap})
        description = admin.describe_consumer_groups([group])[group].result(10)
        member = description.members[0].member_id
        init = _init(bootstrap, txn_id)
        pid, epoch = init.producer_id, init.producer_epoch
        add = AddOffsetsToTxnRequest(transactional_id=txn_id, producer_id=pid, producer_epoch=epoch, group_id=group)
        assert call(bootstrap, add, AddOffsetsToTxnResponse, 3).error_code == NONE
        assert _txn_commit(bootstrap, txn_id, group, pid, epoch, topic_name, 3, generation=1,
                           member="a-zombie") == UNKNOWN_MEMBER_ID
        assert _txn_commit(bootstrap, txn_id, group, pid, epoch, topic_name, 3, generation=999,
                           member=member) == ILLEGAL_GENERATION
        metadata = consumer.consumer_group_metadata()
        assert metadata is not None
        assert _end(bootstrap, txn_id, pid, epoch, commit=False) == NONE
    finally:
        consumer.close()
