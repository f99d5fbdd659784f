"""The console scrapes a secured broker's ``/metrics`` with credentials (docs/metrics.md, "Authentication and ACLs").

A broker with an authorizer answers ``/metrics`` only to its own users (HTTP Basic with a SASL
user's password). Here it serves ``/metrics`` over HTTPS with its private CA; the console logs in
to Kafka as the PLAIN super user ``admin`` (``--command-config``) and, by default
(``metrics.basic.auth.credentials.source=SASL_INHERIT``), scrapes with those credentials: topic
sizes and the broker's figures show. With credentials the broker refuses
(``metrics.basic.auth.user.info``), sizes are "—" and the health page says why.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from tests.console.console_support import ConsoleProcess
from tests.metrics.support import broker_metrics_url
from tests.support.secure_broker import ADMIN_PASSWORD, SecureBroker, start_secure
from tests.support.tls_material import make_material

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SecureBroker, str, str]]:
    """The secured broker, its https /metrics URL, and a topic holding 20 records."""
    directory = tmp_path_factory.mktemp("console-metrics")
    broker = start_secure(directory / "broker", make_material(directory / "tls"),
                          **{"metrics.listener": "https://127.0.0.1:0", "ssl.client.auth": "requested"})
    try:
        topic = f"sized-{uuid.uuid4().hex[:8]}"
        admin = AdminClient(broker.admin_config())  # kept until the topic exists: a dropped client stops
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        del admin
        producer = Producer(broker.admin_config(**{"linger.ms": 5}))
        try:
            for i in range(20):
                producer.produce(topic, value=f"record {i}".encode())
            assert producer.flush(30) == 0
        finally:
            producer.close()
        yield broker, broker_metrics_url(broker.process.output), topic
    finally:
        broker.process.stop()


def _console(broker: SecureBroker, metrics_url: str, directory: Path, *extra: str) -> ConsoleProcess:
    kafka = directory / "client.properties"
    kafka.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                     "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                     f'username="admin" password="{ADMIN_PASSWORD}";\n')
    console = directory / "console.properties"
    console.write_text(f"metrics.ssl.truststore.type=PEM\nmetrics.ssl.truststore.location={broker.material.ca}\n")
    return ConsoleProcess("--bootstrap-server", broker.bootstrap("SASL_PLAINTEXT"), "--command-config", str(kafka),
                          "--config", str(console), "--broker-metrics-url", metrics_url,
                          "--schema-registry-url", "", "--override", "connect.connect.url=", *extra)


def _size_cell(console: ConsoleProcess, topic: str) -> str:
    page = httpx.get(f"{console.url}/topics", params={"q": topic}, timeout=60)
    assert page.status_code == 200, page.text[:2000]
    row = re.search(rf"<tr[^>]*>(?:(?!</tr>).)*{re.escape(topic)}(?:(?!</tr>).)*</tr>", page.text, re.S)
    assert row is not None, page.text[:3000]
    return str(re.findall(r'<td class="num">([^<]*)</td>', row.group(0))[-1])


def _health(console: ConsoleProcess) -> str:
    page = httpx.get(f"{console.url}/health", timeout=60)
    assert page.status_code == 200, page.text[:2000]
    return page.text


def test_the_kafka_sasl_user_scrapes_the_secured_metrics(
        secured: tuple[SecureBroker, str, str], tmp_path: Path) -> None:
    broker, metrics_url, topic = secured
    with _console(broker, metrics_url, tmp_path) as console:
        size = _size_cell(console, topic)
        assert re.fullmatch(r"\d+(\.\d)? (B|KiB)", size), size  # from kafka_log_log_size, not "—"
        health = _health(console)
        assert "no figures from /metrics" not in health
        connections = re.search(r"<dt>connections</dt><dd>(\d+)</dd>", health)
        assert connections is not None and int(connections.group(1)) >= 1, health[:3000]


def test_refused_metrics_credentials_are_named_on_the_health_page(
        secured: tuple[SecureBroker, str, str], tmp_path: Path) -> None:
    broker, metrics_url, topic = secured
    with _console(broker, metrics_url, tmp_path, "--override", "metrics.basic.auth.user.info=admin:wrong") as console:
        assert _size_cell(console, topic) == "—"
        health = _health(console)
        assert "no figures from /metrics" in health and "401" in health, health[:3000]
        assert "the broker refused the credentials of admin" in health
        assert "wrong" not in health  # the password is never shown
