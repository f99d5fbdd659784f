"""Issue 14 items 6-8 against a real worker process: no code from a request, bounded bodies, JSON only, names.

One ``python -m seaway.cli.main connect standalone`` process (``-m`` is the start that used to put
the working directory first on ``sys.path``), started in a directory of its own, serves every
test here over real HTTP; ``rest.request.max.bytes`` is lowered to 64 KiB so the size limits
are cheap to cross.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from confluent_kafka import Producer

from tests.connect.acceptance.acceptance_support import StandaloneWorker, create_topic, eventually
from tests.support.broker import BrokerProcess

pytestmark = pytest.mark.timeout(120)

LIMIT = 64 * 1024
ALLOWED_MODULE = "evil_allowed"  # listed in plugin.allowlist: still not importable from the working directory


@pytest.fixture(scope="module")
def worker(shared_broker: BrokerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneWorker]:
    home = tmp_path_factory.mktemp("hardening-worker")
    cwd = home / "cwd"
    cwd.mkdir()
    with StandaloneWorker(shared_broker.bootstrap, home, cwd=cwd, python_m=True, worker_props={
            "rest.request.max.bytes": str(LIMIT), "plugin.allowlist": f"{ALLOWED_MODULE}.*"}) as w:
        yield w


def _create(worker: StandaloneWorker, name: str, config: dict[str, str]) -> httpx.Response:
    return httpx.post(worker.url + "/connectors", json={"name": name, "config": config}, timeout=30)


def test_a_file_written_through_rest_is_never_imported(worker: StandaloneWorker, shared_broker: BrokerProcess) -> None:
    """The attack: FileStreamSink writes evil.py into the worker's directory, then connector.class=evil.X."""
    marker = worker.data_dir / f"ran-{uuid.uuid4().hex}"
    topic = f"evil-{uuid.uuid4().hex[:8]}"
    create_topic(shared_broker.bootstrap, topic)
    producer = Producer({"bootstrap.servers": shared_broker.bootstrap})
    for line in ("import pathlib", f"pathlib.Path({str(marker)!r}).write_text('ran')", "class X:", "    pass"):
        producer.produce(topic, value=line.encode())
    assert producer.flush(10) == 0
    for module in ("evil", ALLOWED_MODULE):  # relative file names: the worker's working directory
        written = _create(worker, f"write-{module}", {"connector.class": "FileStreamSink", "file": f"{module}.py",
                                                      "topics": topic})
        assert written.status_code == 201, written.text
    def written_whole(module: str) -> bool:
        path = worker.cwd / f"{module}.py"
        return path.exists() and path.read_text().count("\n") == 4

    for module in ("evil", ALLOWED_MODULE):
        eventually(lambda: written_whole(module), f"{module}.py to be written")  # noqa: B023 (called at once)

    attempts = {
        "connector.class=evil.X": {"connector.class": "evil.X", "topic": "t"},
        "connector.class=evil:X": {"connector.class": "evil:X", "topic": "t"},
        "allowlisted, yet not on sys.path": {"connector.class": f"{ALLOWED_MODULE}.X", "topic": "t"},
        "an SMT": {"connector.class": "FileStreamSource", "topic": "t", "transforms": "e",
                   "transforms.e.type": "evil.X"},
        "a predicate": {"connector.class": "FileStreamSource", "topic": "t", "predicates": "p",
                        "predicates.p.type": "evil.X"},
        "a converter": {"connector.class": "FileStreamSource", "topic": "t", "value.converter": "evil.X"},
        "a header converter": {"connector.class": "FileStreamSource", "topic": "t", "header.converter": "evil.X"},
        "a stdlib module with import-time output": {"connector.class": "this.X", "topic": "t"},
        "a relative import": {"connector.class": "..x", "topic": "t"},
    }
    answers = {}
    for what, config in attempts.items():
        created = _create(worker, f"attempt-{uuid.uuid4().hex[:8]}", config)
        validated = httpx.put(worker.url + "/connector-plugins/FileStreamSource/config/validate", json=config,
                              timeout=30)
        answers[what] = (created.status_code, validated.status_code, created.text)
    assert not marker.exists(), "code from a file written through REST ran in the worker"
    assert "Zen of Python" not in worker.log(), "a module named in a request was imported"
    for what, (created_status, validated_status, text) in answers.items():
        assert created_status == 400 and validated_status in (200, 400), (what, created_status, validated_status, text)
    assert httpx.get(worker.url + "/health", timeout=10).status_code == 200


