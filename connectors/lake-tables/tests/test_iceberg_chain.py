"""The committer's chain check (iceberg_commit.chain): which DATA_WRITTEN events a table takes, in order.

The rule that keeps a commit from skipping rows: for a partition the table has never held, only the
origin of a task's chain (its first event, from where its consumer started) is taken; a later event of
that chain waits. Before the rule, a committer that died holding the origin let its successor take the
next event, and the table then skipped the origin's offsets for good (one CI run: 20,000 rows missing
from two partitions after a worker was killed during a rebalance).
"""

from __future__ import annotations

from seaway.connect.api import TopicPartition
from seaway.connectors.lake_tables.iceberg_commit import Written, chain

TP = TopicPartition("orders", 0)


def _written(start: int, next_offset: int, origin: bool = False, tp: TopicPartition = TP) -> Written:
    return Written.from_event({"member": "m", "table": "db.t", "topic": tp.topic, "partition": tp.partition,
                               "start": start, "next": next_offset, "files": [], "origin": origin})


def test_a_partition_the_table_never_held_starts_only_at_an_origin() -> None:
    later = _written(10_000, 20_000)
    accepted, stale, overlapping, offsets = chain([later], {})
    assert (accepted, stale, overlapping, offsets) == ([], [], [], {})  # it waits for the origin

    origin = _written(0, 10_000, origin=True)
    accepted, stale, overlapping, offsets = chain([later, origin], {})
    assert accepted == [origin, later] and offsets == {TP: 20_000}


def test_events_chain_from_the_tables_offsets_whatever_their_origin_flag() -> None:
    held = {TP: 100}
    exact, gap, replay, cut = _written(100, 200), _written(300, 400), _written(0, 100, origin=True), _written(150, 250)
    accepted, stale, overlapping, offsets = chain([gap, exact, replay, cut], held)
    assert accepted == [exact] and stale == [replay] and overlapping == [cut] and offsets == {TP: 200}


def test_two_origins_for_one_partition_the_first_wins_the_second_is_stale_or_cut() -> None:
    first, again = _written(0, 500, origin=True), _written(0, 500, origin=True)
    cut_otherwise = _written(0, 700, origin=True)
    accepted, stale, overlapping, offsets = chain([first, again, cut_otherwise], {})
    assert accepted == [first] and stale == [again] and overlapping == [cut_otherwise] and offsets == {TP: 500}


def test_an_event_without_the_flag_is_no_origin() -> None:
    """Events of a task from before the flag existed wait like any later event of a chain."""
    event = Written.from_event({"member": "m", "table": "db.t", "topic": "orders", "partition": 0, "start": 0,
                                "next": 5})
    assert not event.origin
    assert chain([event], {})[0] == []
