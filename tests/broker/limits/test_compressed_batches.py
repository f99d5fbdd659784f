"""Compressed batches are decompressed off the event loop, and paid for by a per-connection
quota (issue 27, item 4).

A 2.5 KB zstd batch of 60 records of zeros unpacks to 57 MB: valid, stored, and 25-100 ms
of work each. The broker tests check deterministic properties (who is answered before whom,
what ``throttle_time_ms`` says, how long a throttled request is held at least); the latency
figures are a benchmark, ``bench/produce_bomb.py``. The unit tests below hold the
produce path's off-loop validation to the inline one, error for error.
"""

from __future__ import annotations

import asyncio
import functools
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cramjam
import pytest
from seaway.broker.config import BrokerConfig
from seaway.broker.context import BrokerContext, RequestContext
from seaway.broker.decompression import (
    BIG_BATCH_NICE,
    FIRST_TRY_BYTES,
    DecompressionQuota,
    ValidationPool,
    append_produced,
)
from seaway.broker.log import _record_walk
from seaway.broker.log.config import LogConfig
from seaway.broker.log.log_manager import LogManager
from seaway.broker.log.partition_log import PartitionLog
from seaway.broker.log.record_check import RecordSummary
from seaway.broker.log.validation import validate_batches
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.framing import request_frame, response_reader
from seaway.protocol.messages.produce_request import PartitionProduceData, ProduceRequest, TopicProduceData
from seaway.protocol.messages.produce_response import ProduceResponse
from seaway.protocol.record_batch import Compression

from tests.broker.clients.test_confluent_clients import create_topic
from tests.broker.limits.wire import API_VERSIONS_V0, connect, recv_exactly
from tests.broker.log.hostile import compressed_batch, raw_batch, record_bytes, records_bytes
from tests.support.broker import BrokerProcess

MIB = 1024 * 1024
_PRODUCE_VERSION = 9


def bomb(records: int = 60, value: int = 950_000) -> bytes:
    """The issue's batch: ``records`` zero-filled values, valid, zstd (60 x 950 KB -> 2.5 KB)."""
    payload = b"".join(record_bytes(i, bytes(value)) for i in range(records))
    return raw_batch(payload, count=records, codec=Compression.ZSTD)


def small_zstd_batch(values: int = 5) -> bytes:
    return raw_batch(records_bytes(values), count=values, codec=Compression.ZSTD)


def send_produce(sock: socket.socket, topic: str, records: bytes, correlation_id: int) -> None:
    """One Produce v9 (acks=1) request with ``records`` for partition 0, not waiting for it."""
    request = ProduceRequest(acks=1, timeout_ms=30000, topic_data=[
        TopicProduceData(name=topic, partition_data=[PartitionProduceData(index=0, records=records)])])
    sock.sendall(request_frame(request, _PRODUCE_VERSION, correlation_id, "bomb-test"))


def read_produce(sock: socket.socket, correlation_id: int) -> tuple[int, int, int]:
    """(error code, base offset, throttle_time_ms) of the next Produce answer on ``sock``."""
    (size,) = struct.unpack(">i", recv_exactly(sock, 4))
    r = response_reader(recv_exactly(sock, size), ProduceRequest, _PRODUCE_VERSION, correlation_id)
    response = ProduceResponse.decode(r, _PRODUCE_VERSION)
    part = response.responses[0].partition_responses[0]
    return part.error_code, part.base_offset, response.throttle_time_ms


def answered(sock: socket.socket) -> bool:
    """Whether the broker has sent anything on ``sock`` yet (without waiting)."""
    return bool(select.select([sock], [], [], 0)[0])


# --- against a broker process ---------------------------------------------------------------


