"""Where an Iceberg table keeps the sink's Kafka offsets: its snapshots' summary properties.

Every snapshot the committer writes carries, for each topic-partition the connector has ever landed
in that table, the next offset to consume::

    seaway.offsets.<connector>.<topic>.<partition> = <next offset>
    kafka.connect.commit-id = <the commit's id>

in the same snapshot as the data (one atomic catalog commit), so "the table holds offsets < n of
partition p" is true of every snapshot, time travel included. A restarted or reassigned task reads
them from the table's current snapshot (walking back through snapshots without them, such as a
foreign writer's), never from the consumer group. The compaction of ``seaway lake compact`` copies
its parent's properties (same data, same offsets).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from seaway.connect.api import TopicPartition

if TYPE_CHECKING:
    from pyiceberg.table import Table
    from pyiceberg.table.snapshots import Snapshot

__all__ = ["COMMIT_ID", "PREFIX", "offset_properties", "snapshot_offsets", "table_offsets"]

PREFIX = "seaway.offsets."
COMMIT_ID = "kafka.connect.commit-id"


def offset_properties(connector: str, offsets: Mapping[TopicPartition, int]) -> dict[str, str]:
    """Summary properties for ``offsets`` (topic-partition -> next offset)."""
    return {f"{PREFIX}{connector}.{tp.topic}.{tp.partition}": str(n) for tp, n in offsets.items()}


def snapshot_offsets(snapshot: Snapshot, connector: str) -> dict[TopicPartition, int] | None:
    """The connector's offsets in one snapshot's summary; ``None`` when it has none."""
    prefix = f"{PREFIX}{connector}."
    props = snapshot.summary.additional_properties if snapshot.summary is not None else {}
    found: dict[TopicPartition, int] = {}
    for key, value in props.items():
        if key.startswith(prefix):
            topic, _, partition = key[len(prefix):].rpartition(".")
            if topic and partition.isdigit():
                found[TopicPartition(topic, int(partition))] = int(value)
    return found or None


def table_offsets(table: Table, connector: str) -> dict[TopicPartition, int]:
    """The connector's offsets in the table: from the newest snapshot (of the main branch) that has them."""
    from pyiceberg.table.snapshots import ancestors_of

    for snapshot in ancestors_of(table.current_snapshot(), table.metadata):
        found = snapshot_offsets(snapshot, connector)
        if found is not None:
            return found
    return {}
