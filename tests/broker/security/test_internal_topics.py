"""Clients cannot write the broker's internal topics (issue 27, item 1), per topic and per path.

``__consumer_offsets`` and ``__transaction_state`` hold the coordinators' state, which the broker
replays at every start; ``__cluster_metadata`` (ACLs, SCRAM credentials) is no topic at all.
Every client path is tried with a real client where one can express it (confluent-kafka;
kafka-python 3's producer sends nothing to ``__consumer_offsets``, its partitioner finds no
partition there) and with Seaway's protocol client where none can (a transactional batch into
a partition the transaction holds, the ``__admin_client`` client id), and each answer is Apache
Kafka's (the same requests against Kafka's broker: ``tests/peer/test_internal_topics.py``) but
where this file says otherwise:

- Produce, idempotent Produce, transactional Produce: INVALID_TOPIC_EXCEPTION, the log untouched,
  for every client id (a deviation: Kafka lets the client id ``__admin_client`` append);
- DeleteRecords: INVALID_TOPIC_EXCEPTION;
- DeleteTopics: INVALID_TOPIC_EXCEPTION (a deviation: Kafka deletes them);
- AlterConfigs, IncrementalAlterConfigs, CreatePartitions: allowed, as in Kafka (validate-only
  here, so the shared broker keeps its internal topics as they are).

The broker has no authorizer (every client may do anything, the issue's setting); the last
test gives a SCRAM user WRITE on topic ``*`` on the secured broker of the package.
"""

from __future__ import annotations

import contextlib
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)
from seaway.broker.coordinator.offsets_topic import partition_for
from seaway.protocol.errors import (
    InvalidTopicException,
    InvalidTxnStateError,
    TransactionAbortableError,
    UnknownTopicOrPartitionError,
)

from tests.broker.security.internal_support import (
    ADMIN_CLIENT_ID,
    add_offsets,
    add_partitions_as_broker,
    delete_records,
    end_txn,
    init_txn_producer,
    produce,
    record_batch,
)
from tests.support.broker import BrokerProcess
from tests.support.secure_broker import SecureBroker

pytestmark = pytest.mark.timeout(120)

INTERNAL = ["__consumer_offsets", "__transaction_state"]
PARTITIONS = 50  # offsets.topic.num.partitions and transaction.state.log.num.partitions, Kafka's defaults
INVALID_TOPIC = InvalidTopicException.code


@pytest.fixture(scope="module")
def ibroker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """A broker without an authorizer: every client may do anything the broker allows."""
    with BrokerProcess(tmp_path_factory.mktemp("internal-topics"), {"group.initial.rebalance.delay.ms": "0"}) as b:
        yield b


def _watermarks(bootstrap: str, topic: str, partition: int) -> tuple[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"wm-{uuid.uuid4().hex[:8]}"})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=15)
        return int(low), int(high)
    finally:
        consumer.close()


def _name_not_on_partition(prefix: str, partition: int) -> str:
    """A fresh group or transactional id that Kafka's partitionFor maps elsewhere than ``partition``
    (a random id lands there one time in 50, and the broker then rightly writes that partition)."""
    while partition_for(name := f"{prefix}-{uuid.uuid4().hex[:8]}", PARTITIONS) == partition:
        pass
    return name


def _delivery_errors(config: dict[str, Any], topic: str, partition: int, count: int = 1) -> list[KafkaError | None]:
    """What a confluent-kafka producer's delivery reports say for ``count`` records."""
    errors: list[KafkaError | None] = []

    def report(err: KafkaError | None, _msg: Message) -> None:
        errors.append(err)

    producer = Producer({"message.timeout.ms": 20_000, **config})
    try:
        for i in range(count):
            producer.produce(topic, value=f"forged-{i}".encode(), key=b"forged", partition=partition,
                             on_delivery=report)
        assert producer.flush(30) == 0
    finally:
        producer.flush(1)
        producer.close()
    return errors


# -- Produce -------------------------------------------------------------------------------------


@pytest.mark.parametrize("topic", INTERNAL)
def test_produce_is_invalid_topic(ibroker: BrokerProcess, topic: str) -> None:
    before = _watermarks(ibroker.bootstrap, topic, 3)
    errors = _delivery_errors({"bootstrap.servers": ibroker.bootstrap}, topic, 3, count=3)
    assert [e.code() if e else None for e in errors] == [KafkaError.TOPIC_EXCEPTION] * 3
    assert _watermarks(ibroker.bootstrap, topic, 3) == before


