"""The log layer's transaction support in process, on real files: the ``.txnindex`` format,
the last stable offset, read_committed reads and their aborted-transaction lists, and the
cleaner removing aborted data and markers as Kafka's does."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from seaway.broker.log.cleaner import LogCleaner
from seaway.broker.log.config import LogConfig
from seaway.broker.log.log_manager import LogManager
from seaway.broker.log.partition_log import PartitionLog
from seaway.broker.log.txn_index import AbortedTxn, TxnIndex
from seaway.broker.producer.manager import ProducerStateManager
from seaway.protocol.records import Record, build_batch, iter_batches

pytestmark = pytest.mark.timeout(60)

T0 = 1_700_000_000_000


def test_txn_index_file_is_kafkas_layout(tmp_path: Path) -> None:
    index = TxnIndex(tmp_path / "00000000000000000000.txnindex", load=True)
    assert len(index) == 0 and not index.path.exists(), "no file until the first entry"
    index.append(AbortedTxn(7, 10, 20, 21))
    index.append(AbortedTxn(8, 15, 30, 31))
    data = index.path.read_bytes()
    assert len(data) == 68
    assert [struct.unpack_from(">hqqqq", data, pos) for pos in (0, 34)] == [(0, 7, 10, 20, 21), (0, 8, 15, 30, 31)]
    reloaded = TxnIndex(index.path, load=True)
    assert reloaded.entries() == [AbortedTxn(7, 10, 20, 21), AbortedTxn(8, 15, 30, 31)]
    with index.path.open("ab") as f:
        f.write(b"\x00\x01garbage")  # a torn append
    assert TxnIndex(index.path, load=True).entries() == reloaded.entries()
    assert len(index.path.read_bytes()) == 68, "the torn tail is cut off"
    reloaded.truncate_from(25)
    assert TxnIndex(index.path, load=True).entries() == [AbortedTxn(7, 10, 20, 21)]


def test_txn_index_search_stops_when_complete(tmp_path: Path) -> None:
    index = TxnIndex(tmp_path / "x.txnindex", load=False)
    for txn in (AbortedTxn(1, 0, 5, 6), AbortedTxn(2, 3, 9, 3), AbortedTxn(3, 12, 14, 40), AbortedTxn(4, 2, 50, 51)):
        index.append(txn)
    # [4, 10): producer 1 (5 >= 4) and 2 overlap; producer 3's LSO 40 >= 10 ends the search,
    # so producer 4 (which aborted later but started at 2) is not needed: it was not open then.
    assert index.collect(4, 10) == ([(1, 0), (2, 3)], True)
    assert index.collect(13, 100) == ([(3, 12), (4, 2)], False)


@pytest.fixture
def logs(tmp_path: Path) -> Iterator[LogManager]:
    manager = LogManager([tmp_path / "logs"], LogConfig())
    manager.load()
    yield manager
    manager.close()


def _txn_batch(pid: int, epoch: int, seq: int, values: list[bytes], key: bytes | None = b"k",
               keys: list[bytes] | None = None) -> bytes:
    records = [Record(i, T0, (keys[i] if keys else key), v) for i, v in enumerate(values)]
    return build_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=True)


def _values(plog: PartitionLog, start: int = 0) -> list[tuple[int, bytes | None, bool]]:
    """(offset, value, is control) of every record from ``start``, read_uncommitted."""
    out: list[tuple[int, bytes | None, bool]] = []
    offset = start
    while (region := plog.read(offset, 1 << 20)) is not None:
        for header, records in iter_batches(region.read_bytes()):
            out += [(r.offset, r.value, header.is_control) for r in records]
            offset = header.next_offset
    return out


def test_lso_read_committed_and_aborted_list(logs: LogManager) -> None:
    logs.create_topic("t", 1, {"segment.bytes": "600"})
    plog = logs.get_log("t", 0)
    assert plog is not None
    producers = ProducerStateManager(logs)
    producers.append(plog, _txn_batch(1, 0, 0, [b"a0", b"a1"]), T0, "tx-a")  # offsets 0-1
    producers.append(plog, _txn_batch(2, 0, 0, [b"b0"]), T0, "tx-b")  # offset 2
    assert plog.last_stable_offset == 0
    region, lso, aborted = plog.read_committed(0, 1 << 20)
    assert (region, lso, aborted) == (None, 0, [])
    assert producers.append_marker(plog, 1, 0, 0, commit=False, now_ms=T0) == 3  # aborts producer 1
    assert plog.last_stable_offset == 2, "producer 2's transaction is still open"
    region, lso, aborted = plog.read_committed(0, 1 << 20)
    assert region is not None and lso == 2 and aborted == [(1, 0)]
    assert [r.offset for _, rs in iter_batches(region.read_bytes()) for r in rs] == [0, 1]
    assert producers.append_marker(plog, 2, 0, 0, commit=True, now_ms=T0) == 4
    assert plog.last_stable_offset == 5 == plog.log_end_offset
    _, _, aborted = plog.read_committed(2, 1 << 20)
    assert aborted == [(1, 0)], "its marker (3) is after offset 2: Kafka lists it"
    _, _, aborted = plog.read_committed(4, 1 << 20)
    assert aborted == [], "producer 1's abort ended before offset 4"
    segment = plog.segments()[-1]
    assert segment.txn_index.entries() == [AbortedTxn(1, 0, 3, 2)]  # the LSO then: producer 2 still open at 2


def test_fetch_far_from_the_head_finds_the_aborted_transaction(logs: LogManager) -> None:
    """An abort whose data is many segments behind the head: a read there still gets it,
    from the index of the marker's segment, without the segments in between being read."""
    logs.create_topic("t", 1, {"segment.bytes": "400"})
    plog = logs.get_log("t", 0)
    assert plog is not None
    producers = ProducerStateManager(logs)
    producers.append(plog, _txn_batch(1, 0, 0, [b"x" * 50] * 3), T0, "tx")
    for seq in range(3, 60, 3):  # the open transaction spans many segments
        producers.append(plog, _txn_batch(1, 0, seq, [b"y" * 50] * 3), T0, "tx")
    marker = producers.append_marker(plog, 1, 0, 0, commit=False, now_ms=T0)
    for _ in range(200):
        plog.append(build_batch([Record(0, T0, None, b"z" * 60)]), now_ms=T0)
    assert len(plog.segments()) > 50
    assert [len(s.txn_index) for s in plog.segments()].count(1) == 1
    region, lso, aborted = plog.read_committed(0, 1000)
    assert region is not None and lso == plog.log_end_offset and aborted == [(1, 0)]
    _, _, aborted = plog.read_committed(marker + 1, 1000)
    assert aborted == []


