"""Compaction in a running broker, with librdkafka producing and consuming: the issue's proof."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from tests.broker.clients.test_confluent_clients import create_topic, produce_all
from tests.support.broker import BrokerProcess
from tests.support.optional import present

PAUSE_KEY = "seaway.test.fault.cleaner.pause.ms"
Latest = dict[bytes, bytes | None]
Ops = list[tuple[bytes, bytes | None, list[tuple[str, bytes]]]]


def _workload(count: int, keys: int, seed: int) -> tuple[Ops, Latest]:
    """Overwrites of ``keys`` keys; random tombstones, and the last round deletes every tenth key."""
    rng = random.Random(seed)
    ops: Ops = []
    latest: Latest = {}
    for i in range(count):
        k = i % keys
        key = f"key-{k}".encode()
        last_round = i >= count - keys
        value = None if (last_round and k % 10 == 0) or rng.random() < 0.02 else f"value-{seed}-{i}".encode()
        ops.append((key, value, []))
        latest[key] = value
    return ops, latest


def read_partition(bootstrap: str, topic: str) -> list[tuple[int, bytes | None, bytes | None]]:
    """Every record of partition 0 up to the high watermark: (offset, key, value)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                         "enable.partition.eof": True})
    out: list[tuple[int, bytes | None, bytes | None]] = []
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            error = msg.error()
            if error:
                if error.code() == KafkaError._PARTITION_EOF:
                    if out and out[-1][0] >= high - 1:
                        break
                    continue
                raise KafkaException(error)
            offset = present(msg.offset(), "offset")
            out.append((offset, msg.key(), msg.value()))
            if offset >= high - 1:
                break
    finally:
        consumer.close()
    return out


def _valid(records: list[tuple[int, bytes | None, bytes | None]], latest: Latest) -> None:
    """A correct compacted log, cleaned or not: offsets increase, each key's last record is its latest."""
    offsets = [r[0] for r in records]
    assert offsets == sorted(set(offsets)), "offsets strictly increase"
    last = {key: value for _, key, value in records if key != b"sentinel"}
    assert {k: v for k, v in latest.items() if k in last or v is not None} == last, (
        "only a key whose tombstone expired may be missing")


def _is_exactly_latest(records: list[tuple[int, bytes | None, bytes | None]], latest: Latest, *,
                       tombstones: bool) -> bool:
    """One record per workload key, its latest (sentinels, one per roll, sit in segments not yet cleaned)."""
    expected = {k: v for k, v in latest.items() if tombstones or v is not None}
    data = [(key, value) for _, key, value in records if key != b"sentinel"]
    return len(data) == len(expected) and dict(data) == expected


def _roll_with_sentinel(bootstrap: str, topic: str, segment_ms: int) -> None:
    """After segment.ms a new record rolls the segment holding the workload's tail."""
    time.sleep(segment_ms / 1000 + 0.2)
    produce_all(bootstrap, topic, [(b"sentinel", b"s", [])])


def _wait_for(check: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.timeout(90)
def test_100k_records_over_1k_keys_compact_to_the_latest_value(tmp_path: Path, topic_name: str) -> None:
    with BrokerProcess(tmp_path / "data", {"log.cleaner.backoff.ms": "200"}) as broker:
        config = {"cleanup.policy": "compact", "segment.bytes": "65536", "min.cleanable.dirty.ratio": "0.01",
                  "delete.retention.ms": "1500", "segment.ms": "1500"}
        create_topic(broker.bootstrap, topic_name, 1, config)
        ops, latest = _workload(100_000, 1000, seed=5)
        produce_all(broker.bootstrap, topic_name, ops[:50_000], **{"compression.type": "gzip"})
        produce_all(broker.bootstrap, topic_name, ops[50_000:], **{"compression.type": "zstd"})
        _roll_with_sentinel(broker.bootstrap, topic_name, 1500)

        state: list[list[tuple[int, bytes | None, bytes | None]]] = []

        def cleaned_and_tombstones_gone() -> bool:
            state[:] = [read_partition(broker.bootstrap, topic_name)]
            _valid(state[0], latest)
            return _is_exactly_latest(state[0], latest, tombstones=False)

        _wait_for(cleaned_and_tombstones_gone, 45, "every key compacted to its latest value, tombstones gone")
        assert sum(v is None for v in latest.values()) >= 100
        assert any("tombstones due" in line for line in broker.output)


@pytest.mark.timeout(90)
def test_broker_killed_while_cleaning_restarts_to_a_correct_log(tmp_path: Path, topic_name: str) -> None:
    broker = BrokerProcess(tmp_path / "data", {"log.cleaner.backoff.ms": "100", PAUSE_KEY: "150"})
    broker.start()
    try:
        config = {"cleanup.policy": "compact", "segment.bytes": "8192", "min.cleanable.dirty.ratio": "0.01",
                  "segment.ms": "1000"}
        create_topic(broker.bootstrap, topic_name, 1, config)
        latest: Latest = {}
        rng = random.Random(1)
        for round_ in range(3):
            # Fresh overwrites make the log dirty again, so a cleaning is sure to start.
            ops, round_latest = _workload(6000, 400, seed=round_)
            latest.update(round_latest)
            seen = len(broker.output)
            produce_all(broker.bootstrap, topic_name, ops, **{"compression.type": "gzip", "batch.num.messages": 100})
            _roll_with_sentinel(broker.bootstrap, topic_name, 1000)
            _wait_for(lambda seen=seen: any(f"cleaning {topic_name}-0" in line for line in broker.output[seen:]),
                      20, "a cleaning to start")
            time.sleep(rng.uniform(0.02, 0.3))
            broker.kill()
            broker.start()
            _valid(read_partition(broker.bootstrap, topic_name), latest)
        broker.overrides[PAUSE_KEY] = "0"
        broker.restart()
        _wait_for(lambda: _is_exactly_latest(read_partition(broker.bootstrap, topic_name), latest, tombstones=True),
                  30, "the log to be fully cleaned after the restarts")
    finally:
        broker.stop()


@pytest.mark.timeout(30)
def test_keyless_record_to_a_compacted_topic_is_refused(shared_broker: BrokerProcess, topic_name: str) -> None:
    create_topic(shared_broker.bootstrap, topic_name, 1, {"cleanup.policy": "compact"})
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap, "linger.ms": 0})
    results: list[KafkaError | None] = []
    producer.produce(topic_name, value=b"no key", on_delivery=lambda err, msg: results.append(err))
    assert producer.flush(15) == 0
    producer.produce(topic_name, key=b"k", value=b"keyed", on_delivery=lambda err, msg: results.append(err))
    assert producer.flush(15) == 0
    assert len(results) == 2 and results[1] is None, "a keyed record is accepted"
    assert results[0] is not None and results[0].code() == KafkaError.INVALID_RECORD
