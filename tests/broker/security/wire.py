"""A Kafka connection over our generated codec, kept open across requests (SASL needs that)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import socket
import ssl
import struct
from typing import Any

from seaway.protocol.framing import request_frame, response_reader
from seaway.protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
from seaway.protocol.messages.sasl_authenticate_response import SaslAuthenticateResponse
from seaway.protocol.messages.sasl_handshake_request import SaslHandshakeRequest
from seaway.protocol.messages.sasl_handshake_response import SaslHandshakeResponse

_SIZE = struct.Struct(">i")


class Wire:
    """One socket to the broker (optionally TLS); :meth:`call` sends a request, reads its answer."""

    def __init__(self, bootstrap: str, context: ssl.SSLContext | None = None, timeout: float = 10.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        raw = socket.create_connection((host, int(port)), timeout=timeout)
        self.sock: socket.socket = context.wrap_socket(raw, server_hostname=host) if context else raw
        self._correlation = 0

    def frame(self, request: Any, version: int, correlation_id: int | None = None) -> bytes:
        if correlation_id is None:
            self._correlation += 1
            correlation_id = self._correlation
        return request_frame(request, version, correlation_id, "security-test")

    def call(self, request: Any, response_cls: Any, version: int) -> Any:
        self.sock.sendall(self.frame(request, version))
        return response_cls.decode(response_reader(self.read_frame(), request, version, self._correlation), version)

    def scram_login(self, user: str, password: str) -> None:
        """SCRAM-SHA-512 written out (RFC 5802), checking the server's signature too."""
        assert self.call(SaslHandshakeRequest(mechanism="SCRAM-SHA-512"), SaslHandshakeResponse, 1).error_code == 0
        bare = f"n={user},r=clientnonce123"
        first = self.call(SaslAuthenticateRequest(auth_bytes=f"n,,{bare}".encode()), SaslAuthenticateResponse, 2)
        assert first.error_code == 0, first.error_message
        server_first = first.auth_bytes.decode()
        fields = dict(item.split("=", 1) for item in server_first.split(","))
        assert fields["r"].startswith("clientnonce123") and int(fields["i"]) >= 4096
        salted = hashlib.pbkdf2_hmac("sha512", password.encode(), base64.b64decode(fields["s"]), int(fields["i"]))
        client_key = hmac.new(salted, b"Client Key", "sha512").digest()
        without_proof = f"c=biws,r={fields['r']}"
        auth = f"{bare},{server_first},{without_proof}".encode()
        signature = hmac.new(hashlib.sha512(client_key).digest(), auth, "sha512").digest()
        proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature, strict=True))).decode()
        final = self.call(SaslAuthenticateRequest(auth_bytes=f"{without_proof},p={proof}".encode()),
                          SaslAuthenticateResponse, 2)
        assert final.error_code == 0, final.error_message
        server_key = hmac.new(salted, b"Server Key", "sha512").digest()
        assert final.auth_bytes == b"v=" + base64.b64encode(hmac.new(server_key, auth, "sha512").digest())

    def send_raw(self, payload: bytes) -> None:
        self.sock.sendall(_SIZE.pack(len(payload)) + payload)

    def read_frame(self) -> bytes:
        (size,) = _SIZE.unpack(self._recv(4))
        return self._recv(size)

    def closed_by_broker(self) -> bool:
        """True when the broker closed the connection (reads EOF or a reset)."""
        try:
            return self.sock.recv(1) == b""
        except (ConnectionError, ssl.SSLError):
            return True
        except TimeoutError:
            return False

    def _recv(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            data += chunk
        return bytes(data)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