@pytest.mark.parametrize("topic", INTERNAL)
def test_idempotent_produce_is_invalid_topic(ibroker: BrokerProcess, topic: str) -> None:
    before = _watermarks(ibroker.bootstrap, topic, 4)
    errors = _delivery_errors({"bootstrap.servers": ibroker.bootstrap, "enable.idempotence": True}, topic, 4)
    assert [e.code() if e else None for e in errors] == [KafkaError.TOPIC_EXCEPTION]
    assert _watermarks(ibroker.bootstrap, topic, 4) == before


@pytest.mark.parametrize("topic", INTERNAL)
async def test_crafted_produce_is_invalid_topic_with_kafkas_message(ibroker: BrokerProcess, topic: str) -> None:
    answer = await produce(ibroker.bootstrap, topic, 6, record_batch())
    assert answer.code == INVALID_TOPIC
    assert answer.message == f"Cannot append to internal topic {topic}"


@pytest.mark.parametrize("topic", INTERNAL)
async def test_kafkas_admin_client_id_is_refused_too(ibroker: BrokerProcess, topic: str) -> None:
    """Kafka lets the client id ``__admin_client`` (``AdminUtils.ADMIN_CLIENT_ID``) append; any client
    can say it is that client, so here it is refused like every other (docs/broker.md)."""
    before = _watermarks(ibroker.bootstrap, topic, 49)
    answer = await produce(ibroker.bootstrap, topic, 49, record_batch(), client_id=ADMIN_CLIENT_ID)
    assert answer.code == INVALID_TOPIC
    assert answer.message == f"Cannot append to internal topic {topic}"
    assert _delivery_errors({"bootstrap.servers": ibroker.bootstrap, "client.id": ADMIN_CLIENT_ID},
                            topic, 49)[0] is not None
    assert _watermarks(ibroker.bootstrap, topic, 49) == before


# -- transactional Produce ---------------------------------------------------------------------


async def _into_transaction(bootstrap: str, topic: str) -> tuple[Any, int]:
    """A transactional producer whose ongoing transaction holds a partition of ``topic``.

    ``__consumer_offsets``: through AddOffsetsToTxn, what every ``send_offsets_to_transaction``
    sends; ``__transaction_state``: through AddPartitionsToTxn's broker form (v4+, CLUSTER_ACTION,
    which every client has without an authorizer), since the client form refuses internal topics.
    """
    producer = await init_txn_producer(bootstrap, f"txn-{uuid.uuid4().hex[:8]}")
    if topic == "__consumer_offsets":
        group = f"g-{uuid.uuid4().hex[:8]}"
        assert await add_offsets(bootstrap, producer, group) == 0
        return producer, partition_for(group, PARTITIONS)
    assert await add_partitions_as_broker(bootstrap, producer, topic, 7) == 0
    return producer, 7


@pytest.mark.parametrize("topic", INTERNAL)
async def test_transactional_produce_into_the_transactions_partition_is_invalid_topic(
    ibroker: BrokerProcess, topic: str,
) -> None:
    producer, partition = await _into_transaction(ibroker.bootstrap, topic)
    before = _watermarks(ibroker.bootstrap, topic, partition)
    answer = await produce(ibroker.bootstrap, topic, partition, record_batch(producer=producer, count=10),
                           transactional_id=producer.transactional_id)
    assert answer.code == INVALID_TOPIC, answer
    assert _watermarks(ibroker.bootstrap, topic, partition) == before  # nothing of the batch was written
    assert await end_txn(ibroker.bootstrap, producer, commit=True) == 0


@pytest.mark.parametrize("topic", INTERNAL)
async def test_transactional_produce_outside_the_transaction_is_refused_first_by_verification(
    ibroker: BrokerProcess, topic: str,
) -> None:
    """KIP-890's check comes before the internal-topic refusal, as in Kafka's ReplicaManager."""
    producer = await init_txn_producer(ibroker.bootstrap, f"txn-{uuid.uuid4().hex[:8]}")
    batch = record_batch(producer=producer)
    v9 = await produce(ibroker.bootstrap, topic, 8, batch, transactional_id=producer.transactional_id, cap=9)
    assert v9.code == InvalidTxnStateError.code, v9
    v11 = await produce(ibroker.bootstrap, topic, 8, batch, transactional_id=producer.transactional_id, cap=11)
    assert v11.code == TransactionAbortableError.code, v11


