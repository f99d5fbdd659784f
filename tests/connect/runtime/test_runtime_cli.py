"""``seaway connect standalone worker.properties connector.properties`` as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from seaway.connect.testing import EmbeddedBroker, consume_records

from tests.connect.runtime.rt_support import MODULE, rt_broker

__all__ = ["rt_broker"]

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.timeout(60)
def test_standalone_runs_connectors_from_files_and_stops_cleanly(
        rt_broker: EmbeddedBroker, tmp_path: Path, topic_name: str) -> None:
    worker = tmp_path / "worker.properties"
    worker.write_text(f"bootstrap.servers={rt_broker.bootstrap}\n"
                      "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
                      "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
                      f"offset.storage.file.filename={tmp_path / 'offsets'}\n"
                      "offset.flush.interval.ms=500\nlisteners=http://127.0.0.1:0\n"
                      f"plugin.allowlist={MODULE}.*\n")
    props = tmp_path / "counter.properties"
    props.write_text(f"name=counter\nconnector.class={MODULE}:CounterConnector\ntopic={topic_name}\ncount=3\n")
    as_json = tmp_path / "second.json"
    as_json.write_text(json.dumps({"name": "second", "config": {
        "connector.class": f"{MODULE}:CounterConnector", "topic": topic_name + "-2", "count": "2"}}))
    proc = subprocess.Popen([sys.executable, "-m", "seaway.cli.main", "connect", "standalone", str(worker),
                             str(props), str(as_json)], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert [m.value() for m in consume_records(rt_broker.bootstrap, topic_name, 3)] == [b"v0", b"v1", b"v2"]
        assert len(consume_records(rt_broker.bootstrap, topic_name + "-2", 2)) == 2
    finally:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, output
    offsets = json.loads((tmp_path / "offsets").read_text())["offsets"]
    assert sorted(json.loads(k)[0] for k, _ in offsets) == ["counter", "second"]


@pytest.mark.timeout(60)
def test_standalone_reads_its_files_as_java_properties(rt_broker: EmbeddedBroker, tmp_path: Path,
                                                       topic_name: str) -> None:
    """Worker and connector files in Properties.load syntax: ``key value``, ``key:value``, continuations,
    ``\\uXXXX`` escapes, and values with the trailing white space Java keeps, which the typed keys
    (numbers, booleans, lists, classes) and the clients' settings trim as Kafka's ConfigDef does."""
    worker = tmp_path / "worker.properties"
    worker.write_text(f"bootstrap.servers = {rt_broker.bootstrap}  \n"
                      "key.converter org.apache.kafka.connect.storage.StringConverter \t\n"
                      "value.converter:org.apache.kafka.connect.\\\n     storage.StringConverter \n"
                      f"offset.storage.file.filename={tmp_path / 'offsets'}\n"
                      "offset.flush.interval.ms=500 \n! a comment\nlisteners=http://127.0.0.1:0 \n"
                      "topic.creation.enable = false \nproducer.acks = all \n"
                      f"plugin.allowlist={MODULE}.* \n")
    props = tmp_path / "counter.properties"
    # \u002d is '-': a reader without Java's escapes names another topic, and no record arrives
    props.write_text(f"name=java\nconnector.class={MODULE}:CounterConnector \ntasks.max=1 \n"
                     f"tasks.max.enforce = true \ntopic={topic_name}\\u002dx\ncount=3 \n")
    proc = subprocess.Popen([sys.executable, "-m", "seaway.cli.main", "connect", "standalone", str(worker),
                             str(props)], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        values = [m.value() for m in consume_records(rt_broker.bootstrap, topic_name + "-x", 3, timeout=20)]
        assert values == [b"v0", b"v1", b"v2"]
    finally:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, output
