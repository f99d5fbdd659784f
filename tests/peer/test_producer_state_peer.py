"""Issue 27, item 2, side by side: an idempotent producer after DeleteRecords and kill -9.

The steps (:mod:`tests.broker.idempotence.log_start_steps`) on a broker of each kind, each
started for this test on its own data, stopped cleanly once and killed once: the same
answers from Apache Kafka and from Seaway. Kafka drops the producer snapshot at offset 100,
below the log start offset 200, when it loads the log after the crash, so the producer is
unknown and its next batch is accepted.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest
from seaway.broker.log.partition_log import LOG_START_OFFSET_CHECKPOINT
from seaway.broker.log.recovery import read_offset_checkpoint

from tests.broker.idempotence.log_start_steps import EXPECTED, Restartable, run_stale_snapshot_steps
from tests.broker.idempotence.test_idempotence_log_start import SEAWAY_STEPS_CONFIG
from tests.peer.apache_kafka import KafkaBroker
from tests.peer.conftest import BROKERS
from tests.support.broker import BrokerProcess

pytestmark = [pytest.mark.peer, pytest.mark.timeout(600)]

KAFKA_STEPS_CONFIG = {"log.flush.start.offset.checkpoint.interval.ms": "200"}
"""Kafka writes the log start offsets every interval (60 s by default), not at each DeleteRecords."""


def _kafka_checkpoint(log_dir: Path, topic: str) -> Callable[[], int | None]:
    """Kafka's log-dir-wide ``log-start-offset-checkpoint``: the entry of ``topic``-0."""
    def read() -> int | None:
        try:
            lines = (log_dir / LOG_START_OFFSET_CHECKPOINT).read_text().splitlines()
        except FileNotFoundError:
            return None
        for line in lines[2:]:
            name, partition, offset = line.rsplit(" ", 2)
            if (name, partition) == (topic, "0"):
                return int(offset)
        return None
    return read


@pytest.mark.parametrize("kind", ["kafka", "seaway"])
def test_producer_is_unknown_after_delete_records_and_kill(kind: str, tmp_path: Path, unique: str) -> None:
    broker: Restartable
    checkpoint: Callable[[], int | None]
    if kind == "kafka":
        kafka = KafkaBroker(tmp_path / "kafka", {**BROKERS, **KAFKA_STEPS_CONFIG})
        broker, log_dir = kafka, Path(kafka.props["log.dirs"])
        checkpoint = _kafka_checkpoint(log_dir, unique)
    else:
        seaway = BrokerProcess(tmp_path / "seaway", {**BROKERS, **SEAWAY_STEPS_CONFIG})
        broker, log_dir = seaway, seaway.data_dir
        checkpoint = functools.partial(read_offset_checkpoint, log_dir / f"{unique}-0" / LOG_START_OFFSET_CHECKPOINT)
    broker.start()
    try:
        answers = run_stale_snapshot_steps(broker, unique, log_dir / f"{unique}-0", checkpoint)
    finally:
        broker.stop()
    assert answers == EXPECTED
