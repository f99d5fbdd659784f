"""A minimal asyncio Kafka protocol client, for what confluent-kafka cannot express.

librdkafka hard-codes the consumer group protocol type (``consumer``), but Connect workers
join groups of protocol type ``connect`` and schema registries groups of type ``sr``. Those
speak the group APIs themselves, over this connection, built on the sans-IO codec (the
generated messages and the primitives Reader/Writer). It works against any Kafka broker;
everything else (producing, consuming, admin) goes through confluent-kafka.

Framing (Kafka's, for every API)::

    int32   size of what follows
    header  request header v1 (api key, api version, correlation id, client id), or v2
            (the same plus tagged fields) when the API version is flexible
    body    the request, encoded at that version

Responses carry header v0 (correlation id), or v1 (plus tagged fields) when flexible.
Versions are negotiated once per connection with ApiVersions v0: the highest version both
sides support, capped by the caller (the code that reads a response knows which versions'
semantics it handles). One request at a time per connection: group calls are sequential.

Security (:class:`ClientSecurity`, Kafka's ``security.protocol``): TLS for SSL and SASL_SSL
(the caller builds the ``SSLContext``, see :mod:`seaway.protocol.client_security`), and for
SASL_PLAINTEXT / SASL_SSL, after ApiVersions, SaslHandshake v1 and SaslAuthenticate with
PLAIN or SCRAM-SHA-256/512 (:mod:`seaway.protocol.sasl_client`), before any other request.
An authentication failure is not retriable: it raises :class:`KafkaAuthenticationError`
with the broker's message.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, TypeVar

from seaway.errors import SeawayError
from seaway.protocol.framing import FRAME_SIZE, FramingError, request_frame, response_reader
from seaway.protocol.messages.api_versions_request import ApiVersionsRequest
from seaway.protocol.messages.api_versions_response import ApiVersionsResponse
from seaway.protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
from seaway.protocol.messages.sasl_authenticate_response import SaslAuthenticateResponse
from seaway.protocol.messages.sasl_handshake_request import SaslHandshakeRequest
from seaway.protocol.messages.sasl_handshake_response import SaslHandshakeResponse
from seaway.protocol.primitives import Reader, Writer
from seaway.protocol.sasl_client import MECHANISMS, SaslClientError, sasl_exchange
from seaway.security.kafka_client import PROTOCOLS

__all__ = ["ClientSecurity", "KafkaAuthenticationError", "KafkaConnection", "KafkaWireError",
           "split_bootstrap"]

_MAX_FRAME = 64 * 1024 * 1024


class KafkaWireError(SeawayError):
    """The connection failed, timed out, or the broker cannot serve a request we need."""

    retriable = True


class KafkaAuthenticationError(KafkaWireError):
    """SASL or TLS authentication failed: retrying with the same settings will not help."""

    retriable = False


@dataclass(frozen=True)
class ClientSecurity:
    """How a connection is secured: Kafka's ``security.protocol`` and what it needs.

    ``ssl_context`` is required for SSL and SASL_SSL; ``sasl_mechanism`` (PLAIN,
    SCRAM-SHA-256, SCRAM-SHA-512) with ``username``/``password`` for the SASL protocols.
    """

    protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    sasl_mechanism: str | None = None
    username: str = ""
    password: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"security.protocol {self.protocol} is not one of {', '.join(PROTOCOLS)}")
        if self.protocol.endswith("SSL") and self.ssl_context is None:
            raise ValueError(f"security.protocol {self.protocol} needs an SSL context")
        if self.protocol.startswith("SASL_") and self.sasl_mechanism not in MECHANISMS:
            raise ValueError(f"security.protocol {self.protocol} needs sasl.mechanism {' or '.join(MECHANISMS)}")

    @property
    def uses_sasl(self) -> bool:
        return self.protocol.startswith("SASL_")


PLAINTEXT = ClientSecurity()


class _Message(Protocol):
    """A generated request class instance."""

    API_KEY: ClassVar[int]
    MIN_VERSION: ClassVar[int]
    MAX_VERSION: ClassVar[int]
    FLEXIBLE_FROM: ClassVar[int]

    def encode(self, w: Writer, version: int) -> None: ...


R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class _Decodable(Protocol[R_co]):
    """A generated response class (its ``decode`` classmethod)."""

    def decode(self, r: Reader, version: int) -> R_co: ...


def split_bootstrap(servers: str) -> list[tuple[str, int]]:
    """``"h1:9092,h2:9093"`` -> ``[("h1", 9092), ("h2", 9093)]`` (a ``SASL_SSL://``-style prefix is dropped)."""
    out = []
    for item in servers.split(","):
        item = item.strip().split("://", 1)[-1]
        if not item:
            continue
        host, _, port = item.rpartition(":")
        out.append((host.strip("[]") or "localhost", int(port)))
    if not out:
        raise KafkaWireError(f"no bootstrap servers in {servers!r}")
    return out


class KafkaConnection:
    """One TCP connection to a broker; :meth:`open` connects and negotiates versions."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str) -> None:
        self._reader = reader
        self._writer = writer
        self._client_id = client_id
        self._correlation = 0
        self._lock = asyncio.Lock()
        self.versions: dict[int, tuple[int, int]] = {}

    @classmethod
    async def open(cls, host: str, port: int, client_id: str, timeout: float = 10.0,
                   security: ClientSecurity = PLAINTEXT) -> KafkaConnection:
        context = security.ssl_context if security.protocol.endswith("SSL") else None
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, ssl=context, server_hostname=host if context else None,
                                        ssl_handshake_timeout=timeout if context else None), timeout)
        except ssl.SSLCertVerificationError as exc:
            raise KafkaAuthenticationError(f"TLS handshake with {host}:{port} failed: {exc.verify_message}") from exc
        except (TimeoutError, OSError) as exc:
            raise KafkaWireError(f"cannot connect to {host}:{port}: {exc}") from exc
        conn = cls(reader, writer, client_id)
        try:
            response = await conn._send(ApiVersionsRequest(), ApiVersionsResponse, 0, timeout)
            if response.error_code != 0:
                raise KafkaWireError(f"ApiVersions failed with error {response.error_code}")
            conn.versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
            if security.uses_sasl:
                await conn._authenticate(security, timeout)
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _authenticate(self, security: ClientSecurity, timeout: float) -> None:
        """SaslHandshake v1, then SaslAuthenticate rounds until the mechanism is done."""
        mechanism = security.sasl_mechanism or ""
        handshake, _ = await self.call(SaslHandshakeRequest(mechanism=mechanism), SaslHandshakeResponse, cap=1,
                                       timeout=timeout)
        if handshake.error_code != 0:
            raise KafkaAuthenticationError(
                f"the broker does not accept SASL mechanism {mechanism} (it offers "
                f"{', '.join(handshake.mechanisms) or 'none'}; error {handshake.error_code})")
        exchange = sasl_exchange(mechanism, security.username, security.password)
        try:
            token = next(exchange)
            while True:
                reply, _ = await self.call(SaslAuthenticateRequest(auth_bytes=token), SaslAuthenticateResponse,
                                           timeout=timeout)
                if reply.error_code != 0:
                    raise KafkaAuthenticationError(
                        f"SASL authentication failed: {reply.error_message or f'error {reply.error_code}'}")
                token = exchange.send(reply.auth_bytes)
        except StopIteration:
            return
        except SaslClientError as exc:
            raise KafkaAuthenticationError(str(exc)) from None

    @classmethod
    async def open_any(cls, bootstrap: str, client_id: str, timeout: float = 10.0,
                       security: ClientSecurity = PLAINTEXT) -> KafkaConnection:
        """A connection to the first reachable bootstrap server (an authentication failure ends the search)."""
        errors = []
        for host, port in split_bootstrap(bootstrap):
            try:
                return await cls.open(host, port, client_id, timeout, security)
            except KafkaAuthenticationError:
                raise
            except KafkaWireError as exc:
                errors.append(str(exc))
        raise KafkaWireError("; ".join(errors))

    def version_for(self, request: _Message, cap: int | None = None) -> int:
        """The highest version of ``request``'s API that we, the broker and ``cap`` allow."""
        served = self.versions.get(request.API_KEY)
        ours = request.MAX_VERSION if cap is None else min(cap, request.MAX_VERSION)
        if served is None or max(served[0], request.MIN_VERSION) > min(served[1], ours):
            raise KafkaWireError(f"the broker does not serve {type(request).__name__} versions we speak")
        return int(min(served[1], ours))

    async def call(
        self, request: _Message, response_cls: _Decodable[R], *, cap: int | None = None, timeout: float = 30.0
    ) -> tuple[R, int]:
        """Send ``request`` at the negotiated version; returns (response, version used)."""
        version = self.version_for(request, cap)
        return await self._send(request, response_cls, version, timeout), version

    async def _send(self, request: _Message, response_cls: _Decodable[R], version: int, timeout: float) -> R:
        async with self._lock:
            self._correlation += 1
            correlation = self._correlation
            try:
                self._writer.write(request_frame(request, version, correlation, self._client_id))
                await asyncio.wait_for(self._writer.drain(), timeout)
                frame = await asyncio.wait_for(self._read_frame(), timeout)
            except (TimeoutError, OSError, asyncio.IncompleteReadError) as exc:
                self._writer.close()
                raise KafkaWireError(f"{type(request).__name__} failed: {exc!r}") from exc
        try:
            r = response_reader(frame, request, version, correlation)
        except FramingError as exc:
            self._writer.close()
            raise KafkaWireError(str(exc)) from None
        return response_cls.decode(r, version)

    async def _read_frame(self) -> bytes:
        (size,) = FRAME_SIZE.unpack(await self._reader.readexactly(4))
        if not 0 <= size <= _MAX_FRAME:
            raise OSError(f"bad response frame size {size}")
        return await self._reader.readexactly(size)

    async def close(self) -> None:
        """Close, waiting for the close to complete (TLS: the close_notify exchange).

        Cancelled while waiting (a member stopped mid-close), the transport is aborted: left
        half shut, its socket stayed open once the loop ended (a ResourceWarning at GC).
        """
        self._writer.close()
        try:
            with contextlib.suppress(OSError):
                await self._writer.wait_closed()
        except asyncio.CancelledError:
            self._writer.transport.abort()
            raise
