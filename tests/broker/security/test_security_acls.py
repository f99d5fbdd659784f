"""ACLs end to end, as Kafka's StandardAuthorizer decides them, through real clients.

``bob`` (SCRAM-SHA-512 over SASL_SSL) starts with no ACLs at all; each test grants him what it
needs on names of its own, through the super user's CreateAcls, and checks what Kafka's
broker would answer: TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED where denied, prefixed and
deny rules as Kafka's, Metadata hiding what bob may not describe, authorized operations.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicCollection
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from tests.support.broker import BrokerProcess
from tests.support.secure_broker import SecureBroker, start_secure
from tests.support.tls_material import Material

pytestmark = pytest.mark.timeout(120)

BOB_PASSWORD = "bob-secret"


@pytest.fixture(scope="module")
def broker(secure_broker: SecureBroker) -> Iterator[SecureBroker]:
    admin = AdminClient(secure_broker.admin_config())
    upsert = UserScramCredentialUpsertion("bob", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                          BOB_PASSWORD.encode())
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(15)
    yield secure_broker


def _name(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def _admin(broker: SecureBroker) -> AdminClient:
    return AdminClient(broker.admin_config())


def _create(broker: SecureBroker, *topics: str) -> None:
    admin = _admin(broker)
    for future in admin.create_topics([NewTopic(t, 1, 1) for t in topics]).values():
        future.result(15)


def _grant(broker: SecureBroker, *acls: AclBinding) -> None:
    admin = _admin(broker)
    for future in admin.create_acls(list(acls)).values():
        future.result(15)


def _acl(kind: ResourceType, name: str, op: AclOperation, permission: AclPermissionType = AclPermissionType.ALLOW,
         pattern: ResourcePatternType = ResourcePatternType.LITERAL, principal: str = "User:bob",
         host: str = "*") -> AclBinding:
    return AclBinding(kind, name, pattern, principal, host, op, permission)


def _acl_filter(kind: ResourceType, name: str | None, pattern: ResourcePatternType, principal: str | None,
                host: str | None, op: AclOperation, permission: AclPermissionType) -> AclBindingFilter:
    """An ACL filter where None matches any name, principal or host.

    confluent-kafka documents None as "match any" for these three but annotates them ``str``
    (AclBindingFilter inherits AclBinding's __init__), so this one call passes None on purpose.
    """
    return AclBindingFilter(kind, name, pattern, principal, host, op, permission)  # type: ignore[arg-type]


def _scram_futures(admin: AdminClient, users: list[str]) -> dict[str, Future[Any]]:
    """describe_user_scram_credentials' futures by user: a dict when users are named (one future for None)."""
    futures = admin.describe_user_scram_credentials(users)
    assert isinstance(futures, dict)
    return futures


def _bob(broker: SecureBroker, **extra: Any) -> dict[str, Any]:
    return broker.sasl_config("bob", BOB_PASSWORD, "SCRAM-SHA-512", **extra)


def _produce(config: dict[str, Any], topic: str) -> KafkaError | None:
    """Deliver one record; the delivery error (None when it landed)."""
    results: list[KafkaError | None] = []
    producer = Producer({**config, "message.timeout.ms": 10000})
    producer.produce(topic, b"v", callback=lambda err, msg: results.append(err))
    producer.flush(20)
    assert results, "no delivery report"
    return results[0]


def test_no_acls_means_topic_authorization_failed(broker: SecureBroker) -> None:
    topic = _name("acl-none-")
    _create(broker, topic)
    error = _produce(_bob(broker), topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert _produce(broker.admin_config(), topic) is None  # the super user passes


def test_metadata_hides_what_bob_may_not_describe(broker: SecureBroker) -> None:
    visible, hidden = _name("acl-meta-"), _name("acl-meta-")
    _create(broker, visible, hidden)
    _grant(broker, _acl(ResourceType.TOPIC, visible, AclOperation.READ))  # READ implies DESCRIBE
    listed = Producer(_bob(broker)).list_topics(timeout=10).topics
    assert visible in listed and hidden not in listed
    named = Producer(_bob(broker)).list_topics(hidden, timeout=10).topics[hidden]
    assert named.error is not None and named.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_group_authorization_failed_without_group_acl(broker: SecureBroker) -> None:
    topic, group = _name("acl-group-"), _name("acl-group-")
    _create(broker, topic)
    _grant(broker, _acl(ResourceType.TOPIC, topic, AclOperation.READ))
    consumer = Consumer({**_bob(broker), "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    error: KafkaError | None = None
    deadline = time.monotonic() + 20
    try:
        while error is None and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error():
                error = msg.error()
    finally:
        consumer.close()
    assert error is not None and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED, error
    _grant(broker, _acl(ResourceType.GROUP, group, AclOperation.READ))
    _produce(broker.admin_config(), topic)
    consumer = Consumer({**_bob(broker), "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        msg = None
        deadline = time.monotonic() + 20
        while msg is None and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
        assert msg is not None and msg.error() is None and msg.value() == b"v"
    finally:
        consumer.close()


def test_prefixed_allow(broker: SecureBroker) -> None:
    prefix = _name("acl-pre-") + "-"
    inside, outside = prefix + "x", prefix[:-1] + "x"
    _create(broker, inside, outside)
    _grant(broker, _acl(ResourceType.TOPIC, prefix, AclOperation.WRITE, pattern=ResourcePatternType.PREFIXED))
    assert _produce(_bob(broker), inside) is None
    error = _produce(_bob(broker), outside)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_deny_overrides_allow(broker: SecureBroker) -> None:
    prefix = _name("acl-deny-") + "-"
    allowed, denied = prefix + "open", prefix + "closed"
    _create(broker, allowed, denied)
    _grant(broker, _acl(ResourceType.TOPIC, prefix, AclOperation.ALL, pattern=ResourcePatternType.PREFIXED),
           _acl(ResourceType.TOPIC, denied, AclOperation.WRITE, AclPermissionType.DENY))
    assert _produce(_bob(broker), allowed) is None
    error = _produce(_bob(broker), denied)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    # the DENY on WRITE does not deny DESCRIBE: the topic is still listed
    assert denied in Producer(_bob(broker)).list_topics(timeout=10).topics


def test_wildcard_principal_and_host(broker: SecureBroker) -> None:
    everyone, elsewhere = _name("acl-any-"), _name("acl-host-")
    _create(broker, everyone, elsewhere)
    wildcard = _acl(ResourceType.TOPIC, everyone, AclOperation.WRITE, principal="User:*")
    _grant(broker, wildcard, _acl(ResourceType.TOPIC, elsewhere, AclOperation.WRITE, host="10.9.9.9"))
    try:
        assert _produce(_bob(broker), everyone) is None
        error = _produce(_bob(broker), elsewhere)  # the ACL is for another client address
        assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:  # a WRITE for User:* lets everyone InitProducerId (Kafka's rule): do not leave it behind
        admin = _admin(broker)
        everyone_filter = _acl_filter(ResourceType.TOPIC, everyone, ResourcePatternType.LITERAL, "User:*",
                                      None, AclOperation.ANY, AclPermissionType.ANY)
        admin.delete_acls([everyone_filter])[everyone_filter].result(15)


def test_create_topics_needs_create(broker: SecureBroker) -> None:
    name = _name("acl-create-")
    bob_admin = AdminClient(_bob(broker))
    with pytest.raises(KafkaException) as info:
        bob_admin.create_topics([NewTopic(name, 1, 1)])[name].result(15)
    assert info.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    _grant(broker, _acl(ResourceType.TOPIC, name, AclOperation.CREATE))
    bob_admin.create_topics([NewTopic(name, 1, 1)])[name].result(15)


def test_acl_and_credential_admin_needs_the_cluster(broker: SecureBroker) -> None:
    bob_admin = AdminClient(_bob(broker))
    with pytest.raises(KafkaException) as info:
        bob_admin.create_acls([_acl(ResourceType.TOPIC, "x", AclOperation.ALL)])[
            _acl(ResourceType.TOPIC, "x", AclOperation.ALL)].result(15)
    assert info.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED
    # (DescribeAcls' CLUSTER_AUTHORIZATION_FAILED is checked on the wire in test_security_protocol.py:
    # confluent-kafka's describe_acls drops a top-level error and returns no ACLs.)
    assert bob_admin.describe_acls(_acl_filter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY,
    )).result(15) == []
    with pytest.raises(KafkaException) as info:
        _scram_futures(bob_admin, ["bob"])["bob"].result(15)
    assert info.value.args[0].code() == KafkaError.CLUSTER_AUTHORIZATION_FAILED


def test_describe_and_delete_acls(broker: SecureBroker) -> None:
    topic = _name("acl-del-")
    _create(broker, topic)
    binding = _acl(ResourceType.TOPIC, topic, AclOperation.WRITE)
    _grant(broker, binding)
    admin = _admin(broker)
    mine = _acl_filter(ResourceType.TOPIC, topic, ResourcePatternType.MATCH, "User:bob", None,
                       AclOperation.ANY, AclPermissionType.ANY)
    assert admin.describe_acls(mine).result(15) == [binding]
    assert _produce(_bob(broker), topic) is None
    deleted = admin.delete_acls([mine])[mine].result(15)
    assert deleted == [binding]
    assert admin.describe_acls(mine).result(15) == []
    error = _produce(_bob(broker), topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_authorized_operations(broker: SecureBroker) -> None:
    topic, group = _name("acl-ops-"), _name("acl-ops-")
    _create(broker, topic)
    _grant(broker, _acl(ResourceType.TOPIC, topic, AclOperation.READ),
           _acl(ResourceType.GROUP, group, AclOperation.READ),
           _acl(ResourceType.BROKER, "kafka-cluster", AclOperation.DESCRIBE))  # BROKER: librdkafka's CLUSTER
    bob_admin = AdminClient(_bob(broker))
    cluster = bob_admin.describe_cluster(include_authorized_operations=True).result(15)
    assert set(cluster.authorized_operations) == {AclOperation.DESCRIBE}
    described = bob_admin.describe_topics(TopicCollection([topic]), include_authorized_operations=True)[topic]
    assert set(described.result(15).authorized_operations) == {AclOperation.READ, AclOperation.DESCRIBE}
    admin = _admin(broker)
    admin_cluster = admin.describe_cluster(include_authorized_operations=True).result(15)
    assert len(admin_cluster.authorized_operations) == 7  # a super user: every cluster operation
    consumer = Consumer({**_bob(broker), "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    consumer.poll(3)
    try:
        groups = bob_admin.describe_consumer_groups([group], include_authorized_operations=True)
        assert set(groups[group].result(15).authorized_operations) == {AclOperation.READ, AclOperation.DESCRIBE}
    finally:
        consumer.close()


def test_credential_errors_are_kafkas(broker: SecureBroker) -> None:
    admin = _admin(broker)
    weak = UserScramCredentialUpsertion("weak", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 1000), b"pw")
    with pytest.raises(KafkaException) as info:
        admin.alter_user_scram_credentials([weak])["weak"].result(15)
    assert info.value.args[0].code() == KafkaError.UNACCEPTABLE_CREDENTIAL
    ghost = UserScramCredentialDeletion("ghost", ScramMechanism.SCRAM_SHA_256)
    with pytest.raises(KafkaException) as info:
        admin.alter_user_scram_credentials([ghost])["ghost"].result(15)
    assert info.value.args[0].code() == KafkaError.RESOURCE_NOT_FOUND
    with pytest.raises(KafkaException) as info:
        _scram_futures(admin, ["ghost"])["ghost"].result(15)
    assert info.value.args[0].code() == KafkaError.RESOURCE_NOT_FOUND


@pytest.mark.timeout(60)
def test_without_an_authorizer_everything_is_reported_allowed(shared_broker: BrokerProcess) -> None:
    """No authorizer: every supported operation, as Kafka answers; the ACL APIs are SECURITY_DISABLED."""
    admin = AdminClient({"bootstrap.servers": shared_broker.bootstrap})
    cluster = admin.describe_cluster(include_authorized_operations=True).result(15)
    assert len(cluster.authorized_operations) == 7
    binding = _acl(ResourceType.TOPIC, "t", AclOperation.READ)
    with pytest.raises(KafkaException) as info:
        admin.create_acls([binding])[binding].result(15)
    assert info.value.args[0].code() == KafkaError.SECURITY_DISABLED


@pytest.mark.timeout(120)
def test_acls_and_credentials_survive_a_restart(tmp_path: Path, material: Material) -> None:
    own = start_secure(tmp_path / "data", material)
    try:
        admin = AdminClient(own.admin_config())
        upsert = UserScramCredentialUpsertion("carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                              b"carol-secret")
        admin.alter_user_scram_credentials([upsert])["carol"].result(15)
        binding = _acl(ResourceType.TOPIC, "durable-", AclOperation.WRITE, pattern=ResourcePatternType.PREFIXED,
                       principal="User:carol")
        admin.create_acls([binding])[binding].result(15)
        for future in admin.create_topics([NewTopic("durable-t", 1, 1)]).values():
            future.result(15)
        own.process.restart()
        from tests.support.secure_broker import LISTENERS, broker_ports

        own.ports = broker_ports(own.process, LISTENERS)
        carol = own.sasl_config("carol", "carol-secret")
        assert _produce(carol, "durable-t") is None  # her credential and her ACL are both back
        admin = AdminClient(own.admin_config())
        everything = _acl_filter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                 AclPermissionType.ANY)
        assert admin.describe_acls(everything).result(15) == [binding]
        assert "__cluster_metadata" not in admin.list_topics(timeout=10).topics
    finally:
        own.process.stop()
