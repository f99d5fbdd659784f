"""A fenced task says it was fenced, even when librdkafka only answers "Local: Fatal error".

Once a transactional producer has been fenced, librdkafka raises the cause (``_FENCED``) once,
from the next ``poll`` or ``flush``, and every ``produce`` fails with ``_FATAL``. A zombie task whose
next call is such a ``produce`` must still fail with "was fenced out", not with the bare
fatal error (seen as a flaky zombie check in test_eos_fencing.py).
"""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from seaway.connect.api import TransactionBoundary
from seaway.connect.runtime.exactly_once_commits import ExactlyOnceSetup, Transactional, transactional_producer

from tests.connect.exactly_once.eos_support import create_topic
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(90)


def _policy(transactional_id: str) -> Transactional:
    """The exactly-once commit policy's error handling alone: no task, no thread, no plugin."""
    return Transactional(ExactlyOnceSetup(transactional_id, "offsets", lambda: None, lambda: None),
                         TransactionBoundary.POLL, 1000)


def test_a_produce_after_the_fence_reports_the_fencing(broker: BrokerProcess) -> None:
    topic, txn_id = f"fatal-{uuid.uuid4().hex[:8]}", f"fatal-{uuid.uuid4().hex[:8]}"
    create_topic(broker.bootstrap, topic)
    task = _policy(txn_id)
    config = transactional_producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0}, txn_id)
    zombie = Producer(config)
    task.producer = zombie
    zombie.init_transactions(30)
    zombie.begin_transaction()
    zombie.produce(topic, b"before the fence")
    zombie.flush(10)
    successor = Producer(config)
    successor.init_transactions(30)  # bumps the epoch: the zombie is fenced

    fatal: KafkaException | None = None
    deadline = time.monotonic() + 30
    while fatal is None and time.monotonic() < deadline:
        try:  # as the task's loop does: produce, and serve no events in between
            zombie.produce(topic, b"after the fence")
        except KafkaException as e:
            fatal = e.with_traceback(None)  # no frame -> exception -> frame cycle keeping both producers alive
        time.sleep(0.2)  # librdkafka's thread sends it; the broker refuses it: a fatal error
    assert fatal is not None, "the zombie was never refused"
    assert fatal.args[0].code() == KafkaError._FATAL, fatal  # what makes the cause hard to see
    error = task.translated(fatal, "write records")
    assert "was fenced out" in str(error), error
    successor.flush(5)
