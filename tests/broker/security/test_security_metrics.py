"""The broker's ``/metrics`` with an authorizer: authenticated scrapes only, ACLs decide what shows
(issue 27, item 6).

The metrics name topics and consumer groups; with ACLs on, a principal may not learn the names
it may not DESCRIBE through Metadata or ListGroups, so it must not through ``/metrics`` either.
A secured broker of this module's own (the package's listeners, ``metrics.listener`` on) is
scraped over real HTTP and HTTPS with httpx:

- no credentials, wrong ones, an unknown user: 401 with ``WWW-Authenticate: Basic``;
- the super user ``admin`` (a PLAIN user of the SASL listeners): every series;
- ``scraper`` (a SCRAM user) with DESCRIBE on one topic and one group: that topic's and that
  group's series, not the others', and the broker-wide ones;
- on ``https://``: the same Basic credentials, or the admin's client certificate alone;
- a broker without an authorizer serves every series to anyone, as before.
"""

from __future__ import annotations

import ssl
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from prometheus_client.parser import text_string_to_metric_families

from tests.metrics.support import broker_metrics_url
from tests.support.broker import BrokerProcess
from tests.support.secure_broker import ADMIN_PASSWORD, SecureBroker, start_secure
from tests.support.tls_material import Material

pytestmark = pytest.mark.timeout(120)

SCRAPER_PASSWORD = "scraper-secret"
MESSAGES_IN = "kafka_server_brokertopicmetrics_messagesin_total"
LAG = "kafka_consumergroup_lag"
CONNECTIONS = "kafka_server_socket_server_metrics_connection_count"


@dataclass
class Names:
    visible_topic: str
    hidden_topic: str
    visible_group: str
    hidden_group: str


def _fill(broker: SecureBroker, names: Names) -> None:
    """Records in both topics, a committed offset of each group on each topic."""
    admin = AdminClient(broker.admin_config())
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in (names.visible_topic, names.hidden_topic)]).values():
        future.result(20)
    upsert = UserScramCredentialUpsertion("scraper", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                          SCRAPER_PASSWORD.encode())
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(20)
    grants = [AclBinding(kind, name, ResourcePatternType.LITERAL, "User:scraper", "*", AclOperation.DESCRIBE,
                         AclPermissionType.ALLOW)
              for kind, name in ((ResourceType.TOPIC, names.visible_topic), (ResourceType.GROUP, names.visible_group))]
    for future in admin.create_acls(grants).values():
        future.result(20)
    producer = Producer(broker.admin_config(**{"linger.ms": 5}))
    try:
        for topic in (names.visible_topic, names.hidden_topic):
            for i in range(5):
                producer.produce(topic, value=f"v{i}".encode())
        assert producer.flush(30) == 0
    finally:
        producer.close()
    for group in (names.visible_group, names.hidden_group):
        consumer = Consumer(broker.admin_config(**{"group.id": group, "enable.auto.commit": False}))
        try:
            consumer.commit(offsets=[TopicPartition(t, 0, 2) for t in (names.visible_topic, names.hidden_topic)],
                            asynchronous=False)
        finally:
            consumer.close()


@pytest.fixture(scope="module")
def metrics_broker(tmp_path_factory: pytest.TempPathFactory,
                   material: Material) -> Iterator[tuple[SecureBroker, Names]]:
    broker = start_secure(tmp_path_factory.mktemp("metrics-secure"), material, **{"metrics.listener": "127.0.0.1:0"})
    try:
        suffix = uuid.uuid4().hex[:8]
        names = Names(f"seen-{suffix}", f"hidden-{suffix}", f"gseen-{suffix}", f"ghidden-{suffix}")
        _fill(broker, names)
        yield broker, names
    finally:
        broker.process.stop()


