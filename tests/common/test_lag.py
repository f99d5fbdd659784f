"""seaway.lag: offset lag, time lag, and Burrow's evaluator.

``BURROW_CASES`` is Burrow's own table (``core/internal/evaluator/caching_test.go``, ``var tests``:
offsets with commit timestamps and lags, the broker offsets, the current lag, "now" in seconds,
the allowed lag, and the status Burrow expects), so the port is checked against the original's
expectations rather than against our reading of it.
"""

from __future__ import annotations

import threading

import pytest
from seaway.lag import (
    LagStatus,
    LagTracker,
    OffsetSample,
    PartitionWindow,
    TimestampCache,
    evaluate_partition,
    group_status,
    offset_lag,
    time_lag_ms,
)

Case = tuple[list[tuple[int, int, int | None]], list[int], int, int, int, LagStatus]

BURROW_CASES: list[Case] = [
    # 0 - returns OK because there is zero lag somewhere
    (
        [(1000, 100000, 0), (2000, 200000, 50), (3000, 300000, 100), (4000, 400000, 150), (5000, 500000, 200)],
        [5200],
        200,
        600,
        0,
        LagStatus.OK,
    ),
    # 1 - same status. does not return true for stop because time since last commit (400s) is equal to the
    #   difference (500-100), not greater than
    (
        [(1000, 100000, 0), (2000, 200000, 50), (3000, 300000, 100), (4000, 400000, 150), (5000, 500000, 200)],
        [5200],
        200,
        900,
        0,
        LagStatus.OK,
    ),
    # 2 - status is now STOP because the time since last commit is great enough (500s), even though lag is zero
    #   at the start (fixed due to #290)
    (
        [(1000, 100000, 0), (2000, 200000, 50), (3000, 300000, 100), (4000, 400000, 150), (5000, 500000, 200)],
        [5200],
        200,
        1000,
        0,
        LagStatus.STOPPED,
    ),
    # 3 - status is STOP when lag is always non-zero as well
    (
        [(1000, 100000, 50), (2000, 200000, 100), (3000, 300000, 150), (4000, 400000, 200), (5000, 500000, 250)],
        [5250],
        250,
        1000,
        0,
        LagStatus.STOPPED,
    ),
    # 4 - status is OK because of zero lag, but stall is true because the offset is always the same and there is
    #   lag (another commit with turn this to stall)
    (
        [(1000, 100000, 0), (1000, 200000, 50), (1000, 300000, 100), (1000, 400000, 150), (1000, 500000, 200)],
        [1200],
        200,
        600,
        0,
        LagStatus.OK,
    ),
    # 5 - status is now STALL because the lag is always non-zero
    (
        [(1000, 100000, 100), (1000, 200000, 150), (1000, 300000, 200), (1000, 400000, 250), (1000, 500000, 300)],
        [1300],
        300,
        600,
        0,
        LagStatus.STALLED,
    ),
    # 6 - status is still STALL even when the lag stays the same
    (
        [(1000, 100000, 100), (1000, 200000, 100), (1000, 300000, 100), (1000, 400000, 100), (1000, 500000, 100)],
        [1100],
        100,
        600,
        0,
        LagStatus.STALLED,
    ),
    # 7 - status is OK because the offsets go backwards, but though the lag does decrease within the window
    #   (caught up the rewind)
    (
        [(1000, 100000, 100), (2000, 200000, 150), (3000, 300000, 200), (2000, 400000, 1250), (4000, 500000, 300)],
        [4300],
        300,
        600,
        0,
        LagStatus.OK,
    ),
    # 8 - status is OK because the current lag is 0 (even though the offsets show lag), even though it would be
    #   considered stopped due to timestamps
    (
        [(1000, 100000, 50), (2000, 200000, 100), (3000, 300000, 150), (4000, 400000, 200), (5000, 500000, 250)],
        [5250],
        0,
        1000,
        0,
        LagStatus.OK,
    ),
    # 9 - status is STOP due to timestamps because the current lag is non-zero, even though lag is always zero
    #   in offsets, only because there is new data (#290)
    (
        [
            (792748079, 1512224618356, 0),
            (792748080, 1512224619362, 0),
            (792748081, 1512224620366, 0),
            (792748082, 1512224621367, 0),
            (792748083, 1512224622370, 0),
            (792748084, 1512224623373, 0),
            (792748085, 1512224624378, 0),
            (792748086, 1512224625379, 0),
            (792748087, 1512224626383, 0),
            (792748088, 1512224627383, 0),
            (792748089, 1512224628383, 0),
            (792748090, 1512224629388, 0),
            (792748091, 1512224630391, 0),
            (792748092, 1512224631394, 0),
            (792748093, 1512224632397, 0),
        ],
        [792749024, 792749000, 792748800, 792748600, 792748500],
        931,
        1512224650,
        0,
        LagStatus.STOPPED,
    ),
    # 10 - status is OK, even though it would be stop due to timestamps, as within the recent broker offset
    #   window the lag was zero (#303)
    (
        [
            (792748079, 1512224618356, 0),
            (792748080, 1512224619362, 0),
            (792748081, 1512224620366, 0),
            (792748082, 1512224621367, 0),
            (792748083, 1512224622370, 0),
            (792748084, 1512224623373, 0),
            (792748085, 1512224624378, 0),
            (792748086, 1512224625379, 0),
            (792748087, 1512224626383, 0),
            (792748088, 1512224627383, 0),
            (792748089, 1512224628383, 0),
            (792748090, 1512224629388, 0),
            (792748091, 1512224630391, 0),
            (792748092, 1512224631394, 0),
            (792748093, 1512224632397, 0),
        ],
        [792748094, 792748093, 792748093, 792748093],
        1,
        1512224650,
        0,
        LagStatus.OK,
    ),
    # 11 - same case as test 0 with additional `nil` lag entries which should not affect results
    (
        [
            (1000, 100000, 0),
            (1500, 150000, None),
            (2000, 200000, 50),
            (2500, 250000, None),
            (3000, 300000, 100),
            (3500, 350000, None),
            (4000, 400000, 150),
            (4500, 450000, None),
            (5000, 500000, 200),
            (5500, 550000, None),
        ],
        [5700],
        200,
        600,
        0,
        LagStatus.OK,
    ),
    # 12 - status is OK despite the fact that the current lag is greater zero and the time since last commit is
    #   great enough because of the configured allowed lag
    ([(1000, 100000, 2), (2000, 200000, 1), (2000, 300000, 1)], [2001], 1, 550, 1, LagStatus.OK),
    # 13 - same as 5 but with an allowed lag
    (
        [(1000, 100000, 100), (1000, 200000, 150), (1000, 300000, 200), (1000, 400000, 250), (1000, 500000, 300)],
        [1300],
        300,
        600,
        99,
        LagStatus.STALLED,
    ),
    # 14 - same as 7 but with an allowed lag
    (
        [(1000, 100000, 100), (2000, 200000, 150), (3000, 300000, 200), (2000, 400000, 1250), (4000, 500000, 300)],
        [4300],
        300,
        600,
        99,
        LagStatus.OK,
    ),
    # 15 - Rewind, but we did not catch up to the previous point
    (
        [(1000, 100000, 100), (2000, 200000, 150), (3000, 300000, 200), (2000, 400000, 1250), (2500, 500000, 300)],
        [4300],
        300,
        600,
        0,
        LagStatus.REWIND,
    ),
]


