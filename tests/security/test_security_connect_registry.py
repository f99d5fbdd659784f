"""A distributed Connect cluster of two workers and the schema registry on a SASL_SSL broker
(SCRAM-SHA-512), with HTTPS and HTTP Basic authentication on both REST APIs.

- the workers' own clients (internal topics, group membership) and their tasks' clients log in
  with SCRAM from Java-style settings, the password read through the file config provider;
- the registry's ``_schemas`` clients and leader election likewise (``kafkastore.*``);
- a FileStreamSource created through the *follower* (forwarded to the leader over HTTPS with the
  user's credentials) writes Avro through the registry over HTTPS with basic auth
  (``basic.auth.credentials.source=USER_INFO``, ``schema.registry.ssl.*``);
- no credentials: 401 on both APIs; a registry user without an allowed role: 403;
- ``/admin/loggers`` only on the admin listener; the CLI reaches all of it.
"""

from __future__ import annotations

import io
import json
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastavro
import httpx
import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from seaway.schema_registry.client import SchemaRegistryClient

from tests.connect.distributed.dist_support import WorkerProcess, free_port, start_all, wait_for, worker_properties
from tests.schema_registry.registry_support import RegistryProcess
from tests.security.conftest import CONNECT_PASSWORD, REGISTRY_PASSWORD, Secured

pytestmark = pytest.mark.timeout(180)

BASIC_AUTH = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
REST_USERS = {"alice": "alice-rest-pw", "bob": "bob-rest-pw"}
REGISTRY_USERS = "connect: registry-connect-pw,developer\nops: ops-pw,admin\nreader: reader-pw,viewer\n"
TOPIC = "secured-lines"
LINES = [f"secured line {i}" for i in range(25)]


