"""``seaway groups`` beside Kafka's own kafka-consumer-groups.sh (``ConsumerGroupCommand``), on one group.

Both tools describe the same group on Seaway's broker at the same moment, so the output must be the
same text, character for character: columns, widths, the blank line before a table, ``-`` for what
is missing. The one difference by design is ``describe --offsets``'s extra STATUS column at the end
(Seaway pads CLIENT-ID to keep it aligned); it is cut off before comparing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__

from tests.cli.clirun import seaway
from tests.peer.apache_kafka import run_tool
from tests.support.broker import BrokerProcess

pytestmark = [pytest.mark.peer, pytest.mark.timeout(240)]

GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


@pytest.fixture
def live_group(seaway_broker: BrokerProcess, unique: str) -> Iterator[tuple[str, str, Consumer]]:
    bootstrap = seaway_broker.bootstrap
    topic, group = f"{unique}-t", f"{unique}-g"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the future is done
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(30):
        producer.produce(topic, f"v{i}".encode(), partition=i % 3)
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": "peer-groups",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    deadline = time.monotonic() + 40
    while len(consumer.assignment()) < 3 and time.monotonic() < deadline:
        consumer.poll(0.2)
    assert len(consumer.assignment()) == 3
    consumer.commit(offsets=[TopicPartition(topic, 0, 4), TopicPartition(topic, 1, 10)], asynchronous=False)
    try:
        yield topic, group, consumer
    finally:
        consumer.close()


def _both(bootstrap: str, *args: str) -> tuple[str, str, str, str]:
    kafka = run_tool(GROUPS, "--bootstrap-server", bootstrap, *args)
    ours = seaway("groups", "--bootstrap-server", bootstrap, *args, timeout=60)
    return kafka.stdout, ours.stdout.decode(), kafka.stderr, ours.stderr.decode()


def _without_status(text: str) -> str:
    lines = text.split("\n")
    return "\n".join(line.rsplit(" ", 1)[0].rstrip() if line.strip() else line for line in lines)


def test_describe_output_equals_kafkas(seaway_broker: BrokerProcess, live_group: tuple[str, str, Consumer]) -> None:
    topic, group, consumer = live_group
    bootstrap = seaway_broker.bootstrap

    kafka, ours, _, err = _both(bootstrap, "--describe", "--group", group)
    assert "CURRENT-OFFSET" in kafka, kafka
    assert ours.split("\n")[1].endswith(" STATUS"), err
    assert _without_status(ours) == kafka
    assert f"{group} {topic}" in " ".join(kafka.split())  # a real table, not two empty outputs

    kafka, ours, _, _ = _both(bootstrap, "--describe", "--group", group, "--members")
    assert "#PARTITIONS" in kafka and ours == kafka

    kafka, ours, _, _ = _both(bootstrap, "--describe", "--group", group, "--state")
    assert "COORDINATOR (ID)" in kafka and ours == kafka

    kafka, ours, _, _ = _both(bootstrap, "--list", "--state")
    mine = [line for line in ours.splitlines() if line.startswith(("GROUP ", group))]
    theirs = [line for line in kafka.splitlines() if line.startswith(("GROUP ", group))]
    assert len(theirs) == 2 and mine == theirs

    consumer.close()  # an empty group: the same table, the same notice on stderr, reset allowed
    kafka, ours, kafka_err, ours_err = _both(bootstrap, "--describe", "--group", group)
    assert _without_status(ours) == kafka
    assert f"Consumer group '{group}' has no active members." in kafka_err
    assert f"Consumer group '{group}' has no active members." in ours_err

    kafka, ours, _, _ = _both(bootstrap, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest",
                              "--dry-run")
    assert "NEW-OFFSET" in kafka
    head_k, *rows_k = kafka.strip("\n").split("\n")
    head_o, *rows_o = ours.strip("\n").split("\n")
    assert head_o == head_k and sorted(rows_o) == sorted(rows_k)  # Kafka's row order is a HashMap's
