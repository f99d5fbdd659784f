"""The broker's /metrics: Kafka's JMX names as jmx_exporter exports them, counted exactly.

A real broker subprocess with ``metrics.listener`` on an ephemeral loopback port,
confluent-kafka (librdkafka) producing and consuming, the page parsed by
prometheus_client's own parser.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__

from tests.metrics.support import broker_metrics_url, sample_value, scrape
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(120)

N = 1000


@pytest.fixture(scope="module")
def mbroker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    overrides = {"metrics.listener": "127.0.0.1:0", "group.initial.rebalance.delay.ms": "0"}
    with BrokerProcess(tmp_path_factory.mktemp("metrics-broker"), overrides) as broker:
        yield broker


def _create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(timeout=30)


def _produce(bootstrap: str, topic: str, n: int) -> int:
    """Produce ``n`` records in batches; returns the value bytes sent."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "acks": "all"})
    sent = 0
    for i in range(n):
        value = f"record-{i}".encode() * 3
        sent += len(value)
        producer.produce(topic, value=value, key=str(i % 7).encode())
        if i % 200 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0
    return sent


def test_messages_in_equals_records_produced_and_out_is_counted(mbroker: BrokerProcess) -> None:
    url = broker_metrics_url(mbroker.output)
    topic = f"m-{uuid.uuid4().hex[:10]}"
    _create(mbroker.bootstrap, topic, 3)
    value_bytes = _produce(mbroker.bootstrap, topic, N)

    s = scrape(url)
    assert sample_value(s, "kafka_server_brokertopicmetrics_messagesin_total", {"topic": topic}) == N
    bytes_in = sample_value(s, "kafka_server_brokertopicmetrics_bytesin_total", {"topic": topic})
    assert bytes_in is not None and bytes_in > value_bytes  # batches carry headers around the values
    produce_requests = sample_value(s, "kafka_server_brokertopicmetrics_totalproducerequests_total", {"topic": topic})
    assert produce_requests is not None and 1 <= produce_requests <= N
    # per-partition log gauges: the three partitions hold every record, and their bytes
    ends = [sample_value(s, "kafka_log_log_logendoffset", {"topic": topic, "partition": str(p)}) for p in range(3)]
    assert sum(e or 0 for e in ends) == N
    sizes = [sample_value(s, "kafka_log_log_size", {"topic": topic, "partition": str(p)}) or 0 for p in range(3)]
    assert sum(sizes) == bytes_in  # stored verbatim: the log holds exactly the bytes appended
    # per-API requests and latency histogram (jmx_exporter's RequestMetrics names)
    produced = sample_value(s, "kafka_network_requestmetrics_requests_total", {"request": "Produce"})
    assert produced is not None and produced >= produce_requests
    assert sample_value(s, "kafka_network_requestmetrics_totaltimems_count", {"request": "Produce"}) == produced
    assert sample_value(s, "kafka_network_requestmetrics_totaltimems_bucket",
                        {"request": "Produce", "le": "+Inf"}) == produced
    assert (sample_value(s, "kafka_network_requestmetrics_totaltimems_sum", {"request": "Produce"}) or 0) > 0
    assert (sample_value(s, "kafka_network_requestmetrics_requests_total", {"request": "Metadata"}) or 0) >= 1

    group = f"g-{uuid.uuid4().hex[:8]}"
    consumer = Consumer({"bootstrap.servers": mbroker.bootstrap, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        got = 0
        deadline = time.monotonic() + 60  # the group join and first fetch included
        while got < N:
            assert time.monotonic() < deadline, f"consumed only {got} of {N}"
            got += sum(1 for m in consumer.consume(500, timeout=1) if m.error() is None)
        consumer.commit(asynchronous=False)
        s = scrape(url)
        assert (sample_value(s, "kafka_server_socket_server_metrics_connection_count",
                             {"listener": "PLAINTEXT"}) or 0) >= 1
        assert (sample_value(s, "kafka_coordinator_group_groupmetadatamanager_numgroupsstable") or 0) >= 1
    finally:
        consumer.close()
    s = scrape(url)
    # The fetches returned the stored batches: at least every appended byte went out once.
    bytes_out = sample_value(s, "kafka_server_brokertopicmetrics_bytesout_total", {"topic": topic})
    assert bytes_out is not None and bytes_out >= bytes_in
    assert (sample_value(s, "kafka_server_brokertopicmetrics_totalfetchrequests_total", {"topic": topic}) or 0) >= 1
    assert (sample_value(s, "kafka_network_requestmetrics_requests_total", {"request": "OffsetCommit"}) or 0) >= 1
    assert (sample_value(s, "kafka_coordinator_group_groupmetadatamanager_numgroups") or 0) >= 1


def test_failed_produce_is_counted_per_topic(mbroker: BrokerProcess) -> None:
    """A keyless record to a compacted topic is refused (INVALID_RECORD): one failed produce."""
    url = broker_metrics_url(mbroker.output)
    topic = f"f-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": mbroker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config={"cleanup.policy": "compact"})])[topic].result(timeout=30)
    producer = Producer({"bootstrap.servers": mbroker.bootstrap, "message.timeout.ms": 5000})
    errors: list[object] = []
    producer.produce(topic, value=b"no key", on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(10)
    assert errors and errors[0] is not None
    s = scrape(url)
    failed = sample_value(s, "kafka_server_brokertopicmetrics_failedproducerequests_total", {"topic": topic})
    assert failed is not None and failed >= 1
    assert sample_value(s, "kafka_server_brokertopicmetrics_messagesin_total", {"topic": topic}) == 0


@pytest.mark.timeout(60)
def test_bad_metrics_listener_refuses_to_start(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "bad", {"metrics.listener": "localhost"})
    try:
        with pytest.raises(RuntimeError) as failed:
            broker.start(timeout=30)
    finally:
        broker.stop()  # if it started after all, it must not outlive the test
    assert "metrics.listener" in str(failed.value)