@pytest.mark.parametrize("case", BURROW_CASES, ids=[f"burrow-{i}" for i in range(len(BURROW_CASES))])
def test_burrow_table(case: Case) -> None:
    offsets, broker_offsets, current_lag, now_s, allowed_lag, expected = case
    samples = [OffsetSample(o, t, lag) for o, t, lag in offsets]
    assert evaluate_partition(samples, broker_offsets, current_lag, now_s * 1000, allowed_lag=allowed_lag) is expected


def test_burrow_table_covers_every_failure_status() -> None:
    # Burrow's table has no WARNING case: test_window_warning_when_lag_never_shrinks covers it
    assert {c[-1] for c in BURROW_CASES} == {LagStatus.OK, LagStatus.STALLED, LagStatus.STOPPED, LagStatus.REWIND}


def test_offset_lag_is_kafka_lag_column() -> None:
    assert offset_lag(3, 10) == 7
    assert offset_lag(10, 10) == 0
    assert offset_lag(None, 10) is None  # no committed offset: kafka-consumer-groups.sh shows "-"
    assert offset_lag(-1, 10) is None  # Kafka's "no offset"
    assert offset_lag(5, None) is None
    assert offset_lag(12, 10) == -2  # past a truncated log end: not hidden


def test_time_lag() -> None:
    assert time_lag_ms(10_000, 5, 4_000) == 6_000
    assert time_lag_ms(10_000, 0, 4_000) == 0  # caught up: no time lag whatever the record's age
    assert time_lag_ms(10_000, 5, None) is None  # the record could not be read
    assert time_lag_ms(10_000, 5, 12_000) == 0  # a clock ahead never gives a negative lag
    assert time_lag_ms(10_000, None, 4_000) is None


