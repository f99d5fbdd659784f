"""Compressed produce batches: checked on worker threads, paid for by a per-connection quota.

Why. A compressed batch is decompressed and every record walked before it is stored
(:mod:`seaway.broker.log.validation`, as Kafka's LogValidator does). That costs time in
proportion to the *decompressed* size, which a client sets with a few bytes: 2.5 KB of
zstd hold 60 valid records of zeros, 57 MB, 25-100 ms of work. Done on the event loop,
that time is taken from every other connection: four connections resending such a batch
pushed another producer's ack latency from 0.4 ms to 105-131 ms at p50 and 250-268 ms
at p99 (``bench/produce_bomb.py``, docs/performance.md). Kafka pays the cost on its
request-handler threads (``num.io.threads``), not on its network threads.

What.

- :class:`ValidationPool`: a partition's records that hold a compressed batch are
  validated by :func:`~seaway.broker.log.validation.validation_steps` (the same checks,
  order and errors as everywhere else), which hands each compressed batch out as an
  :class:`~seaway.broker.log.validation.Inflate`; the batch is decompressed and its
  records walked on a worker thread, everything else (header, CRC, timestamps, keys)
  runs on the event loop as before. The decompression (cramjam) and the C record walk
  run without the GIL (``_record_walk.c``), and so does giving the scratch pages back
  (``seaway.protocol.compression``), so the event loop goes on serving everyone else
  meanwhile. Each batch is tried first on a *small* thread up to :data:`FIRST_TRY_BYTES`,
  and only a batch that unpacks to more goes to a *big* thread, which runs at a lower
  CPU priority: ordinary producers' batches never queue behind a 57 MB one. The
  threads read the request buffer in place and the append then stamps and writes the
  same view on the event loop, so nothing is copied, and appends keep their order: a
  connection's requests are processed one at a time (``connection.py``) and the produce
  handler awaits each partition before appending it and going on to the next.
- :class:`DecompressionQuota`, one per connection: ``connections.max.decompressed.bytes.per.second``
  caps the bytes a connection's compressed batches may unpack to per second. A token
  bucket holding at most one second's worth: each try is charged what it unpacked to
  (a refused one the most it could have: a bomb refused at its cap costs as much as an
  accepted one), after the fact, so one batch may overdraw it; before a connection's
  next decompression, a connection in debt waits until the debt is paid, and every
  Produce response carries the debt left as ``throttle_time_ms`` (clients since KIP-219
  wait that long before sending to the broker again). That is how Kafka enforces its
  produce quotas: the client is delayed, never refused. The delay holds the connection's
  own requests only (they are processed in order); other connections are not touched.

Bounds. Big batches (past 1 MiB unpacked) are inflated by at most ``num.io.threads // 4``
threads at once (2 by default), each into its thread's 64 MiB scratch area, at a lower
CPU priority than the event loop; small ones by up to ``num.io.threads``, 1 MiB each. A
connection has at most one batch being inflated at a time, so the threads are shared
between connections in arrival order. The quota bounds what each connection costs; the
threads bound what all of them cost together.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from seaway.broker.log.validation import Inflate, has_compressed_batch, validation_steps
from seaway.protocol.compression import DecompressedTooLargeError
from seaway.protocol.errors import KafkaProtocolError

if TYPE_CHECKING:
    from seaway.broker.context import RequestContext
    from seaway.broker.log.partition_log import AppendGuard, AppendResult, PartitionLog
    from seaway.broker.log.record_check import RecordSummary
    from seaway.protocol.record_batch import BatchHeader

__all__ = [
    "BIG_BATCH_NICE",
    "FIRST_TRY_BYTES",
    "DecompressionQuota",
    "ValidationPool",
    "append_produced",
    "throttle_time_ms",
]


class ValidationPool:
    """The worker threads that decompress produced batches (see the module docstring).

    Two sets of threads (each started as needed): every compressed batch is first
    decompressed on one of ``threads`` *small* threads, up to :data:`FIRST_TRY_BYTES`; one
    that unpacks to more goes to one of ``max(1, threads // 4)`` *big* threads, which run
    at a lower CPU priority (nice +:data:`BIG_BATCH_NICE`). So ordinary producers' batches
    never queue behind a connection's 57 MB ones, at most ``threads // 4`` batches are
    inflated to tens of MiB at once (each in its thread's 64 MiB scratch area), and when
    the cores are busy the event loop and the small batches get them first.
    """

    def __init__(self, threads: int) -> None:
        self.small_threads = threads
        self.big_threads = max(1, threads // 4)
        self._small = ThreadPoolExecutor(max_workers=self.small_threads, thread_name_prefix="seaway-validation")
        self._big = ThreadPoolExecutor(max_workers=self.big_threads, thread_name_prefix="seaway-validation-big",
                                       initializer=_lower_priority)

    async def inflate(self, inflate: Inflate, limit: int | None, big: bool) -> tuple[RecordSummary, int]:
        """``inflate.run(limit)`` on a small (or, when ``big``, a big) thread."""
        executor = self._big if big else self._small
        return await asyncio.get_running_loop().run_in_executor(executor, inflate.run, limit)

    def close(self) -> None:
        """Stop the threads once the batches being inflated are done (blocks: call off the loop)."""
        for executor in (self._small, self._big):
            executor.shutdown(wait=True, cancel_futures=True)


FIRST_TRY_BYTES = 1024 * 1024
"""What a compressed batch may unpack to on the small threads: ordinary producers' batches
do not unpack to more (librdkafka's ``batch.size`` is 1,000,000 bytes of records before
compression, the Java client's 16 KiB after), and it is under a millisecond of work."""

BIG_BATCH_NICE = 10
"""How much lower the big-batch threads' CPU priority is (Linux nice, per thread)."""


def _lower_priority() -> None:
    """Thread initializer of the big-batch threads: nice +BIG_BATCH_NICE for this thread only
    (Linux's nice is per thread; a new thread starts with its creator's)."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: same priority as the rest
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + BIG_BATCH_NICE))


class DecompressionQuota:
    """One connection's ``connections.max.decompressed.bytes.per.second``: a token bucket.

    ``rate`` bytes of credit a second, at most one second's worth kept; a connection starts
    with a full bucket. Runs on the event loop thread only.
    """

    def __init__(self, rate: int, clock: Callable[[], float] = time.monotonic) -> None:
        if rate <= 0:
            raise ValueError(f"a decompression quota needs a positive rate, not {rate}")
        self.rate = rate
        self._clock = clock
        self._credit = float(rate)
        self._at = clock()

    def _refill(self) -> float:
        now = self._clock()
        self._credit = min(float(self.rate), self._credit + (now - self._at) * self.rate)
        self._at = now
        return self._credit

    def charge(self, nbytes: int) -> None:
        """A batch of this connection unpacked to ``nbytes``."""
        self._credit = self._refill() - nbytes

    def delay_s(self) -> float:
        """Seconds until the debt is paid (0.0 when there is none).

        Without a debt at the last charge or refill there is none now (credit only grows
        until the next charge), so the common case reads no clock; a refill later covers
        the time skipped exactly (the bucket's cap makes refills path-independent).
        """
        if self._credit >= 0:
            return 0.0
        credit = self._refill()
        return -credit / self.rate if credit < 0 else 0.0

    def throttle_time_ms(self) -> int:
        """:meth:`delay_s` in whole milliseconds, rounded up: a response's ``throttle_time_ms``."""
        return 0 if self._credit >= 0 else math.ceil(self.delay_s() * 1000)


async def append_produced(
    ctx: RequestContext,
    plog: PartitionLog,
    records: bytes | bytearray | memoryview,
    now_ms: int,
    guard: AppendGuard | None,
) -> AppendResult:
    """``plog.append`` for one partition of a Produce request (see the module docstring).

    Records without a compressed batch (or a broker without a pool: unit tests) are
    appended at once, as before. Otherwise validation runs here, batch by batch, and each
    compressed batch is inflated on the pool (:func:`_inflate`), whose errors are raised
    as validation raises them inline; then the records are appended here, unchecked a
    second time. Raises what :meth:`PartitionLog.append` raises.
    """
    pool = ctx.broker.validation_pool
    if pool is None or not has_compressed_batch(records):
        return plog.append(records, now_ms=now_ms, guard=guard)
    headers: list[BatchHeader] = []
    for inflate in validation_steps(records, plog.config, now_ms, headers, where=f"{plog.topic}-{plog.partition}"):
        inflate.result = await _inflate(pool, ctx.decompression, inflate)  # its errors are validation's
    return plog.append(records, now_ms=now_ms, guard=guard, validated=headers)


async def _inflate(pool: ValidationPool, quota: DecompressionQuota | None, inflate: Inflate) -> (
    tuple[RecordSummary, int]
):
    """One compressed batch: up to :data:`FIRST_TRY_BYTES` on a small thread, in full on a
    big one if it unpacks to more; before each try the connection waits while its quota
    is in debt, after it the quota is charged what the try inflated (a refused try: the
    most it could have)."""
    cap = inflate.cap
    tries: tuple[tuple[int | None, bool], ...] = (
        ((FIRST_TRY_BYTES, False), (None, True)) if cap > FIRST_TRY_BYTES else ((None, False),)
    )
    for limit, big in tries:
        if quota is not None and (delay := quota.delay_s()) > 0:
            await asyncio.sleep(delay)
        try:
            inflated = await pool.inflate(inflate, limit, big)
        except KafkaProtocolError as exc:
            if quota is not None:
                quota.charge(cap if limit is None else limit)
            if limit is not None and isinstance(exc, DecompressedTooLargeError):
                continue  # a big batch: the full try, on a big thread
            raise
        if quota is not None:
            quota.charge(inflated[1])
        return inflated
    raise AssertionError("unreachable: the last try returns or raises")


def throttle_time_ms(ctx: RequestContext) -> int:
    """The ``throttle_time_ms`` of a Produce response: the connection's quota debt, if any."""
    quota = ctx.decompression
    return 0 if quota is None else quota.throttle_time_ms()