@dataclass
class Cluster:
    secured: Secured
    workers: list[WorkerProcess]
    registry: RegistryProcess
    admin_urls: list[str]
    tls: ssl.SSLContext
    directory: Path

    def rest(self, method: str, url: str, user: str | None = "alice", **kw: Any) -> httpx.Response:
        auth = None if user is None else (user, REST_USERS.get(user, "wrong"))
        return httpx.request(method, url, verify=self.tls, auth=auth, timeout=60, **kw)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def cluster(secured: Secured, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    d = tmp_path_factory.mktemp("cluster")
    m = secured.material
    jaas = _write(d / "jaas.conf", f"""KafkaConnect {{
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
  file="{_write(d / 'connect.password', ''.join(f'{u}: {p}' + chr(10) for u, p in REST_USERS.items()))}";
}};
SchemaRegistry-Props {{
  org.eclipse.jetty.jaas.spi.PropertyFileLoginModule required file="{_write(d / 'registry.users', REGISTRY_USERS)}";
}};
""")
    registry_client = secured.java_client("registry", REGISTRY_PASSWORD)
    registry = RegistryProcess(
        secured.bootstrap,
        "listeners=https://127.0.0.1:0", "kafkastore.topic.replication.factor=1",
        "ssl.keystore.type=PKCS12", f"ssl.keystore.location={m.server_p12}",
        f"ssl.keystore.password={m.store_password}",
        "ssl.truststore.type=PEM", f"ssl.truststore.location={m.ca}",
        "authentication.method=BASIC", "authentication.realm=SchemaRegistry-Props",
        "authentication.roles=admin,developer", f"java.security.auth.login.config={jaas}",
        *(f"kafkastore.{k}={v}" for k, v in registry_client.items()),
    ).start()
    workers: list[WorkerProcess] = []
    try:
        secret = _write(d / "connect-secrets.properties", f"password={CONNECT_PASSWORD}\n")
        client = secured.java_client("connect", f"${{file:{secret}:password}}")  # KIP-297, allowed.paths below
        extra = {
            **client, **{f"producer.{k}": v for k, v in client.items()},
            **{f"consumer.{k}": v for k, v in client.items()},
            "config.providers": "file", "config.providers.file.class": "FileConfigProvider",
            "config.providers.file.param.allowed.paths": str(d),
            "listeners.https.ssl.keystore.type": "PEM", "listeners.https.ssl.keystore.location": str(m.server_pem),
            "listeners.https.ssl.truststore.type": "PEM", "listeners.https.ssl.truststore.location": str(m.ca),
            "admin.listeners.https.ssl.keystore.type": "PKCS12",
            "admin.listeners.https.ssl.keystore.location": str(m.server_p12),
            "admin.listeners.https.ssl.keystore.password": m.store_password,
            "rest.extension.classes": BASIC_AUTH, "java.security.auth.login.config": str(jaas),
            "value.converter": "io.confluent.connect.avro.AvroConverter",
            "value.converter.schema.registry.url": registry.url,
            "value.converter.basic.auth.credentials.source": "USER_INFO",
            "value.converter.basic.auth.user.info": "connect:registry-connect-pw",
            "value.converter.schema.registry.ssl.truststore.type": "PEM",
            "value.converter.schema.registry.ssl.truststore.location": str(m.ca),
        }
        admin_urls = []
        for i in range(2):
            port, admin_port = free_port(), free_port()
            props = worker_properties(secured.bootstrap, port, "secured", extra=extra)
            props["listeners"] = f"https://127.0.0.1:{port}"
            props["admin.listeners"] = f"https://127.0.0.1:{admin_port}"
            admin_urls.append(f"https://127.0.0.1:{admin_port}")
            workers.append(WorkerProcess(d / f"worker-{i}", props))
        start_all(workers)
        yield Cluster(secured, workers, registry, admin_urls, ssl.create_default_context(cafile=str(m.ca)), d)
    finally:
        for worker in workers:
            worker.stop()
        registry.stop()


def _follower(cluster: Cluster) -> WorkerProcess:
    def settled() -> WorkerProcess | None:
        leaders = [w for w in cluster.workers if w.is_leader()]
        generations = {w.generation() for w in cluster.workers}
        if len(leaders) == 1 and len(generations) == 1 and None not in generations:
            return next(w for w in cluster.workers if not w.is_leader())
        return None
    follower: WorkerProcess = wait_for(settled, 60, what="two workers in one generation")
    return follower


def test_requests_without_valid_credentials_are_refused(cluster: Cluster) -> None:
    url = cluster.workers[0].url
    for user in (None, "mallory"):
        reply = cluster.rest("GET", url + "/connectors", user=user)
        assert (reply.status_code, reply.text) == (401, "User cannot access the resource.")
        assert reply.headers["www-authenticate"] == 'Basic realm="KafkaConnect"'
    assert cluster.rest("GET", url + "/connectors").status_code == 200
    for path in ("/", "/metrics", "/openapi.json"):  # every route is behind authentication
        assert cluster.rest("GET", url + path, user=None).status_code == 401, path
    with pytest.raises(httpx.HTTPError):  # no plain HTTP on an HTTPS listener
        httpx.get(url.replace("https://", "http://") + "/", timeout=10)
    registry = cluster.registry.url
    none = httpx.get(registry + "/subjects", verify=cluster.tls, timeout=30)
    assert (none.status_code, none.json()) == (401, {"error_code": 401, "message": "Unauthorized"})
    assert none.headers["www-authenticate"] == 'Basic realm="SchemaRegistry-Props"'
    for path in ("/", "/metrics", "/openapi.json"):
        assert httpx.get(registry + path, verify=cluster.tls, timeout=30).status_code == 401, path
    wrong_role = httpx.get(registry + "/subjects", verify=cluster.tls, auth=("reader", "reader-pw"), timeout=30)
    assert (wrong_role.status_code, wrong_role.json()) == (403, {"error_code": 403, "message": "Forbidden"})
    ok = httpx.get(registry + "/subjects", verify=cluster.tls, auth=("ops", "ops-pw"), timeout=30)
    assert ok.status_code == 200


def test_a_source_created_through_the_follower_writes_avro_through_the_secured_registry(cluster: Cluster) -> None:
    follower = _follower(cluster)
    source = _write(cluster.directory / "lines.txt", "".join(line + "\n" for line in LINES))
    created = cluster.rest("POST", follower.url + "/connectors", json={"name": "secured-source", "config": {
        "connector.class": "FileStreamSource", "file": str(source), "topic": TOPIC, "tasks.max": "1"}})
    assert created.status_code == 201, created.text
    status = wait_for(lambda: (lambda s: s if s["tasks"] and s["tasks"][0]["state"] == "RUNNING" else None)(
        cluster.rest("GET", follower.url + "/connectors/secured-source/status").json()), 60, what="RUNNING")
    assert status["connector"]["state"] == "RUNNING"
    consumer = Consumer(cluster.secured.librdkafka("connect", CONNECT_PASSWORD, **{
        "group.id": "secured-check", "enable.auto.commit": False}))
    values: list[bytes] = []
    try:
        consumer.assign([TopicPartition(TOPIC, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + 60
        while len(values) < len(LINES) and time.monotonic() < deadline:
            for message in consumer.consume(100, 0.5):
                if message.error() is None:
                    values.append(bytes(message.value() or b""))
    finally:
        consumer.close()
    assert len(values) == len(LINES)
    with SchemaRegistryClient(cluster.registry.url, auth=("ops", "ops-pw"), verify=cluster.tls) as client:
        schema_ids = {int.from_bytes(v[1:5], "big") for v in values}
        assert [json.loads(client.get_by_id(i)) for i in schema_ids] == ["string"]
        assert client.get_latest(f"{TOPIC}-value").schema_id in schema_ids
    assert [v[0] for v in values] == [0] * len(LINES)  # Confluent's frame: magic byte, schema id, Avro
    assert [fastavro.schemaless_reader(io.BytesIO(v[5:]), "string", None) for v in values] == LINES


def test_admin_endpoints_only_on_the_admin_listener(cluster: Cluster) -> None:
    assert cluster.rest("GET", cluster.workers[0].url + "/admin/loggers").status_code == 404
    assert cluster.rest("GET", cluster.admin_urls[0] + "/admin/loggers").status_code == 200
    assert cluster.rest("GET", cluster.admin_urls[0] + "/admin/loggers", user=None).status_code == 401
    assert cluster.rest("GET", cluster.admin_urls[0] + "/connectors").status_code == 404


def _seaway(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "seaway.cli.main", *args], capture_output=True, text=True,
                          timeout=60)


def test_the_cli_reaches_the_secured_worker_broker_and_registry(cluster: Cluster) -> None:
    d, m = cluster.directory, cluster.secured.material
    password = _write(d / "alice.pw", REST_USERS["alice"] + "\n")
    listed = _seaway("connectors", "--url", cluster.workers[1].url, "--ca-file", str(m.ca), "--user", "alice",
                     "--password-file", str(password), "list")
    assert listed.returncode == 0 and "secured-source" in listed.stdout, listed.stderr
    refused = _seaway("connectors", "--url", cluster.workers[1].url, "--ca-file", str(m.ca), "list")
    assert refused.returncode == 1 and "(HTTP 401)" in refused.stderr and "--user" in refused.stderr
    client = cluster.secured.java_client("connect", CONNECT_PASSWORD)
    registry = {"schema.registry.url": cluster.registry.url, "basic.auth.credentials.source": "USER_INFO",
                "basic.auth.user.info": "ops:ops-pw", "schema.registry.ssl.truststore.type": "PEM",
                "schema.registry.ssl.truststore.location": str(m.ca)}
    config = _write(d / "client.properties", "".join(f"{k}={v}\n" for k, v in {**client, **registry}.items()))
    topics = _seaway("topics", "list", "--bootstrap-server", cluster.secured.bootstrap, "--command-config",
                     str(config))
    assert topics.returncode == 0 and TOPIC in topics.stdout.split(), topics.stderr
    consumed = _seaway("consume", TOPIC, "--from-beginning", "--max-messages", "3", "--bootstrap-server",
                       cluster.secured.bootstrap, "--command-config", str(config))
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.splitlines() == [json.dumps(line) for line in LINES[:3]]