def test_window_stalled_then_stopped() -> None:
    """A consumer stuck on a record keeps committing the same offset: STALLED; once it dies and the
    silence outlasts the window's span: STOPPED."""
    w = PartitionWindow(intervals=5, min_distance_ms=0)
    for i in range(5):  # moving, caught up
        w.add_commit(100 * i, 1_000 * i, 100 * i)
    assert w.evaluate(5_000).status is LagStatus.OK
    for i in range(5, 10):  # stuck at 400 while the log grows
        w.add_commit(400, 1_000 * i, 400 + 50 * i)
    assert [s.offset for s in w.offsets] == [400] * 5
    assert w.evaluate(9_500).status is LagStatus.STALLED
    w.add_end_offset(2_000)
    # window span 5..9 s = 4 s: at 13.0 s the last commit is 4 s old (not more): still STALLED
    assert w.evaluate(13_000).status is LagStatus.STALLED
    assert w.evaluate(13_001).status is LagStatus.STOPPED
    assert w.evaluate(13_001).current_lag == 1_600


def test_window_warning_when_lag_never_shrinks() -> None:
    w = PartitionWindow(intervals=4, min_distance_ms=0)
    for i in range(4):
        w.add_commit(100 * i, 1_000 * i, 100 * i + 10 + 5 * i)  # moving, lag 10, 15, 20, 25
    assert w.evaluate(3_500).status is LagStatus.WARNING
    w.add_commit(390, 4_000, 395)  # the lag shrank once: OK
    assert w.evaluate(4_500).status is LagStatus.OK


def test_window_rewind_until_recovered() -> None:
    w = PartitionWindow(intervals=5, min_distance_ms=0)
    for i, offset in enumerate([100, 200, 50]):
        w.add_commit(offset, 1_000 * i, 300)
    assert w.evaluate(2_500).status is LagStatus.REWIND
    w.add_commit(200, 3_000, 300)
    assert w.evaluate(3_500).status is not LagStatus.REWIND


def test_window_min_distance_merges_fast_commits() -> None:
    """Burrow's mergeFrequentCommitIntoPrevious: a commit within min-distance replaces the newest one
    and keeps its timestamp, so a fast committer cannot squeeze the window to milliseconds."""
    w = PartitionWindow(intervals=3, min_distance_ms=1_000)
    w.add_commit(10, 0, 100)
    w.add_commit(20, 400, 100)
    w.add_commit(30, 900, 100)
    assert w.offsets == (OffsetSample(30, 0, 70),)
    w.add_commit(40, 1_000, 100)
    assert [s.offset for s in w.offsets] == [30, 40]
    w.add_commit(35, 500, 100)  # older than the newest: dropped (Burrow drops backfill)
    assert [s.offset for s in w.offsets] == [30, 40]