def _raw_request(url: str, head: str, first_bytes: bytes) -> bytes:
    """Send a request head and only the start of its body; what the server answers meanwhile."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head.encode() + b"\r\n" + first_bytes)
        received = b""
        while b"\r\n\r\n" not in received or not received.rstrip().endswith(b"}"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        return received


def test_a_body_over_the_limit_is_refused_before_it_is_read(worker: StandaloneWorker) -> None:
    # a Content-Length of 100 MB, of which 10 bytes are sent: the 413 comes at once
    started = time.monotonic()
    reply = _raw_request(worker.url, "POST /connectors HTTP/1.1\r\nHost: worker\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {100 * 1024 * 1024}\r\n", b'{"name": "')
    assert reply.startswith(b"HTTP/1.1 413 "), reply
    # at once: a server waiting for the body would answer only after the socket's 10 s timeout
    assert b"rest.request.max.bytes=65536" in reply and time.monotonic() - started < 9
    # chunked, with no end: refused once the chunks pass the limit, while the client is still sending
    chunk = b"x" * 8192
    stream = (f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n") * (LIMIT // len(chunk) + 2)
    reply = _raw_request(worker.url, "POST /connectors HTTP/1.1\r\nHost: worker\r\nContent-Type: application/json\r\n"
                         "Transfer-Encoding: chunked\r\n", stream)
    assert reply.startswith(b"HTTP/1.1 413 "), reply
    # httpx sends a generator as chunked: a body under the limit still works that way
    def body() -> Iterator[bytes]:
        yield b'{"name": "chunked-ok", "config": '
        yield b'{"connector.class": "FileStreamSource", "topic": "chunked", "file": "/dev/null"}}'

    ok = httpx.post(worker.url + "/connectors", content=body(), headers={"Content-Type": "application/json"},
                    timeout=30)
    assert ok.status_code == 201, ok.text
    too_big = httpx.put(worker.url + "/connectors/big/config", timeout=30,
                        json={"connector.class": "FileStreamSource", "topic": "t", "pad": "x" * LIMIT})
    assert (too_big.status_code, too_big.json()["error_code"]) == (413, 413)
    assert httpx.get(worker.url + "/connectors/big", timeout=10).status_code == 404


def test_a_body_must_be_declared_json(worker: StandaloneWorker) -> None:
    body = b'{"name": "typed", "config": {"connector.class": "FileStreamSource", "topic": "t", "file": "/dev/null"}}'
    for headers in ({}, {"Content-Type": "text/plain"}, {"Content-Type": "application/x-www-form-urlencoded"},
                    {"Content-Type": "multipart/form-data; boundary=x"}):
        refused = httpx.post(worker.url + "/connectors", content=body, headers=headers, timeout=30)
        assert (refused.status_code, refused.json()["error_code"]) == (415, 415), (headers, refused.text)
    assert "typed" not in httpx.get(worker.url + "/connectors", timeout=10).json()
    accepted = httpx.post(worker.url + "/connectors", content=body, timeout=30,
                          headers={"Content-Type": "application/json; charset=utf-8"})
    assert accepted.status_code == 201, accepted.text
    patched = httpx.patch(worker.url + "/connectors/typed/config", content=b'{"topic": "t2"}', timeout=30,
                          headers={"Content-Type": "application/merge-patch+json"})
    assert patched.status_code == 200, patched.text
    restarted = httpx.post(worker.url + "/connectors/typed/restart", timeout=30)  # no body: no type needed
    assert restarted.status_code == 204, restarted.text


@pytest.mark.parametrize("name", ["a/b", ".", "..", "a\u0001b", "tab\there", "", "x" * 250])
def test_unaddressable_connector_names_are_refused_at_create(worker: StandaloneWorker, name: str) -> None:
    config = {"connector.class": "FileStreamSource", "topic": "t", "file": "/dev/null"}
    before = httpx.get(worker.url + "/connectors", timeout=10).json()
    created = _create(worker, name, config)
    assert (created.status_code, created.json()["error_code"]) == (400, 400), created.text
    assert httpx.get(worker.url + "/connectors", timeout=10).json() == before


def test_dot_names_are_refused_through_put_too(worker: StandaloneWorker) -> None:
    parts = urlsplit(worker.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        body = b'{"connector.class": "FileStreamSource", "topic": "t", "file": "/dev/null"}'
        sock.sendall(b"PUT /connectors/%2E%2E/config HTTP/1.1\r\nHost: worker\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 400 "), reply
    assert ".." not in httpx.get(worker.url + "/connectors", timeout=10).json()
    assert Path(worker.cwd).is_dir()
