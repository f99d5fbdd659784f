"""Real clients against a SASL_SSL / mTLS broker: confluent-kafka, kafka-python, aiokafka, kcat.

Each produces and then consumes (in a consumer group) as ``alice`` with SCRAM-SHA-512 (a
credential created through AlterUserScramCredentials by the super user) and with PLAIN (a
JAAS user), both over TLS verified against the test CA. A wrong password fails with Kafka's
authentication error; a client certificate from the CA authenticates over mutual TLS and
one from another CA is refused.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
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

from tests.support.secure_broker import ALICE_PLAIN_PASSWORD, SecureBroker

pytestmark = pytest.mark.timeout(120)

ALICE_SCRAM_PASSWORD = "alice-scram-secret"
PREFIX = "clients-"
RECORDS = [f"record-{i}".encode() for i in range(20)]


@pytest.fixture(scope="module")
def broker(secure_broker: SecureBroker) -> Iterator[SecureBroker]:
    """The shared broker with alice's SCRAM credentials and ACLs on clients-* topics and groups."""
    admin = AdminClient(secure_broker.admin_config())
    for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):  # one per request, as Kafka
        upsert = UserScramCredentialUpsertion("alice", ScramCredentialInfo(mechanism, 8192),
                                              ALICE_SCRAM_PASSWORD.encode())
        for future in admin.alter_user_scram_credentials([upsert]).values():
            future.result(15)
    acls = [AclBinding(kind, PREFIX, ResourcePatternType.PREFIXED, principal, "*", AclOperation.ALL,
                       AclPermissionType.ALLOW)
            for kind in (ResourceType.TOPIC, ResourceType.GROUP)
            for principal in ("User:alice", f"User:{secure_broker.material.client_dn}")]
    for future in admin.create_acls(acls).values():
        future.result(15)
    yield secure_broker


def _topic(admin_config: dict[str, Any]) -> str:
    name = f"{PREFIX}{uuid.uuid4().hex[:10]}"
    admin = AdminClient(admin_config)
    for future in admin.create_topics([NewTopic(name, 1, 1)]).values():
        future.result(15)
    return name


def _alice(broker: SecureBroker, mechanism: str) -> tuple[str, str]:
    return ("alice", ALICE_SCRAM_PASSWORD if mechanism.startswith("SCRAM") else ALICE_PLAIN_PASSWORD)


MECHANISMS = ["SCRAM-SHA-512", "PLAIN"]


