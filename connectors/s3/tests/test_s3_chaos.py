"""kill -9 of real worker processes (``seaway connect standalone``) while records flow: no duplicates, no gaps."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import s3_lake
from s3_support import MotoServer

from tests.connectors.spark_sink import lake_check
from tests.support.broker import BrokerProcess

BROKER = {"group.min.session.timeout.ms": "1000", "group.initial.rebalance.delay.ms": "0"}
KILLS = int(os.environ.get("SEAWAY_S3_CHAOS_KILLS", "10"))


class Worker:
    """One ``seaway connect standalone`` process running the S3 sink; SIGKILL is a machine dying."""

    def __init__(self, tmp: Path, bootstrap: str, connectors: list[dict[str, str]], n: int) -> None:
        folder = tmp / f"worker-{n}"
        folder.mkdir()
        worker = folder / "worker.properties"
        worker.write_text("\n".join([
            f"bootstrap.servers={bootstrap}",
            "key.converter=org.apache.kafka.connect.storage.StringConverter",
            "value.converter=org.apache.kafka.connect.json.JsonConverter",
            "value.converter.schemas.enable=true",
            f"offset.storage.file.filename={tmp / 'connect.offsets'}",
            "offset.flush.interval.ms=1000",
            "listeners=http://127.0.0.1:0"]) + "\n")
        files = []
        for c in connectors:
            files.append(folder / f"{c['name']}.json")
            files[-1].write_text(json.dumps(c))
        self.log = folder / "worker.log"
        self._out = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "seaway.cli.main", "connect", "standalone", str(worker), *map(str, files)],
            stdout=self._out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, text: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            if text in self.output():
                return True
            time.sleep(0.1)
        return text in self.output()

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)
        if not self._out.closed:
            self._out.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(30)
        self.kill()


def connectors(s3: MotoServer, bucket: str, topic: str) -> list[dict[str, str]]:
    """Two sinks of the topic, both with a 1.5 s schedule (boundaries depend on the wall clock).

    ``field``: three objects per file set, so a pending record: a kill between two uploads of one set
    must be rolled back. ``default``: one object per set and no pending record: a replay must overwrite
    an uploaded but uncommitted object under its key.
    """
    common = {"connector.class": "io.confluent.connect.s3.S3SinkConnector", "tasks.max": "2", "topics": topic,
              **s3.props(bucket), "rotate.schedule.interval.ms": "1500", "timezone": "UTC",
              "include.kafka.metadata": "true", "consumer.override.session.timeout.ms": "2000",
              "consumer.override.heartbeat.interval.ms": "500"}
    return [{**common, "name": "field", "topics.dir": "field", "logs.dir": "field-logs", "flush.size": "700",
             "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
             "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
             "partition.field.name": "kind"},
            {**common, "name": "default", "topics.dir": "default", "logs.dir": "default-logs", "flush.size": "500",
             "format.class": "io.confluent.connect.s3.format.json.JsonFormat"}]


@pytest.mark.timeout(420)
def test_sigkill_ten_times_while_records_flow(s3: MotoServer, bucket: str, tmp_path: Path) -> None:
    seed = int(os.environ.get("SEAWAY_CHAOS_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    print(f"chaos seed {seed}")
    topic, partitions = "chaos", 6
    client = s3.client()
    with BrokerProcess(tmp_path / "broker", BROKER) as broker:
        lake_check.create_topic(broker.bootstrap, topic, partitions)
        lake_check.produce_json(broker.bootstrap, topic, 0, 3000, partitions)
        produced = [3000]
        flowing = threading.Event()
        flowing.set()

        def produce() -> None:
            while flowing.is_set():
                lake_check.produce_json(broker.bootstrap, topic, produced[0], 300, partitions)
                produced[0] += 300
                time.sleep(0.3)

        producer = threading.Thread(target=produce, daemon=True)
        producer.start()
        kills_while_writing = 0
        try:
            for n in range(KILLS):
                worker = Worker(tmp_path, broker.bootstrap, connectors(s3, bucket, topic), n)
                try:
                    # even runs die while objects are landing, odd ones at any moment after assignment
                    ready = worker.wait_for("Landed" if n % 2 == 0 else "lake offset", 60)
                    time.sleep(rng.uniform(0.0, 1.0) if n % 2 == 0 else rng.uniform(0.2, 3.0))
                    assert worker.proc.poll() is None, worker.output()[-3000:]
                    kills_while_writing += ready and "Landed" in worker.output()
                finally:
                    worker.kill()
        finally:
            flowing.clear()
            producer.join(30)
        ends = lake_check.end_offsets(broker.bootstrap, topic, partitions)
        assert sum(ends.values()) == produced[0]
        final = Worker(tmp_path, broker.bootstrap, connectors(s3, bucket, topic), KILLS)
        try:
            for name in ("field", "default"):
                s3_lake.wait_landed(client, bucket, topic, ends, 120, f"{name}-logs")
        finally:
            final.stop()
        expected = lake_check.topic_records(broker.bootstrap, topic, partitions)
    print(f"{produced[0]} records, {KILLS} kills ({kills_while_writing} after objects had landed in that run)")
    assert kills_while_writing >= KILLS // 2
    for name in ("field", "default"):
        landed = s3_lake.bucket_rows(client, bucket, f"{name}/{topic}/")
        assert s3_lake.assert_bucket_equals_topic(landed, expected) == produced[0], name
        assert not [k for k in s3_lake.keys(client, bucket, f"{name}-logs/") if "/pending-" in k]
    assert not client.list_multipart_uploads(Bucket=bucket).get("Uploads")
