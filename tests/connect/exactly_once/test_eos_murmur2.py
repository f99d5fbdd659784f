"""An exactly-once task picks its offset records' partitions with Kafka's murmur2, as the worker's producer does.

The worker's offsets producer uses librdkafka's ``murmur2_random`` partitioner (Kafka's
default); a task's transactional producer keeps the task's own partitioner, so the task
computes each offset record's partition itself. If the two disagreed, a key would live in
two partitions and a reader could apply a stale offset after a newer one. Checked against
Kafka's own test vectors and against librdkafka's partitioner on a real topic.
"""

from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka import KafkaError, Message, Producer
from seaway.connect.runtime.murmur2 import murmur2, partition_for

from tests.connect.exactly_once.eos_support import Broker, create_topic

# Kafka's UtilsTest.testMurmur2 (signed 32-bit results)
KAFKA_VECTORS = {b"21": -973932308, b"foobar": -790332482, b"a-little-bit-long-string": -985981536,
                 b"a-little-bit-longer-string": -1486304829,
                 b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971, b"abc": 479470107}


def test_kafka_test_vectors() -> None:
    for data, expected in KAFKA_VECTORS.items():
        got = murmur2(data)
        assert (got - (1 << 32) if got >= 1 << 31 else got) == expected, data


@pytest.mark.timeout(120)
def test_same_partition_as_librdkafkas_murmur2_random(eos_broker: Broker) -> None:
    topic = f"murmur-{uuid.uuid4().hex[:8]}"
    partitions = 25
    create_topic(eos_broker.bootstrap, topic, partitions)
    keys = [json.dumps([f"connector-{i}", {"filename": f"/data/file-{i * 7919}.txt"}], sort_keys=True,
                       separators=(",", ":")).encode() for i in range(300)]
    placed: dict[bytes, int] = {}

    def delivered(err: KafkaError | None, msg: Message) -> None:
        assert err is None, err
        key, partition = msg.key(), msg.partition()
        assert key is not None and partition is not None
        placed[key] = partition

    producer = Producer({"bootstrap.servers": eos_broker.bootstrap, "partitioner": "murmur2_random"})
    for key in keys:
        producer.produce(topic, b"{}", key, on_delivery=delivered)
    assert producer.flush(30) == 0
    assert {k: partition_for(k, partitions) for k in keys} == placed
    assert len(set(placed.values())) > 20  # the keys spread: a constant answer would not pass
