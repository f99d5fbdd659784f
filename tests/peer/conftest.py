"""Fixtures of the peer tests: Apache Kafka's broker beside Seaway's, shared by the package.

JVMs start slowly on two cores, so one Apache Kafka broker and one Seaway broker serve
every test under ``tests/peer/`` (package scope: both stop when the last peer test is
done); tests use their own topic and group names. Every module here sets ``pytestmark = pytest.mark.peer``.

The jars come from ``tests.peer.jars`` (fetched on first use, cached). Without java,
javac or mvn the tests are skipped on a developer's machine, but fail under CI (``CI``
set), where scripts/test.sh provides them: conformance must not silently vanish there.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.connect.distributed.dist_support import (
    BROKER_OVERRIDES,
    WorkerProcess,
    free_port,
    wait_settled,
    worker_properties,
)
from tests.peer.apache_kafka import KafkaBroker, create_internal_topics
from tests.peer.jars import ensure_jars, missing_tools
from tests.support.broker import BrokerProcess

STATIC_LOG_CONFIGS = {"log.retention.minutes": "10080", "log.segment.bytes": "1073741824",
                      "log.flush.interval.ms": "9223372036854775807"}
"""Set in both brokers' configs, each equal to the default it replaces (7 days, 1 GiB, never), so
the answers stay those of defaults while DescribeConfigs shows STATIC_BROKER_CONFIG synonyms and
Kafka's synonym rules: ``log.retention.minutes`` set still leaves ``retention.ms`` DEFAULT_CONFIG
with no synonyms, ``log.flush.interval.ms`` lists ``log.flush.scheduler.interval.ms`` as its default."""

BROKERS = {**BROKER_OVERRIDES, **STATIC_LOG_CONFIGS}


@pytest.fixture(scope="package", autouse=True)
def kafka_jars() -> Path:
    missing = missing_tools()
    if missing:
        message = f"the peer tests need {', '.join(missing)} (scripts/test.sh fetches Kafka's jars with mvn)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return ensure_jars()


@pytest.fixture(scope="package")
def kafka_broker(kafka_jars: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """Apache Kafka 4.x, KRaft, one node; the group and log settings Seaway's test broker gets too."""
    with KafkaBroker(tmp_path_factory.mktemp("apache-kafka"), BROKERS) as broker:
        yield broker


@pytest.fixture(scope="package")
def seaway_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerProcess]:
    with BrokerProcess(tmp_path_factory.mktemp("seaway-broker"), BROKERS) as broker:
        yield broker


@pytest.fixture(scope="package")
def bootstraps(kafka_broker: KafkaBroker, seaway_broker: BrokerProcess) -> dict[str, str]:
    """``{"kafka": host:port, "seaway": host:port}``: the same checks run against each."""
    return {"kafka": kafka_broker.bootstrap, "seaway": seaway_broker.bootstrap}


@pytest.fixture(scope="package")
def seaway_connect_on_kafka(kafka_broker: KafkaBroker,
                            tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    """Seaway's distributed worker on Apache Kafka's broker (the REST and cross tests share it).

    Its internal topics are created first, and visible, before it starts: Kafka may not serve
    a new topic's metadata at once (finding P-X1, fixed: Seaway's worker waits for it); the
    tests here do not depend on that wait.
    """
    props = worker_properties(kafka_broker.bootstrap, free_port(), "peer-seaway-on-kafka")
    create_internal_topics(kafka_broker.bootstrap, props)
    worker = WorkerProcess(tmp_path_factory.mktemp("seaway-connect-on-kafka"), props).start()
    try:
        wait_settled([worker])  # joined its group: a create before that is a 409, as on Kafka Connect
        yield worker
    finally:
        worker.stop()


@pytest.fixture
def unique() -> str:
    return f"peer-{uuid.uuid4().hex[:10]}"
