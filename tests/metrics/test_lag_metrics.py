"""Consumer lag at the broker's /metrics: caught up is 0 and OK; a stuck consumer is STALLED,
then, once it stops committing for longer than its window spans, STOPPED (Burrow's rules).

The group commits with confluent-kafka (a real OffsetCommit, no subscription), so the test
controls exactly when and what it commits. Short windows keep it fast: 3 commits per window,
commits 2 s apart (the window spans 4 s: the STALLED scrape, right after the last commit, must come
before the silence outlasts the span, even when a loaded machine delays it by seconds).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__
from prometheus_client.samples import Sample

from tests.metrics.support import broker_metrics_url, sample_value, scrape
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(120)

N, M, K = 100, 40, 25


@pytest.fixture
def lag_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    overrides = {"metrics.listener": "127.0.0.1:0", "metrics.lag.window.intervals": "3",
                 "metrics.lag.min.distance.ms": "0"}
    with BrokerProcess(tmp_path_factory.mktemp("lag-broker"), overrides) as broker:
        yield broker


def _produce(bootstrap: str, topic: str, n: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(n):
        producer.produce(topic, value=f"v{i}".encode())
    assert producer.flush(30) == 0


def _status(s: dict[str, list[Sample]], group: str, topic: str) -> str | None:
    found = [x for x in s.get("kafka_consumergroup_partition_status", [])
             if x.labels["consumergroup"] == group and x.labels["topic"] == topic]
    return found[0].labels["status"] if found else None


def test_lag_is_zero_when_caught_up_then_stalled_then_stopped(lag_broker: BrokerProcess) -> None:
    url = broker_metrics_url(lag_broker.output)
    topic, group = f"lag-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": lag_broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    _produce(lag_broker.bootstrap, topic, N)
    consumer = Consumer({"bootstrap.servers": lag_broker.bootstrap, "group.id": group,
                         "enable.auto.commit": False})
    ids = {"consumergroup": group, "topic": topic, "partition": "0"}

    def commit(offset: int) -> None:
        consumer.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)

    try:
        # caught up: lag 0, time lag 0, OK
        commit(N)
        s = scrape(url)
        assert sample_value(s, "kafka_consumergroup_current_offset", ids) == N
        assert sample_value(s, "kafka_consumergroup_lag", ids) == 0
        assert sample_value(s, "kafka_consumergroup_lag_ms", ids) == 0
        assert _status(s, group, topic) == "OK"
        assert sample_value(s, "kafka_consumergroup_status", {"consumergroup": group, "status": "OK"}) == 1

        # stuck: M new records, the consumer keeps committing the same offset -> STALLED
        produced_at = time.time()
        _produce(lag_broker.bootstrap, topic, M)
        for _ in range(3):
            time.sleep(2.0)
            commit(N)
            s = scrape(url)
        assert sample_value(s, "kafka_consumergroup_lag", ids) == M
        assert _status(s, group, topic) == "STALLED", s.get("kafka_consumergroup_partition_status")
        assert sample_value(s, "kafka_consumergroup_status", {"consumergroup": group, "status": "ERROR"}) == 3
        behind = sample_value(s, "kafka_consumergroup_lag_ms", ids)
        assert behind is not None and 1000 <= behind <= (time.time() - produced_at) * 1000 + 1000

        # stopped: no more commits, more records -> the lag grows and, once the silence is longer
        # than the window's span (4 s), the partition is STOPPED
        _produce(lag_broker.bootstrap, topic, K)
        deadline = time.monotonic() + 20
        while True:
            s = scrape(url)
            if _status(s, group, topic) == "STOPPED":
                break
            assert time.monotonic() < deadline, f"not STOPPED: {_status(s, group, topic)}"
            time.sleep(0.2)
        assert sample_value(s, "kafka_consumergroup_lag", ids) == M + K
        assert sample_value(s, "kafka_consumergroup_lag_sum", {"consumergroup": group}) == M + K
    finally:
        consumer.close()
