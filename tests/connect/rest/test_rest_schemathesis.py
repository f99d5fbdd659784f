"""schemathesis over the worker's published OpenAPI, against a real worker process: 0 5xx, conformant.

Every check runs except two that test input validation against the schema rather than the
document's truthfulness, and that Kafka Connect's contract contradicts on purpose:
``positive_data_acceptance`` (a schema-valid config is still refused with 400 when it names an
unknown class or misses a key the plugin requires: validation is semantic, per plugin) and
``negative_data_rejection`` (unknown ``expand`` values are ignored, as Kafka does). Path
parameters come, more often than not, from connectors and loggers that exist, so the fuzzer
reaches the herder instead of 404s.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.connect.acceptance.acceptance_support import StandaloneWorker
from tests.support.broker import BrokerProcess

SCHEMATHESIS = str(Path(sys.executable).with_name("schemathesis"))
CONFIG = """\
[dictionaries.connectors]
values = ["lines-in", "lines-out", "held"]

[dictionaries.loggers]
values = ["root", "seaway", "seaway.connect"]

[dictionaries.plugins]
values = ["FileStreamSource", "FileStreamSink", "org.apache.kafka.connect.file.FileStreamSinkConnector"]

[parameters]
"path.connector" = { dictionary = "connectors", probability = 0.6 }
"path.logger" = { dictionary = "loggers", probability = 0.5 }
"path.plugin" = { dictionary = "plugins", probability = 0.6 }
"""


@pytest.mark.timeout(150)
def test_schemathesis_finds_no_server_error_and_no_nonconformance(
        shared_broker: BrokerProcess, tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("one\ntwo\n")
    with StandaloneWorker(shared_broker.bootstrap, tmp_path / "worker", cwd=tmp_path) as worker:
        for name, config in {
            "lines-in": {"connector.class": "FileStreamSource", "file": str(source), "topic": "st-lines"},
            "lines-out": {"connector.class": "FileStreamSink", "file": str(tmp_path / "out.txt"),
                          "topics": "st-lines"},
            "held": {"connector.class": "FileStreamSource", "file": str(source), "topic": "st-held"},
        }.items():
            created = httpx.put(f"{worker.url}/connectors/{name}/config", json=config, timeout=30)
            assert created.status_code == 201, created.text
        (tmp_path / "schemathesis.toml").write_text(CONFIG)
        run = subprocess.run(
            [SCHEMATHESIS, "--config-file", str(tmp_path / "schemathesis.toml"), "run", worker.url + "/openapi.json",
             "--checks", "all", "--exclude-checks", "positive_data_acceptance,negative_data_rejection",
             "--max-examples", "25", "--workers", "1", "--request-timeout", "20", "--seed", "14",
             "--no-color", "--report-dir", str(tmp_path / "report")],
            cwd=tmp_path, capture_output=True, text=True, timeout=90, check=False)
        assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
        assert "Uncaught exception" not in worker.log()
        assert httpx.get(worker.url + "/health", timeout=10).status_code == 200
