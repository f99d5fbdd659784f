"""kill -9 the broker ten times under an idempotent acks=all producer: nothing acked is lost,
nothing is written twice.

One confluent-kafka producer (enable.idempotence=true, so acks=all and unlimited retries)
streams records whose values are unique sequence numbers into three partitions while
the main thread SIGKILLs the broker at random moments and restarts it on the same data
directory and port. librdkafka retries whatever was in flight with the same producer id
and sequence numbers, so the restarted broker must recognise a batch it had already
written before the kill (producer state rebuilt from the log) and must still hold every
batch it acknowledged. Afterwards everything is read back: every acknowledged sequence
number is present exactly once, at the offset its acknowledgement named, and no number
appears twice. The random seed is printed (and settable with ``SEAWAY_KILL_LOOP_SEED``)
so a failure can be replayed.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer

from tests.broker.clients.test_confluent_clients import consume_all, create_topic
from tests.support.broker import BrokerProcess

KILLS = 10
PARTITIONS = 3


class _Stream:
    """Produces sequence numbers from a thread of its own and keeps every delivery report."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.topic = topic
        self.acked: dict[int, tuple[int, int]] = {}
        self.errors: list[tuple[int, KafkaError]] = []
        self.sent = 0
        self.fatal: KafkaException | None = None
        self._stop = threading.Event()
        self._producer = Producer({
            "bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
            "linger.ms": 5, "batch.num.messages": 200, "message.timeout.ms": 120_000,
            "retry.backoff.ms": 50, "retry.backoff.max.ms": 500,
            "reconnect.backoff.ms": 20, "reconnect.backoff.max.ms": 200,
        })
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _report(self, err: KafkaError | None, msg: object) -> None:
        seq = int(msg.value())  # type: ignore[attr-defined]
        if err is not None:
            self.errors.append((seq, err))
        else:
            self.acked[seq] = (msg.partition(), msg.offset())  # type: ignore[attr-defined]

    def _run(self) -> None:
        # Delivery callbacks run inside poll(), so this one thread produces and polls:
        # about 4,000 records/s in small bursts, steady enough that every kill lands
        # while requests are in flight.
        try:
            while not self._stop.is_set():
                for _ in range(20):
                    try:
                        self._producer.produce(self.topic, key=str(self.sent % 101).encode(),
                                               value=str(self.sent).encode(), on_delivery=self._report)
                    except BufferError:
                        break
                    self.sent += 1
                self._producer.poll(0.005)
        except KafkaException as exc:  # a fatal idempotence error: the producer is unusable
            self.fatal = exc

    def start(self) -> None:
        self._thread.start()

    def finish(self, timeout: float) -> int:
        """Stop producing, wait for every outstanding report; how many are still pending."""
        self._stop.set()
        self._thread.join(10)
        if self.fatal is not None:
            return -1
        return int(self._producer.flush(timeout))


@pytest.mark.timeout(240)
def test_ten_kills_lose_nothing_acknowledged_and_write_nothing_twice(tmp_path: Path, topic_name: str) -> None:
    seed = int(os.environ.get("SEAWAY_KILL_LOOP_SEED", str(time.time_ns() % 1_000_000)))
    rng = random.Random(seed)
    print(f"kill loop seed {seed} (SEAWAY_KILL_LOOP_SEED to replay)")
    broker = BrokerProcess(tmp_path / "data").start()
    try:
        create_topic(broker.bootstrap, topic_name, PARTITIONS)
        stream = _Stream(broker.bootstrap, topic_name)
        stream.start()
        acked_at_kill: list[int] = []
        for kill in range(KILLS):
            # Kill only once this incarnation has acknowledged new records (the stream is
            # flowing again), then at a random moment within the next 1.2 s.
            floor = acked_at_kill[-1] if acked_at_kill else 0
            deadline = time.monotonic() + 30
            while len(stream.acked) < floor + 100 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert stream.fatal is None, f"the producer failed fatally: {stream.fatal} (seed {seed})"
            assert len(stream.acked) >= floor + 100, f"no acks after restart {kill}: {len(stream.acked)}"
            time.sleep(rng.uniform(0.0, 1.2))
            acked_at_kill.append(len(stream.acked))
            broker.kill()
            time.sleep(rng.uniform(0.0, 0.3))
            broker.start()
        time.sleep(1.0)  # the last restart also serves a stretch of new records
        pending = stream.finish(90)
        assert stream.fatal is None, f"the producer failed fatally: {stream.fatal} (seed {seed})"
        assert pending == 0, f"{pending} records never got a delivery report"
        assert not stream.errors, f"{len(stream.errors)} delivery errors, e.g. {stream.errors[:3]}"
        assert len(stream.acked) == stream.sent

        messages = consume_all(broker.bootstrap, topic_name, PARTITIONS, stream.sent + 1, timeout=20)
        seen = Counter(int(m.value()) for m in messages)  # type: ignore[attr-defined]
        duplicates = sorted(seq for seq, n in seen.items() if n > 1)
        missing = sorted(set(stream.acked) - set(seen))
        assert not missing, f"{len(missing)} acknowledged records lost, e.g. {missing[:10]} (seed {seed})"
        assert not duplicates, f"{len(duplicates)} records written twice, e.g. {duplicates[:10]} (seed {seed})"
        assert set(seen) == set(stream.acked), "records nobody acknowledged were read back"
        for m in messages:
            seq = int(m.value())  # type: ignore[attr-defined]
            assert stream.acked[seq] == (m.partition(), m.offset()), f"record {seq} is not where its ack said"  # type: ignore[attr-defined]
        print(f"{KILLS} kills at {acked_at_kill} acks; {stream.sent} records acknowledged, all read back once")
    finally:
        broker.stop()
