"""librdkafka (confluent-kafka) transactions against the broker, as an application uses them.

Commit and abort seen by read_committed and read_uncommitted consumers; an open transaction
holding back what read_committed consumers see (the last stable offset); the
consume-transform-produce loop with ``send_offsets_to_transaction`` and a consumer group;
a second producer with the same transactional.id fencing the first; a transaction left
open past its timeout aborted by the broker.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from tests.broker.clients.test_confluent_clients import create_topic, produce_all
from tests.broker.transactions.txn_support import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    describe_transaction,
    list_offset,
    read_values,
    wait_until,
)
from tests.support.broker import BrokerProcess
from tests.support.optional import present

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def txn_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """One broker for this module, checking for timed-out transactions every 200 ms."""
    overrides = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "200"}
    with BrokerProcess(tmp_path_factory.mktemp("txn-broker"), overrides) as broker:
        yield broker


def _producer(bootstrap: str, transactional_id: str, **conf: object) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                         "linger.ms": 5, **conf})
    producer.init_transactions(20)
    return producer


def _txn_id() -> str:
    return f"txn-{uuid.uuid4().hex[:10]}"


def test_commit_and_abort_read_committed_and_uncommitted(txn_broker: BrokerProcess, topic_name: str) -> None:
    bootstrap = txn_broker.bootstrap
    create_topic(bootstrap, topic_name, 3)
    txn_id = _txn_id()
    producer = _producer(bootstrap, txn_id)
    expected_committed: list[str] = []
    everything: list[str] = []
    for n, commit in enumerate([True, False, True, False, False, True]):
        producer.begin_transaction()
        values = [f"t{n}-{i}" for i in range(30)]
        for i, value in enumerate(values):
            producer.produce(topic_name, value=value.encode(), key=str(i).encode(), partition=i % 3)
        everything += values
        if commit:
            producer.commit_transaction(20)
            expected_committed += values
        else:
            producer.flush(20)  # the records are in the log before the abort
            producer.abort_transaction(20)
    committed = read_values(bootstrap, topic_name, 3, READ_COMMITTED)
    uncommitted = read_values(bootstrap, topic_name, 3, READ_UNCOMMITTED)
    assert sorted(v for _, _, v in committed) == sorted(expected_committed)
    assert sorted(v for _, _, v in uncommitted) == sorted(everything)
    # Six transactions in three partitions: markers take one offset each, so every
    # partition's end is 10 records x 6 + 6 markers, and nothing is open any more.
    for p in range(3):
        assert list_offset(bootstrap, topic_name, p, committed=False).offset == 66
        assert list_offset(bootstrap, topic_name, p, committed=True).offset == 66
    state = describe_transaction(bootstrap, txn_id)
    assert state.error_code == 0 and state.transaction_state == "CompleteCommit"


def test_open_transaction_holds_back_read_committed(txn_broker: BrokerProcess, topic_name: str) -> None:
    """Records after an open transaction's first one stay invisible to read_committed, even
    those of other producers, until it ends (the last stable offset); then all appear."""
    bootstrap = txn_broker.bootstrap
    create_topic(bootstrap, topic_name, 1)
    produce_all(bootstrap, topic_name, [(None, b"before", [])])
    txn_id = _txn_id()
    producer = _producer(bootstrap, txn_id)
    producer.begin_transaction()
    producer.produce(topic_name, value=b"in-txn-1", partition=0)
    producer.flush(20)
    produce_all(bootstrap, topic_name, [(None, b"plain-after", [])])  # a non-transactional producer
    producer.produce(topic_name, value=b"in-txn-2", partition=0)
    producer.flush(20)
    assert [v for _, _, v in read_values(bootstrap, topic_name, 1, READ_COMMITTED)] == ["before"]
    assert [v for _, _, v in read_values(bootstrap, topic_name, 1, READ_UNCOMMITTED)] == [
        "before", "in-txn-1", "plain-after", "in-txn-2"]
    assert list_offset(bootstrap, topic_name, 0, committed=True).offset == 1  # the LSO: in-txn-1's offset
    assert list_offset(bootstrap, topic_name, 0, committed=False).offset == 4
    state = describe_transaction(bootstrap, txn_id)
    assert (state.transaction_state, [(t.topic, t.partitions) for t in state.topics]) == (
        "Ongoing", [(topic_name, [0])])
    producer.commit_transaction(20)
    assert [v for _, _, v in read_values(bootstrap, topic_name, 1, READ_COMMITTED)] == [
        "before", "in-txn-1", "plain-after", "in-txn-2"]
    assert list_offset(bootstrap, topic_name, 0, committed=True).offset == 5  # past the marker


def test_consume_transform_produce_with_group_offsets(txn_broker: BrokerProcess) -> None:
    """Exactly once from an input topic to an output topic: each round's output and its
    input offsets commit together (send_offsets_to_transaction); an aborted round leaves
    neither, and a consumer restarted from the group's committed offsets redoes it."""
    bootstrap = txn_broker.bootstrap
    source, sink, group = f"in-{uuid.uuid4().hex[:8]}", f"out-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, source, 2)
    create_topic(bootstrap, sink, 2)
    total = 400
    produce_all(bootstrap, source, [(str(i).encode(), str(i).encode(), []) for i in range(total)])
    producer = _producer(bootstrap, _txn_id())

    def consumer() -> Consumer:
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                      "auto.offset.reset": "earliest", "isolation.level": READ_COMMITTED})
        c.subscribe([source])
        return c

    c = consumer()
    done: Counter[str] = Counter()
    rounds = aborted_rounds = 0
    deadline = time.monotonic() + 60
    while sum(done.values()) < total and time.monotonic() < deadline:
        batch = [m for m in c.consume(60, timeout=1.0) if m.error() is None]
        if not batch:
            continue
        rounds += 1
        producer.begin_transaction()
        for m in batch:
            producer.produce(sink, key=m.key(), value=b"x" + present(m.value()), partition=present(m.partition()))
        producer.send_offsets_to_transaction(c.position(c.assignment()), c.consumer_group_metadata(), 20)
        if rounds % 3 == 0:  # every third round fails: its output and offsets must both vanish
            producer.abort_transaction(20)
            aborted_rounds += 1
            c.close()  # a restart: the group's committed offsets say where to begin again
            c = consumer()
            continue
        producer.commit_transaction(20)
        done.update(present(m.value()).decode() for m in batch)
    c.close()
    assert aborted_rounds >= 1
    assert sum(done.values()) == total and set(done.values()) == {1}
    out = read_values(bootstrap, sink, 2, READ_COMMITTED)
    assert sorted(int(v[1:]) for _, _, v in out) == list(range(total)), "each input exactly once in the output"
    checker = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    committed = checker.committed([TopicPartition(source, 0), TopicPartition(source, 1)], timeout=10)
    checker.close()
    ends = [list_offset(bootstrap, source, p, committed=False).offset for p in range(2)]
    assert [tp.offset for tp in committed] == ends


