"""ListOffsets for a timestamp answers the first *record* at or after it, as Kafka does (finding P-B2).

Kafka's ``FileRecords.searchForTimestamp`` walks the records of the batch its time index
finds and answers the first record whose timestamp is >= the target, with that record's
timestamp. Seaway answered the base offset of the first *batch* whose maxTimestamp is >= the
target (0 below, where Kafka answers 3). Real clients against a real broker: librdkafka
produces multi-record batches (the segment file is read to prove it), compressed and not,
then the admin client and the consumer ask; DeleteRecords inside a batch and LogAppendTime
topics are covered too.
"""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]
from seaway.protocol.record_batch import BATCH_HEADER_SIZE, MAGIC_V2, parse_batch_header

from tests.broker.clients.test_confluent_clients import create_topic
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(90)

BASE = 1_700_000_000_000
DELTAS = (0, 10, 20, 90, 30, 90, 40)
"""One batch, offsets 0..6: the peer test's timestamps (tests/peer/java/PeerClients.java)."""
LATER = (100, 95, 120)
"""A second batch, offsets 7..9."""


def _batch_record_counts(broker: BrokerProcess, topic: str) -> list[int]:
    counts: list[int] = []
    for log in sorted((broker.data_dir / f"{topic}-0").glob("*.log")):
        data = log.read_bytes()
        pos = 0
        while pos + BATCH_HEADER_SIZE <= len(data) and data[pos + 16] == MAGIC_V2:  # zeros end a preallocated file
            header = parse_batch_header(data, pos)
            counts.append(header.record_count)
            pos += header.size
    return counts


def _produce(bootstrap: str, topic: str, codec: str) -> None:
    # flush() sends a batch at once; the long linger keeps a stalled test process from splitting one
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 30000, "batch.num.messages": 1000,
                         "compression.type": codec})
    for batch in (DELTAS, LATER):
        for delta in batch:
            producer.produce(topic, value=f"at+{delta}".encode(), timestamp=BASE + delta, partition=0)
        assert producer.flush(20) == 0
        time.sleep(0.01)  # LogAppendTime: the second batch is appended at a later millisecond


def _for_time(bootstrap: str, topic: str, timestamp: int) -> tuple[int, int]:
    """(offset, timestamp) the admin client's ListOffsets answers for ``timestamp``."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    tp = TopicPartition(topic, 0)
    result = admin.list_offsets({tp: OffsetSpec.for_timestamp(timestamp)})[tp].result(20)
    return result.offset, result.timestamp


@pytest.mark.parametrize("codec", ["none", "zstd"])
def test_timestamp_lookup_answers_the_first_record_at_or_after(shared_broker: BrokerProcess, topic_name: str,
                                                               codec: str) -> None:
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic_name, 1)
    _produce(bootstrap, topic_name, codec)
    assert _batch_record_counts(shared_broker, topic_name) == [len(DELTAS), len(LATER)]
    expected = {
        BASE - 5: (0, BASE),            # before everything: the first record
        BASE + 25: (3, BASE + 90),      # offsets 0-2 are older; the batch's base offset 0 is not the answer
        BASE + 31: (3, BASE + 90),
        BASE + 90: (3, BASE + 90),      # the first of the two records stamped +90
        BASE + 91: (7, BASE + 100),     # no record of the first batch: the second batch's first record
        BASE + 96: (7, BASE + 100),
        BASE + 101: (9, BASE + 120),    # the second batch's last record (offset 8 is +95)
        BASE + 121: (-1, -1),           # after the newest record: none
    }
    assert {t: _for_time(bootstrap, topic_name, t) for t in expected} == expected
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic_name}"})
    try:
        found = consumer.offsets_for_times([TopicPartition(topic_name, 0, BASE + 25)], timeout=10)
        assert found[0].offset == 3
    finally:
        consumer.close()


def test_timestamp_lookup_skips_records_below_the_log_start(shared_broker: BrokerProcess, topic_name: str) -> None:
    """DeleteRecords inside a batch: records below the new log start offset are never answered."""
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic_name, 1)
    _produce(bootstrap, topic_name, "lz4")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deleted = admin.delete_records([TopicPartition(topic_name, 0, 4)])
    assert next(iter(deleted.values())).result(20).low_watermark == 4
    # the first batch (offsets 0-6) still holds offsets 0-3 on disk
    assert _for_time(bootstrap, topic_name, BASE + 25) == (4, BASE + 30)
    assert _for_time(bootstrap, topic_name, BASE + 85) == (5, BASE + 90)
    assert _for_time(bootstrap, topic_name, BASE) == (4, BASE + 30)
    assert _for_time(bootstrap, topic_name, BASE + 91) == (7, BASE + 100)


def test_timestamp_lookup_with_log_append_time(shared_broker: BrokerProcess, topic_name: str) -> None:
    """LogAppendTime: every record carries its batch's append time, so a batch's first record answers."""
    bootstrap = shared_broker.bootstrap
    create_topic(bootstrap, topic_name, 1, {"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000) - 1
    _produce(bootstrap, topic_name, "none")
    assert _batch_record_counts(shared_broker, topic_name) == [len(DELTAS), len(LATER)]
    offset, timestamp = _for_time(bootstrap, topic_name, before)
    assert offset == 0 and timestamp >= before
    second, second_timestamp = _for_time(bootstrap, topic_name, timestamp + 1)
    assert second == len(DELTAS) and second_timestamp > timestamp
    assert _for_time(bootstrap, topic_name, second_timestamp + 1) == (-1, -1)