def test_same_commit_fed_again_is_stored_once() -> None:
    """A scraper feeds the group's current commit every time; the window must not fill with copies
    (a caught-up consumer that stopped would turn STALLED instead of OK, then STOPPED)."""
    for min_distance in (0, 1_000):
        w = PartitionWindow(intervals=5, min_distance_ms=min_distance)
        w.add_commit(100, 0, 100)
        w.add_commit(200, 5_000, 200)  # caught up at its last commit
        for end in (250, 300, 400):
            w.add_commit(200, 5_000, end)  # scraped again while the producer goes on
        assert w.offsets == (OffsetSample(100, 0, 0), OffsetSample(200, 5_000, 0))
        assert w.end_offsets[-1] == 400 and w.current_lag() == 200
        assert w.evaluate(9_000).status is LagStatus.OK  # lag 0 at a commit of the window (rule 1)
        # silent for longer than the 5 s span, but an end offset in the ring (200) was caught up
        # with lately: Burrow holds STOPPED back until the ring has moved past it
        assert w.evaluate(10_001).status is LagStatus.OK
        for end in (500, 600):
            w.add_commit(200, 5_000, end)
        assert w.end_offsets == (250, 300, 400, 500, 600)
        assert w.evaluate(10_001).status is LagStatus.STOPPED


def test_window_is_bounded_and_validates() -> None:
    w = PartitionWindow(intervals=3, min_distance_ms=0)
    for i in range(100):
        w.add_commit(i, i * 10, 1_000)
        w.add_end_offset(1_000 + i)
    assert len(w.offsets) == 3 and len(w.end_offsets) == 3
    assert [s.offset for s in w.offsets] == [97, 98, 99]
    with pytest.raises(ValueError, match="intervals"):
        PartitionWindow(intervals=0)
    with pytest.raises(ValueError, match="min_distance_ms"):
        PartitionWindow(min_distance_ms=-1)
    empty = PartitionWindow().evaluate(0)
    assert empty.status is LagStatus.OK and empty.start is None and empty.complete == 0.0


def test_minimum_complete_keeps_young_windows_ok() -> None:
    w = PartitionWindow(intervals=10, min_distance_ms=0)
    w.add_commit(5, 0, 500)
    assert w.evaluate(10_000).status is LagStatus.STOPPED
    assert w.evaluate(10_000, minimum_complete=0.5).status is LagStatus.OK


def test_group_status_is_the_worst_partition() -> None:
    assert group_status([]) is LagStatus.OK
    assert group_status([LagStatus.OK, LagStatus.WARNING]) is LagStatus.WARNING
    for bad in (LagStatus.STALLED, LagStatus.STOPPED, LagStatus.REWIND):
        assert group_status([LagStatus.WARNING, bad, LagStatus.OK]) is LagStatus.ERROR
    assert [s.severity for s in (LagStatus.OK, LagStatus.WARNING, LagStatus.ERROR)] == [1, 2, 3]


def test_tracker_bounds_partitions_and_forgets_groups() -> None:
    tracker = LagTracker(intervals=3, min_distance_ms=0, max_partitions=4)
    for p in range(6):
        tracker.add_commit("g", "t", p, 10, 1_000, 20)
    assert sorted(tracker.evaluate("g", 2_000)) == [("t", 2), ("t", 3), ("t", 4), ("t", 5)]
    tracker.add_commit("h", "t", 0, 5, 1_000, 5)
    tracker.add_end_offsets("t", 0, 50)
    assert tracker.evaluate("h", 1_500)[("t", 0)].current_lag == 45
    assert tracker.groups() == ["g", "h"]
    tracker.forget_group("g")
    assert tracker.groups() == ["h"]
    with pytest.raises(ValueError):
        LagTracker(max_partitions=0)


def test_tracker_is_thread_safe() -> None:
    tracker = LagTracker(intervals=5, min_distance_ms=0, max_partitions=1_000)

    def commit(n: int) -> None:
        for i in range(500):
            tracker.add_commit(f"g{n}", "t", i % 50, i, i, i + 1)

    threads = [threading.Thread(target=commit, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert tracker.groups() == ["g0", "g1", "g2", "g3"]
    assert all(len(tracker.evaluate(f"g{n}", 10_000)) == 50 for n in range(4))


def test_timestamp_cache_is_bounded_lru() -> None:
    cache = TimestampCache(max_entries=2)
    cache.put("t", 0, 1, 111)
    cache.put("t", 0, 2, 222)
    assert cache.get("t", 0, 1) == 111  # 1 is now the most recent
    cache.put("t", 0, 3, 333)
    assert cache.get("t", 0, 2) is None and cache.get("t", 0, 1) == 111 and len(cache) == 2
    with pytest.raises(ValueError):
        TimestampCache(0)
