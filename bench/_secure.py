"""The broker benchmarks' ``--security`` mode: one broker, three listeners, same workload.

:func:`start_secure_broker` starts a broker listening on PLAINTEXT, SSL and SASL_SSL at
once (certificates made on the spot by ``tests/support/tls_material.py``: an ECDSA P-256
key, TLS 1.3 with AES-256-GCM as OpenSSL negotiates by default), so the benchmark can send
the same requests over each in interleaved rounds and print SSL / PLAINTEXT and
SASL_SSL / PLAINTEXT ratios that share the machine's load. :func:`connector` opens a
client socket for a listener: TLS-wrapped for SSL and SASL_SSL, then authenticated with
SCRAM-SHA-512 (SaslHandshake v1 + SaslAuthenticate) for SASL_SSL, as clients do; the
benchmark then sends its Produce or Fetch frames over it unchanged.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import socket
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import BrokerProcess, plain_connect
from seaway.protocol.framing import FRAME_SIZE, request_frame, response_reader
from seaway.protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
from seaway.protocol.messages.sasl_authenticate_response import SaslAuthenticateResponse
from seaway.protocol.messages.sasl_handshake_request import SaslHandshakeRequest
from seaway.protocol.messages.sasl_handshake_response import SaslHandshakeResponse

from tests.support.tls_material import Material, make_material

__all__ = ["LISTENERS", "SecureBench", "start_secure_broker"]

LISTENERS = ("PLAINTEXT", "SSL", "SASL_SSL")
USER, PASSWORD = "bench", "bench-secret"


class SecureBench:
    """A running three-listener broker and how to connect to each listener."""

    def __init__(self, process: BrokerProcess, ports: dict[str, int], material: Material) -> None:
        self.process = process
        self.ports = ports
        self.material = material
        self.tls = ssl.create_default_context(cafile=str(material.ca))

    def connector(self, listener: str) -> Callable[[int], socket.socket]:
        if listener == "PLAINTEXT":
            return plain_connect

        def connect(port: int) -> socket.socket:
            sock = self.tls.wrap_socket(plain_connect(port), server_hostname="127.0.0.1")
            if listener == "SASL_SSL":
                _scram_sha512(sock)
            return sock

        return connect

    def client_config(self, listener: str) -> dict[str, Any]:
        """confluent-kafka settings for ``listener`` (for admin calls and librdkafka figures)."""
        config: dict[str, Any] = {"bootstrap.servers": f"127.0.0.1:{self.ports[listener]}"}
        if listener != "PLAINTEXT":
            config.update({"security.protocol": listener, "ssl.ca.location": str(self.material.ca)})
        if listener == "SASL_SSL":
            config.update({"sasl.mechanism": "SCRAM-SHA-512", "sasl.username": USER, "sasl.password": PASSWORD})
        return config

    def stop(self) -> None:
        self.process.stop()


def _call(sock: socket.socket, request: Any, response_cls: Any, version: int) -> Any:
    sock.sendall(request_frame(request, version, 1, "seaway-bench"))
    (size,) = FRAME_SIZE.unpack(_recv(sock, 4))
    return response_cls.decode(response_reader(_recv(sock, size), request, version, 1), version)


def _recv(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("broker closed the connection during authentication")
        data += chunk
    return bytes(data)


def _scram_sha512(sock: socket.socket) -> None:
    if _call(sock, SaslHandshakeRequest(mechanism="SCRAM-SHA-512"), SaslHandshakeResponse, 1).error_code:
        raise RuntimeError("SCRAM-SHA-512 not enabled")
    bare = f"n={USER},r=benchclientnonce"
    first = _call(sock, SaslAuthenticateRequest(auth_bytes=f"n,,{bare}".encode()), SaslAuthenticateResponse, 2)
    server_first = first.auth_bytes.decode()
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    salted = hashlib.pbkdf2_hmac("sha512", PASSWORD.encode(), base64.b64decode(fields["s"]), int(fields["i"]))
    client_key = hmac.new(salted, b"Client Key", "sha512").digest()
    without_proof = f"c=biws,r={fields['r']}"
    auth = f"{bare},{server_first},{without_proof}".encode()
    signature = hmac.new(hashlib.sha512(client_key).digest(), auth, "sha512").digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature, strict=True))).decode()
    final = _call(sock, SaslAuthenticateRequest(auth_bytes=f"{without_proof},p={proof}".encode()),
                  SaslAuthenticateResponse, 2)
    if final.error_code:
        raise RuntimeError(f"SCRAM authentication failed: {final.error_message}")


def start_secure_broker(data_dir: Path, **overrides: str) -> SecureBench:
    """The broker with PLAINTEXT, SSL and SASL_SSL listeners and a SCRAM user for the bench."""
    material = make_material(data_dir.parent / "tls")
    props = {
        "auto.create.topics.enable": "false", "num.partitions": "1",
        "listeners": ",".join(f"{name}://127.0.0.1:0" for name in LISTENERS),
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(material.server_pem),
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
    }
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    process = BrokerProcess(data_dir, props).start()
    line = [line for line in process.output if line.startswith("seaway broker ready on ")][-1]
    endpoints = line.rsplit(" ", 1)[1].strip().split(",")
    ports = {name: int(ep.rsplit(":", 1)[1]) for name, ep in zip(LISTENERS, endpoints, strict=True)}
    bench = SecureBench(process, ports, material)
    from confluent_kafka.admin import (  # type: ignore[attr-defined]
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient(bench.client_config("PLAINTEXT"))
    upsert = UserScramCredentialUpsertion(USER, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                          PASSWORD.encode())
    admin.alter_user_scram_credentials([upsert])[USER].result(15)
    return bench
