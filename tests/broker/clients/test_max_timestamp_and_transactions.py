"""Issue 15.8, broker side: ListOffsets MAX_TIMESTAMP inside multi-record batches, and
transactional producers that initialize at once (issue 20 replaced the fast refusal with
a transaction coordinator; tests/broker/transactions/ has the transaction tests proper).

Real clients against a real broker: librdkafka (confluent-kafka) and kafka-python produce
multi-record batches with chosen timestamps (the segment file is read to prove each batch
really holds several records) and ask for the max-timestamp offset; Kafka 3.8+ answers
the offset of the record carrying the largest timestamp (KAFKA-16310), the first one when
several do.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient
from kafka.admin import OffsetSpec as KpOffsetSpec
from kafka.structs import TopicPartition as KpTopicPartition
from seaway.protocol.record_batch import BATCH_HEADER_SIZE, MAGIC_V2, parse_batch_header

from tests.broker.clients.test_confluent_clients import consume_all, create_topic
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(90)

BASE = 1_700_000_000_000
# Two batches; the largest timestamp (+50) sits mid-batch in the first and again in the
# second, so the answer is offset 2 (the first record carrying it), not 4 (the last offset
# of its batch, what Kafka before 3.8 and Seaway before this change answered) nor 7.
BATCHES = [(5, 9, 50, 7, 3), (1, 2, 50, 4)]
EXPECTED_OFFSET = 2


def _batch_record_counts(broker: BrokerProcess, topic: str) -> list[int]:
    """Record counts of the batches in partition 0's segment files, read off the disk."""
    counts: list[int] = []
    for log in sorted((broker.data_dir / f"{topic}-0").glob("*.log")):
        data = log.read_bytes()
        pos = 0
        # A preallocated segment ends in zeros: magic 0 marks the end of what was written.
        while pos + BATCH_HEADER_SIZE <= len(data) and data[pos + 16] == MAGIC_V2:
            header = parse_batch_header(data, pos)
            counts.append(header.record_count)
            pos += header.size
    return counts


def _produce_librdkafka(bootstrap: str, topic: str, codec: str) -> None:
    # A batch is what one flush() sends (flush sends at once, whatever linger.ms says); the long
    # linger keeps a stall of the test process between two produce() calls from splitting a
    # batch (CI saw [1, 4, 4] with 500 ms).
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 30000, "batch.num.messages": 1000,
                         "compression.type": codec})
    # the partition's leader known first: records produced before librdkafka has the topic's metadata
    # wait in its unassigned queue and move to the partition one by one while flush() is already
    # sending, so one flush could go out as several batches (CI under load saw [1, 1, 1, 2, 4])
    producer.list_topics(topic, timeout=20)
    for i, batch in enumerate(BATCHES):
        for delta in batch:
            producer.produce(topic, value=f"b{i}-{delta}".encode(), timestamp=BASE + delta, partition=0)
        assert producer.flush(20) == 0
        time.sleep(0.01)  # LogAppendTime: the second batch is appended at a later millisecond


def _max_timestamp_librdkafka(bootstrap: str, topic: str) -> tuple[int, int]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.list_offsets({TopicPartition(topic, 0): OffsetSpec.max_timestamp()})  # type: ignore[no-untyped-call]  # unannotated upstream
    result = futures[TopicPartition(topic, 0)].result(20)
    return result.offset, result.timestamp


@pytest.mark.parametrize("codec", ["none", "zstd", "lz4"])
def test_max_timestamp_is_the_record_not_its_batch_librdkafka(shared_broker: BrokerProcess, topic_name: str,
                                                               codec: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 1)
    _produce_librdkafka(shared_broker.bootstrap, topic_name, codec)
    assert _batch_record_counts(shared_broker, topic_name) == [len(b) for b in BATCHES]
    offset, timestamp = _max_timestamp_librdkafka(shared_broker.bootstrap, topic_name)
    assert (offset, timestamp) == (EXPECTED_OFFSET, BASE + 50)
    records = consume_all(shared_broker.bootstrap, topic_name, 1, sum(map(len, BATCHES)))
    at = next(m for m in records if m.offset() == offset)  # type: ignore[attr-defined]
    assert at.timestamp()[1] == timestamp  # type: ignore[attr-defined]


def test_max_timestamp_is_the_record_not_its_batch_kafka_python(shared_broker: BrokerProcess, topic_name: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 1)
    producer = KafkaProducer(bootstrap_servers=shared_broker.bootstrap, linger_ms=30000, compression_type="gzip")
    for i, batch in enumerate(BATCHES):
        for delta in batch:
            producer.send(topic_name, value=f"b{i}-{delta}".encode(), timestamp_ms=BASE + delta, partition=0)
        producer.flush(20)
    producer.close()
    assert _batch_record_counts(shared_broker, topic_name) == [len(b) for b in BATCHES]
    admin = KafkaAdminClient(bootstrap_servers=shared_broker.bootstrap)
    try:
        tp = KpTopicPartition(topic_name, 0)
        got = admin.list_partition_offsets({tp: KpOffsetSpec.MAX_TIMESTAMP})[tp]
    finally:
        admin.close()
    assert (got.offset, got.timestamp) == (EXPECTED_OFFSET, BASE + 50)


def test_max_timestamp_with_log_append_time_is_the_newest_batch_first_record(shared_broker: BrokerProcess,
                                                                              topic_name: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 1, {"message.timestamp.type": "LogAppendTime"})
    _produce_librdkafka(shared_broker.bootstrap, topic_name, "none")
    assert _batch_record_counts(shared_broker, topic_name) == [len(b) for b in BATCHES]
    offset, timestamp = _max_timestamp_librdkafka(shared_broker.bootstrap, topic_name)
    # Every record of a LogAppendTime batch carries the batch's time; the second batch was
    # appended later, so its first record (offset 5) is the answer, as in Kafka.
    assert offset == len(BATCHES[0])
    assert abs(timestamp - time.time() * 1000) < 60_000


def test_transactional_producer_initializes_at_once(shared_broker: BrokerProcess, topic_name: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 1)
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "transactional.id": f"txn-{topic_name}"})
    started = time.monotonic()
    # Its own deadline is the bound (it raises past it). The 2 s ceiling here before was a speed
    # check (left from when this test proved a prompt refusal): four round trips and a write to
    # __transaction_state, which a box at load 15 does not promise in 2 s.
    producer.init_transactions(30)
    print(f"init_transactions took {time.monotonic() - started:.1f} s")
    producer.begin_transaction()
    producer.produce(topic_name, value=b"in a transaction")
    producer.commit_transaction(30)
    assert [m.value() for m in consume_all(shared_broker.bootstrap, topic_name, 1, 1)] == [  # type: ignore[attr-defined]
        b"in a transaction"]


def test_transactional_kafka_python_producer_initializes_at_once(shared_broker: BrokerProcess) -> None:
    started = time.monotonic()
    producer = KafkaProducer(bootstrap_servers=shared_broker.bootstrap, transactional_id="kp-init-at-once",
                             max_block_ms=10_000)
    try:
        producer.init_transactions()
    finally:
        producer.close(timeout=5)
    assert time.monotonic() - started < 5.0


def test_idempotent_producer_still_works(shared_broker: BrokerProcess, topic_name: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 1)
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "enable.idempotence": True})
    for i in range(10):
        producer.produce(topic_name, value=str(i).encode())
    assert producer.flush(20) == 0
    assert len(consume_all(shared_broker.bootstrap, topic_name, 1, 10)) == 10
