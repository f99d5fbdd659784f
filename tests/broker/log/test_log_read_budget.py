"""Reads fill their byte budget even when every batch is indexed; appends stamp in place."""

from __future__ import annotations

from pathlib import Path

from seaway.protocol.record_batch import iter_batch_headers

from tests.broker.log.logtest_helpers import make_batch, open_log

NOW = 1_700_000_000_000


def test_read_fills_the_budget_when_every_batch_is_indexed(tmp_path: Path) -> None:
    # index_interval_bytes=0 indexes every batch, so an index entry always straddles the
    # budget's end: the read must still return every whole batch before it.
    plog = open_log(tmp_path / "t-0", index_interval_bytes=0)
    batch = make_batch([b"v" * 100] * 10, timestamp=NOW)
    for _ in range(20):
        plog.append(batch, now_ms=NOW)
    size = len(batch)
    for whole in (1, 2, 7, 19):
        region = plog.read(0, whole * size + size // 2)
        assert region is not None and len(region) == whole * size
    region = plog.read(35, 5 * size)  # from inside batch 3
    assert region is not None and len(region) == 5 * size
    assert [h.base_offset for h in iter_batch_headers(region.read_bytes())] == [30, 40, 50, 60, 70]
    plog.close()


def test_writable_memoryview_is_stamped_in_place_and_bytes_are_not(tmp_path: Path) -> None:
    plog = open_log(tmp_path / "t-0")
    batch = make_batch([b"a", b"b"], timestamp=NOW)
    plog.append(batch, now_ms=NOW)  # offsets 0-1; ``batch`` itself is immutable
    request = bytearray(b"xx" + batch)
    plog.append(memoryview(request)[2:], now_ms=NOW)  # offsets 2-3, stamped in the request buffer
    assert next(iter_batch_headers(memoryview(request)[2:])).base_offset == 2
    assert next(iter_batch_headers(batch)).base_offset == 0
    copy = bytearray(batch)
    plog.append(copy, now_ms=NOW)  # a bytearray is copied, left as the caller sent it
    assert copy == batch
    region = plog.read(0, 1 << 20)
    assert region is not None
    assert [h.base_offset for h in iter_batch_headers(region.read_bytes())] == [0, 2, 4]
    plog.close()