@pytest.mark.parametrize("topic", INTERNAL)
def test_transactional_client_cannot_add_an_internal_partition(ibroker: BrokerProcess, topic: str) -> None:
    """A real transactional producer: its AddPartitionsToTxn is TOPIC_AUTHORIZATION_FAILED, as on
    Kafka's broker, where librdkafka then fails its abort with a fatal INVALID_TXN_STATE too."""
    before = _watermarks(ibroker.bootstrap, topic, 9)
    # The coordinator writes the id's own state to its partition of __transaction_state: not 9.
    txn_id = _name_not_on_partition("tx", 9)
    producer = Producer({"bootstrap.servers": ibroker.bootstrap, "transactional.id": txn_id})
    try:
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(topic, value=b"forged", partition=9)
        with pytest.raises(KafkaException) as failed:
            producer.commit_transaction(30)
        assert failed.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    finally:
        with contextlib.suppress(KafkaException):  # the producer is in a fatal state
            producer.close()
        del producer
    assert _watermarks(ibroker.bootstrap, topic, 9) == before


# -- DeleteRecords, DeleteTopics -----------------------------------------------------------------


def _owned_record(bootstrap: str, topic: str, partition: int) -> None:
    """A record the broker itself writes to ``partition`` of an internal topic: an offset commit
    of a group, or a transactional id's state, that maps there (Kafka's partitionFor)."""
    name = next(n for i in range(100_000) if partition_for(n := f"owned-{i}", PARTITIONS) == partition)
    if topic == "__consumer_offsets":
        data = f"owned-data-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": bootstrap})  # held: its futures fail once it is gone
        admin.create_topics([NewTopic(data, 1, 1)])[data].result(30)
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": name})
        try:
            consumer.commit(offsets=[TopicPartition(data, 0, 0)], asynchronous=False)
        finally:
            consumer.close()
    else:
        producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": name})
        try:
            producer.init_transactions(30)
        finally:
            producer.close()


@pytest.mark.parametrize("topic", INTERNAL)
def test_delete_records_is_invalid_topic(ibroker: BrokerProcess, topic: str) -> None:
    _owned_record(ibroker.bootstrap, topic, 10)  # a record to delete
    before = _watermarks(ibroker.bootstrap, topic, 10)
    assert before[1] > before[0]
    admin = AdminClient({"bootstrap.servers": ibroker.bootstrap})
    tp = TopicPartition(topic, 10, -1)  # -1: up to the high watermark
    with pytest.raises(KafkaException) as failed:
        admin.delete_records([tp])[tp].result(timeout=20)
    assert failed.value.args[0].code() == KafkaError.TOPIC_EXCEPTION
    assert _watermarks(ibroker.bootstrap, topic, 10) == before


@pytest.mark.parametrize("topic", INTERNAL)
async def test_crafted_delete_records_is_invalid_topic(ibroker: BrokerProcess, topic: str) -> None:
    assert (await delete_records(ibroker.bootstrap, topic, 0, 0)).code == INVALID_TOPIC


