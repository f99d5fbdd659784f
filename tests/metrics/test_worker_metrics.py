"""The Connect worker's /metrics: a real standalone worker (REST) with a file source and sink.

N lines go file -> FileStreamSource -> topic -> FileStreamSink -> file; then the worker's page
says N polled, N written, N read, N put, the connector and tasks RUNNING, at least one sink
offset commit; and the broker's page says the topic took N messages in.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.cli.connect_worker import connect_worker
from tests.metrics.support import broker_metrics_url, sample_value, scrape
from tests.support.broker import BrokerProcess

N = 500


def _create(url: str, name: str, config: dict[str, str]) -> None:
    reply = httpx.post(url + "/connectors", json={"name": name, "config": config}, timeout=30)
    assert reply.status_code == 201, reply.text


def _wait(what: str, check: Callable[[], object], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@pytest.mark.timeout(180)
def test_worker_metrics_count_a_file_pipeline(tmp_path: Path) -> None:
    overrides = {"metrics.listener": "127.0.0.1:0", "group.initial.rebalance.delay.ms": "0"}
    with BrokerProcess(tmp_path / "broker", overrides) as broker, \
            connect_worker(broker.bootstrap, tmp_path / "worker") as url:
        tag = uuid.uuid4().hex[:8]
        topic = f"pipe-{tag}"
        source_file, sink_file = tmp_path / "in.txt", tmp_path / "out.txt"
        source_file.write_text("".join(f"line {i}\n" for i in range(N)))
        _create(url, "src", {"connector.class": "FileStreamSource", "topic": topic, "file": str(source_file)})
        _wait("the source's records", lambda: (sample_value(
            scrape(broker_metrics_url(broker.output)), "kafka_server_brokertopicmetrics_messagesin_total",
            {"topic": topic}) or 0) >= N)
        _create(url, "sink", {"connector.class": "FileStreamSink", "topics": topic, "file": str(sink_file)})
        _wait("the sink's file", lambda: sink_file.exists() and len(sink_file.read_text().splitlines()) == N)

        def committed() -> bool:
            s = scrape(url + "/metrics")
            return (sample_value(s, "kafka_connect_sink_task_metrics_offset_commit_completion_total",
                                 {"connector": "sink", "task": "0"}) or 0) >= 1
        _wait("a sink offset commit", committed)

        s = scrape(url + "/metrics")
        src, sink = {"connector": "src", "task": "0"}, {"connector": "sink", "task": "0"}
        assert sample_value(s, "kafka_connect_source_task_metrics_source_record_poll_total", src) == N
        assert sample_value(s, "kafka_connect_source_task_metrics_source_record_write_total", src) == N
        assert sample_value(s, "kafka_connect_sink_task_metrics_sink_record_read_total", sink) == N
        assert sample_value(s, "kafka_connect_sink_task_metrics_sink_record_send_total", sink) == N
        assert sample_value(s, "kafka_connect_sink_task_metrics_partition_count", sink) == 1
        assert sample_value(s, "kafka_connect_connector_metrics_status",
                            {"connector": "sink", "status": "running"}) == 1
        assert sample_value(s, "kafka_connect_connector_task_metrics_status", {**src, "status": "running"}) == 1
        assert sample_value(s, "kafka_connect_connect_worker_metrics_connector_count") == 2
        assert sample_value(s, "kafka_connect_connect_worker_metrics_task_count") == 2
        assert sample_value(s, "kafka_connect_connect_worker_metrics_connector_running_task_count",
                            {"connector": "src"}) == 1
        assert sample_value(s, "kafka_connect_task_error_metrics_total_record_failures", sink) == 0
        assert (sample_value(s, "kafka_connect_connector_task_metrics_batch_size_max", sink) or 0) >= 1
        assert (sample_value(s, "kafka_connect_connector_task_metrics_offset_commit_success_percentage", sink)
                or 0) > 0
        assert (sample_value(s, "kafka_connect_sink_task_metrics_put_batch_max_time_ms", sink) or -1) >= 0

        # the sink's consumer group is caught up: lag 0 and OK at the broker
        b = scrape(broker_metrics_url(broker.output))
        group = {"consumergroup": "connect-sink", "topic": topic, "partition": "0"}
        assert sample_value(b, "kafka_consumergroup_current_offset", group) == N
        assert sample_value(b, "kafka_consumergroup_lag", group) == 0
        assert sample_value(b, "kafka_consumergroup_partition_status", {**group, "status": "OK"}) == 1

        # a paused connector shows as paused, and its tasks too
        assert httpx.put(f"{url}/connectors/sink/pause", timeout=10).status_code == 202

        def paused() -> bool:
            s = scrape(url + "/metrics")
            return sample_value(s, "kafka_connect_connect_worker_metrics_connector_paused_task_count",
                                {"connector": "sink"}) == 1
        _wait("the paused task count", paused)


async def test_worker_metrics_sit_behind_the_rest_authentication() -> None:
    """/metrics is a route of the REST app: basic auth (when on) guards it as every other endpoint."""
    from seaway.connect.rest import create_app
    from seaway.security.basic_auth import User, Users

    from tests.connect.rest.memory_herder import MemoryHerder

    app = create_app(MemoryHerder(), users=Users("test", {"scraper": User("scraper", "s3cret")}))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://worker") as client:
        assert (await client.get("/metrics")).status_code == 401
        assert (await client.get("/metrics", auth=("scraper", "wrong"))).status_code == 401
        reply = await client.get("/metrics", auth=("scraper", "s3cret"))
        assert reply.status_code == 200, reply.text
        assert reply.headers["content-type"].startswith("text/plain")
        assert "kafka_connect_connect_worker_metrics_connector_count 0.0" in reply.text


@pytest.mark.timeout(120)
def test_task_error_metrics_count_tolerated_failures_and_dlq_writes(tmp_path: Path) -> None:
    """3 of 7 records are not JsonConverter envelopes: tolerated, logged and sent to the DLQ."""
    import json

    from confluent_kafka import Producer

    def envelope(payload: str) -> bytes:
        return json.dumps({"schema": {"type": "string", "optional": False}, "payload": payload}).encode()

    records = [envelope("good 0"), b"not json", envelope("good 1"), b'{"payload": "no schema"}',
               envelope("good 2"), b"{", envelope("good 3")]
    with BrokerProcess(tmp_path / "broker", {"group.initial.rebalance.delay.ms": "0"}) as broker, \
            connect_worker(broker.bootstrap, tmp_path / "worker") as url:
        topic = f"errs-{uuid.uuid4().hex[:8]}"
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        for value in records:
            producer.produce(topic, value)
        assert producer.flush(30) == 0
        out = tmp_path / "good.txt"
        _create(url, "dlq-sink", {
            "connector.class": "FileStreamSink", "topics": topic, "file": str(out),
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable": "true", "errors.tolerance": "all", "errors.log.enable": "true",
            "errors.deadletterqueue.topic.name": f"{topic}-dlq",
            "errors.deadletterqueue.topic.replication.factor": "1"})
        _wait("the good records", lambda: out.exists() and len(out.read_text().splitlines()) == 4)
        ids = {"connector": "dlq-sink", "task": "0"}

        def dlq_written() -> bool:
            s = scrape(url + "/metrics")
            return sample_value(s, "kafka_connect_task_error_metrics_deadletterqueue_produce_requests", ids) == 3
        _wait("the DLQ writes", dlq_written)
        s = scrape(url + "/metrics")
        assert sample_value(s, "kafka_connect_task_error_metrics_total_record_failures", ids) == 3
        assert sample_value(s, "kafka_connect_task_error_metrics_total_records_skipped", ids) == 3
        assert sample_value(s, "kafka_connect_task_error_metrics_total_errors_logged", ids) == 3
        assert sample_value(s, "kafka_connect_task_error_metrics_deadletterqueue_produce_failures", ids) == 0
        last_error = sample_value(s, "kafka_connect_task_error_metrics_last_error_timestamp", ids)
        assert last_error is not None and abs(last_error / 1000 - time.time()) < 120
        assert sample_value(s, "kafka_connect_sink_task_metrics_sink_record_read_total", ids) == 7
        assert sample_value(s, "kafka_connect_sink_task_metrics_sink_record_send_total", ids) == 4


async def test_a_connector_without_a_status_yet_is_left_out_of_a_scrape_not_a_404() -> None:
    """Right after a create, a distributed worker has read the connector's config but not yet its
    first status record (``connector_status`` raises NotFoundError): /metrics still answers 200,
    leaving that connector out. CI once saw a 404 for the whole page from exactly this."""
    from seaway.connect.api.errors import NotFoundError
    from seaway.connect.rest import create_app
    from seaway.connect.runtime.herder import ConnectorStateInfo

    from tests.connect.rest.memory_herder import MemoryHerder

    class ConfigReadStatusNot(MemoryHerder):
        async def connector_status(self, name: str) -> ConnectorStateInfo:
            if name == "fresh":
                raise NotFoundError(f"No status found for connector {name}")
            return await super().connector_status(name)

    herder = ConfigReadStatusNot()
    herder.configs["fresh"] = {"connector.class": "FileStreamSink", "topics": "t"}
    app = create_app(herder)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://worker") as client:
        reply = await client.get("/metrics")
        assert reply.status_code == 200, reply.text
        assert 'connector="fresh"' not in reply.text