def _families(text: str) -> dict[str, list[dict[str, str]]]:
    """Sample name -> the label sets of its samples."""
    out: dict[str, list[dict[str, str]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, []).append(dict(sample.labels))
    return out


def _label_values(families: dict[str, list[dict[str, str]]], name: str, label: str) -> set[str]:
    return {labels[label] for labels in families.get(name, []) if label in labels}


def _get(url: str, **kwargs: object) -> httpx.Response:
    return httpx.get(url, timeout=20, **kwargs)  # type: ignore[arg-type]


def test_no_credentials_wrong_ones_or_an_unknown_user_get_401(metrics_broker: tuple[SecureBroker, Names]) -> None:
    broker, _ = metrics_broker
    url = broker_metrics_url(broker.process.output)
    for auth in (None, ("admin", "wrong"), ("scraper", ADMIN_PASSWORD), ("nobody", "x")):
        response = _get(url, auth=auth)
        assert response.status_code == 401, (auth, response.text[:200])
        assert response.headers["www-authenticate"].startswith('Basic realm="seaway-broker"')
        assert "kafka_" not in response.text
    assert _get(url, headers={"Authorization": "Bearer abc"}).status_code == 401


def test_super_user_sees_every_topic_and_group(metrics_broker: tuple[SecureBroker, Names]) -> None:
    broker, names = metrics_broker
    response = _get(broker_metrics_url(broker.process.output), auth=("admin", ADMIN_PASSWORD))
    assert response.status_code == 200
    families = _families(response.text)
    assert {names.visible_topic, names.hidden_topic} <= _label_values(families, MESSAGES_IN, "topic")
    assert {names.visible_group, names.hidden_group} <= _label_values(families, LAG, "consumergroup")


def test_scram_user_sees_only_what_its_acls_let_it_describe(metrics_broker: tuple[SecureBroker, Names]) -> None:
    broker, names = metrics_broker
    response = _get(broker_metrics_url(broker.process.output), auth=("scraper", SCRAPER_PASSWORD))
    assert response.status_code == 200
    families = _families(response.text)
    every_topic = set().union(*(_label_values(families, name, "topic") for name in families))
    every_group = set().union(*(_label_values(families, name, "consumergroup") for name in families))
    assert every_topic == {names.visible_topic}  # not even the internal topics
    assert every_group == {names.visible_group}
    lag = families[LAG]
    assert [(s["consumergroup"], s["topic"]) for s in lag] == [(names.visible_group, names.visible_topic)]
    assert _label_values(families, CONNECTIONS, "listener") >= {"PLAINTEXT", "SASL_SSL"}  # broker-wide series


def _https_broker(data: Path, material: Material) -> SecureBroker:
    return start_secure(data, material, **{"metrics.listener": "https://127.0.0.1:0", "ssl.client.auth": "requested"})


def test_https_listener_takes_basic_credentials_or_a_client_certificate(tmp_path: Path, material: Material) -> None:
    broker = _https_broker(tmp_path / "data", material)
    try:
        url = broker_metrics_url(broker.process.output)
        assert url.startswith("https://127.0.0.1:")
        trusting = ssl.create_default_context(cafile=str(material.ca))
        assert _get(url, verify=trusting).status_code == 401
        assert _get(url, verify=trusting, auth=("admin", ADMIN_PASSWORD)).status_code == 200
        with_certificate = ssl.create_default_context(cafile=str(material.ca))
        with_certificate.load_cert_chain(str(material.admin_cert), str(material.admin_key))
        response = _get(url, verify=with_certificate)  # CN=client-admin,... is a super user
        assert response.status_code == 200
        assert CONNECTIONS in response.text
        with pytest.raises(httpx.HTTPError):  # plain HTTP to the TLS port
            _get(url.replace("https://", "http://"))
    finally:
        broker.process.stop()


def test_without_an_authorizer_metrics_are_served_to_anyone(tmp_path: Path) -> None:
    topic = f"open-{uuid.uuid4().hex[:8]}"
    with BrokerProcess(tmp_path / "data", {"metrics.listener": "127.0.0.1:0"}) as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap})
        try:
            producer.produce(topic, value=b"v")
            assert producer.flush(30) == 0
        finally:
            producer.close()
        response = _get(broker_metrics_url(broker.output))
        assert response.status_code == 200
        assert topic in _label_values(_families(response.text), MESSAGES_IN, "topic")