@pytest.mark.parametrize("topic", INTERNAL)
def test_delete_topic_is_refused_and_the_coordinators_keep_working(ibroker: BrokerProcess, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": ibroker.bootstrap})
    with pytest.raises(KafkaException) as failed:
        admin.delete_topics([topic], operation_timeout=20)[topic].result(timeout=30)
    error = failed.value.args[0]
    assert error.code() == KafkaError.TOPIC_EXCEPTION
    assert topic in admin.list_topics(timeout=15).topics
    # Both coordinators still answer: a group commit and a transaction.
    consumer = Consumer({"bootstrap.servers": ibroker.bootstrap, "group.id": f"after-{uuid.uuid4().hex[:8]}"})
    try:
        consumer.commit(offsets=[TopicPartition(topic, 0, 0)], asynchronous=False)
    finally:
        consumer.close()
    producer = Producer({"bootstrap.servers": ibroker.bootstrap, "transactional.id": f"after-{uuid.uuid4().hex[:8]}"})
    try:
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.commit_transaction(30)
    finally:
        producer.close()


# -- what Kafka allows: configs, partitions ------------------------------------------------------


@pytest.mark.parametrize("topic", INTERNAL)
def test_alter_configs_are_allowed_as_in_kafka(ibroker: BrokerProcess, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": ibroker.bootstrap})
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[
        ConfigEntry("min.compaction.lag.ms", "1000", incremental_operation=AlterConfigOpType.SET)])
    for future in admin.incremental_alter_configs([resource], validate_only=True).values():
        future.result(timeout=20)
    legacy = ConfigResource(ResourceType.TOPIC, topic, set_config={"cleanup.policy": "compact",
                                                                    "min.compaction.lag.ms": "1000"})
    with warnings.catch_warnings():  # AlterConfigs is Kafka's older API, which older clients still send
        warnings.simplefilter("ignore", DeprecationWarning)
        futures = admin.alter_configs([legacy], validate_only=True)
    for future in futures.values():
        future.result(timeout=20)


@pytest.mark.parametrize("topic", INTERNAL)
def test_create_partitions_is_allowed_as_in_kafka(ibroker: BrokerProcess, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": ibroker.bootstrap})
    for future in admin.create_partitions([NewPartitions(topic, PARTITIONS + 1)], validate_only=True).values():
        future.result(timeout=20)
    assert len(admin.list_topics(topic, timeout=15).topics[topic].partitions) == PARTITIONS


# -- __cluster_metadata: ACLs and SCRAM credentials ----------------------------------------------


def _store_bytes(data_dir: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in sorted((data_dir / "__cluster_metadata-0").iterdir())}


CLUSTER_METADATA = "__cluster_metadata"
STORE_PATHS = ["produce", "produce as __admin_client", "transactional produce", "delete records", "delete topic",
               "alter configs", "create partitions"]


async def _store_path_error(bootstrap: str, path: str) -> int:
    """The error code one client path gets for ``__cluster_metadata``."""
    name = CLUSTER_METADATA
    if path.startswith("produce"):
        client_id = ADMIN_CLIENT_ID if "admin" in path else "hostile-client"
        return (await produce(bootstrap, name, 0, record_batch(), client_id=client_id)).code
    if path == "transactional produce":
        producer = await init_txn_producer(bootstrap, f"txn-{uuid.uuid4().hex[:8]}")
        return (await produce(bootstrap, name, 0, record_batch(producer=producer),
                              transactional_id=producer.transactional_id)).code
    if path == "delete records":
        return (await delete_records(bootstrap, name, 0)).code
    admin = AdminClient({"bootstrap.servers": bootstrap})
    with pytest.raises(KafkaException) as failed:
        if path == "delete topic":
            admin.delete_topics([name], operation_timeout=20)[name].result(timeout=30)
        elif path == "alter configs":
            resource = ConfigResource(ResourceType.TOPIC, name, incremental_configs=[
                ConfigEntry("retention.ms", "1", incremental_operation=AlterConfigOpType.SET)])
            admin.incremental_alter_configs([resource])[resource].result(timeout=20)
        else:
            admin.create_partitions([NewPartitions(name, 2)])[name].result(timeout=20)
    code: int = failed.value.args[0].code()
    return code


@pytest.mark.parametrize("path", STORE_PATHS)
async def test_cluster_metadata_is_no_topic(ibroker: BrokerProcess, path: str) -> None:
    """The ACLs' and SCRAM credentials' log answers UNKNOWN_TOPIC_OR_PARTITION on every path, as
    Kafka's metadata log does, and nothing of it changes."""
    admin = AdminClient({"bootstrap.servers": ibroker.bootstrap})
    user = f"u-{uuid.uuid4().hex[:8]}"
    upsert = UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"secret")
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(15)
    before = _store_bytes(ibroker.data_dir)
    assert await _store_path_error(ibroker.bootstrap, path) == UnknownTopicOrPartitionError.code
    assert CLUSTER_METADATA not in admin.list_topics(timeout=15).topics
    assert _store_bytes(ibroker.data_dir) == before
    futures = admin.describe_user_scram_credentials([user])  # a dict when users are named
    assert isinstance(futures, dict)
    described = futures[user].result(timeout=15)
    assert [c.mechanism for c in described.scram_credential_infos] == [ScramMechanism.SCRAM_SHA_256]


# -- with an authorizer: WRITE on topic * ---------------------------------------------------------


def test_write_on_every_topic_does_not_reach_internal_topics(secure_broker: SecureBroker) -> None:
    """The issue's "any client with WRITE on ``*``": its own topics yes, the broker's no."""
    user, password = f"writer-{uuid.uuid4().hex[:8]}", "writer-secret"
    admin = AdminClient(secure_broker.admin_config())
    upsert = UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                          password.encode())
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(15)
    grant = AclBinding(ResourceType.TOPIC, "*", ResourcePatternType.LITERAL, f"User:{user}", "*",
                       AclOperation.WRITE, AclPermissionType.ALLOW)
    for future in admin.create_acls([grant]).values():
        future.result(15)
    config = secure_broker.sasl_config(user, password, tls=False)
    for topic in INTERNAL:
        errors = _delivery_errors(config, topic, 0)
        assert [e.code() if e else None for e in errors] == [KafkaError.TOPIC_EXCEPTION], topic
