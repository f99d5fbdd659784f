"""KIP-618's transactional leader: a newer leader fences an older one out of the config topic.

With ``exactly.once.source.support`` preparing or enabled, the leader's config-topic writes
are transactions of ``transactional.id=connect-cluster-<group.id>``. Two config stores of the
same group stand for two workers that each believe they lead: once the second claims write
privileges, the first one's next write fails with ``FencedError`` and is never visible; the
second one's writes go on. Target states are not privileged (any worker writes them).
"""

from __future__ import annotations

import uuid

import pytest
from seaway.connect.runtime.distributed.kafka_log import FencedError
from seaway.connect.runtime.distributed.kafka_stores import KafkaConfigBackingStore
from seaway.connect.runtime.herder import TargetState

from tests.connect.exactly_once.eos_support import Broker, config_records, create_topic


@pytest.mark.timeout(120)
def test_a_newer_leader_fences_the_older_one(eos_broker: Broker) -> None:
    topic = f"eos-leader-configs-{uuid.uuid4().hex[:8]}"
    create_topic(eos_broker.bootstrap, topic)
    base = {"bootstrap.servers": eos_broker.bootstrap}
    group = f"eos-leader-{uuid.uuid4().hex[:8]}"
    stores = [KafkaConfigBackingStore(topic, dict(base), dict(base), transactional_id=f"connect-cluster-{group}")
              for _ in range(2)]
    old, new = stores
    try:
        for store in stores:
            store.start()
        old.claim_write_privileges()
        old.put_connector_config("a", {"connector.class": "FileStreamSource", "name": "a"})
        assert new.read_to_end() and new.snapshot().contains("a")

        new.claim_write_privileges()  # the new leader: fences the old one
        with pytest.raises(FencedError):
            old.put_connector_config("zombie", {"connector.class": "FileStreamSource", "name": "zombie"})
        new.put_task_configs("a", [{"task": "0"}])
        old.put_target_state("a", TargetState.PAUSED)  # not privileged: any worker may
        new.read_to_end()
        snapshot = new.snapshot()
        assert not snapshot.contains("zombie")
        assert snapshot.task_count("a") == 1 and snapshot.target_state("a") is TargetState.PAUSED
        assert "connector-zombie" not in [k for k, _ in config_records(eos_broker.bootstrap, topic)]
    finally:
        for store in stores:
            store.stop()
