"""kill -9 the broker ten times in the middle of transactions: after each restart every
transaction is wholly visible or wholly invisible to read_committed, and producers recover.

A confluent-kafka transactional producer runs transactions of ``RECORDS`` records spread
over three partitions, one after the other, from a thread of its own; each record's value
names its transaction. The main thread SIGKILLs the broker at a random moment (so a kill
lands before, during or after a transaction's records, its EndTxn, its markers) and
restarts it on the same data directory and port. The producer keeps going: a retriable
error is retried, an abortable one aborts the transaction, a fatal one (e.g. fenced after
the broker aborted a transaction it timed out) makes a new producer with the same
transactional.id. After each restart, once the producer has committed again, it is paused
between transactions and everything is read back with read_committed and checked:

- each transaction is in the log with all of its records or none of them;
- every transaction whose commit was acknowledged is there, none whose abort was;
- nothing is left open (the last stable offset reaches the high watermark).

The random seed is printed (``SEAWAY_TXN_KILL_LOOP_SEED`` replays it).
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import KafkaException, Producer

from tests.broker.clients.test_confluent_clients import create_topic
from tests.broker.transactions.txn_support import READ_COMMITTED, list_offset, read_values, wait_until
from tests.support.broker import BrokerProcess

KILLS = 10
PARTITIONS = 3
RECORDS = 12
TXN_TIMEOUT_MS = 8000


class _TxnStream:
    """Runs transactions back to back; knows which committed and which aborted."""

    def __init__(self, bootstrap: str, topic: str, transactional_id: str) -> None:
        self.bootstrap, self.topic, self.transactional_id = bootstrap, topic, transactional_id
        self.committed: set[int] = set()
        self.aborted: set[int] = set()
        self.unknown: set[int] = set()
        self.producers_made = 0
        self.errors: list[str] = []
        self.next_txn = 0
        self._stop = threading.Event()
        self._pause = threading.Event()
        self.paused = threading.Event()
        self._producer = self._new_producer()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _new_producer(self) -> Producer:
        producer = Producer({
            "bootstrap.servers": self.bootstrap, "transactional.id": self.transactional_id,
            "transaction.timeout.ms": TXN_TIMEOUT_MS, "linger.ms": 2, "message.timeout.ms": TXN_TIMEOUT_MS,
            "retry.backoff.ms": 50, "retry.backoff.max.ms": 300,
            "reconnect.backoff.ms": 20, "reconnect.backoff.max.ms": 200,
        })
        deadline = time.monotonic() + 60
        while True:
            try:
                producer.init_transactions(10)
                break
            except KafkaException as exc:
                if time.monotonic() > deadline or exc.args[0].fatal():
                    raise
        self.producers_made += 1
        return producer

    def _one_transaction(self, n: int) -> str:
        producer = self._producer
        producer.begin_transaction()
        for i in range(RECORDS):
            producer.produce(self.topic, value=f"{n}:{i}".encode(), partition=i % PARTITIONS)
        for _ in range(20):
            try:
                producer.commit_transaction(5)
                return "committed"
            except KafkaException as exc:
                error = exc.args[0]
                if error.txn_requires_abort() or error.fatal() or not error.retriable():
                    raise
        raise TimeoutError("commit_transaction kept failing retriably")

    def _run(self) -> None:
        while not self._stop.is_set():
            if self._pause.is_set():
                self.paused.set()
                time.sleep(0.02)
                continue
            self.paused.clear()
            n = self.next_txn
            self.next_txn += 1
            try:
                self._one_transaction(n)
                self.committed.add(n)
            except Exception as exc:  # every failure mode a kill can cause, then recover
                self.errors.append(f"txn {n}: {exc}")
                self._recover(n, exc)

    def _recover(self, n: int, exc: Exception) -> None:
        error = exc.args[0] if isinstance(exc, KafkaException) else None
        if error is not None and error.txn_requires_abort() and not error.fatal():
            for _ in range(20):
                try:
                    self._producer.abort_transaction(5)
                    self.aborted.add(n)
                    return
                except KafkaException as again:
                    if again.args[0].fatal() or not again.args[0].retriable():
                        break
        self.unknown.add(n)
        while not self._stop.is_set():
            try:
                self._producer = self._new_producer()  # fences the old one, aborting what it left open
                return
            except KafkaException:
                time.sleep(0.2)

    def start(self) -> None:
        self._thread.start()

    def pause(self) -> None:
        self._pause.set()
        wait_until(self.paused.is_set, 60, "the producer to finish its transaction")

    def resume(self) -> None:
        self._pause.clear()
        self.paused.clear()

    def stop(self) -> None:
        self._stop.set()
        self._pause.clear()
        self._thread.join(60)


def _check(broker: BrokerProcess, topic: str, stream: _TxnStream, seed: int) -> int:
    """The invariants of the module docstring; returns how many transactions are visible."""
    bootstrap = broker.bootstrap
    for p in range(PARTITIONS):  # nothing open: an unfinished transaction is aborted by its timeout
        wait_until(lambda p=p: list_offset(bootstrap, topic, p, committed=True).offset
                   == list_offset(bootstrap, topic, p, committed=False).offset, 3 * TXN_TIMEOUT_MS / 1000,
                   f"partition {p}'s last stable offset to reach its end")
    values = [v for _, _, v in read_values(bootstrap, topic, PARTITIONS, READ_COMMITTED, timeout=30)]
    per_txn = Counter(int(v.split(":")[0]) for v in values)
    partial = {n: c for n, c in per_txn.items() if c != RECORDS}
    assert not partial, f"transactions partly visible to read_committed: {partial} (seed {seed})"
    visible = set(per_txn)
    assert len(values) == len(set(values)), f"records visible twice (seed {seed})"
    missing = stream.committed - visible
    assert not missing, f"acknowledged commits not visible: {sorted(missing)} (seed {seed})"
    leaked = stream.aborted & visible
    assert not leaked, f"acknowledged aborts visible: {sorted(leaked)} (seed {seed})"
    return len(visible)


@pytest.mark.timeout(240)
def test_ten_kills_mid_transaction_leave_whole_transactions(tmp_path: Path, topic_name: str) -> None:
    seed = int(os.environ.get("SEAWAY_TXN_KILL_LOOP_SEED", str(time.time_ns() % 1_000_000)))
    rng = random.Random(seed)
    print(f"transaction kill loop seed {seed} (SEAWAY_TXN_KILL_LOOP_SEED to replay)")
    overrides = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": "300"}
    broker = BrokerProcess(tmp_path / "data", overrides).start()
    stream: _TxnStream | None = None
    try:
        create_topic(broker.bootstrap, topic_name, PARTITIONS)
        stream = _TxnStream(broker.bootstrap, topic_name, f"kill-loop-{seed}")
        stream.start()
        visible = 0
        for kill in range(KILLS):
            floor = len(stream.committed)
            wait_until(lambda floor=floor: len(stream.committed) >= floor + 3, 60,
                       f"the producer to commit again after restart {kill} (seed {seed})")
            time.sleep(rng.uniform(0.0, 0.8))
            broker.kill()
            time.sleep(rng.uniform(0.0, 0.3))
            broker.start()
            floor = len(stream.committed)
            wait_until(lambda floor=floor: len(stream.committed) > floor, 60,
                       f"the producer to recover after restart {kill} (seed {seed})")
            stream.pause()
            visible = _check(broker, topic_name, stream, seed)
            stream.resume()
        stream.stop()
        visible = _check(broker, topic_name, stream, seed)
        print(f"{KILLS} kills; {len(stream.committed)} commits acknowledged, {len(stream.aborted)} aborts, "
              f"{len(stream.unknown)} transactions cut by a kill; {visible} visible; "
              f"{stream.producers_made} producers; first errors {stream.errors[:3]}")
        assert len(stream.committed) >= 4 * KILLS
    finally:
        if stream is not None:
            stream.stop()
        broker.stop()
