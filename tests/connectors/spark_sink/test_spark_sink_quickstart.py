"""docs/spark-sink.md's quick start, as written, on a topic of plain JSON; and the idle JVM goes away.

A real broker and a real ``seaway connect standalone`` worker process (so the Spark JVM is its
child, as in production). The connector config is the JSON body of the guide's first ``curl``,
only pointed at this test's lake with a smaller ``flush.size`` and a 2 s
``spark.session.idle.timeout.ms``. Before issue 15.7 both tasks FAILED on plain JSON (the
example's JsonConverter expected the schema envelope), and the JVM (~800 MB) stayed up after the
connector was deleted.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest

from tests.cli.clirun import SEAWAY
from tests.connectors.spark_sink import lake_check
from tests.support.broker import BrokerProcess
from tests.support.ports import free_port
from tests.support.process import stop

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "spark-sink.md"
RECORDS = 20


def guide_config() -> dict[str, str]:
    """The connector config of the guide's first ``curl -X PUT ... -d '{...}'``."""
    body = re.search(r"curl -X PUT \S+/connectors/[\w-]+/config .*?-d '(\{.*?\})'", GUIDE.read_text(), re.S)
    assert body is not None, "the guide's quick-start curl is gone"
    config: dict[str, str] = json.loads(body[1])
    return config


def _wait(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def _java_children(pid: int) -> list[int]:
    """Live java processes whose parent is ``pid`` (the Spark JVM pyspark launches)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            comm = stat.read_text().split("(", 1)[1].rsplit(")", 1)[0]
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid and fields[0] != "Z" and comm == "java":
            found.append(int(stat.parent.name))
    return found


@pytest.fixture
def worker(broker: BrokerProcess, tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    port = free_port()
    props = tmp_path / "worker.properties"
    props.write_text(f"bootstrap.servers={broker.bootstrap}\nlisteners=http://127.0.0.1:{port}\n"
                     f"offset.storage.file.filename={tmp_path / 'connect.offsets'}\n"
                     "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
                     "value.converter=org.apache.kafka.connect.storage.StringConverter\n")
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([SEAWAY, "connect", "standalone", str(props)], stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            def healthy() -> bool:
                assert proc.poll() is None, log_path.read_text()
                try:
                    return httpx.get(url + "/health", timeout=1).status_code == 200
                except httpx.HTTPError:
                    return False
            _wait(healthy, 30, "the worker")
            yield url, proc, log_path
        finally:
            stop(proc, 30)


@pytest.mark.timeout(240)
def test_the_guides_example_lands_plain_json_and_the_idle_jvm_stops(
        broker: BrokerProcess, worker: tuple[str, subprocess.Popen[bytes], Path], tmp_path: Path) -> None:
    url, proc, log_path = worker
    config = guide_config()
    topic, lake = config["topics"], tmp_path / "lake"
    lake_check.create_topic(broker.bootstrap, topic, 1)
    lake_check.produce_bodies(broker.bootstrap, topic, 1, 0, RECORDS,
                              lambda i: json.dumps({"id": i, "item": f"pen-{i}"}).encode())
    config.update({"lake.path": lake.as_uri(), "flush.size": str(RECORDS // 2),
                   "spark.session.idle.timeout.ms": "2000",
                   "spark.conf.spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"})
    created = httpx.put(f"{url}/connectors/orders-lake/config", json=config, timeout=30)
    assert created.status_code == 201, created.text

    def landed() -> list[str] | None:
        status = httpx.get(f"{url}/connectors/orders-lake/status", timeout=10).json()
        failed = [t.get("trace", "") for t in status.get("tasks", []) if t["state"] == "FAILED"]
        assert not failed, failed[0]
        files = sorted((lake / topic).rglob("*.parquet")) if lake.exists() else []
        values = [v for f in files for v in pq.read_table(f).column("value").to_pylist()]
        return values if len(values) == RECORDS else None

    values = _wait(landed, 150, f"{RECORDS} records in the lake")
    assert sorted(json.loads(v)["id"] for v in values) == list(range(RECORDS))
    assert json.loads(values[0]) == {"id": 0, "item": "pen-0"}
    jvms = _java_children(proc.pid)
    assert len(jvms) == 1, jvms

    assert httpx.delete(f"{url}/connectors/orders-lake", timeout=30).status_code == 204
    _wait(lambda: not _java_children(proc.pid), 90, "the idle Spark JVM to stop")
    # the line is written once the JVM is gone (after py4j's gateway shut down), so wait for it too
    _wait(lambda: "Stopped the idle SparkSession and its JVM" in log_path.read_text(), 30,
          "the idle-stop log line")
    assert proc.poll() is None and httpx.get(url + "/health", timeout=10).status_code == 200