def test_second_producer_fences_the_first(txn_broker: BrokerProcess, topic_name: str) -> None:
    bootstrap = txn_broker.bootstrap
    create_topic(bootstrap, topic_name, 2)
    txn_id = _txn_id()
    first = _producer(bootstrap, txn_id)
    first.begin_transaction()
    for i in range(10):
        first.produce(topic_name, value=f"zombie-{i}".encode(), partition=i % 2)
    first.flush(20)
    epoch_before = describe_transaction(bootstrap, txn_id).producer_epoch
    second = _producer(bootstrap, txn_id)  # aborts the zombie's open transaction, bumps the epoch
    state = describe_transaction(bootstrap, txn_id)
    # Kafka's fence: the open transaction is aborted with epoch + 1, the new producer gets + 2.
    assert state.transaction_state == "Empty" and state.producer_epoch == epoch_before + 2
    second.begin_transaction()
    for i in range(10):
        second.produce(topic_name, value=f"live-{i}".encode(), partition=i % 2)
    second.commit_transaction(20)
    with pytest.raises(KafkaException) as info:
        first.produce(topic_name, value=b"zombie-late", partition=0)
        first.commit_transaction(20)
    error = info.value.args[0]
    assert error.fatal(), error
    assert error.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH), error
    values = sorted(v for _, _, v in read_values(bootstrap, topic_name, 2, READ_COMMITTED))
    assert values == sorted(f"live-{i}" for i in range(10))


def test_transaction_open_past_its_timeout_is_aborted(txn_broker: BrokerProcess, topic_name: str) -> None:
    bootstrap = txn_broker.bootstrap
    create_topic(bootstrap, topic_name, 1)
    txn_id = _txn_id()
    producer = _producer(bootstrap, txn_id, **{"transaction.timeout.ms": 1500})
    producer.begin_transaction()
    for i in range(5):
        producer.produce(topic_name, value=f"late-{i}".encode(), partition=0)
    producer.flush(20)
    assert list_offset(bootstrap, topic_name, 0, committed=True).offset == 0
    started = time.monotonic()
    wait_until(lambda: describe_transaction(bootstrap, txn_id).transaction_state == "CompleteAbort", 10,
               "the broker to abort the transaction")
    assert time.monotonic() - started < 5
    assert list_offset(bootstrap, topic_name, 0, committed=True).offset == 6  # past the abort marker
    produce_all(bootstrap, topic_name, [(None, b"after", [])])
    assert [v for _, _, v in read_values(bootstrap, topic_name, 1, READ_COMMITTED)] == ["after"]
    with pytest.raises(KafkaException):
        producer.commit_transaction(10)  # the producer was fenced by the abort's epoch bump


def test_read_committed_sees_nothing_aborted_across_many_batches(txn_broker: BrokerProcess, topic_name: str
                                                                 ) -> None:
    """Aborted and committed transactions interleaved by two producers on one partition: the
    aborted-transaction list of every fetch lets the consumer drop exactly the aborted ones."""
    bootstrap = txn_broker.bootstrap
    create_topic(bootstrap, topic_name, 1)
    a, b = _producer(bootstrap, _txn_id()), _producer(bootstrap, _txn_id())
    expected = []
    for n in range(20):
        a.begin_transaction()
        b.begin_transaction()
        for i in range(25):
            a.produce(topic_name, value=f"a{n}-{i}".encode(), partition=0)
            b.produce(topic_name, value=f"b{n}-{i}".encode(), partition=0)
            if i % 10 == 0:
                a.flush(10)
                b.flush(10)
        a.flush(10)
        b.flush(10)
        if n % 2:
            a.commit_transaction(20)
            b.abort_transaction(20)
            expected += [f"a{n}-{i}" for i in range(25)]
        else:
            b.commit_transaction(20)
            a.abort_transaction(20)
            expected += [f"b{n}-{i}" for i in range(25)]
    got = read_values(bootstrap, topic_name, 1, READ_COMMITTED)
    assert sorted(v for _, _, v in got) == sorted(expected)
