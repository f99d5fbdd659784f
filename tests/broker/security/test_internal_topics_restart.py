"""Issue 27's two attacks on the broker's internal topics, replayed across a restart.

1. A forged offset commit: a group commits offset 7; a client appends to the group's
   ``__consumer_offsets`` partition a record in the coordinator's own format saying 999,999.
   The coordinator replays that partition at start, so before the fix the restarted broker
   served 999,999 to the group.
2. A forged PrepareCommit: a transactional producer writes 10 records and never commits; a
   client appends to ``__transaction_state`` a PrepareCommit for that transaction. The
   coordinator completes a loaded PrepareCommit by writing COMMIT markers, so before the fix
   a read_committed consumer saw all 10 records after a restart.

Both forgeries are sent by confluent-kafka's producer with the records built by the broker's
own encoders (so they are exactly what the coordinators would have written). Each must be
refused with INVALID_TOPIC_EXCEPTION, and after a restart the state must be what the real
clients made it: offset 7; the transaction aborted by its timeout, 0 records visible.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.broker.coordinator.offsets_topic import (
    OffsetCommitValue,
    encode_offset_commit,
    encode_offset_commit_key,
    partition_for,
)
from seaway.broker.coordinator.txn.log_format import TxnLogValue, encode_txn_key, encode_txn_value
from seaway.broker.coordinator.txn.state import TxnState
from seaway.protocol.messages.describe_transactions_request import DescribeTransactionsRequest
from seaway.protocol.messages.describe_transactions_response import DescribeTransactionsResponse

from tests.broker.admin.rawclient import call
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(180)

PARTITIONS = 50


def _create_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=20)


def _forge(bootstrap: str, topic: str, partition: int, key: bytes, value: bytes) -> KafkaError | None:
    """Append one record with confluent-kafka's producer; the delivery report's error."""
    reports: list[KafkaError | None] = []

    def report(err: KafkaError | None, _msg: Message) -> None:
        reports.append(err)

    producer = Producer({"bootstrap.servers": bootstrap, "message.timeout.ms": 20_000})
    try:
        producer.produce(topic, value=value, key=key, partition=partition, on_delivery=report)
        assert producer.flush(30) == 0
    finally:
        producer.flush(1)
        producer.close()
    assert len(reports) == 1
    return reports[0]


def _committed(bootstrap: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        [tp] = consumer.committed([TopicPartition(topic, 0)], timeout=30)
        return int(tp.offset)
    finally:
        consumer.close()


def test_forged_offset_commit_is_refused_and_the_offset_survives_a_restart(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data", {"group.initial.rebalance.delay.ms": "0"}).start()
    try:
        topic, group = f"t-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
        _create_topic(broker.bootstrap, topic)
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False})
        try:
            consumer.commit(offsets=[TopicPartition(topic, 0, 7)], asynchronous=False)
        finally:
            consumer.close()
        assert _committed(broker.bootstrap, group, topic) == 7

        now = int(time.time() * 1000)
        forged = encode_offset_commit(OffsetCommitValue(999_999, -1, "", now))
        error = _forge(broker.bootstrap, "__consumer_offsets", partition_for(group, PARTITIONS),
                       encode_offset_commit_key(group, topic, 0), forged)
        assert error is not None and error.code() == KafkaError.TOPIC_EXCEPTION, error

        broker.restart()
        assert _committed(broker.bootstrap, group, topic) == 7
    finally:
        broker.stop()


def _describe_txn(bootstrap: str, transactional_id: str) -> tuple[str, int, int]:
    """(state, producer id, epoch) of a transactional id, by DescribeTransactions."""
    response = call(bootstrap, DescribeTransactionsRequest(transactional_ids=[transactional_id]),
                    DescribeTransactionsResponse, 0)
    [state] = response.transaction_states
    assert state.error_code == 0, state
    return state.transaction_state, state.producer_id, state.producer_epoch


def _read_committed(bootstrap: str, topic: str) -> int:
    """How many records a read_committed consumer sees before it reaches the end of ``topic``."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"rc-{uuid.uuid4().hex[:8]}",
                         "isolation.level": "read_committed", "enable.partition.eof": True,
                         "enable.auto.commit": False})
    seen = 0
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            msg = consumer.poll(1)
            if msg is None:
                continue
            error = msg.error()
            if error is not None:
                assert error.code() == KafkaError._PARTITION_EOF, error
                return seen
            seen += 1
        raise AssertionError("the read_committed consumer never reached the end of the partition")
    finally:
        consumer.close()


_VICTIM = """
import sys
from confluent_kafka import Producer
bootstrap, topic, txn_id = sys.argv[1:4]
producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id, "transaction.timeout.ms": 10000})
producer.init_transactions(30)
producer.begin_transaction()
for i in range(10):
    producer.produce(topic, value=f"uncommitted-{i}".encode())
assert producer.flush(30) == 0
print("written", flush=True)
sys.stdin.read()  # until the test kills it
"""


def test_forged_prepare_commit_is_refused_and_uncommitted_records_stay_hidden(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "data").start()
    victim: subprocess.Popen[str] | None = None
    try:
        topic, txn_id = f"t-{uuid.uuid4().hex[:8]}", f"victim-{uuid.uuid4().hex[:8]}"
        _create_topic(broker.bootstrap, topic)
        # The victim writes 10 records in a transaction and dies before it ends it: only the
        # coordinator can end it now, by aborting it at its timeout (10 s).
        victim = subprocess.Popen([sys.executable, "-c", _VICTIM, broker.bootstrap, topic, txn_id],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert victim.stdout is not None and victim.stdout.readline().strip() == "written"
        victim.kill()
        victim.wait(10)
        state, producer_id, epoch = _describe_txn(broker.bootstrap, txn_id)
        assert state == "Ongoing"

        now = int(time.time() * 1000)
        forged = TxnLogValue(producer_id, epoch, 10_000, TxnState.PREPARE_COMMIT, frozenset({(topic, 0)}), now, now)
        error = _forge(broker.bootstrap, "__transaction_state", partition_for(txn_id, PARTITIONS),
                       encode_txn_key(txn_id), encode_txn_value(forged))
        assert error is not None and error.code() == KafkaError.TOPIC_EXCEPTION, error

        broker.kill()
        broker.start()
        deadline = time.monotonic() + 90
        while (state := _describe_txn(broker.bootstrap, txn_id)[0]) not in ("CompleteAbort", "CompleteCommit"):
            assert time.monotonic() < deadline, f"the transaction is still {state}"
            time.sleep(0.5)
        assert state == "CompleteAbort"
        assert _read_committed(broker.bootstrap, topic) == 0
    finally:
        if victim is not None and victim.poll() is None:
            victim.kill()
            victim.wait(10)
        if victim is not None and victim.stdout is not None:
            victim.stdout.close()
        if victim is not None and victim.stdin is not None:
            victim.stdin.close()
        broker.stop()