@pytest.mark.timeout(180)
def test_other_connections_are_answered_while_big_batches_decompress(tmp_path: Path) -> None:
    """One connection sends 60 of the issue's batches in one request (3.4 GB to unpack); while
    the broker works through them, another connection's ApiVersions and a third one's small
    zstd produce are answered. Before the fix the event loop decompressed them itself: the
    others were answered only after the whole request (1-3 s later)."""
    overrides = {"connections.max.decompressed.bytes.per.second": "-1"}  # the threads alone, no quota
    with BrokerProcess(tmp_path / "data", overrides) as broker:
        create_topic(broker.bootstrap, "bombs")
        create_topic(broker.bootstrap, "small")
        one = bomb()
        assert len(one) < 3000
        with connect(broker.bootstrap, timeout=120) as attacker, connect(broker.bootstrap) as other, \
                connect(broker.bootstrap) as producer:
            send_produce(attacker, "bombs", one * 60, 1)
            time.sleep(0.2)  # the broker has read the request and is at work on it
            other.sendall(API_VERSIONS_V0)
            (size,) = struct.unpack(">i", recv_exactly(other, 4))
            assert struct.unpack(">i", recv_exactly(other, size)[:4]) == (1,)
            assert not answered(attacker), "ApiVersions waited for the big batches to be decompressed"
            send_produce(producer, "small", small_zstd_batch(), 7)
            assert read_produce(producer, 7) == (0, 0, 0)
            assert not answered(attacker), "a small compressed batch waited for the big ones"
            error, base_offset, _ = read_produce(attacker, 1)
        assert (error, base_offset) == (0, 0)  # all 60 valid batches were appended


@pytest.mark.timeout(180)
def test_a_connection_past_its_decompression_quota_is_throttled_and_delayed_not_refused(tmp_path: Path) -> None:
    """connections.max.decompressed.bytes.per.second=8 MiB: a batch unpacking to 18 MiB leaves
    the connection in debt; the answer says for how long (throttle_time_ms, Kafka's quota
    field), and the connection's next compressed batch waits that long before it is
    decompressed. Both are accepted. Another connection is not throttled meanwhile."""
    rate = 8 * MIB
    overrides = {"connections.max.decompressed.bytes.per.second": str(rate)}
    with BrokerProcess(tmp_path / "data", overrides) as broker:
        create_topic(broker.bootstrap, "bombs")
        create_topic(broker.bootstrap, "small")
        big = bomb(records=20)  # 18.1 MiB of records; charged with the 1 MiB first try
        with connect(broker.bootstrap, timeout=60) as hog, connect(broker.bootstrap) as other:
            send_produce(hog, "bombs", big, 1)
            error, base_offset, throttle_ms = read_produce(hog, 1)
            assert (error, base_offset) == (0, 0)
            # debt = 19.1 MiB - 8 MiB of credit (less what refilled while it was decompressed)
            assert 300 < throttle_ms <= 1400, throttle_ms
            sent = time.monotonic()
            send_produce(hog, "bombs", big, 2)  # a client that ignores throttle_time_ms
            send_produce(other, "small", small_zstd_batch(), 3)
            assert read_produce(other, 3) == (0, 0, 0)  # not throttled: the quota is per connection
            assert not answered(hog)
            error, base_offset, second_throttle_ms = read_produce(hog, 2)
            held = time.monotonic() - sent
        assert (error, base_offset) == (0, 20)  # delayed, then accepted
        assert held >= throttle_ms / 1000 - 0.05, (held, throttle_ms)
        assert second_throttle_ms > 300


@pytest.mark.timeout(180)
def test_appends_keep_request_order_whatever_each_batch_costs(tmp_path: Path) -> None:
    """Pipelined requests of one connection to one partition, big compressed, plain and small
    compressed batches mixed: each is appended after the one sent before it."""
    with BrokerProcess(tmp_path / "data") as broker:
        create_topic(broker.bootstrap, "mixed")
        plain = raw_batch(records_bytes(3), count=3)
        kinds = [(bomb(records=30), 30), (plain, 3), (small_zstd_batch(4), 4), (bomb(records=10), 10),
                 (plain, 3), (small_zstd_batch(2), 2)] * 2
        with connect(broker.bootstrap, timeout=60) as sock:
            for i, (records, _) in enumerate(kinds):
                send_produce(sock, "mixed", records, i)
            answers = [read_produce(sock, i) for i in range(len(kinds))]
        expected, offset = [], 0
        for _, count in kinds:
            expected.append((0, offset))
            offset += count
        assert [(error, base) for error, base, _ in answers] == expected


