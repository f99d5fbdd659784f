"""Issue 4: config-provider secrets never reach REST responses, statuses or the worker's output.

A real ``seaway connect standalone`` process with ``config.providers=file``; connectors whose
configs reference ``${file:<secrets.properties>:...}``. Two of them fail *because of* the
resolved values, with the secret in their exception messages (a connector's start and a
task's start), so the traces and the error logs are the places a leak would show.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.connect.acceptance.acceptance_support import StandaloneWorker, eventually, read_topic
from tests.connect.runtime.rt_support import MODULE
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(60)

PASSWORD = "s3cr3t-Acceptance-Pw-7"
SECRET_DIR = "/nonexistent-dir-Acceptance-Secret-91"  # a secret that makes FileStreamSink's task fail


def secret_states(worker: StandaloneWorker, name: str) -> tuple[str, list[str]]:
    status = worker.get(f"/connectors/{name}/status").json()
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]


def test_secrets_stay_out_of_rest_statuses_and_logs(acceptance_broker: BrokerProcess, tmp_path: Path,
                                                    topic_name: str) -> None:
    secrets = tmp_path / "secret.properties"
    secrets.write_text(f"password={PASSWORD}\nsink.dir={SECRET_DIR}\n")
    password = f"${{file:{secrets}:password}}"
    sink_file = f"${{file:{secrets}:sink.dir}}/out.txt"
    worker = StandaloneWorker(acceptance_broker.bootstrap, tmp_path / "worker", log_level="DEBUG", worker_props={
        "config.providers": "file",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider"})
    configs = {
        "ok": {"connector.class": f"{MODULE}:CounterConnector", "topic": topic_name, "count": "3",
               "secret": password},
        "leaky": {"connector.class": f"{MODULE}:FailingStartConnector", "topic": topic_name, "secret": password},
        "sink": {"connector.class": "FileStreamSink", "topics": topic_name, "file": sink_file,
                 "db.password": password},
    }
    with worker:
        for name, config in configs.items():
            created = httpx.post(worker.url + "/connectors", json={"name": name, "config": config}, timeout=30)
            assert created.status_code == 201, created.text
            assert created.json()["config"] == {**config, "name": name}
        assert [v for v, _ in read_topic(acceptance_broker.bootstrap, topic_name, 3)] == [b"v0", b"v1", b"v2"]
        eventually(lambda: secret_states(worker, "leaky")[0] == "FAILED", "leaky to fail")
        eventually(lambda: secret_states(worker, "sink") == ("RUNNING", ["FAILED"]), "the sink task to fail")

        responses = {path: worker.get(path) for path in [
            "/connectors", "/connectors?expand=info&expand=status",
            *(f"/connectors/{n}{suffix}" for n in configs
              for suffix in ("", "/config", "/status", "/tasks", "/topics", "/offsets")),
            "/connectors/ok/tasks/0/status", "/connectors/sink/tasks/0/status"]}
        validated = httpx.put(worker.url + "/connector-plugins/FileStreamSink/config/validate",
                              json={"name": "v", **configs["sink"]}, timeout=30)
        responses["validate"] = validated
        for name, config in configs.items():
            assert worker.get(f"/connectors/{name}/config").json() == {**config, "name": name}
        task_configs = worker.get("/connectors/ok/tasks").json()
        assert [t["config"]["secret"] for t in task_configs] == [password]
        leaky_trace = worker.get("/connectors/leaky/status").json()["connector"]["trace"]
        sink_trace = worker.get("/connectors/sink/tasks/0/status").json()["trace"]
    assert worker.proc is not None and worker.proc.returncode == 0
    log = worker.log()

    # the secrets were resolved (else these messages would quote the placeholders) and hidden
    assert "cannot start with secret [hidden]" in leaky_trace
    assert "Couldn't find or create file '[hidden]/out.txt'" in sink_trace
    assert "cannot start with secret" in log and "Couldn't find or create file" in log  # the failures were logged
    for secret in (PASSWORD, SECRET_DIR):
        for path, response in responses.items():
            assert response.status_code in (200, 201), (path, response.text)
            assert secret not in response.text, f"{secret!r} in GET {path}: {response.text}"
        assert secret not in log, f"{secret!r} in the worker's output:\n" + "\n".join(
            line for line in log.splitlines() if secret in line)
