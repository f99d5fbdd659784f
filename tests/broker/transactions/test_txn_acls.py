"""ACLs on the transaction APIs, Kafka's rules: a principal denied WRITE on a transactional id
cannot initialize, produce, add partitions, add offsets or end a transaction with it, nor
(denied DESCRIBE) find its coordinator or describe it, while other ids work as before."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)
from seaway.protocol.messages.find_coordinator_request import FindCoordinatorRequest
from seaway.protocol.messages.find_coordinator_response import FindCoordinatorResponse

from tests.broker.admin.rawclient import call
from tests.broker.clients.test_confluent_clients import create_topic
from tests.broker.transactions.test_txn_protocol import (
    NONE,
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    _add,
    _batch,
    _end,
    _init,
    _produce,
)
from tests.broker.transactions.txn_support import describe_transaction, wait_until
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(scope="module")
def acl_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """ACLs on; with no ACL on a resource everyone may use it, so the test adds DENYs."""
    overrides = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                 "allow.everyone.if.no.acl.found": "true"}
    with BrokerProcess(tmp_path_factory.mktemp("acl-broker"), overrides) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        denials = [AclBinding(ResourceType.TRANSACTIONAL_ID, "denied-", ResourcePatternType.PREFIXED,
                              "User:ANONYMOUS", "*", operation, AclPermissionType.DENY)
                   for operation in (AclOperation.WRITE, AclOperation.DESCRIBE)]
        for future in admin.create_acls(denials).values():
            future.result(10)
        yield broker


def test_denied_transactional_id_is_refused_everywhere(acl_broker: BrokerProcess, topic_name: str) -> None:
    bootstrap = acl_broker.bootstrap
    create_topic(bootstrap, topic_name, 1)
    found: FindCoordinatorResponse = call(bootstrap, FindCoordinatorRequest(key="denied-1", key_type=1),
                                          FindCoordinatorResponse, 3)
    assert found.error_code == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert _init(bootstrap, "denied-1").error_code == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert describe_transaction(bootstrap, "denied-1").error_code == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    wait_until(lambda: _init(bootstrap, "allowed-1").error_code == NONE, 20, "the coordinator to load")
    allowed = _init(bootstrap, "allowed-1")
    pid, epoch = allowed.producer_id, allowed.producer_epoch
    # The allowed id's producer, naming a denied id in each request:
    assert _add(bootstrap, "denied-1", pid, epoch, [(topic_name, 0)]) == {
        (topic_name, 0): TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    assert _produce(bootstrap, topic_name, _batch(pid, epoch, 0), "denied-1").error_code == \
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert _end(bootstrap, "denied-1", pid, epoch, commit=True) == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    # ... and its own id works.
    assert _add(bootstrap, "allowed-1", pid, epoch, [(topic_name, 0)]) == {(topic_name, 0): NONE}
    assert _produce(bootstrap, topic_name, _batch(pid, epoch, 0), "allowed-1").error_code == NONE
    assert _end(bootstrap, "allowed-1", pid, epoch, commit=True) == NONE


def test_librdkafka_fails_fast_on_a_denied_transactional_id_only(acl_broker: BrokerProcess) -> None:
    producer = Producer({"bootstrap.servers": acl_broker.bootstrap, "transactional.id": "denied-rdkafka"})
    started = time.monotonic()
    with pytest.raises(KafkaException) as info:
        producer.init_transactions(30)
    assert info.value.args[0].fatal()
    assert info.value.args[0].name() == "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    assert time.monotonic() - started < 5
    allowed = Producer({"bootstrap.servers": acl_broker.bootstrap, "transactional.id": "allowed-rdkafka"})
    allowed.init_transactions(30)  # the ACL denies only the "denied-" prefix