# --- units: the pool, the quota, the off-loop validation ------------------------------------


class _Blocking:
    """An Inflate stand-in whose run() waits for ``release`` and reports its thread's nice."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.nice = -100

    def run(self, limit: int | None = None) -> tuple[RecordSummary, int]:
        self.nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        assert self.release.wait(30)
        return RecordSummary(0, 0, []), 7


async def test_a_batch_on_a_big_thread_never_holds_up_a_small_one() -> None:
    pool = ValidationPool(1)  # one thread of each kind
    try:
        big, small = _Blocking(), _Blocking()
        big_done = asyncio.ensure_future(pool.inflate(big, None, True))  # type: ignore[arg-type]
        small.release.set()
        assert (await asyncio.wait_for(pool.inflate(small, FIRST_TRY_BYTES, False), 10))[1] == 7  # type: ignore[arg-type]
        assert not big_done.done()
        big.release.set()
        assert (await asyncio.wait_for(big_done, 10))[1] == 7
        assert big.nice == min(19, small.nice + BIG_BATCH_NICE)  # big batches yield the cores first
    finally:
        await asyncio.to_thread(pool.close)


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_quota_is_a_token_bucket_of_one_seconds_worth() -> None:
    clock = _Clock()
    quota = DecompressionQuota(10 * MIB, clock)
    assert quota.delay_s() == 0.0 and quota.throttle_time_ms() == 0
    quota.charge(25 * MIB)  # one batch may overdraw: 15 MiB of debt
    assert quota.delay_s() == pytest.approx(1.5)
    assert quota.throttle_time_ms() == 1500
    clock.now += 1.0
    assert quota.delay_s() == pytest.approx(0.5)
    clock.now += 100.0  # idle: the credit refills to one second's worth, no more
    quota.charge(10 * MIB)
    assert quota.delay_s() == 0.0
    quota.charge(1)
    assert quota.throttle_time_ms() == 1  # rounded up: a debt is never reported as 0 ms
    with pytest.raises(ValueError, match="positive rate"):
        DecompressionQuota(0)


@pytest.fixture
def logs(tmp_path: Path) -> Iterator[LogManager]:
    manager = LogManager([tmp_path / "logs"], LogConfig())
    manager.load()
    manager.create_topic("t", 1)
    manager.create_topic("compacted", 1, {"cleanup.policy": "compact"})
    yield manager
    manager.close()


def _request_context(logs: LogManager, pool: ValidationPool, quota: DecompressionQuota | None) -> RequestContext:
    broker = BrokerContext(config=BrokerConfig({"log.dirs": str(logs.log_dirs[0])}), logs=logs, node_id=1,
                           cluster_id="c", validation_pool=pool)
    return RequestContext(broker, 0, _PRODUCE_VERSION, 1, "test", "PLAINTEXT", "127.0.0.1:1", decompression=quota)


def _outcome(call: Any) -> tuple[str, str] | int:
    try:
        return call()  # type: ignore[no-any-return]
    except KafkaProtocolError as exc:
        return type(exc).__name__, str(exc)


_NOW = int(time.time() * 1000)


@functools.cache
def _zstd_zeros(size: int) -> bytes:
    return bytes(cramjam.zstd.compress(bytes(size)))


def _hostile(case: str) -> tuple[str, bytes]:
    """(topic, records) of each case: built on use, not at collection (some compress 80 MiB)."""
    cases: dict[str, Any] = {
        "bomb past its cap": lambda: ("t", compressed_batch(_zstd_zeros(80 * MIB), count=100)),
        "bomb past a one-record cap": lambda: ("t", compressed_batch(_zstd_zeros(2 * MIB), count=1)),
        "undecodable": lambda: ("t", compressed_batch(b"\x28\xb5\x2f\xfd" + b"\x00" * 50, count=3)),
        "records disagree with the header": lambda: (
            "t", raw_batch(records_bytes(4), count=5, codec=Compression.ZSTD)),
        "a record timestamp too far ahead": lambda: ("t", raw_batch(
            record_bytes(0, timestamp_delta=10**9), count=1, codec=Compression.ZSTD, base_timestamp=_NOW)),
        "keyless records on a compacted topic": lambda: ("compacted", raw_batch(
            b"".join(record_bytes(i, key=None if i % 2 else b"k") for i in range(6)), count=6,
            codec=Compression.ZSTD)),
        "plain, then big and corrupt": lambda: ("t", raw_batch(records_bytes(2), count=2) + compressed_batch(
            _zstd_zeros(3 * MIB)[:-8] + b"\x01" * 8, count=4)),
        "valid, big and small": lambda: (
            "t", bomb(records=5) + small_zstd_batch(3) + raw_batch(records_bytes(2), count=2)),
    }
    topic, records = cases[case]()
    return topic, records


_CASES = ("bomb past its cap", "bomb past a one-record cap", "undecodable", "records disagree with the header",
          "a record timestamp too far ahead", "keyless records on a compacted topic", "plain, then big and corrupt",
          "valid, big and small")


@pytest.mark.parametrize("case", _CASES)
async def test_validation_off_the_loop_gives_what_inline_validation_gives(logs: LogManager, case: str) -> None:
    topic, records = _hostile(case)
    plog = logs.get_log(topic, 0)
    assert isinstance(plog, PartitionLog)
    pool = ValidationPool(2)
    try:
        inline = _outcome(lambda: len(validate_batches(records, plog.config, _NOW, where=f"{topic}-0")))
        ctx = _request_context(logs, pool, DecompressionQuota(1 << 40))
        try:
            result = await append_produced(ctx, plog, memoryview(bytearray(records)), _NOW, None)
            off_loop: tuple[str, str] | int = len(result.batch_headers)
        except KafkaProtocolError as exc:
            off_loop = type(exc).__name__, str(exc)
    finally:
        await asyncio.to_thread(pool.close)
    assert off_loop == inline
    assert (plog.log_end_offset > 0) == isinstance(inline, int)  # appended whole, or not at all


async def test_a_refused_bomb_is_charged_like_an_accepted_batch(logs: LogManager) -> None:
    plog = logs.get_log("t", 0)
    assert plog is not None
    quota = DecompressionQuota(16 * MIB)
    pool = ValidationPool(2)
    try:
        with pytest.raises(KafkaProtocolError, match="decompresses to more than"):
            await append_produced(_request_context(logs, pool, quota), plog,
                                  memoryview(bytearray(_hostile("bomb past its cap")[1])), _NOW, None)
    finally:
        await asyncio.to_thread(pool.close)
    # 64 MiB inflated and refused, plus the 1 MiB first try, less the 16 MiB of credit
    assert quota.delay_s() > 2.5
    assert plog.log_end_offset == 0


@pytest.mark.parametrize("keyless", [False, True])
def test_the_c_walk_without_the_gil_is_the_same_walk(keyless: bool) -> None:
    good = b"".join(record_bytes(i, b"v" * i, key=None if i % 3 else b"k") for i in range(50))
    assert _record_walk.walk(good, 0, len(good), 50, keyless, True) == _record_walk.walk(good, 0, len(good), 50,
                                                                                          keyless)
    for bad, count in ((good[:-1], 50), (good, 51), (good + b"\x00", 50)):
        errors = []
        for release in (False, True):
            with pytest.raises(ValueError) as info:
                _record_walk.walk(bad, 0, len(bad), count, keyless, release)
            errors.append(str(info.value))
        assert errors[0] == errors[1]