def _cleanable(logs: LogManager) -> PartitionLog:
    logs.create_topic("c", 1, {"cleanup.policy": "compact", "segment.bytes": "300",
                               "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "1000",
                               "segment.ms": "60000"})
    plog = logs.get_log("c", 0)
    assert plog is not None
    return plog


def test_cleaner_drops_aborted_data_and_then_its_markers(logs: LogManager) -> None:
    plog = _cleanable(logs)
    producers = ProducerStateManager(logs)
    keys = [b"k1", b"k2"]
    producers.append(plog, _txn_batch(1, 0, 0, [b"committed-1", b"committed-2"], keys=keys),
                                   T0, "tx")
    producers.append_marker(plog, 1, 0, 0, commit=True, now_ms=T0)
    # A later aborted write of the same keys must not shadow the committed values.
    producers.append(plog, _txn_batch(1, 0, 2, [b"aborted-1", b"aborted-2"], keys=keys), T0, "tx")
    producers.append_marker(plog, 1, 0, 0, commit=False, now_ms=T0)
    for i in range(12):  # plain records of other keys fill segments past the markers
        plog.append(build_batch([Record(0, T0, f"other-{i}".encode(), b"o" * 40)]), now_ms=T0)
    assert len(plog.segments()) > 3
    cleaner = LogCleaner(logs)
    cleaner.clean_log(plog, now_ms=T0)
    survivors = {value: control for _, value, control in _values(plog)}
    assert b"committed-1" in survivors and b"committed-2" in survivors
    assert b"aborted-1" not in survivors and b"aborted-2" not in survivors
    markers = [(o, c) for o, _, c in _values(plog) if c]
    assert len(markers) == 2, "markers stay until their delete horizon"
    # Later cleanings, past delete.retention.ms: the abort marker (its data is gone) is
    # stamped with a delete horizon, then removed; the commit marker stays while its data does.
    cleaner.clean_log(plog, now_ms=T0 + 10_000)
    cleaner.clean_log(plog, now_ms=T0 + 20_000)
    assert [o for o, _, c in _values(plog) if c] == [2], "only the commit marker is left"
    values = {v for _, v, _ in _values(plog)}
    assert {b"committed-1", b"committed-2"} <= values and not {b"aborted-1", b"aborted-2"} & values
    # Once newer values replace the committed ones, the commit marker goes too.
    plog.append(build_batch([Record(0, T0, b"k1", b"new-1"), Record(1, T0, b"k2", b"new-2")]), now_ms=T0)
    for i in range(12):
        plog.append(build_batch([Record(0, T0, f"more-{i}".encode(), b"o" * 40)]), now_ms=T0)
    for later in (30_000, 40_000, 50_000):
        cleaner.clean_log(plog, now_ms=T0 + later)
    assert not [o for o, _, c in _values(plog) if c]
    assert {b"new-1", b"new-2"} <= {v for _, v, _ in _values(plog)}


def test_cleaner_stops_before_an_open_transaction(logs: LogManager) -> None:
    plog = _cleanable(logs)
    producers = ProducerStateManager(logs)
    plog.append(build_batch([Record(0, T0, b"k", b"old")]), now_ms=T0)
    producers.append(plog, _txn_batch(1, 0, 0, [b"open-new"], key=b"k"), T0, "tx")
    for i in range(12):
        plog.append(build_batch([Record(0, T0, f"o{i}".encode(), b"o" * 40)]), now_ms=T0)
        plog.append(build_batch([Record(0, T0, b"k", f"later-{i}".encode())]), now_ms=T0)
    first_unstable = plog.last_stable_offset
    assert first_unstable == 1
    LogCleaner(logs).clean_log(plog, now_ms=T0)
    values = [v for _, v, _ in _values(plog)]
    assert b"old" in values and b"open-new" in values, "nothing at or after the open transaction was cleaned"
