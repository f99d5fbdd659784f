"""confluent-kafka's idempotent producer against lost responses and a broker killed mid-stream."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer

from tests.broker.clients.test_confluent_clients import consume_all, create_topic
from tests.support.broker import BrokerProcess

DROP_KEY = "seaway.test.fault.drop.produce.response.after.append"


def _assert_exactly_once_in_order(bootstrap: str, topic: str, partitions: int, count: int,
                                  acked: dict[int, tuple[int, int]]) -> None:
    messages = consume_all(bootstrap, topic, partitions, count, timeout=30)
    values = [int(m.value()) for m in messages]  # type: ignore[attr-defined]
    assert sorted(values) == list(range(count)), "every record exactly once"
    per_partition: dict[int, list[int]] = defaultdict(list)
    for m in messages:
        per_partition[m.partition()].append(int(m.value()))  # type: ignore[attr-defined]
        assert acked[int(m.value())] == (m.partition(), m.offset())  # type: ignore[attr-defined]
    for seq in per_partition.values():
        assert seq == sorted(seq), "records keep their produce order within a partition"


class _Reports:
    """Delivery reports of an idempotent producer, by record number."""

    def __init__(self) -> None:
        self.acked: dict[int, tuple[int, int]] = {}
        self.errors: list[KafkaError] = []

    def callback(self, err: KafkaError | None, msg: object) -> None:
        if err is not None:
            self.errors.append(err)
        else:
            self.acked[int(msg.value())] = (msg.partition(), msg.offset())  # type: ignore[attr-defined]


def _producer(bootstrap: str, **conf: object) -> Producer:
    return Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 2,
                     "batch.num.messages": 50, "message.timeout.ms": 60000, "retry.backoff.ms": 50,
                     "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500, **conf})


@pytest.mark.timeout(60)
def test_lost_produce_responses_do_not_duplicate(tmp_path: Path, topic_name: str) -> None:
    with BrokerProcess(tmp_path / "data", {DROP_KEY: "4"}) as broker:
        create_topic(broker.bootstrap, topic_name, 3)
        reports = _Reports()
        producer = _producer(broker.bootstrap)
        count = 4000
        for i in range(count):
            producer.produce(topic_name, key=str(i % 97).encode(), value=str(i).encode(), on_delivery=reports.callback)
            if i % 500 == 0:
                producer.poll(0.02)  # let several requests go out, so several are dropped
        assert producer.flush(45) == 0
        assert not reports.errors, reports.errors
        dropped = sum("test fault: dropping a produce response" in line for line in broker.output)
        assert dropped >= 3, "the fault must actually have fired"
        _assert_exactly_once_in_order(broker.bootstrap, topic_name, 3, count, reports.acked)


@pytest.mark.timeout(150)
def test_broker_killed_mid_stream_keeps_each_record_once(broker: BrokerProcess, topic_name: str) -> None:
    create_topic(broker.bootstrap, topic_name, 2)
    reports = _Reports()
    producer = _producer(broker.bootstrap)
    count = 8000
    produced = threading.Event()
    stop_serving = threading.Event()

    def produce_then_serve_reports() -> None:
        # Delivery reports reach their callbacks only inside poll(), so this one thread keeps
        # polling after the last produce until the test is done: acks that arrive late (a slow
        # InitProducerId, a loaded host) still land in `reports`.
        for i in range(count):
            while True:
                try:
                    producer.produce(topic_name, key=str(i % 31).encode(), value=str(i).encode(),
                                     on_delivery=reports.callback)
                    break
                except BufferError:
                    producer.poll(0.05)
            producer.poll(0)
            if i % 100 == 0:
                time.sleep(0.02)  # a steady stream over a few seconds, so the kill lands mid-flight
        produced.set()
        while not stop_serving.is_set():
            producer.poll(0.05)

    thread = threading.Thread(target=produce_then_serve_reports, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 40
        while len(reports.acked) < 1500 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(reports.acked) >= 1500, f"only {len(reports.acked)} acks before the kill"
        broker.kill()
        acked_at_kill = len(reports.acked)
        time.sleep(0.5)
        restarted_at = len(broker.output)
        broker.start()
        assert produced.wait(40)
    finally:
        stop_serving.set()
        thread.join(5)
    assert producer.flush(60) == 0
    assert not reports.errors, reports.errors
    assert len(reports.acked) == count
    # Logged before the first batch after the restart is answered; the broker's output reaches
    # ``broker.output`` through a reader thread of its own, so give it a moment on a busy host.
    deadline = time.monotonic() + 10
    while not (rebuilt := [line for line in broker.output[restarted_at:]
                           if f"loaded producer state of {topic_name}" in line]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rebuilt, (f"the restarted broker rebuilt producer state from the log ({acked_at_kill} of {count} "
                     "records were acknowledged before the kill)")
    _assert_exactly_once_in_order(broker.bootstrap, topic_name, 2, count, reports.acked)
