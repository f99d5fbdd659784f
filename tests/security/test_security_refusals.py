"""Every security setting a process does not implement makes it refuse to start, naming it.

Real processes (``seaway connect``, ``seaway registry``, ``seaway topics``, ``seaway up``),
started together; none of them gets far enough to need a broker (the settings are checked
first). One case per way in; the full lists of refused keys are checked in-process in
test_security_settings.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

WORKER = {"bootstrap.servers": "127.0.0.1:1", "group.id": "refusals", "config.storage.topic": "c",
          "offset.storage.topic": "o", "status.storage.topic": "s", "key.converter": "StringConverter",
          "value.converter": "StringConverter", "listeners": "http://127.0.0.1:0"}
SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";'
BASIC_AUTH = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"

WORKER_CASES: list[tuple[dict[str, str], str]] = [
    ({"rest.extension.classes": "io.confluent.connect.security.ConnectSecurityExtension"}, "rest.extension.classes"),
    ({"rest.extension.classes": BASIC_AUTH}, "java.security.auth.login.config"),  # no JAAS file anywhere
    ({"producer.security.protocol": "SASL_SSL", "producer.sasl.mechanism": "OAUTHBEARER"},
     "producer.sasl.mechanism"),
    ({"listeners": "https://127.0.0.1:0", "listeners.https.ssl.provider": "SunJSSE"}, "listeners.https.ssl.provider"),
]
REGISTRY_CASES: list[tuple[dict[str, str], str]] = [
    ({"authentication.method": "BEARER"}, "authentication.method"),
    ({"authentication.method": "BASIC", "authentication.realm": "SchemaRegistry-Props"},
     "java.security.auth.login.config"),
    ({"schema.registry.resource.extension.class": "io.confluent.kafka.schemaregistry.security.Plugin"},
     "schema.registry.resource.extension.class"),
    ({"kafkastore.security.protocol": "SASL_SSL", "kafkastore.sasl.mechanism": "OAUTHBEARER"},
     "kafkastore.sasl.mechanism"),
]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("CONNECT_", "SCHEMA_REGISTRY_", "KAFKA_OPTS"))} | {"PYTHONUNBUFFERED": "1"}


def _seaway(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "seaway.cli.main", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=_env())


def test_each_unimplemented_security_setting_stops_the_process_naming_it(tmp_path: Path) -> None:
    started: list[tuple[str, str, subprocess.Popen[str], int]] = []
    for i, (extra, key) in enumerate(WORKER_CASES):
        path = tmp_path / f"worker-{i}.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in {**WORKER, **extra}.items()))
        started.append((f"connect distributed {extra}", key, _seaway("connect", "distributed", str(path)), 1))
    standalone = tmp_path / "standalone.properties"
    standalone.write_text("".join(f"{k}={v}\n" for k, v in {
        **WORKER, "offset.storage.file.filename": str(tmp_path / "offsets"), "sasl.mechanism": "GSSAPI"}.items()))
    started.append(("connect standalone", "sasl.mechanism", _seaway("connect", "standalone", str(standalone)), 1))
    for extra, key in REGISTRY_CASES:
        overrides = [a for k, v in extra.items() for a in ("--override", f"{k}={v}")]
        started.append((f"registry {extra}", key, _seaway("registry", "--override", "listeners=http://127.0.0.1:0",
                                                          "--override", "kafkastore.bootstrap.servers=127.0.0.1:1",
                                                          *overrides), 2))
    client = tmp_path / "client.properties"
    client.write_text(f"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config={SCRAM}\n"
                      "sasl.kerberos.service.name=kafka\n")
    started.append(("topics", "sasl.kerberos.service.name",
                    _seaway("topics", "list", "--bootstrap-server", "127.0.0.1:1", "--command-config", str(client)),
                    1))
    started.append(("up", "sasl.kerberos.service.name",
                    _seaway("up", "--data-dir", str(tmp_path / "up"), "--client-config", str(client)), 2))
    failures = []
    for what, key, proc, code in started:
        try:
            output, _ = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
            failures.append(f"{what}: still running (it should have refused to start)")
            continue
        last = output.strip().splitlines()[-1] if output.strip() else ""
        if proc.returncode != code or key not in last:
            failures.append(f"{what}: exit {proc.returncode} (expected {code}), last line {last!r} lacks {key!r}")
    assert not failures, "\n".join(failures)
