"""Request bodies: a size limit enforced before the body is read whole, and Confluent's 415.

A real uvicorn on a loopback port, spoken to over raw sockets where the point is what the
server does *before* the client has sent everything (a 100 MB ``Content-Length`` with no
body behind it, a chunked body that never ends).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from seaway.schema_registry.app import create_app
from seaway.schema_registry.log import MemorySchemaLog
from seaway.schema_registry.settings import RegistrySettings, SettingsError

from tests.schema_registry.registry_support import ServedApp

LIMIT = 64 * 1024
CT = "application/vnd.schemaregistry.v1+json"
SCHEMA = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})


@pytest.fixture
def registry() -> Iterator[str]:
    app = create_app(RegistrySettings(http_request_max_size=LIMIT), log=MemorySchemaLog())
    with ServedApp(app) as served:
        yield served.url


def _connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    return socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=10)


def _read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response (``Content-Length`` framed, as Starlette's JSON answers are)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a response: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk
        rest += chunk
    return int(lines[0].split()[1]), headers, rest[:length]


def _closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(5)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


@pytest.mark.timeout(60)
def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_sent(registry: str) -> None:
    sock = _connect(registry)
    with sock:
        sock.sendall(
            b"POST /subjects/s/versions HTTP/1.1\r\nHost: r\r\n"
            + f"Content-Type: {CT}\r\nContent-Length: {100 * 1024 * 1024}\r\n\r\n".encode()
        )
        started = time.monotonic()
        status, headers, body = _read_response(sock)  # without having sent one byte of the body
        assert time.monotonic() - started < 5
        assert status == 413
        assert json.loads(body)["error_code"] == 413
        assert str(LIMIT) in json.loads(body)["message"]
        assert headers["connection"] == "close"
        assert _closed_by_server(sock)
    assert httpx.get(f"{registry}/subjects/s/versions").json()["error_code"] == 40401  # nothing was written


@pytest.mark.timeout(60)
def test_a_chunked_body_is_cut_off_as_soon_as_it_passes_the_limit(registry: str) -> None:
    sock = _connect(registry)
    with sock:
        sock.sendall(
            b"POST /subjects/s/versions HTTP/1.1\r\nHost: r\r\n"
            + f"Content-Type: {CT}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        )
        chunk = b"x" * 8192
        for _ in range(LIMIT // len(chunk) + 1):  # one chunk past the limit, and no final chunk
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        status, headers, body = _read_response(sock)
        assert status == 413 and json.loads(body)["error_code"] == 413
        assert headers["connection"] == "close"
        assert _closed_by_server(sock)


@pytest.mark.timeout(60)
def test_bodies_up_to_the_limit_are_served(registry: str) -> None:
    padded = json.dumps({"schema": SCHEMA, "pad": "x" * (LIMIT - 200)}).encode()
    assert len(padded) <= LIMIT
    ok = httpx.post(f"{registry}/subjects/s/versions", content=padded, headers={"Content-Type": CT})
    assert (ok.status_code, ok.json()) == (200, {"id": 1})
    over = json.dumps({"schema": SCHEMA, "pad": "x" * LIMIT}).encode()
    refused = httpx.post(f"{registry}/subjects/s/versions", content=over, headers={"Content-Type": CT})
    assert (refused.status_code, refused.json()["error_code"]) == (413, 413)


def test_the_limit_is_a_registry_setting_with_karapaces_name() -> None:
    assert RegistrySettings().http_request_max_size == 2 * 1024 * 1024
    assert RegistrySettings.from_properties({"http.request.max.size": "1000"}).http_request_max_size == 1000
    with pytest.raises(SettingsError, match=r"^Invalid value 0 for configuration http\.request\.max\.size: "
                                            r"Value must be at least 1$"):
        RegistrySettings(http_request_max_size=0)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("content_type", "status"),
    [
        (CT, 200),
        ("application/vnd.schemaregistry+json", 200),
        ("application/json", 200),
        ("application/json; charset=utf-8", 200),
        ("APPLICATION/JSON", 200),
        ("application/octet-stream", 200),
        (None, 200),  # Confluent reads a body without a content type as application/octet-stream
        ("text/plain", 415),  # what a cross-origin browser form or fetch may send without preflight
        ("application/x-www-form-urlencoded", 415),
        ("multipart/form-data; boundary=x", 415),
        ("application/xml", 415),
    ],
)
def test_confluents_content_types_are_accepted_and_others_answer_415(
    registry: str, content_type: str | None, status: int
) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    body = json.dumps({"schema": SCHEMA}).encode()
    with httpx.Client(base_url=registry) as client:
        for method, path in (("POST", "/subjects/s/versions"), ("POST", "/subjects/s"),
                             ("POST", "/compatibility/subjects/s/versions/latest")):
            r = client.request(method, path, content=body, headers=headers)
            if status == 415:
                assert r.status_code == 415, (method, path, r.text)
                assert r.json() == {"error_code": 415, "message": "HTTP 415 Unsupported Media Type"}
            else:
                assert r.status_code == 200, (method, path, r.text)
        put = client.put("/config/s", content=json.dumps({"compatibility": "FULL"}).encode(), headers=headers)
        assert put.status_code == status
        if status == 415:
            assert client.get("/subjects").json() == []  # nothing registered
            assert client.get("/config/s").json()["error_code"] == 40408  # nothing configured


@pytest.mark.timeout(120)
def test_caches_of_request_bodies_are_bounded_by_bytes_not_entries() -> None:
    """Distinct large lookups must not pin their bodies: the body cache counted entries (1,024)."""
    import gc
    import tracemalloc

    app = create_app(RegistrySettings(), log=MemorySchemaLog())
    with ServedApp(app) as served, httpx.Client(base_url=served.url, headers={"Content-Type": CT}) as client:
        client.post("/subjects/warm/versions", content=json.dumps({"schema": SCHEMA}))
        tracemalloc.start()
        try:
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            for i in range(60):  # 60 distinct 1.5 MB bodies: well-formed requests, unparseable schemas
                body = json.dumps({"schema": f"{i}" + "x" * 1_500_000}).encode()
                assert client.post("/subjects/warm", content=body).json()["error_code"] == 42201
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
    assert held < 40e6, f"{held / 1e6:.0f} MB still held after 60 bodies of 1.5 MB"
