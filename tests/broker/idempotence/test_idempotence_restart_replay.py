"""Issue 14, item 5: what a restart replays to rebuild producer state must not grow with uptime.

A real broker and librdkafka's idempotent producer. Each round writes more batches, waits
past the producer-state snapshot interval (``log.flush.offset.checkpoint.interval.ms``, set
short here) and kills the broker (no clean shutdown, so no shutdown snapshot and no roll
to lean on); after the restart the first idempotent batch loads the state and the broker
logs how many batch headers it replayed. That number must stay flat across restarts.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from tests.broker.clients.test_confluent_clients import create_topic
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(180)

_LOADED = re.compile(r"loaded producer state of (\S+): .*?(\d+) batches replayed")


def _produce_idempotent(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 0,
                         "batch.num.messages": 1})
    for i in range(count):
        producer.produce(topic, value=f"v{i}".encode())
        producer.poll(0)
    assert producer.flush(30) == 0


def _replayed(broker: BrokerProcess, topic: str, since: int) -> int:
    # The line is logged before the produce is answered, but the broker's output reaches
    # ``broker.output`` through a reader thread of its own: give it a moment on a busy host.
    deadline = time.monotonic() + 10
    while True:
        found = [int(m.group(2)) for line in broker.output[since:] if (m := _LOADED.search(line))
                 and m.group(1) == f"{topic}-0"]
        if found or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert found, "the broker did not log loading the producer state:\n" + "".join(broker.output[since:][-20:])
    return found[-1]


def test_batches_replayed_at_start_do_not_grow_over_restarts(tmp_path: Path, topic_name: str) -> None:
    broker = BrokerProcess(tmp_path / "data", {"log.flush.offset.checkpoint.interval.ms": "500"}).start()
    try:
        create_topic(broker.bootstrap, topic_name)
        replayed: list[int] = []
        for _ in range(3):
            _produce_idempotent(broker.bootstrap, topic_name, 150)
            time.sleep(2.0)  # past the snapshot interval (and the state thread's 1 s tick)
            broker.kill()
            since = len(broker.output)
            broker.start()
            _produce_idempotent(broker.bootstrap, topic_name, 1)  # loads the state lazily
            replayed.append(_replayed(broker, topic_name, since))
        # Every round wrote 150 more batches; a snapshot per interval keeps the replay to the
        # batches after the last one (none here), whatever the uptime.
        assert max(replayed) <= 5, f"batches replayed at each start: {replayed}"
    finally:
        broker.stop()