@pytest.mark.parametrize("mechanism", [*MECHANISMS, "SCRAM-SHA-256"])
def test_confluent_kafka(broker: SecureBroker, mechanism: str) -> None:
    topic = _topic(broker.admin_config())
    config = broker.sasl_config(*_alice(broker, mechanism), mechanism)
    producer = Producer(config)
    for value in RECORDS:
        producer.produce(topic, value)
    assert producer.flush(30) == 0
    consumer = Consumer({**config, "group.id": f"{PREFIX}{uuid.uuid4().hex[:6]}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(got) < len(RECORDS) and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None:
                assert msg.error() is None, msg.error()
                record = msg.value()
                assert record is not None
                got.append(record)
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert got == RECORDS


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kafka_python(broker: SecureBroker, mechanism: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    topic = _topic(broker.admin_config())
    user, password = _alice(broker, mechanism)
    common: dict[str, Any] = {
        "bootstrap_servers": broker.bootstrap("SASL_SSL"), "security_protocol": "SASL_SSL",
        "sasl_mechanism": mechanism, "sasl_plain_username": user, "sasl_plain_password": password,
        "ssl_cafile": str(broker.material.ca)}
    producer = KafkaProducer(**common)
    for value in RECORDS:
        producer.send(topic, value)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(topic, group_id=f"{PREFIX}{uuid.uuid4().hex[:6]}", auto_offset_reset="earliest",
                             consumer_timeout_ms=15000, **common)
    try:
        got = [m.value for _, m in zip(RECORDS, consumer, strict=False)]
    finally:
        consumer.close()
    assert got == RECORDS


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_aiokafka(broker: SecureBroker, mechanism: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.helpers import create_ssl_context

    topic = _topic(broker.admin_config())
    user, password = _alice(broker, mechanism)

    async def run() -> list[bytes]:
        common: dict[str, Any] = {
            "bootstrap_servers": broker.bootstrap("SASL_SSL"), "security_protocol": "SASL_SSL",
            "sasl_mechanism": mechanism,
            "sasl_plain_username": user, "sasl_plain_password": password,
            "ssl_context": create_ssl_context(cafile=str(broker.material.ca))}
        producer = AIOKafkaProducer(**common)
        await producer.start()
        try:
            for value in RECORDS:
                await producer.send_and_wait(topic, value)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, group_id=f"{PREFIX}{uuid.uuid4().hex[:6]}",
                                    auto_offset_reset="earliest", **common)
        await consumer.start()
        got: list[bytes] = []
        try:
            async with asyncio.timeout(30):
                async for msg in consumer:
                    assert msg.value is not None
                    got.append(msg.value)
                    if len(got) == len(RECORDS):
                        break
        finally:
            await consumer.stop()
        return got

    assert asyncio.run(run()) == RECORDS


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_kcat(broker: SecureBroker, mechanism: str) -> None:
    topic = _topic(broker.admin_config())
    user, password = _alice(broker, mechanism)
    args = ["kcat", "-b", broker.bootstrap("SASL_SSL"), "-X", "security.protocol=SASL_SSL",
            "-X", f"sasl.mechanisms={mechanism}", "-X", f"sasl.username={user}", "-X", f"sasl.password={password}",
            "-X", f"ssl.ca.location={broker.material.ca}", "-t", topic]
    payload = b"\n".join(RECORDS) + b"\n"
    produced = subprocess.run([*args, "-P"], input=payload, capture_output=True, timeout=60)
    assert produced.returncode == 0, produced.stderr
    consumed = subprocess.run([*args, "-C", "-o", "beginning", "-c", str(len(RECORDS)), "-e"],
                              capture_output=True, timeout=60)
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.splitlines() == RECORDS


def _first_error(config: dict[str, Any], topic: str) -> KafkaError:
    errors: list[KafkaError] = []
    producer = Producer({**config, "error_cb": errors.append, "message.timeout.ms": 5000})
    producer.produce(topic, b"x")
    deadline = time.monotonic() + 20
    while not errors and time.monotonic() < deadline:
        producer.poll(0.2)
    producer.purge()
    producer.flush(1)
    assert errors, "no error reported"
    return errors[0]


def test_wrong_password_is_kafkas_authentication_error(broker: SecureBroker) -> None:
    topic = f"{PREFIX}wrong"
    error = _first_error(broker.sasl_config("alice", "not-her-password", "SCRAM-SHA-512"), topic)
    assert error.code() == KafkaError._AUTHENTICATION
    assert ("Authentication failed during authentication due to invalid credentials with SASL mechanism "
            "SCRAM-SHA-512") in error.str()
    error = _first_error(broker.sasl_config("alice", "not-her-password", "PLAIN"), topic)
    assert error.code() == KafkaError._AUTHENTICATION
    assert "Authentication failed: Invalid username or password" in error.str()
    unknown = _first_error(broker.sasl_config("mallory", "whatever", "SCRAM-SHA-512"), topic)
    assert unknown.str().split(": ", 2)[-1].split(" (after")[0] == error.str().split(": ", 2)[-1].split(" (after")[0] \
        .replace("Authentication failed: Invalid username or password",
                 "Authentication failed during authentication due to invalid credentials with SASL mechanism "
                 "SCRAM-SHA-512")  # an unknown user fails exactly like a wrong password: nothing leaks



_KAFKA_PYTHON_WRONG_PASSWORD = """
import logging, sys
from kafka import KafkaProducer
logging.basicConfig(level=logging.WARNING, stream=sys.stdout, format="%(message)s")
try:
    KafkaProducer(bootstrap_servers=sys.argv[1], security_protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512",
                  sasl_plain_username="alice", sasl_plain_password="not-her-password", ssl_cafile=sys.argv[2],
                  bootstrap_timeout_ms=5000)
except Exception as exc:
    print("raised", type(exc).__name__)
"""


def test_wrong_password_kafka_python(broker: SecureBroker) -> None:
    """kafka-python retries bootstrapping until its timeout, each attempt failing with Kafka's
    error 58. (In a subprocess: the failed constructor leaks sockets kafka-python never closes.)"""
    done = subprocess.run([sys.executable, "-c", _KAFKA_PYTHON_WRONG_PASSWORD, broker.bootstrap("SASL_SSL"),
                           str(broker.material.ca)], capture_output=True, text=True, timeout=60)
    assert "raised" in done.stdout, done.stdout + done.stderr
    assert ("[Error 58] SaslAuthenticationFailedError: SaslAuthenticationFailedError: Authentication failed during "
            "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512") in done.stdout


def _mtls(broker: SecureBroker, cert: Any, key: Any) -> dict[str, Any]:
    return {"bootstrap.servers": broker.bootstrap("SSL"), "security.protocol": "SSL",
            "ssl.ca.location": str(broker.material.ca), "ssl.certificate.location": str(cert),
            "ssl.key.location": str(key)}


def test_mutual_tls(broker: SecureBroker) -> None:
    material = broker.material
    topic = _topic(broker.admin_config())
    producer = Producer(_mtls(broker, material.client_cert, material.client_key))
    delivered: list[Any] = []
    producer.produce(topic, b"over mTLS", callback=lambda err, msg: delivered.append(err))
    assert producer.flush(30) == 0 and delivered == [None]  # the ACL is for User:CN=client-alice,...

    rogue = _first_error(_mtls(broker, material.rogue_cert, material.rogue_key), topic)
    assert rogue.code() in (KafkaError._SSL, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN), rogue
    no_cert = {k: v for k, v in _mtls(broker, material.client_cert, material.client_key).items()
               if not k.startswith(("ssl.certificate", "ssl.key"))}
    refused = _first_error(no_cert, topic)
    assert refused.code() in (KafkaError._SSL, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN), refused


def test_mtls_principal_without_acls_is_denied(broker: SecureBroker) -> None:
    """The admin certificate's DN is a super user; a topic outside clients-* needs an ACL for alice's DN."""
    material = broker.material
    name = f"other-{uuid.uuid4().hex[:8]}"
    admin = AdminClient(broker.admin_config())
    for future in admin.create_topics([NewTopic(name, 1, 1)]).values():
        future.result(15)
    producer = Producer(_mtls(broker, material.client_cert, material.client_key))
    delivered: list[Any] = []
    producer.produce(name, b"x", callback=lambda err, msg: delivered.append(err))
    producer.flush(30)
    assert delivered and delivered[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    admin_producer = Producer(_mtls(broker, material.admin_cert, material.admin_key))
    admin_producer.produce(name, b"x", callback=lambda err, msg: delivered.append(err))
    admin_producer.flush(30)
    assert delivered[-1] is None


def test_sasl_plaintext_listener(broker: SecureBroker) -> None:
    topic = _topic(broker.admin_config())
    producer = Producer(broker.sasl_config("alice", ALICE_SCRAM_PASSWORD, "SCRAM-SHA-512", tls=False))
    producer.produce(topic, b"x")
    assert producer.flush(30) == 0
    with pytest.raises(KafkaException):
        Producer(broker.sasl_config("alice", "wrong", "SCRAM-SHA-512", tls=False)).list_topics(timeout=3)
