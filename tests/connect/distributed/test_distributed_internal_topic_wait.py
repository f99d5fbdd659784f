"""A worker waits for an internal topic's metadata instead of failing on the KRaft create race (P-X1).

Apache Kafka (KRaft) acknowledges CreateTopics once its controller committed the topic; the
broker's metadata cache lists it a moment later. Seaway's worker used to read the metadata once,
right after the create, and exit with "Internal topic ... is not available" when it lost that
race. Here the topic shows up in metadata 1.5 s after the worker starts looking.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.connect.runtime.distributed.kafka_log import InternalTopicError, _wait_for_topic_metadata

from tests.support.broker import BrokerProcess


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    """A broker that never creates a topic because a client asked for its metadata."""
    data: Path = tmp_path_factory.mktemp("no-auto-create")
    with BrokerProcess(data, {"auto.create.topics.enable": "false"}) as process:
        yield process


@pytest.mark.timeout(60)
def test_metadata_that_appears_late_is_waited_for(broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    topic = f"late-{uuid.uuid4().hex[:8]}"

    def create_later() -> None:
        time.sleep(1.5)
        admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])[topic].result(10)

    creator = threading.Thread(target=create_later)
    started = time.monotonic()
    creator.start()
    try:
        metadata = _wait_for_topic_metadata(admin, topic, timeout=20.0)
    finally:
        creator.join()
    assert len(metadata.partitions) == 3
    assert time.monotonic() - started >= 1.4


@pytest.mark.timeout(60)
def test_a_topic_that_never_appears_fails_after_the_timeout(broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    started = time.monotonic()
    with pytest.raises(InternalTopicError, match="is not available"):
        _wait_for_topic_metadata(admin, f"never-{uuid.uuid4().hex[:8]}", timeout=2.0)
    assert 1.5 <= time.monotonic() - started < 10
