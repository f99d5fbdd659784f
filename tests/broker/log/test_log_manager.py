"""LogManager: topic lifecycle persisted across restarts, validation, maintenance."""

from __future__ import annotations

from pathlib import Path

import pytest
from seaway.broker.log.config import LogConfig
from seaway.broker.log.log_manager import LogManager, kafka_uuid
from seaway.protocol.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidTopicException,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)

from tests.broker.log.logtest_helpers import make_batch, payload, read_all

pytestmark = pytest.mark.timeout(30)  # load() opens logs on a thread pool

NOW = 1_700_000_000_000


def _manager(tmp_path: Path, dirs: int = 2) -> LogManager:
    manager = LogManager(
        [tmp_path / f"d{i}" for i in range(dirs)], LogConfig(retention_ms=-1), recovery_threads=2
    )
    manager.load()
    return manager


def test_topics_persist_across_restarts(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    meta = manager.create_topic("orders", 3, {"retention.ms": "60000", "cleanup.policy": "compact,delete"})
    batch = make_batch([b"hello"])
    log = manager.get_log("orders", 1)
    assert log is not None
    log.append(batch, now_ms=NOW)
    assert {p.parent.name for p in tmp_path.glob("d*/orders-*")} == {"d0", "d1"}
    manager.close()
    assert (tmp_path / "d0" / ".kafka_cleanshutdown").exists()

    manager = _manager(tmp_path)
    assert not (tmp_path / "d0" / ".kafka_cleanshutdown").exists()
    again = manager.topics()["orders"]
    assert (again.topic_id, again.num_partitions, again.config_overrides) == (
        meta.topic_id,
        3,
        {"retention.ms": "60000", "cleanup.policy": "compact,delete"},
    )
    log = manager.get_log("orders", 1)
    assert log is not None and log.config.retention_ms == 60000 and log.config.compacts
    assert [payload(b) for b in read_all(log)] == [payload(batch)]
    partition_dir = log.directory
    assert f"topic_id: {kafka_uuid(meta.topic_id)}" in (partition_dir / "partition.metadata").read_text()
    assert "cluster.id=" in (tmp_path / "d1" / "meta.properties").read_text()
    manager.close()


@pytest.mark.parametrize("name", ["", ".", "..", "a" * 250, "bad/name", "spa ce", "ünï"])
def test_invalid_topic_names(tmp_path: Path, name: str) -> None:
    manager = _manager(tmp_path, 1)
    with pytest.raises(InvalidTopicException):
        manager.create_topic(name, 1)
    manager.close()


def test_create_topic_errors(tmp_path: Path) -> None:
    manager = _manager(tmp_path, 1)
    manager.create_topic("a.b", 1)
    with pytest.raises(TopicAlreadyExistsError):
        manager.create_topic("a.b", 1)
    with pytest.raises(InvalidTopicException, match="collides"):
        manager.create_topic("a_b", 1)
    with pytest.raises(InvalidConfigError, match=r"retention\.ms"):
        manager.create_topic("c", 1, {"retention.ms": "soon"})
    with pytest.raises(InvalidConfigError, match=r"no\.such\.config"):
        manager.create_topic("c", 1, {"no.such.config": "1"})
    with pytest.raises(InvalidPartitionsError):
        manager.create_topic("c", 0)
    assert set(manager.topics()) == {"a.b"}
    assert manager.create_topic("a" * 249, 1).name == "a" * 249
    manager.close()


def test_delete_topic(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    manager.create_topic("gone", 2)
    manager.create_topic("kept", 1)
    manager.delete_topic("gone")
    assert manager.get_log("gone", 0) is None
    assert not list(tmp_path.glob("d*/gone-*"))
    with pytest.raises(UnknownTopicOrPartitionError):
        manager.delete_topic("gone")
    manager.close()
    manager = _manager(tmp_path)
    assert set(manager.topics()) == {"kept"}
    manager.close()


def test_add_partitions_and_alter_config_persist(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    manager.create_topic("t", 1, {"segment.bytes": "1000"})
    with pytest.raises(InvalidPartitionsError):
        manager.add_partitions("t", 1)
    manager.add_partitions("t", 4)
    assert manager.get_log("t", 3) is not None
    manager.alter_topic_config("t", {"retention.bytes": "5000"})
    log = manager.get_log("t", 2)
    assert log is not None and log.config.retention_bytes == 5000 and log.config.segment_bytes == 1073741824
    with pytest.raises(InvalidConfigError, match=r"retention\.bytes"):
        manager.alter_topic_config("t", {"retention.bytes": "x"})
    with pytest.raises(UnknownTopicOrPartitionError):
        manager.alter_topic_config("nope", {})
    manager.close()
    manager = _manager(tmp_path)
    meta = manager.topics()["t"]
    assert (meta.num_partitions, meta.config_overrides) == (4, {"retention.bytes": "5000"})
    assert manager.topic_config("t").retention_bytes == 5000
    manager.close()


def test_run_maintenance_applies_retention(tmp_path: Path) -> None:
    manager = _manager(tmp_path, 1)
    manager.create_topic("r", 1, {"segment.bytes": "200", "retention.ms": "1000"})
    log = manager.get_log("r", 0)
    assert log is not None
    for i in range(10):
        log.append(make_batch([b"x" * 40], timestamp=NOW - 100_000 + i), now_ms=NOW)
    log.append(make_batch([b"new" * 40], timestamp=NOW), now_ms=NOW)
    segments = len(log.segments())
    manager.run_maintenance(NOW)
    assert len(log.segments()) < segments and log.log_start_offset == 10
    manager.close()


def test_internal_topic_flag_and_unclean_restart(tmp_path: Path) -> None:
    manager = _manager(tmp_path, 1)
    manager.create_topic("__consumer_offsets", 2, {"cleanup.policy": "compact"})
    log = manager.get_log("__consumer_offsets", 0)
    assert log is not None
    log.append(make_batch([b"v"]), now_ms=NOW)
    # No close(): simulate a crash (page cache survives a process crash).
    again = _manager(tmp_path, 1)
    assert again.topics()["__consumer_offsets"].is_internal
    reopened = again.get_log("__consumer_offsets", 0)
    assert reopened is not None and reopened.log_end_offset == 1
    again.close()
    manager.close()
